package compaction

import (
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/record"
)

// Event is what compaction reads of one stored session event. The glue for each adk-go major
// version (package hooks) converts its session.Event to an Event by copying these fields; the
// pointers (content, metadata) are shared, never mutated.
type Event struct {
	ID           string
	InvocationID string
	Author       string
	Branch       string
	// Scope is the event's isolation scope (adk-go v2's Event.IsolationScope; always "" in v1).
	// Compaction works per scope: a marker covers events of its own scope only.
	Scope     string
	Timestamp time.Time
	Content   *genai.Content
	// Metadata is the event's CustomMetadata, where markers are stored (see MetadataKey).
	Metadata           map[string]any
	LongRunningToolIDs []string
	// ConfirmationIDs are the function call ids of the tool confirmations the event requests
	// (the keys of EventActions.RequestedToolConfirmations).
	ConfirmationIDs []string
	ErrorCode       string
	Partial         bool
	// Final is adk-go's Event.IsFinalResponse().
	Final bool
	// Usage is the model's reported usage on a model response event.
	Usage *genai.GenerateContentResponseUsageMetadata
	// Source is the glue's own event this one converts (an adk-go *session.Event): the core
	// never reads it, and hands it back where a view shows the event.
	Source any `json:"-"`
}

// isUser reports whether the event was written by the user (or a client answering a call).
func (e *Event) isUser() bool { return record.IsUser(e.Author, e.Content) }

// isMarkerOnly reports whether the event exists only to carry a marker record (record.MarkerOnly).
func (e *Event) isMarkerOnly() bool { return record.MarkerOnly(e.Metadata, e.Content) }

// hasRecord reports whether the event carries a marker record (valid or not).
func hasRecord(e *Event) bool { return e != nil && record.Has(e.Metadata) }

// userText returns the text the user typed in e ("" for tool answers and non-user events).
func (e *Event) userText() string {
	if !e.isUser() || e.Content == nil {
		return ""
	}
	return textOf(e.Content)
}

// textOf joins the non-thought text parts of c with single spaces between them.
func textOf(c *genai.Content) string { return record.Text(c) }
