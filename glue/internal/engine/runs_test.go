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
	if err := e.UseStore(&memStore{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer e.Close(ctx)
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

// The appends of a runner without the plugin are told from an application's writes by what
// adk-go's runner does: it stores a run's user message with the run's context, then the plugin's
// BeforeRun comes, then the agent's events. Only an agent's event of a run whose user message
// was stored and whose start the plugin never saw is plugin_missing.
func TestNoteAppendTellsARunWithoutThePlugin(t *testing.T) {
	type step struct {
		beforeRun   bool   // the plugin saw run start
		run, author string // an append made in run ("": outside a run)
	}
	cases := []struct {
		name    string
		steps   []step
		missing bool
	}{
		{"a run with the plugin", []step{{run: "r1", author: "user"}, {beforeRun: true, run: "r1"}, {run: "r1", author: "agent"}}, false},
		{"a run without the plugin", []step{{run: "r1", author: "user"}, {run: "r1", author: "agent"}}, true},
		{"agent events outside a run", []step{{author: "agent"}, {author: "user"}, {author: "agent"}}, false},
		{"a run whose user message this process did not see", []step{{run: "r1", author: "agent"}}, false},
		{"a later run with the plugin, an earlier one without",
			[]step{{run: "r1", author: "user"}, {beforeRun: true, run: "r1"}, {run: "r2", author: "user"}, {run: "r2", author: "agent"}}, true},
		{"a run's own user event after its start", []step{{run: "r1", author: "user"}, {beforeRun: true, run: "r1"}, {run: "r1", author: "user"},
			{run: "r1", author: "agent"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := New(adkctx.Config{Compaction: &compaction.Config{}})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.UseStore(&memStore{}); err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			s := keyOf(testCall{})
			for _, st := range c.steps {
				if st.beforeRun {
					if err := e.BeforeRun(context.Background(), s, st.run, nil, true, func() []compaction.Event { return nil }); err != nil {
						t.Fatal(err)
					}
					continue
				}
				e.NoteAppend(s, st.run, st.author)
			}
			var w *adkctx.WiringError
			if got := errors.As(e.Check(), &w) && w.Problem == "plugin_missing"; got != c.missing {
				t.Errorf("plugin_missing reported: %v, want %v (Check: %v)", got, c.missing, e.Check())
			}
		})
	}
}
