package compaction

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/genai"
)

// MetadataKey is the key under which a compaction marker is stored in an event's
// CustomMetadata. adk-go v1's EventActions has no compaction field, so the marker travels in
// CustomMetadata, which the in-memory, database and Vertex AI session services all keep.
const MetadataKey = "_adk_compaction"

// SummaryHeader starts the text of every summary a view shows, so the model reads the summary
// as what it is.
const SummaryHeader = "[Summary of earlier conversation]"

// markerVersion is the version of the records this package writes. Version 1 records (adkctx's
// first release: ranges by timestamps and positions) are still read; see Marker.
const markerVersion = 2

// Trigger says why a compaction ran.
type Trigger string

// The triggers.
const (
	// TriggerInvocations: θ invocations beyond the retained tail were not yet summarized
	// (sliding window, after an invocation).
	TriggerInvocations Trigger = "invocations"
	// TriggerTokens: a request passed the soft limit.
	TriggerTokens Trigger = "tokens"
	// TriggerManual: the application asked (Hooks.Compact).
	TriggerManual Trigger = "manual"
)

// Marker is one compaction: CompactedContent replaces the events it covers.
//
// A marker covers the events listed in EventIDs plus every event the marker named by Previous
// covers (recursively): a marker chain. Coverage is by event id, never by position or
// timestamp, so an event stored late (a replica with a lagging clock) is never hidden without
// having been summarized. When several valid markers exist, the one with the highest Seq wins
// (see View); its summary rolls up every earlier one.
//
// StartTimestamp, EndTimestamp and CompactedContent convert 1:1 to adk-python's and adk-go
// v2's EventCompaction record.
type Marker struct {
	// Seq is the marker's generation: 1 for the first, 1 + the Seq of Previous otherwise.
	Seq int
	// Previous is the id of the marker event this one rolls up ("" for the first).
	Previous string
	// EventIDs are the events this marker covers besides those its Previous covers.
	EventIDs []string
	// Scope is the isolation scope of the covered events (adk-go v2; "" in v1).
	Scope string
	// StartTimestamp and EndTimestamp are the smallest and largest timestamps of all covered
	// events (the chain included), in seconds since the Unix epoch.
	StartTimestamp, EndTimestamp float64
	// CompactedContent is the summary (without SummaryHeader, which the view adds).
	CompactedContent *genai.Content
	// Ledger is the exact record of what the covered events did (files, tool counts, user
	// instructions, errors); the next compaction continues it instead of counting again.
	Ledger *Ledger
	// FirstEventID, LastEventID, FirstInvocationID and LastInvocationID name the oldest and the
	// newest covered events (the chain included), in stream order.
	FirstEventID, LastEventID           string
	FirstInvocationID, LastInvocationID string
	// EventCount and Invocations count every covered event and invocation (the chain included).
	EventCount, Invocations int
	// KeepInvocations is the raw tail, in whole invocations, that later sliding-window
	// compactions keep (at least Config.RetainRecentInvocations): a token-triggered compaction
	// sets it to the tail it kept, so a sliding window never wipes that tail.
	KeepInvocations int
	// OriginalTokens estimates what the covered part weighed in the view before (the previous
	// summary included); CompactedTokens the summary; CompressionRatio is their ratio.
	OriginalTokens, CompactedTokens int
	CompressionRatio                float64
	Trigger                         Trigger
	// Summarizer names the summarizer that wrote CompactedContent.
	Summarizer string
	// ExcerptedEventIDs are events this marker left raw whose tool results the view shows cut to
	// ExcerptBytes (head and tail; Config.RetainedToolResultBytes): the compaction re-sends the
	// raw tail at full price anyway, so that is when shortening it costs no cached prefix.
	// Storage keeps them whole.
	ExcerptedEventIDs []string
	ExcerptBytes      int

	// Version is the record's version: 2, or 1 for a record written by adkctx's first release.
	// A version 1 record has no Seq and no EventIDs; it covers, like before, the events between
	// FirstEventID and LastEventID whose timestamps lie inside its range (EdgeEventIDs settle
	// ties at the edges; ExcludedEventIDs stay raw).
	Version                        int
	EdgeEventIDs, ExcludedEventIDs []string
}

