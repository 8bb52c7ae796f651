package engine

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// summaryModel answers every summary prompt with the same summary and records the prompts.
type summaryModel struct {
	mu   sync.Mutex
	reqs []*request.LLMRequest
}

func (m *summaryModel) Name() string { return "m" }

func (m *summaryModel) GenerateContent(_ context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return func(yield func(*response.LLMResponse, error) bool) {
		yield(&response.LLMResponse{Content: genai.NewContentFromText("Goal: review the modules.", genai.RoleModel), FinishReason: genai.FinishReasonStop}, nil)
	}
}

// textOf is a text of about n estimated tokens.
func textOf(prefix string, n int) string {
	s := prefix
	for budget.EstimateText(s) < n {
		s += " history words"
	}
	return s
}

// A token compaction at the start of a turn summarizes from the request of the turn before,
// which the provider's cache still holds: the session keeps its newest requests past the end of
// their invocation. Before, it kept only the running invocation's last request, so the first
// request of a turn that passed the soft limit had no request to share and sent a transcript.
func TestCompactionSharesAnEarlierTurnsRequest(t *testing.T) {
	model := &summaryModel{}
	info := budget.ModelInfo{Name: model.Name(), ContextWindow: 32_768, MaxOutputTokens: 1024}
	e, err := New(adkctx.Config{Models: []budget.ModelInfo{info},
		Compaction: &compaction.Config{Synchronous: true, Interval: 50, Summarizer: &compaction.LLMSummarizer{Model: model}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := &memStore{}
	if err := e.UseStore(store); err != nil {
		t.Fatal(err)
	}
	s := compactor.Session{App: "app", User: "user", ID: "s1"}
	var contents []*genai.Content
	for i := range 5 {
		inv := fmt.Sprint("inv-", i)
		for k, c := range []*genai.Content{
			genai.NewContentFromText(textOf(fmt.Sprint("question ", i), 1500), genai.RoleUser),
			genai.NewContentFromText(textOf(fmt.Sprint("answer ", i), 1500), genai.RoleModel),
		} {
			author := "user"
			if k == 1 {
				author = "agent"
			}
			store.events = append(store.events, compaction.Event{ID: fmt.Sprint(inv, "-", k), InvocationID: inv, Author: author, Final: k == 1,
				Timestamp: time.Unix(int64(100+2*i+k), 0), Content: c})
			contents = append(contents, c)
		}
	}
	// The last turn's request shows every event but its answer; its turn ends.
	last := &request.LLMRequest{Model: info.Name, Contents: contents[:len(contents)-1]}
	e.BeforeRun(ctx, s, "inv-4", nil, true, func() []compaction.Event { return nil })
	if err := e.BeforeModel(ctx, testCall{inv: "inv-4"}, nil, last, nil); err != nil {
		t.Fatal(err)
	}
	e.AfterRun(ctx, s, "inv-4", nil)
	// The next turn's first request passes the soft limit; the compaction leaves the turn before
	// raw.
	limits := e.Limits(info.Name)
	question := genai.NewContentFromText(textOf("question 5", limits.Soft-budget.EstimateRequest(contents, nil)+500), genai.RoleUser)
	store.events = append(store.events, compaction.Event{ID: "inv-5-0", InvocationID: "inv-5", Author: "user", Timestamp: time.Unix(120, 0), Content: question})
	e.BeforeRun(ctx, s, "inv-5", nil, true, func() []compaction.Event { return nil })
	next := &request.LLMRequest{Model: info.Name, Contents: append(append([]*genai.Content(nil), contents...), question)}
	if err := e.BeforeModel(ctx, testCall{inv: "inv-5"}, nil, next, nil); err != nil {
		t.Fatal(err)
	}
	if len(model.reqs) != 1 {
		t.Fatalf("%d summary prompts, want 1", len(model.reqs))
	}
	prompt := model.reqs[0].Contents
	if len(prompt) < 2 || prompt[0] != contents[0] {
		t.Errorf("the summary prompt (%d contents) is a transcript, want the previous turn's request extended", len(prompt))
	}
}

// The session keeps its newest requests within the bounds: at most maxSentRequests, none sent
// ttl ago or more, at most sentWindows × the usable input in distinct contents (the newest one
// always); a content already kept is kept once.
func TestSentLogBounds(t *testing.T) {
	start := time.Unix(1000, 0)
	req := func(texts ...string) (*request.LLMRequest, []uint64, []int) {
		r := &request.LLMRequest{Model: "m"}
		var prints []uint64
		var sizes []int
		for _, s := range texts {
			c := genai.NewContentFromText(s, genai.RoleUser)
			r.Contents = append(r.Contents, c)
			prints = append(prints, steps.Fingerprint(c))
			sizes = append(sizes, budget.EstimateContent(c))
		}
		return r, prints, sizes
	}
	firstTexts := func(rs []*request.LLMRequest) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Contents[0].Parts[0].Text)
		}
		return out
	}
	t.Run("count", func(t *testing.T) {
		l := sentLog{ttl: time.Hour}
		var want []string
		for i := range 11 {
			r, p, s := req(fmt.Sprint("request ", i))
			l.add(r, p, s, 1_000_000, start.Add(time.Duration(i)*time.Second))
			want = append([]string{fmt.Sprint("request ", i)}, want...)
		}
		if diff := cmp.Diff(want[:maxSentRequests], firstTexts(l.recent(start.Add(time.Minute)))); diff != "" {
			t.Errorf("recent (-want +got):\n%s", diff)
		}
	})
	t.Run("age", func(t *testing.T) {
		l := sentLog{ttl: time.Minute}
		for i := range 3 {
			r, p, s := req(fmt.Sprint("request ", i))
			l.add(r, p, s, 1_000_000, start.Add(time.Duration(i)*40*time.Second))
		}
		// At 99 s: request 0 (sent at 0 s) is gone, request 1 (40 s) is not yet.
		if diff := cmp.Diff([]string{"request 2", "request 1"}, firstTexts(l.recent(start.Add(99*time.Second)))); diff != "" {
			t.Errorf("recent (-want +got):\n%s", diff)
		}
		if len(l.entries) != 2 {
			t.Errorf("%d requests held, want 2", len(l.entries))
		}
		l.expire(start.Add(139 * time.Second))
		if len(l.entries) == 0 {
			t.Error("expired before the newest request's lifetime ended")
		}
		l.expire(start.Add(140 * time.Second))
		if len(l.entries) != 0 {
			t.Errorf("%d requests held after the newest one's lifetime, want none", len(l.entries))
		}
	})
	t.Run("memory", func(t *testing.T) {
		l := sentLog{ttl: time.Hour}
		big := strings.Repeat("tokens of an old history ", 400)
		usable := budget.EstimateText(big) + 100 // each request alone fits; three distinct ones do not
		for i := range 3 {
			r, p, s := req(fmt.Sprint(i, big))
			l.add(r, p, s, usable, start)
		}
		if got := len(l.entries); got != sentWindows {
			t.Errorf("%d requests held, want %d (twice the usable input)", got, sentWindows)
		}
		r, p, s := req(big + big + big) // larger than the bound alone: kept, alone
		l.add(r, p, s, usable, start)
		if len(l.entries) != 1 || l.entries[0].req != r {
			t.Errorf("%d requests held, want the newest alone", len(l.entries))
		}
	})
	t.Run("shared contents", func(t *testing.T) {
		l := sentLog{ttl: time.Hour}
		a, pa, sa := req("system prompt", "first question")
		l.add(a, pa, sa, 1_000_000, start)
		b, pb, sb := req("system prompt", "first question", "second question")
		l.add(b, pb, sb, 1_000_000, start)
		if b.Contents[0] != a.Contents[0] || b.Contents[1] != a.Contents[1] {
			t.Error("equal contents are held twice")
		}
		if got := distinctTokens(l.entries); got != sb[0]+sb[1]+sb[2] || l.distinct != got {
			t.Errorf("distinct tokens %d (counted %d), want %d", got, l.distinct, sb[0]+sb[1]+sb[2])
		}
	})
	// A content whose print is a kept one's but whose bytes differ (what a print that looks at
	// a text's length and edges gives two test runs, or a 64-bit collision) is kept as sent.
	t.Run("same print, other bytes", func(t *testing.T) {
		l := sentLog{ttl: time.Hour}
		a, pa, sa := req("system prompt", "--- PASS: TestService (0.01s)")
		l.add(a, pa, sa, 1_000_000, start)
		b, _, sb := req("system prompt", "--- PASS: TestService (0.01s)", "--- FAIL: TestService (0.01s)")
		l.add(b, []uint64{pa[0], pa[1], pa[1]}, sb, 1_000_000, start)
		if got := b.Contents[2].Parts[0].Text; got != "--- FAIL: TestService (0.01s)" {
			t.Errorf("the kept request shows %q, want the content it was sent with", got)
		}
		if b.Contents[1] != a.Contents[1] {
			t.Error("an equal content is held twice")
		}
	})
	t.Run("index", func(t *testing.T) {
		l := sentLog{ttl: time.Minute}
		for i := range 30 {
			texts := []string{"system prompt"}
			for k := max(i-5, 0); k <= i; k++ {
				texts = append(texts, fmt.Sprint("turn ", k, " ", strings.Repeat("words ", 10*k)))
			}
			r, p, s := req(texts...)
			l.add(r, p, s, 400, start.Add(time.Duration(i)*10*time.Second))
			if want := distinctTokens(l.entries); l.distinct != want || len(l.kept) != distinctPrints(l.entries) {
				t.Fatalf("after request %d: distinct tokens counted %d, want %d; %d prints indexed, want %d", i, l.distinct, want, len(l.kept), distinctPrints(l.entries))
			}
		}
		l.expire(start.Add(time.Hour))
		if l.entries != nil || l.kept != nil || l.distinct != 0 {
			t.Errorf("expired log holds %d requests, %d indexed prints, %d tokens", len(l.entries), len(l.kept), l.distinct)
		}
	})
}

