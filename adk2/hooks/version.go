package hooks

// What differs between adk-go v1 and v2 for this package, and only that: the rest of the glue is
// generated from the adk-go v1 glue (package github.com/adkctx/adkctx/hooks) with its import
// paths rewritten (go run ./internal/cmd/glue2 in the core module; CI fails on a stale copy).

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue"
)

// databasePackage is the package of adk-go's database session service (see gormOf).
const databasePackage = "google.golang.org/adk/v2/session/database"

// callbackContext is what adk-go hands the model callbacks; toolContext the tool callbacks: one
// unified agent.Context, of which the callbacks call only what a callback context supports.
type (
	callbackContext = agent.Context
	toolContext     = agent.Context
)

// newEvent returns a new event of invocation invocationID.
func newEvent(ctx context.Context, invocationID string) *session.Event {
	return session.NewEvent(ctx, invocationID)
}

// coreEvent converts an event for the adk-go-independent core (pointers shared, nothing copied):
// the isolation scope becomes the core's Scope. Workflow fields (Routes, NodeInfo, Output) are
// not the model's: an event with only those has no content, and joins its invocation without
// counting as one.
func coreEvent(e *session.Event) compaction.Event {
	return compaction.Event{
		ID: e.ID, InvocationID: e.InvocationID, Author: e.Author, Branch: e.Branch, Scope: e.IsolationScope,
		Timestamp: e.Timestamp, Content: e.Content, Metadata: e.CustomMetadata, LongRunningToolIDs: e.LongRunningToolIDs,
		ConfirmationIDs: slices.Sorted(maps.Keys(e.Actions.RequestedToolConfirmations)),
		ErrorCode:       e.ErrorCode, Partial: e.Partial, Final: e.IsFinalResponse(), Usage: e.UsageMetadata,
		Source: e,
	}
}

// inScope puts a summary event in the isolation scope of the events it stands for: adk-go shows
// it to that scope's agents only.
func inScope(ev *session.Event, scope string) { ev.IsolationScope = scope }

// saverOf returns how the engine saves a tool's full output: through the tool context's
// artifacts. adk-go v2.2.0 hands a tool context artifacts that record each save around the
// runner's artifact service, also when there is none: their Save then panics, which is taken
// as "no artifact service" (the output is cut without being saved, as in adk-go v1).
func saverOf(ctx toolContext) func(ctx context.Context, name string, part *genai.Part) error {
	arts := ctx.Artifacts()
	if arts == nil {
		return nil
	}
	return func(ctx context.Context, name string, data *genai.Part) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = glue.ErrNoArtifactService
			}
		}()
		_, err = arts.Save(ctx, name, data)
		return err
	}
}
