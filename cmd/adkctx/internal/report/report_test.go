package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/refs"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/source"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
	"github.com/adkctx/adkctx/compaction"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func replayer(t *testing.T) *replay.Replayer {
	t.Helper()
	rp, err := replay.New(replay.Estimator, []replay.Config{{Window: 8192, Summarizer: replay.Extractive, Recall: true, Base: adkctx.Config{Compaction: &compaction.Config{}}}})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// TestCompute: figures add up what each step of each arm did. A plain cut larger than the
// window keeps nothing: the provider refuses it.
func TestCompute(t *testing.T) {
	res := &replay.Result{
		Session: &trajectory.Session{ID: "s"},
		Baseline: []replay.BaseStep{
			{Tokens: 100, Score: refs.StepScore{Refs: 2, Facts: 3, Head: true}, Cuts: []replay.Cut{{Tokens: 100, Score: refs.StepScore{Refs: 2, RefsKept: 2, Facts: 3, FactsKept: 3, Head: true}}},
				SameSize: []replay.Cut{{Tokens: 100, Score: refs.StepScore{Refs: 2, RefsKept: 2, Facts: 3, FactsKept: 3, Head: true}}}},
			{Tokens: 9000, Score: refs.StepScore{Refs: 4, Facts: 3}, Cuts: []replay.Cut{{Tokens: 7000, Dropped: 5, Score: refs.StepScore{Refs: 4, RefsKept: 1, Facts: 3, FactsKept: 1}}},
				SameSize: []replay.Cut{{Tokens: 4900, Dropped: 9, Score: refs.StepScore{Refs: 4, Facts: 3, FactsKept: 1}}}},
			{Tokens: 9500, Score: refs.StepScore{Refs: 1, Facts: 3}, Cuts: []replay.Cut{{Tokens: 6900, Score: refs.StepScore{Refs: 1, Facts: 3}}},
				SameSize: []replay.Cut{{Score: refs.StepScore{Refs: 1, Facts: 3}}}}, // adkctx sent nothing
			{Tokens: 9600, Score: refs.StepScore{Refs: 2, Facts: 3, Head: true}, Cuts: []replay.Cut{{Tokens: 8200, Dropped: 6, Score: refs.StepScore{Refs: 2, RefsKept: 2, Facts: 3, FactsKept: 3, Head: true}}},
				SameSize: []replay.Cut{{Score: refs.StepScore{Refs: 2, Facts: 3}}}},
		},
		Runs: []replay.Run{{
			Steps: []replay.Step{
				{Sent: true, Tokens: 120, Action: "none", Score: refs.StepScore{Refs: 2, RefsKept: 2, Facts: 3, FactsKept: 3, Head: true}},
				{Sent: true, Tokens: 5000, Action: "trimmed", ContentsDropped: 7, Score: refs.StepScore{Refs: 4, RefsKept: 1, Facts: 3, FactsKept: 3, Head: true, Missed: []string{"a", "b", "c"}}, Reach: []string{replay.ReachOutputs, replay.ReachHistory, ""}},
				{Refused: true, Action: "rejected", Score: refs.StepScore{Refs: 1, Facts: 3, Missed: []string{"d"}}, Reach: []string{""}},
				{Refused: true, Action: "rejected", Score: refs.StepScore{Refs: 2, Facts: 3, Missed: []string{"e", "f"}}, Reach: []string{"", ""}},
			},
			Compactions: []replay.Compaction{{BeforeStep: 1, Fallback: true}, {BeforeStep: 2}},
			Failures:    1,
		}},
	}
	got := Compute(res, replayer(t))[0]
	want := Figures{Sessions: 1, Steps: 4,
		TokensNoAdkctx: 28200, TokensPlainCut: 22200, TokensAdkctx: 5120,
		LargestNoAdkctx: 9600, LargestPlainCut: 8200, LargestAdkctx: 5000, OverWindowNoAdkctx: 3, OverWindowPlainCut: 1,
		References: 9, ReferencesKeptPlainCut: 3, ReferencesKeptAdkctx: 3, ReferencesKeptSameSizeCut: 2, UserFactsKeptSameSizeCut: 4,
		MissedOneRecallAway: 2, MissedReachOutputs: 1, MissedReachHistory: 1,
		UserFacts: 12, UserFactsKeptPlainCut: 4, UserFactsKeptAdkctx: 6,
		TaskHeadPlainCut: 1, TaskHeadAdkctx: 2,
		Compactions: 2, CompactionFallbacks: 1, CompactionFailures: 1,
		RequestsTrimmed: 1, ContentsDropped: 7, RequestsRefused: 2}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("figures (-want +got):\n%s", d)
	}
	var sum Figures
	sum.Add(got)
	sum.Add(got)
	if sum.Sessions != 2 || sum.TokensAdkctx != 10240 || sum.LargestNoAdkctx != 9600 || sum.OverWindowPlainCut != 2 || sum.MissedOneRecallAway != 4 {
		t.Errorf("Add: %+v", sum)
	}
}

