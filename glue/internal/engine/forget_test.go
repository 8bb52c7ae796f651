package engine

import (
	"context"
	"testing"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
)

// Forget (the wrapper's Delete) drops a session's state with the requests kept for its
// summarizer: a deleted session leaves nothing in the engine's cache of 10,000 sessions, and
// nothing waits for the kept requests' expiry.
func TestForgetReleasesTheSession(t *testing.T) {
	e, err := New(adkctx.Config{Compaction: &compaction.Config{Summarizer: &compaction.LLMSummarizer{Model: &summaryModel{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.UseStore(&memStore{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer e.Close(ctx)
	call := testCall{inv: "inv-1", agent: "agent"}
	if err := e.BeforeModel(ctx, call, nil, newRequest("what does main.go do?"), nil); err != nil {
		t.Fatal(err)
	}
	st, ok := e.sessions.Get(keyOf(call))
	if !ok {
		t.Fatal("no state after a model call")
	}
	st.mu.Lock()
	kept, timer := len(st.sent.entries), st.sent.expiry
	st.mu.Unlock()
	if kept != 1 || timer == nil {
		t.Fatalf("%d requests kept, expiry timer %v: want one, armed", kept, timer != nil)
	}
	e.Forget(keyOf(call))
	if _, ok := e.sessions.Get(keyOf(call)); ok || e.sessions.Len() != 0 {
		t.Errorf("%d sessions' state kept after Forget, want none", e.sessions.Len())
	}
	if timer.Stop() {
		t.Error("the kept requests' expiry timer still runs after Forget")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sent.entries != nil {
		t.Error("the forgotten state still holds its requests")
	}
}
