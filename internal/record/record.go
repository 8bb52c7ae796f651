// Package record holds what the writer of compaction's marker records (the planner,
// glue/internal/plan) and their reader (package compaction) agree on besides the record's
// fields: the metadata key, the version, the unit and range of its timestamps, the smallest
// excerpt size, and the rules both read events by (who wrote one, whether a model sees it,
// whether it carries a record, its text, the JSON text of its calls and results).
package record

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/genai"
)

// MetadataKey is the CustomMetadata key of the event that stores a marker record: the value of
// compaction.MetadataKey, which documents it for users (a compaction test holds them equal).
const MetadataKey = "_adk_compaction"

// Version is the version of the records adkctx writes and reads. A record of any other version
// is ignored (with a warning) and hides nothing.
const Version = 2

// MaxSeconds bounds a record's timestamps (about year 5138), so that Micros never overflows: an
// overflowing timestamp would compare as the most negative one.
const MaxSeconds = 1e11

// MinExcerptBytes is the smallest excerpt of a tool result the cutter bounds exactly: the least
// compaction.Config.RetainedToolResultBytes, and what a view raises a smaller stored size to.
const MinExcerptBytes = 512

// Seconds converts t to float seconds since the Unix epoch at microsecond precision, the unit of
// the record's timestamps.
func Seconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// Time converts record seconds back to a time (UTC); 0, or seconds out of range, give the zero
// time.
func Time(s float64) time.Time {
	if s <= 0 || !Finite(s) || s > MaxSeconds {
		return time.Time{}
	}
	return time.UnixMicro(Micros(s)).UTC()
}

// Micros converts float seconds to whole microseconds (rounded).
func Micros(s float64) int64 { return int64(math.Round(s * 1e6)) }

// Finite reports whether f is neither NaN nor infinite.
func Finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// HasText reports whether c holds text a model reads (a text part, not a thought, not blank):
// what a record's summary must hold, and what a summarizer's reply is rejected without.
func HasText(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && !p.Thought && strings.TrimSpace(p.Text) != "" {
			return true
		}
	}
	return false
}

// IsUser reports whether an event of author with content c was written by the user (or a client
// answering a call).
func IsUser(author string, c *genai.Content) bool {
	return author == "user" || (author == "" && c != nil && c.Role == genai.RoleUser)
}

// HasContent reports whether c carries anything a model would see.
func HasContent(c *genai.Content) bool { return c != nil && len(c.Parts) > 0 }

// Has reports whether an event's metadata carries a marker record (valid or not).
func Has(metadata map[string]any) bool {
	v, ok := metadata[MetadataKey]
	return ok && v != nil
}

// MarkerOnly reports whether an event exists only to carry a marker record: such events never
// appear in a view. An event with content that also carries a record is shown like any other.
func MarkerOnly(metadata map[string]any, c *genai.Content) bool {
	return Has(metadata) && !HasContent(c)
}

// Text joins the non-thought text parts of c with single spaces between them.
func Text(c *genai.Content) string {
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

// JSONText is v encoded as JSON ("{}" for nil; the type in angle brackets when it does not
// encode): how a summarizer's transcript shows a call's arguments or a result, and how the
// planner keys a call it matches between stored events and a request sent.
func JSONText(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%T>", v)
	}
	return string(b)
}