// TestSameSizeCutOverWindow: a same-size cut larger than the window (the newest content alone
// is: adkctx sent that step less, its output truncated) keeps nothing either, as the plain cut:
// the provider refuses it. Within the window it keeps what it holds.
func TestSameSizeCutOverWindow(t *testing.T) {
	score := refs.StepScore{Refs: 2, RefsKept: 1, Facts: 3, FactsKept: 2}
	step := func(same int) replay.BaseStep {
		return replay.BaseStep{Tokens: 31000, Score: refs.StepScore{Refs: 2, Facts: 3},
			Cuts:     []replay.Cut{{Tokens: same, Dropped: 40, Score: score}},
			SameSize: []replay.Cut{{Tokens: same, Dropped: 40, Score: score}}}
	}
	sent := replay.Step{Sent: true, Tokens: 5500, Action: "trimmed", Score: refs.StepScore{Refs: 2, Facts: 3}}
	res := &replay.Result{
		Session:  &trajectory.Session{ID: "s"},
		Baseline: []replay.BaseStep{step(8193), step(12000), step(8192)},
		Runs:     []replay.Run{{Steps: []replay.Step{sent, sent, sent}}},
	}
	got := Compute(res, replayer(t))[0]
	if got.ReferencesKeptSameSizeCut != 1 || got.UserFactsKeptSameSizeCut != 2 || got.ReferencesKeptPlainCut != 1 || got.OverWindowPlainCut != 2 {
		t.Errorf("kept by the same-size cut: %d references, %d user facts; by the plain cut %d (%d over the window); want 1, 2, 1 (2): only the cut within the window keeps",
			got.ReferencesKeptSameSizeCut, got.UserFactsKeptSameSizeCut, got.ReferencesKeptPlainCut, got.OverWindowPlainCut)
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45678: "-45,678"} {
		if got := num(in); got != want {
			t.Errorf("num(%d) = %q, want %q", in, got, want)
		}
	}
	if pct(1, 3) != "33.3%" || pct(1, 0) != "—" || ofTokens(50, 200) != "50 (25.0%)" {
		t.Error("pct or ofTokens")
	}
}

// TestReplayListsWhatItSkips: with SkipBad a session that fails is listed, the others counted.
func TestReplayListsWhatItSkips(t *testing.T) {
	rp := replayer(t)
	good := &trajectory.Session{ID: "good", Turns: []trajectory.Turn{{User: "hello there", Origin: trajectory.Person, Steps: []trajectory.Step{{Text: "hi"}}}}}
	items := func(yield func(source.Item) bool) {
		if !yield(source.Item{Session: good, Source: "good"}) {
			return
		}
		yield(source.Item{Source: "bad.json", Err: &trajectory.FormatError{File: "bad.json", Expected: "JSON"}})
	}
	var buf bytes.Buffer
	w := NewJSON(&buf, HeaderOf(rp, "estimator"))
	totals, skipped, err := Replay(context.Background(), rp, items, Options{SkipBad: true, Writers: []Writer{w}})
	if err != nil {
		t.Fatal(err)
	}
	if totals[0].Sessions != 1 || len(skipped) != 1 || skipped[0].Source != "bad.json" {
		t.Errorf("totals %+v skipped %+v", totals, skipped)
	}
	if err := w.Close(totals, skipped); err != nil || !strings.Contains(buf.String(), `"skipped":[{"source":"bad.json","error":"bad.json: expected JSON"}]`) {
		t.Errorf("%v\n%s", err, buf.String())
	}
	if _, _, err := Replay(context.Background(), rp, items, Options{}); err == nil || err.Error() != "bad.json: expected JSON" {
		t.Errorf("without SkipBad: %v", err)
	}
}
