package recalltools

import (
	"bytes"
	"context"
	"log"
	"testing"
	"time"

	"google.golang.org/adk/v2/agent"
)

// scopedInvocation is an invocation of an agent in isolation scope "task-7", on branch "root.task".
type scopedInvocation struct {
	agent.InvocationContext // only the methods below are called
}

func (scopedInvocation) IsolationScope() string      { return "task-7" }
func (scopedInvocation) Branch() string              { return "root.task" }
func (scopedInvocation) Artifacts() agent.Artifacts  { return nil }
func (scopedInvocation) Deadline() (time.Time, bool) { return context.Background().Deadline() }
func (scopedInvocation) Done() <-chan struct{}       { return context.Background().Done() }
func (scopedInvocation) Err() error                  { return context.Background().Err() }
func (scopedInvocation) Value(key any) any           { return context.Background().Value(key) }
func (scopedInvocation) WithICDelta(*agent.InvocationContextDelta) agent.InvocationContext {
	return nil
}

// A tool of an agent in an isolation scope searches the history as that scope's agents see it
// (its branch comes with the tool context, which is the call's glue.Call), and reading the scope
// writes nothing on the standard logger (adk-go v2.2.0's tool context answers IsolationScope with
// "" and a log line).
func TestScopeReadsTheIsolationScope(t *testing.T) {
	var out bytes.Buffer
	prev := log.Writer()
	log.SetOutput(&out)
	defer log.SetOutput(prev)
	tc := agent.NewToolContext(scopedInvocation{}, "call-1", nil, nil)
	if got, want := scope(tc), "task-7"; got != want {
		t.Errorf("scope = %q, want %q", got, want)
	}
	if got, want := tc.Branch(), "root.task"; got != want {
		t.Errorf("branch = %q, want %q", got, want)
	}
	if out.Len() > 0 {
		t.Errorf("logged: %s", out.String())
	}
}
