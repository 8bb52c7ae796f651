package compaction

import (
	"strings"

	"google.golang.org/genai"
)

// SummaryMetadataKey marks the summary events a view shows: CustomMetadata[SummaryMetadataKey]
// holds the id of the marker event the summary comes from. Summary events exist only in views,
// never in storage.
const SummaryMetadataKey = "_adk_compaction_summary"

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
