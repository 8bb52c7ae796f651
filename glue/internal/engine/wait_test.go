package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/processors/response"
)

// memStore is a session store in memory: what the compactor reads and appends to.
type memStore struct {
	mu     sync.Mutex
	events []compaction.Event
}

type memSnapshot struct {
	s      *memStore
	events []compaction.Event
}

func (s *memStore) Read(context.Context, compactor.Session, history.Purpose) (compactor.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return memSnapshot{s, append([]compaction.Event(nil), s.events...)}, nil
}

func (m memSnapshot) Events() []compaction.Event { return m.events }

func (m memSnapshot) Changes(ctx context.Context) (history.Changes, error) {
	fresh, _ := m.s.Read(ctx, compactor.Session{}, history.ForView)
	return history.Since(m.events, fresh.Events()), nil
}

func (m memSnapshot) AppendMarker(_ context.Context, inv string, ts time.Time, md map[string]any) (string, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	id := fmt.Sprint("marker-", len(m.s.events))
	m.s.events = append(m.s.events, compaction.Event{ID: id, InvocationID: inv, Author: "user", Timestamp: ts, Metadata: md})
	return id, nil
}

// slowSummarizer takes a while (of the bubble's fake time).
type slowSummarizer struct {
	compaction.ExtractiveSummarizer
}

func (s *slowSummarizer) Summarize(ctx context.Context, in compaction.SummaryInput) (*compaction.Summary, error) {
	time.Sleep(50 * time.Millisecond)
	return s.ExtractiveSummarizer.Summarize(ctx, in)
}

// A turn about to store a large tool result while a compaction of its session is pending waits
// for the compaction when its next request, with the safety margin the budget will add for that
// new content, would pass the hard limit — not only when the request would pass it with the
// margin of the request before. The interleaving is fixed: in a synctest bubble, the summarizer
// sleeps until the turn blocks, so the compaction is pending when the event is stored, and done
// only if the turn waits for it. Before the fix the projection used the last request's margin
// (small: little was new then) and the turn went on to be trimmed.
func TestPendingCompactionIsAwaitedWithTheNewMargin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.InfoLevel)
		info := budget.ModelInfo{Name: "small", ContextWindow: 8192, MaxOutputTokens: 1024}
		e, err := New(adkctx.Config{Logger: zap.New(core), Models: []budget.ModelInfo{info},
			Compaction: &compaction.Config{Interval: 1, RetainRecentInvocations: 1, Summarizer: &slowSummarizer{}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		defer e.Close(ctx) // lets the background compaction end, also when the test fails
		store := &memStore{}
		for i := range 4 { // four invocations: a sliding window is due after each
			inv := fmt.Sprint("inv-", i)
			store.events = append(store.events,
				compaction.Event{ID: inv + "-u", InvocationID: inv, Author: "user", Timestamp: time.Now().Add(time.Duration(2*i) * time.Second),
					Content: genai.NewContentFromText(fmt.Sprintf("question %d %s", i, strings.Repeat("words ", 200)), genai.RoleUser)},
				compaction.Event{ID: inv + "-m", InvocationID: inv, Author: "agent", Final: true, Timestamp: time.Now().Add(time.Duration(2*i+1) * time.Second),
					Content: genai.NewContentFromText(fmt.Sprintf("answer %d %s", i, strings.Repeat("words ", 200)), genai.RoleModel)})
		}
		if err := e.UseStore(store); err != nil {
			t.Fatal(err)
		}
		s := compactor.Session{App: "app", User: "user", ID: "s1"}
		call := testCall{inv: "inv-3", agent: "agent"}
		e.BeforeRun(ctx, s, call.inv, nil, true, func() []compaction.Event { return nil })
		// The last request: about 4,000 tokens, reported as such.
		req := newRequest(strings.Repeat("history words ", 1400))
		req.Model = info.Name
		if err := e.BeforeModel(ctx, call, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		st := e.state(s)
		st.mu.Lock()
		last := st.lastEstimate
		st.mu.Unlock()
		e.AfterModel(ctx, call, &response.LLMResponse{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(last)}})
		// The provider counts new tool output half again as dense as we estimate it: the
		// calibration has learned a margin of half the new content.
		st.mu.Lock()
		st.calibration(info.Name).DeltaMargin = 0.5
		hard := st.limits.Hard
		st.mu.Unlock()
		// A tool result that fits under the hard limit without its margin, not with it.
		room := hard - last
		result := genai.NewContentFromText(strings.Repeat("x", 0), genai.RoleUser)
		for n := 1; budget.EstimateContent(result) < room*4/5; n++ {
			result = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name: "read_file", Response: map[string]any{"content": strings.Repeat("line of output ", 40*n)}}}}}
		}
		if added := budget.EstimateContent(result); last+added > hard || last+added*3/2 <= hard {
			t.Fatalf("the result does not sit between the two projections: %d + %d against %d", last, added, hard)
		}
		// The invocation before ended: its sliding window is scheduled, and pending.
		e.AfterRun(ctx, s, "inv-2", nil)
		if !e.getCompactor().Pending(s) {
			t.Fatal("no compaction pending: the interleaving did not happen")
		}
		e.OnEvent(ctx, s, call.inv, result, false)
		waits := logs.FilterMessage("waited for compaction").All()
		if len(waits) != 1 || waits[0].ContextMap()["done"] != true {
			t.Fatalf("the turn did not wait for the pending compaction: %v", waits)
		}
		if e.getCompactor().Pending(s) {
			t.Error("the compaction is still pending after the wait")
		}
		if n := logs.FilterMessage("compaction").FilterField(zap.String("outcome", "compacted")).Len(); n != 1 {
			t.Errorf("%d compactions stored, want the one waited for", n)
		}
	})
}