// record is the stored JSON shape.
type record struct {
	Version           *int           `json:"version,omitempty"`
	Seq               int            `json:"seq,omitempty"`
	Previous          string         `json:"previousMarkerId,omitempty"`
	EventIDs          []string       `json:"eventIds,omitempty"`
	Scope             string         `json:"scope,omitempty"`
	StartTimestamp    *float64       `json:"startTimestamp"`
	EndTimestamp      *float64       `json:"endTimestamp"`
	CompactedContent  *genai.Content `json:"compactedContent"`
	Ledger            *Ledger        `json:"ledger,omitempty"`
	FirstEventID      string         `json:"firstEventId"`
	LastEventID       string         `json:"lastEventId"`
	FirstInvocationID string         `json:"firstInvocationId,omitempty"`
	LastInvocationID  string         `json:"lastInvocationId,omitempty"`
	EventCount        *int           `json:"eventCount"`
	Invocations       int            `json:"invocations,omitempty"`
	KeepInvocations   int            `json:"keepInvocations,omitempty"`
	OriginalTokens    int            `json:"originalTokens"`
	CompactedTokens   int            `json:"compactedTokens"`
	CompressionRatio  float64        `json:"compressionRatio"`
	Trigger           Trigger        `json:"trigger,omitempty"`
	Summarizer        string         `json:"summarizer,omitempty"`
	ExcerptedEventIDs []string       `json:"excerptedEventIds,omitempty"`
	ExcerptBytes      int            `json:"excerptBytes,omitempty"`
	EdgeEventIDs      []string       `json:"edgeEventIds,omitempty"`
	ExcludedEventIDs  []string       `json:"excludedEventIds,omitempty"`
}

// InvalidMarkerError reports a marker record that cannot be used. A view ignores such a record
// (with a warning) and hides nothing because of it.
type InvalidMarkerError struct {
	EventID string
	Reason  string // what is wrong; never conversation text
}

func (e *InvalidMarkerError) Error() string {
	if e.EventID == "" {
		return "compaction: invalid marker: " + e.Reason
	}
	return "compaction: invalid marker in event " + e.EventID + ": " + e.Reason
}

// seconds converts t to float seconds since the Unix epoch at microsecond precision, the unit
// of the record's timestamps.
func seconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

// maxSeconds bounds a record's timestamps (about year 5138), so that micros never overflows: an
// overflowing timestamp would compare as the most negative one.
const maxSeconds = 1e11

// micros converts float seconds to whole microseconds (rounded).
func micros(s float64) int64 { return int64(math.Round(s * 1e6)) }

