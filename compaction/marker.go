package compaction

import (
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/record"
)

// MetadataKey is the key under which a compaction marker is stored in an event's
// CustomMetadata. adk-go v1's EventActions has no compaction field, so the marker travels in
// CustomMetadata, which the in-memory, database and Vertex AI session services all keep.
const MetadataKey = "_adk_compaction"

// SummaryHeader starts the text of every summary a view shows, so the model reads the summary
// as what it is.
const SummaryHeader = "[Summary of earlier conversation]"

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

// Marker is one compaction: CompactedContent replaces the events it covers. It is stored as
// JSON (its field tags are the record's names) under MetadataKey.
//
// A marker covers the events listed in EventIDs plus every event the marker named by Previous
// covers (recursively): a marker chain. Coverage is by event id, never by position or
// timestamp, so an event stored late (a replica with a lagging clock) is never hidden without
// having been summarized. When several valid markers exist, the one with the highest Seq wins
// (see the package doc, View); its summary rolls up every earlier one.
//
// StartTimestamp, EndTimestamp and CompactedContent convert 1:1 to adk-python's and adk-go
// v2's EventCompaction record.
type Marker struct {
	// Version is the record's version, 2: a record of any other version is ignored (with a
	// warning) and hides nothing.
	Version int `json:"version"`
	// Seq is the marker's generation: 1 for the first, 1 + the Seq of Previous otherwise.
	Seq int `json:"seq"`
	// Previous is the id of the marker event this one rolls up ("" for the first).
	Previous string `json:"previousMarkerId,omitempty"`
	// EventIDs are the events this marker covers besides those its Previous covers. A marker
	// that covers none (MasksOnly) only shows older tool results as excerpts
	// (ExcerptedEventIDs) and keeps the summary of the marker it rolls up.
	EventIDs []string `json:"eventIds"`
	// Scope is the isolation scope of the covered events (adk-go v2; "" in v1).
	Scope string `json:"scope,omitempty"`
	// StartTimestamp and EndTimestamp are the smallest and largest timestamps of all covered
	// events (the chain included), in seconds since the Unix epoch.
	StartTimestamp float64 `json:"startTimestamp"`
	EndTimestamp   float64 `json:"endTimestamp"`
	// CompactedContent is the summary (without SummaryHeader, which the view adds), or, when
	// SummaryLedger says the summary is composed with the ledger, its own part: a model's text
	// (the ledger's facts are appended), the head an extractive summary keeps of an earlier
	// model-written one (the ledger follows; may be empty).
	CompactedContent *genai.Content `json:"compactedContent,omitempty"`
	// SummaryLedger says how the summary a view shows is composed: "" (CompactedContent is the
	// summary), "whole" (the ledger rendered, the extractive summary), "facts" (CompactedContent
	// with the ledger's facts appended, a model-written summary). SummaryTokens and SummaryBytes
	// are the bounds it was rendered within: the same ledger renders to the same bytes, so the
	// ledger is not stored a second time as text.
	SummaryLedger string `json:"summaryLedger,omitempty"`
	SummaryTokens int    `json:"summaryTokens,omitempty"`
	SummaryBytes  int    `json:"summaryBytes,omitempty"`
	// Ledger is the exact record of what the covered events did (files, tool counts, the user's
	// messages, errors, what the tools did and returned); the next compaction continues it
	// instead of counting again. It is stored whole in the first marker, every 8th after it (a
	// process that has not read a session yet reads back to the last of them once, at most 7
	// compactions), and whenever the delta would be the larger record; any other marker stores
	// LedgerDelta, what its newly covered events add to the ledger of the
	// marker it rolls up, and LedgerFrom, the timestamp (seconds) of the marker holding the whole
	// ledger it continues: its ledger is that one with the deltas of the chain applied in order.
	Ledger      *Ledger      `json:"ledger,omitempty"`
	LedgerDelta *LedgerDelta `json:"ledgerDelta,omitempty"`
	LedgerFrom  float64      `json:"ledgerFrom,omitempty"`
	// FirstEventID, LastEventID, FirstInvocationID and LastInvocationID name the oldest and the
	// newest covered events (the chain included), in stream order.
	FirstEventID      string `json:"firstEventId"`
	LastEventID       string `json:"lastEventId"`
	FirstInvocationID string `json:"firstInvocationId,omitempty"`
	LastInvocationID  string `json:"lastInvocationId,omitempty"`
	// EventCount and Invocations count every covered event and invocation (the chain included).
	EventCount  int `json:"eventCount"`
	Invocations int `json:"invocations,omitempty"`
	// KeepInvocations is the raw tail, in whole invocations, that later sliding-window
	// compactions keep (at least Config.RetainRecentInvocations): a token-triggered compaction
	// sets it to the tail it kept, so a sliding window never wipes that tail.
	KeepInvocations int `json:"keepInvocations,omitempty"`
	// OriginalTokens estimates what the covered part weighed in the view before (the previous
	// summary included); CompactedTokens the summary; CompressionRatio is their ratio.
	OriginalTokens   int     `json:"originalTokens"`
	CompactedTokens  int     `json:"compactedTokens"`
	CompressionRatio float64 `json:"compressionRatio"`
	Trigger          Trigger `json:"trigger,omitempty"`
	// Summarizer names the summarizer that wrote CompactedContent.
	Summarizer string `json:"summarizer,omitempty"`
	// ExcerptedEventIDs are events this marker left raw whose tool results the view shows cut to
	// ExcerptBytes (head and tail; Config.RetainedToolResultBytes): the compaction re-sends the
	// raw tail at full price anyway, so that is when shortening it costs no cached prefix.
	// Storage keeps them whole.
	ExcerptedEventIDs []string `json:"excerptedEventIds,omitempty"`
	ExcerptBytes      int      `json:"excerptBytes,omitempty"`

	// What a reader of the session needs of storage once this marker is stored, so that it can
	// read only that. RawCount is the number of events of Scope this marker leaves raw before its
	// own (the raw tail and pending calls): a read that holds fewer of them lost some. ReadFrom is the oldest timestamp (seconds) of an event the session's view
	// needs — a raw event of any scope or a scope's winning marker; ContextFrom the oldest of the
	// events the next compaction gives its summarizer again (Config.Overlap). 0: unknown.
	RawCount    int     `json:"rawCount,omitempty"`
	ReadFrom    float64 `json:"readFrom,omitempty"`
	ContextFrom float64 `json:"contextFrom,omitempty"`
	// UTCOffset is the lowest UTC offset, in seconds, of the timestamps of the events its writer
	// read: a session holding events stamped west of UTC (by a writer other than adkctx, which
	// stamps in UTC) is read with queries written in that offset.
	UTCOffset int `json:"utcOffset,omitempty"`
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

// Metadata returns the CustomMetadata of the event that stores m: {MetadataKey: record}, the
// record in the exact shape a database round trip produces (numbers as float64, lists as
// []any), so in-memory and database sessions hold the same value; an *InvalidMarkerError when m
// is not a valid marker. adkctx appends an event with this metadata, no content, author "user".
func (m *Marker) Metadata() (map[string]any, error) {
	if err := m.validate(""); err != nil {
		return nil, err
	}
	enc := *m
	if !record.Finite(enc.CompressionRatio) {
		enc.CompressionRatio = 0
	}
	b, err := json.Marshal(&enc)
	if err != nil {
		return nil, fmt.Errorf("compaction: encode marker: %w", err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("compaction: encode marker: %w", err)
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
	m = &Marker{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, bad("record does not decode")
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

// MasksOnly reports whether m covers no event of its own: it only shows older tool results as
// excerpts (ExcerptedEventIDs), keeping the summary of the marker it rolls up (none when that
// one has none: EventCount 0). Masking comes before summarizing: a compaction whose raw tail
// holds every raw event once older tool results are shown as excerpts stores such a marker.
func (m *Marker) MasksOnly() bool { return len(m.EventIDs) == 0 }

func (m *Marker) validate(eventID string) error {
	bad := func(reason string) error { return &InvalidMarkerError{EventID: eventID, Reason: reason} }
	switch {
	case m == nil:
		return bad("nil marker")
	case m.Version != record.Version:
		return bad(fmt.Sprintf("unsupported version %d (this build reads version %d)", m.Version, record.Version))
	case !record.Finite(m.StartTimestamp) || !record.Finite(m.EndTimestamp) || !record.Finite(m.ReadFrom) || !record.Finite(m.ContextFrom):
		return bad("non-finite timestamp")
	case m.StartTimestamp <= 0 || m.EndTimestamp <= 0:
		return bad("missing or non-positive timestamp")
	case m.StartTimestamp > record.MaxSeconds || m.EndTimestamp > record.MaxSeconds || m.ReadFrom > record.MaxSeconds || m.ContextFrom > record.MaxSeconds:
		return bad("timestamp out of range")
	case record.Micros(m.EndTimestamp) < record.Micros(m.StartTimestamp):
		return bad("inverted range (endTimestamp < startTimestamp)")
	case m.MasksOnly() && (len(m.ExcerptedEventIDs) == 0 || m.ExcerptBytes <= 0):
		return bad("no eventIds and no excerptedEventIds")
	case m.EventCount < 1 && !m.MasksOnly():
		return bad("empty range (eventCount < 1)")
	case m.EventCount < 1 && (m.CompactedContent != nil || m.SummaryLedger != ""):
		return bad("a summary of nothing (eventCount < 1)")
	case m.SummaryLedger != "" && m.SummaryLedger != summaryWhole && m.SummaryLedger != summaryFacts:
		return bad("unknown summaryLedger")
	case m.EventCount > 0 && m.SummaryLedger != summaryWhole && (m.CompactedContent == nil || !record.HasText(m.CompactedContent)):
		return bad("compactedContent has no text")
	case m.SummaryLedger != "" && m.Ledger == nil && m.LedgerDelta == nil:
		return bad("a summary composed with the ledger, and no ledger")
	case m.Ledger != nil && m.LedgerDelta != nil:
		return bad("both a ledger and a ledger delta")
	case m.LedgerDelta != nil && (m.Seq < 2 || m.LedgerFrom <= 0 || !record.Finite(m.LedgerFrom) || m.LedgerFrom > record.MaxSeconds):
		return bad("a ledger delta without the ledger it continues")
	case m.Seq < 1:
		return bad("seq must be ≥ 1")
	case m.Seq > 1 && m.Previous == "":
		return bad("seq > 1 without previousMarkerId")
	case m.EventCount < len(m.EventIDs):
		return bad("eventCount below the number of eventIds")
	case m.RawCount < 0 || m.SummaryTokens < 0 || m.SummaryBytes < 0:
		return bad("negative count")
	}
	if eventID != "" && (m.Previous == eventID || slices.Contains(m.EventIDs, eventID)) {
		return bad("the record names its own event")
	}
	return nil
}
