package hooks

import (
	"context"
	"maps"
	"slices"
	"time"

	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/glue"
)

// version tells the shared glue adk-go v1's types and how its events convert; version.Wrap
// makes the session wrapper.
var version = &glue.Service[session.Session, session.State, session.Events, *session.Event,
	session.CreateRequest, session.CreateResponse, session.GetRequest, session.GetResponse,
	session.ListRequest, session.ListResponse, session.DeleteRequest]{
	Kind: glue.Kind[session.Session, *session.Event]{
		Core:    coreEvents,
		ID:      func(e *session.Event) string { return e.ID },
		Summary: summaryEvent,
		WithContent: func(e *session.Event, c *genai.Content) *session.Event {
			cp := *e // a shallow copy: the view never changes what the session holds
			cp.Content = c
			return &cp
		},
		Events: func(s session.Session) glue.Events[*session.Event] { return s.Events() },
	},
	Marker: func(ctx context.Context, invocation string, ts time.Time, metadata map[string]any) *session.Event {
		ev := session.NewEventWithContext(ctx, invocation)
		ev.Timestamp, ev.Author, ev.CustomMetadata = ts, "user", metadata
		return ev
	},
}

// summaryEvent is the event a view shows for a summary, in the place of event at.
func summaryEvent(it compaction.Item, at *session.Event) *session.Event {
	return &session.Event{
		ID: it.EventID, Timestamp: at.Timestamp, InvocationID: at.InvocationID, Author: "user",
		LLMResponse: model.LLMResponse{Content: it.Summary, CustomMetadata: map[string]any{compaction.SummaryMetadataKey: it.MarkerID}},
	}
}

// coreEvents converts events for the adk-go-independent core (pointers shared, nothing copied).
func coreEvents(evs []*session.Event) []compaction.Event {
	out := make([]compaction.Event, len(evs))
	for i, e := range evs {
		out[i] = compaction.Event{
			ID: e.ID, InvocationID: e.InvocationID, Author: e.Author, Branch: e.Branch, Timestamp: e.Timestamp,
			Content: e.Content, Metadata: e.CustomMetadata, LongRunningToolIDs: e.LongRunningToolIDs,
			ConfirmationIDs: slices.Sorted(maps.Keys(e.Actions.RequestedToolConfirmations)),
			ErrorCode:       e.ErrorCode, Partial: e.Partial, Final: e.IsFinalResponse(), Usage: e.UsageMetadata,
		}
	}
	return out
}
