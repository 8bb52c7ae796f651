package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/compaction"
)

// An invocation that many others overtook while it ran (several runners serving one busy
// session) is still known to have started through the plugin: its model call and its answer
// are no wiring mistake. Before, the session remembered only the 16 newest starts, running or
// ended, and a slow turn was reported as a runner without the plugin. A model call of an
// invocation the plugin never saw start is still reported, and what is remembered stays bounded.
func TestOvertakenInvocationKeepsItsStart(t *testing.T) {
	e, err := New(adkctx.Config{Compaction: &compaction.Config{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := keyOf(testCall{})
	noEvents := func() []compaction.Event { return nil }
	e.BeforeRun(ctx, s, "slow", nil, true, noEvents)
	for i := range 3 * maxRunsInSession {
		inv := fmt.Sprint("fast-", i)
		e.BeforeRun(ctx, s, inv, nil, true, noEvents)
		if err := e.BeforeModel(ctx, testCall{inv: inv}, nil, newRequest("hi"), nil); err != nil {
			t.Fatal(err)
		}
		e.NoteAppend(s, inv, "model")
		e.AfterRun(ctx, s, inv, nil)
	}
	if err := e.BeforeModel(ctx, testCall{inv: "slow"}, nil, newRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	e.NoteAppend(s, "slow", "model")
	if err := e.Check(); err != nil {
		t.Errorf("an overtaken invocation was reported as a wiring mistake: %v", err)
	}
	st := e.state(s)
	st.mu.Lock()
	n := len(st.runs)
	st.mu.Unlock()
	if n > maxRunsInSession+1 {
		t.Errorf("%d invocations remembered, want at most %d ended ones and the one running", n, maxRunsInSession)
	}

	if err := e.BeforeModel(ctx, testCall{inv: "never-started"}, nil, newRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	var w *adkctx.WiringError
	if err := e.Check(); !errors.As(err, &w) || w.Problem != "plugin_missing" {
		t.Errorf("a model call the plugin never saw start: Check() = %v, want plugin_missing", err)
	}
}
