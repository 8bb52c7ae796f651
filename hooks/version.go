package hooks

// What differs between adk-go v1 and v2 for this package, and only that: the rest of the glue is
// written once, here, and generated for adk-go v2 (adk2/hooks) with its import paths rewritten
// (go run ./internal/cmd/glue2 in the core module; CI fails on a stale copy). adk2/hooks keeps
// its own version.go.

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// databasePackage is the package of adk-go's database session service (see gormOf).
const databasePackage = "google.golang.org/adk/session/database"

// callbackContext is what adk-go hands the model callbacks; toolContext the tool callbacks.
type (
	callbackContext = agent.CallbackContext
	toolContext     = agent.ToolContext
)

// newEvent returns a new event of invocation invocationID.
func newEvent(ctx context.Context, invocationID string) *session.Event {
	return session.NewEventWithContext(ctx, invocationID)
}

// coreEvent converts an event for the adk-go-independent core (pointers shared, nothing copied).
func coreEvent(e *session.Event) compaction.Event {
	return compaction.Event{
		ID: e.ID, InvocationID: e.InvocationID, Author: e.Author, Branch: e.Branch, Timestamp: e.Timestamp,
		Content: e.Content, Metadata: e.CustomMetadata, LongRunningToolIDs: e.LongRunningToolIDs,
		ConfirmationIDs: slices.Sorted(maps.Keys(e.Actions.RequestedToolConfirmations)),
		ErrorCode:       e.ErrorCode, Partial: e.Partial, Final: e.IsFinalResponse(), Usage: e.UsageMetadata,
		Source: e,
	}
}

// inScope puts a summary event in the isolation scope of the events it stands for (adk-go v1
// has none).
func inScope(*session.Event, string) {}

// saverOf returns how the engine saves a tool's full output: through the tool context's
// artifacts, nil when the runner has no artifact service.
func saverOf(ctx toolContext) func(ctx context.Context, name string, part *genai.Part) error {
	arts := ctx.Artifacts()
	if arts == nil {
		return nil
	}
	return func(ctx context.Context, name string, data *genai.Part) error {
		_, err := arts.Save(ctx, name, data)
		return err
	}
}
