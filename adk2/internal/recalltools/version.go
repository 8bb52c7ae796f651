package recalltools

// What differs between adk-go v1 and v2 for this package, and only that: the rest is generated
// from the adk-go v1 glue (package github.com/adkctx/adkctx/hooks/internal/recalltools) by
// go run ./internal/cmd/glue2 in the core module.

import (
	"time"

	"google.golang.org/adk/v2/agent"
)

// toolContext is what adk-go v2 hands a function tool: the unified agent.Context.
type toolContext = agent.Context

// scope is the caller's isolation scope, so that history search reaches only what the caller's
// agent could see. adk-go v2.2.0's tool context answers IsolationScope with "" and a line on the
// standard logger; the context it derives with WithAgentCancel (the one a tool runs its own work
// in) answers with the invocation's.
func scope(tc toolContext) string {
	ctx, cancel := tc.WithAgentCancel()
	if ctx == nil {
		return ""
	}
	defer cancel()
	return ctx.IsolationScope()
}

// createdAt is an artifact version's creation time (adk-go v2 reports a time.Time).
func createdAt(t time.Time) time.Time { return t }