// encode returns the record as the JSON-compatible map stored under MetadataKey: the exact shape
// a database round trip produces (numbers as float64, lists as []any), so in-memory and database
// sessions hold the same value. It writes m's own version (the compactor writes markerVersion), so
// a record read back is the marker encoded.
func (m *Marker) encode() (map[string]any, error) {
	v, start, end, count := m.Version, m.StartTimestamp, m.EndTimestamp, m.EventCount
	ratio := m.CompressionRatio
	if !finite(ratio) {
		ratio = 0
	}
	b, err := json.Marshal(record{
		Version: &v, Seq: m.Seq, Previous: m.Previous, EventIDs: m.EventIDs, Scope: m.Scope,
		StartTimestamp: &start, EndTimestamp: &end, CompactedContent: m.CompactedContent, Ledger: m.Ledger,
		FirstEventID: m.FirstEventID, LastEventID: m.LastEventID,
		FirstInvocationID: m.FirstInvocationID, LastInvocationID: m.LastInvocationID,
		EventCount: &count, Invocations: m.Invocations, KeepInvocations: m.KeepInvocations,
		OriginalTokens: m.OriginalTokens, CompactedTokens: m.CompactedTokens, CompressionRatio: ratio,
		Trigger: m.Trigger, Summarizer: m.Summarizer,
		ExcerptedEventIDs: m.ExcerptedEventIDs, ExcerptBytes: m.ExcerptBytes,
		EdgeEventIDs: m.EdgeEventIDs, ExcludedEventIDs: m.ExcludedEventIDs,
	})
	if err != nil {
		return nil, fmt.Errorf("compaction: encode marker: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("compaction: encode marker: %w", err)
	}
	return out, nil
}

// markerMetadata returns the CustomMetadata of the event that stores m: {MetadataKey: record}.
// The glue appends an event with this metadata, no content, author "user".
func markerMetadata(m *Marker) (map[string]any, error) {
	if err := m.validate(""); err != nil {
		return nil, err
	}
	rec, err := m.encode()
	if err != nil {
		return nil, err
	}
	return map[string]any{MetadataKey: rec}, nil
}

// ReadMarker parses the marker record an event carries. It accepts what any session service
// hands back (a map after a database round trip, or JSON text). It returns (nil, nil) when e
// carries no record and an *InvalidMarkerError when the record cannot be used.
func ReadMarker(e *Event) (*Marker, error) {
	if !hasRecord(e) {
		return nil, nil
	}
	return parseRecord(e.Metadata[MetadataKey], e.ID)
}

func parseRecord(raw any, eventID string) (m *Marker, err error) {
	bad := func(reason string) error { return &InvalidMarkerError{EventID: eventID, Reason: reason} }
	defer func() {
		// A record may hold anything a caller stored; never let it crash history building.
		if r := recover(); r != nil {
			m, err = nil, bad(fmt.Sprintf("cannot decode record (%T)", raw))
		}
	}()
	var data []byte
	switch v := raw.(type) {
	case map[string]any:
		if data, err = json.Marshal(v); err != nil {
			return nil, bad("cannot encode record")
		}
	case string:
		data = []byte(v)
	case []byte:
		data = v
	case json.RawMessage:
		data = v
	default:
		return nil, bad(fmt.Sprintf("unsupported record type %T", raw))
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, bad("record does not decode")
	}
	if r.StartTimestamp == nil || r.EndTimestamp == nil {
		return nil, bad("missing startTimestamp or endTimestamp")
	}
	if r.EventCount == nil {
		return nil, bad("missing eventCount")
	}
	m = &Marker{
		Seq: r.Seq, Previous: r.Previous, EventIDs: r.EventIDs, Scope: r.Scope,
		StartTimestamp: *r.StartTimestamp, EndTimestamp: *r.EndTimestamp,
		CompactedContent: r.CompactedContent, Ledger: r.Ledger,
		FirstEventID: r.FirstEventID, LastEventID: r.LastEventID,
		FirstInvocationID: r.FirstInvocationID, LastInvocationID: r.LastInvocationID,
		EventCount: *r.EventCount, Invocations: r.Invocations, KeepInvocations: r.KeepInvocations,
		OriginalTokens: r.OriginalTokens, CompactedTokens: r.CompactedTokens, CompressionRatio: r.CompressionRatio,
		Trigger: r.Trigger, Summarizer: r.Summarizer,
		ExcerptedEventIDs: r.ExcerptedEventIDs, ExcerptBytes: r.ExcerptBytes,
		Version: 1, EdgeEventIDs: r.EdgeEventIDs, ExcludedEventIDs: r.ExcludedEventIDs,
	}
	if r.Version != nil {
		m.Version = *r.Version
	}
	if c := m.CompactedContent; c != nil {
		parts := c.Parts[:0]
		for _, p := range c.Parts {
			if p != nil {
				parts = append(parts, p)
			}
		}
		c.Parts = parts
	}
	if err := m.validate(eventID); err != nil {
		return nil, err
	}
	return m, nil
}

// legacy reports whether m is a version 1 record (range rules instead of an id list).
func (m *Marker) legacy() bool { return m.Version < 2 }

func (m *Marker) validate(eventID string) error {
	bad := func(reason string) error { return &InvalidMarkerError{EventID: eventID, Reason: reason} }
	switch {
	case m == nil:
		return bad("nil marker")
	case !finite(m.StartTimestamp) || !finite(m.EndTimestamp):
		return bad("non-finite timestamp")
	case m.StartTimestamp <= 0 || m.EndTimestamp <= 0:
		return bad("missing or non-positive timestamp")
	case m.StartTimestamp > maxSeconds || m.EndTimestamp > maxSeconds:
		return bad("timestamp out of range")
	case micros(m.EndTimestamp) < micros(m.StartTimestamp):
		return bad("inverted range (endTimestamp < startTimestamp)")
	case m.EventCount < 1:
		return bad("empty range (eventCount < 1)")
	case m.CompactedContent == nil || !hasText(m.CompactedContent):
		return bad("compactedContent has no text")
	case m.Version < 0:
		return bad("negative version")
	}
	if m.legacy() {
		if m.FirstEventID == "" || m.LastEventID == "" {
			return bad("missing firstEventId or lastEventId")
		}
		return nil
	}
	switch {
	case m.Seq < 1:
		return bad("seq must be ≥ 1")
	case len(m.EventIDs) == 0:
		return bad("no eventIds")
	case m.Seq > 1 && m.Previous == "":
		return bad("seq > 1 without previousMarkerId")
	case m.EventCount < len(m.EventIDs):
		return bad("eventCount below the number of eventIds")
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func hasText(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && !p.Thought && strings.TrimSpace(p.Text) != "" {
			return true
		}
	}
	return false
}