// distinctTokens is the estimated size of the distinct contents of entries, estimated afresh.
func distinctTokens(entries []sentRequest) int {
	seen := map[uint64]bool{}
	n := 0
	for _, e := range entries {
		for i, p := range e.prints {
			if !seen[p] {
				seen[p] = true
				n += budget.EstimateContent(e.req.Contents[i])
			}
		}
	}
	return n
}

// distinctPrints is the number of distinct prints of entries.
func distinctPrints(entries []sentRequest) int {
	seen := map[uint64]bool{}
	for _, e := range entries {
		for _, p := range e.prints {
			seen[p] = true
		}
	}
	return len(seen)
}

// An idle session holds no request once the newest one's cache lifetime is over.
func TestSentRequestsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := New(adkctx.Config{Compaction: &compaction.Config{Summarizer: &compaction.LLMSummarizer{Model: &summaryModel{}}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.UseStore(&memStore{}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		defer e.Close(ctx)
		for i := range 3 {
			if err := e.BeforeModel(ctx, testCall{inv: "i"}, nil, newRequest(fmt.Sprint("question ", i)), nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Minute)
		}
		st := e.state(keyOf(testCall{}))
		held := func() int {
			st.mu.Lock()
			defer st.mu.Unlock()
			return len(st.sent.entries)
		}
		if n := held(); n != 3 {
			t.Fatalf("%d requests held, want 3", n)
		}
		time.Sleep(sentTTL - time.Minute - time.Second)
		synctest.Wait()
		if n := held(); n != 3 {
			t.Errorf("%d requests held before the newest one's lifetime ended, want 3", n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := held(); n != 0 {
			t.Errorf("%d requests held after it, want none", n)
		}
	})
}
