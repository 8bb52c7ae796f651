package plan

import (
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
)

// isUser reports whether e was written by the user (or a client answering a call).
func isUser(e *compaction.Event) bool {
	return e.Author == "user" || (e.Author == "" && e.Content != nil && e.Content.Role == genai.RoleUser)
}

// hasContent reports whether e carries anything a model would see.
func hasContent(e *compaction.Event) bool {
	return e.Content != nil && len(e.Content.Parts) > 0
}

// hasRecord reports whether e carries a marker record (valid or not).
func hasRecord(e *compaction.Event) bool {
	v, ok := e.Metadata[compaction.MetadataKey]
	return ok && v != nil
}

// isMarkerOnly reports whether e exists only to carry a marker record: such events never appear
// in a view. An event with content that also carries a record is shown like any other.
func isMarkerOnly(e *compaction.Event) bool {
	return hasRecord(e) && !hasContent(e)
}

// textOf joins the non-thought text parts of c with single spaces between them.
func textOf(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var out string
	for _, p := range c.Parts {
		if p == nil || p.Thought || p.Text == "" {
			continue
		}
		if out != "" {
			out += " "
		}
		out += p.Text
	}
	return out
}
