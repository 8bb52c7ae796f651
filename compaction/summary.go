package compaction

import (
	"strings"
	"time"

	"google.golang.org/genai"
)

// SummaryMetadataKey marks the summary events a view shows: CustomMetadata[SummaryMetadataKey]
// holds the id of the marker event the summary comes from. Summary events exist only in views,
// never in storage.
const SummaryMetadataKey = "_adk_compaction_summary"

// Item is one entry of a view: a stored event, or a summary standing in for the events its
// marker covers.
type Item struct {
	// Index is the stored event shown; for a summary, the event whose place (timestamp,
	// invocation) the summary takes.
	Index int
	// Summary, when non-nil, is the summary content to show (role user, text starting with
	// SummaryHeader); MarkerID is the id of the marker event it comes from, and EventID the id
	// of the event that shows it (deterministic, so two views of one session agree).
	Summary           *genai.Content
	MarkerID, EventID string
	// Scope is the isolation scope of the events a summary stands for (adk-go v2; "" in v1): its
	// event must carry it, so only the agents of that scope see it. Timestamp and InvocationID
	// are what a summary's event carries: those of the oldest covered event, from the record, so
	// every read of the session shows the same event.
	Scope        string
	Timestamp    time.Time
	InvocationID string
	// Content, when non-nil for a stored event, is what to show instead of the event's own
	// content: its tool results cut to an excerpt (Marker.ExcerptedEventIDs).
	Content *genai.Content
}

// IsSummary reports whether c is the summary content a view shows (role user, first text part
// starting with SummaryHeader): what a budget must pin.
func IsSummary(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			return strings.HasPrefix(p.Text, SummaryHeader)
		}
	}
	return false
}
