package replay

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/fixture"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
	"github.com/adkctx/adkctx/compaction"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func defaults(window int, summ string, recall bool) Config {
	return Config{Window: window, Summarizer: summ, Recall: recall, Base: adkctx.Config{Compaction: &compaction.Config{}}}
}

func replayOne(t *testing.T, s *trajectory.Session, tokens Tokens, cfgs ...Config) *Result {
	t.Helper()
	rp, err := New(tokens, cfgs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rp.Replay(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func readFile(t *testing.T, path string) *trajectory.Session {
	t.Helper()
	for s, err := range trajectory.ReadFile(path) {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Fatal("no session")
	return nil
}

// TestRecordedTurnsAreReplayed: without adkctx, the request at each step holds every recorded
// content before it: the user messages, each reply, each output (one content per reply and
// one per step's outputs).
func TestRecordedTurnsAreReplayed(t *testing.T) {
	res := replayOne(t, readFile(t, "../trajectory/testdata/chat.json"), Estimator, defaults(32768, Extractive, false))
	var contents []int
	for _, b := range res.Baseline {
		contents = append(contents, b.Contents)
	}
	// user | calls, outputs | answer, user | call, output | answer
	if d := cmp.Diff([]int{1, 3, 5, 7}, contents); d != "" {
		t.Errorf("contents per request (-want +got):\n%s", d)
	}
	run := res.Runs[0]
	for k, st := range run.Steps {
		if !st.Sent || st.Action != "none" || st.Reach != nil {
			t.Errorf("step %d with adkctx: %+v", k, st)
		}
	}
}

// TestRefusalEndsTheTurn: a turn whose message alone is past the hard limit is refused by
// adkctx; its steps are not replayed and the next turn is.
func TestRefusalEndsTheTurn(t *testing.T) {
	big := strings.Repeat("payload word ", 4000)
	s := &trajectory.Session{ID: "refused", Turns: []trajectory.Turn{
		{User: big, Origin: trajectory.Person, Steps: []trajectory.Step{
			{Calls: []trajectory.Call{{ID: "c1", Name: "look", Args: map[string]any{}, Response: map[string]any{"result": "x"}, Recorded: true}}},
			{Text: "done"},
		}},
		{User: "small question", Origin: trajectory.Person, Steps: []trajectory.Step{{Text: "small answer"}}},
	}, Tools: []trajectory.Tool{{Name: "look"}}}
	res := replayOne(t, s, Estimator, defaults(4096, Extractive, false))
	var got []string
	for _, st := range res.Runs[0].Steps {
		got = append(got, map[bool]string{true: "refused"}[st.Refused]+map[bool]string{true: "skipped"}[st.Skipped]+map[bool]string{true: "sent"}[st.Sent]+" "+st.Action)
	}
	// The next turn is sent, its request trimmed of the refused message still in history.
	if d := cmp.Diff([]string{"refused rejected", "skipped ", "sent trimmed"}, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if res.Baseline[0].Tokens < 4096 || res.Baseline[2].Contents != 5 {
		t.Errorf("without adkctx every step is sent: %+v", res.Baseline)
	}
}

// TestLLMSummarizer: with -summarizer llm, compactions are written by the scripted summarizer
// (no network) and its text reaches later requests.
func TestLLMSummarizer(t *testing.T) {
	s := readFixture(t, "shell.json", fixture.Shell(5, 40))
	rp, err := New(Estimator, []Config{defaults(8192, LLM, false)})
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int64
	res, err := rp.replayWatching(context.Background(), s, func(req []*genai.Content) {
		for _, c := range req {
			for _, p := range c.Parts {
				if strings.Contains(p.Text, SummaryText) {
					seen.Add(1)
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs[0].Compactions) == 0 || seen.Load() == 0 {
		t.Fatalf("%d compactions, summary text in %d requests", len(res.Runs[0].Compactions), seen.Load())
	}
	for _, c := range res.Runs[0].Compactions {
		if c.Summarizer == "extractive" || c.Fallback {
			t.Errorf("compaction %+v: want the LLM summarizer, no fallback", c)
		}
	}
}

// TestO200kCounts: the o200k counter counts each content's text and calls through the
// tokenizer (plus the framing), so its counts differ from the estimator's and every request
// is counted; adkctx calibrates to it through the reported usage.
func TestO200kCounts(t *testing.T) {
	c, err := newCounter(O200k)
	if err != nil {
		t.Fatal(err)
	}
	n := c.content(genai.NewContentFromText("hello world", genai.RoleUser))
	if n != 2+o200kFraming {
		t.Errorf("o200k(hello world) + framing = %d, want %d", n, 2+o200kFraming)
	}
	s := readFile(t, "../trajectory/testdata/chat.json")
	est := replayOne(t, s, Estimator, defaults(32768, Extractive, false))
	o := replayOne(t, s, O200k, defaults(32768, Extractive, false))
	for k := range est.Baseline {
		if o.Baseline[k].Tokens == 0 || o.Baseline[k].Tokens == est.Baseline[k].Tokens {
			t.Errorf("step %d: o200k %d, estimator %d", k, o.Baseline[k].Tokens, est.Baseline[k].Tokens)
		}
	}
}

// TestRecallReach: at a small window adkctx leaves references out; with the recall tools each
// miss is checked with one search, without them none is.
func TestRecallReach(t *testing.T) {
	s := readFixture(t, "shell.json", fixture.Shell(5, 60))
	res := replayOne(t, s, Estimator, defaults(8192, Extractive, true), defaults(8192, Extractive, false))
	reached := 0
	for i, run := range res.Runs {
		for k, st := range run.Steps {
			if len(st.Reach) != len(st.Score.Missed) {
				t.Fatalf("run %d step %d: %d answers for %d misses", i, k, len(st.Reach), len(st.Score.Missed))
			}
			for j, r := range st.Reach {
				if i == 1 && r != "" {
					t.Errorf("recall off, step %d: %q reached by %s", k, st.Score.Missed[j], r)
				}
				if i == 0 && r != "" {
					reached++
				}
			}
		}
	}
	if reached == 0 {
		t.Error("with the recall tools no miss was one call away")
	}
}

func (r *Replayer) replayWatching(ctx context.Context, s *trajectory.Session, watch func([]*genai.Content)) (*Result, error) {
	r.watch = watch
	defer func() { r.watch = nil }()
	return r.Replay(ctx, s)
}

// TestSameSizeCut: the requests without adkctx are also cut oldest first to the size of the
// request adkctx sent at each step: never larger than it unless the newest content alone is,
// nothing where adkctx sent nothing, and the whole request where adkctx sent as much.
func TestSameSizeCut(t *testing.T) {
	res := replayOne(t, readFixture(t, "shell.json", fixture.Shell(5, 40)), Estimator, defaults(8192, Extractive, true))
	smaller := 0
	for k, b := range res.Baseline {
		a, same := res.Runs[0].Steps[k], b.SameSize[0]
		switch {
		case !a.Sent:
			if same.Tokens != 0 || same.Score.RefsKept != 0 || same.Score.FactsKept != 0 {
				t.Errorf("step %d: adkctx sent nothing, the same-size cut kept %+v", k, same)
			}
		case a.Tokens >= b.Tokens:
			if same.Dropped != 0 || !cmp.Equal(same.Score, b.Score) {
				t.Errorf("step %d: adkctx sent %d tokens, the whole request is %d: cut %+v", k, a.Tokens, b.Tokens, same)
			}
		default:
			smaller++
			if same.Tokens > a.Tokens && same.Dropped < b.Contents-1 {
				t.Errorf("step %d: cut to %d tokens for adkctx's %d with contents left to drop", k, same.Tokens, a.Tokens)
			}
			if same.Tokens > b.Cuts[0].Tokens {
				t.Errorf("step %d: the same-size cut (%d) is larger than the hard-limit cut (%d)", k, same.Tokens, b.Cuts[0].Tokens)
			}
		}
	}
	if smaller == 0 {
		t.Fatal("adkctx never sent less than the whole request: nothing tested")
	}
}
