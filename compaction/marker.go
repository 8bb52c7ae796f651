package compaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// MetadataKey is the key under which a compaction marker is stored in
// [session.Event.CustomMetadata]. adk-go v1.7.0's EventActions has no
// compaction field, so the marker travels in CustomMetadata, which survives
// the in-memory, database and Vertex AI session services.
const MetadataKey = "_adk_compaction"

// MarkerVersion is the version of the stored marker record written by this
// package. Readers accept records without a version (treated as version 1)
// and records with a higher version (unknown keys are ignored).
const MarkerVersion = 1

// SummaryHeader starts the text of every summary the view emits, so the model
// reads the summary as what it is.
const SummaryHeader = "[Summary of earlier conversation]"

// Trigger values recorded in [Marker.Trigger].
const (
	TriggerInvocations = "invocations"
	TriggerTokens      = "tokens"
	TriggerManual      = "manual"
)

// Marker is one compaction: it replaces the events of its range (the ones
// appended before the marker) with CompactedContent.
//
// The first three fields convert 1:1 to adk-python's and upstream adk-go
// v2's EventCompaction (see [Marker.EventCompaction]); the ids make the range
// exact even when several events share a timestamp.
type Marker struct {
	// StartTimestamp and EndTimestamp are the timestamps, in seconds since
	// the Unix epoch, of the first and the last covered events. Compare at
	// microsecond precision (the database service truncates to µs); use
	// [Seconds] to convert.
	StartTimestamp, EndTimestamp float64
	// CompactedContent replaces the covered events (typically a summary).
	CompactedContent *genai.Content

	// FirstEventID and LastEventID are the ids of the first and the last
	// covered events (in stream order); FirstInvocationID and
	// LastInvocationID their invocation ids.
	FirstEventID, LastEventID           string
	FirstInvocationID, LastInvocationID string
	// EdgeEventIDs lists the covered events whose timestamp equals
	// StartTimestamp or EndTimestamp (at µs precision). An event at an edge
	// timestamp that is not listed here (nor First/LastEventID) is not
	// covered, which keeps ties exact.
	EdgeEventIDs []string
	// ExcludedEventIDs lists events positioned inside the range that the
	// marker does NOT cover (pending long-running calls, tool
	// confirmations); they stay raw in the view.
	ExcludedEventIDs []string

	// EventCount is the number of covered events (≥ 1).
	EventCount int
	// OriginalTokens and CompactedTokens are estimates of the covered
	// events' and of CompactedContent's size; CompressionRatio is
	// OriginalTokens / CompactedTokens (0 when unknown).
	OriginalTokens, CompactedTokens int
	CompressionRatio                float64
	// Trigger is what caused the compaction: "invocations", "tokens" or
	// "manual".
	Trigger string
	// Summarizer names the summarizer that produced CompactedContent.
	Summarizer string
	// Version is the record version; 0 means [MarkerVersion] when written.
	Version int
}

// InvalidMarkerError reports a marker record that cannot be used. Events
// carrying one are ignored by [View] (with a warning) and hide nothing.
type InvalidMarkerError struct {
	// EventID is the id of the event carrying the record ("" if unknown).
	EventID string
	// Reason says what is wrong (no conversation text).
	Reason string
	// Err is the underlying decoding error, if any.
	Err error
}

func (e *InvalidMarkerError) Error() string {
	msg := "compaction: invalid marker"
	if e.EventID != "" {
		msg += " in event " + e.EventID
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *InvalidMarkerError) Unwrap() error { return e.Err }

// ErrNoMarker is returned by [ReadMarker] when the event
// carries no marker at all.
var ErrNoMarker = errors.New("compaction: event carries no marker")

// Seconds converts t to float seconds since the Unix epoch at microsecond
// precision, the unit of [Marker.StartTimestamp] / [Marker.EndTimestamp].
func Seconds(t time.Time) float64 {
	return float64(t.UnixMicro()) / 1e6
}

// Time converts float seconds since the Unix epoch back to a time at
// microsecond precision.
func Time(seconds float64) time.Time {
	return time.UnixMicro(micros(seconds))
}

// micros converts float seconds to whole microseconds (rounded).
func micros(seconds float64) int64 {
	return int64(math.Round(seconds * 1e6))
}

// eventMicros is an event's timestamp at the precision markers use.
func eventMicros(e *session.Event) int64 {
	return e.Timestamp.UnixMicro()
}

// Start returns StartTimestamp as a time (µs precision).
func (m *Marker) Start() time.Time { return Time(m.StartTimestamp) }

// End returns EndTimestamp as a time (µs precision).
func (m *Marker) End() time.Time { return Time(m.EndTimestamp) }

// EventCompaction returns the record in the shape of adk-python's and
// upstream adk-go v2's EventCompaction (JSON keys startTimestamp,
// endTimestamp, compactedContent), as a JSON-compatible map.
func (m *Marker) EventCompaction() map[string]any {
	return map[string]any{
		"startTimestamp":   m.StartTimestamp,
		"endTimestamp":     m.EndTimestamp,
		"compactedContent": contentToMap(m.CompactedContent),
	}
}

// wireMarker is the stored JSON shape.
type wireMarker struct {
	Version           *int           `json:"version,omitempty"`
	StartTimestamp    *float64       `json:"startTimestamp"`
	EndTimestamp      *float64       `json:"endTimestamp"`
	CompactedContent  *genai.Content `json:"compactedContent"`
	FirstEventID      string         `json:"firstEventId"`
	LastEventID       string         `json:"lastEventId"`
	FirstInvocationID string         `json:"firstInvocationId,omitempty"`
	LastInvocationID  string         `json:"lastInvocationId,omitempty"`
	EdgeEventIDs      []string       `json:"edgeEventIds,omitempty"`
	ExcludedEventIDs  []string       `json:"excludedEventIds,omitempty"`
	EventCount        *int           `json:"eventCount"`
	OriginalTokens    int            `json:"originalTokens"`
	CompactedTokens   int            `json:"compactedTokens"`
	CompressionRatio  float64        `json:"compressionRatio"`
	Trigger           string         `json:"trigger,omitempty"`
	Summarizer        string         `json:"summarizer,omitempty"`
}

func (m *Marker) wire() wireMarker {
	v := m.Version
	if v == 0 {
		v = MarkerVersion
	}
	start, end, count := m.StartTimestamp, m.EndTimestamp, m.EventCount
	ratio := m.CompressionRatio
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		ratio = 0
	}
	return wireMarker{
		Version:           &v,
		StartTimestamp:    &start,
		EndTimestamp:      &end,
		CompactedContent:  m.CompactedContent,
		FirstEventID:      m.FirstEventID,
		LastEventID:       m.LastEventID,
		FirstInvocationID: m.FirstInvocationID,
		LastInvocationID:  m.LastInvocationID,
		EdgeEventIDs:      m.EdgeEventIDs,
		ExcludedEventIDs:  m.ExcludedEventIDs,
		EventCount:        &count,
		OriginalTokens:    m.OriginalTokens,
		CompactedTokens:   m.CompactedTokens,
		CompressionRatio:  ratio,
		Trigger:           m.Trigger,
		Summarizer:        m.Summarizer,
	}
}

// Map returns the marker as the JSON-compatible map stored in
// CustomMetadata[MetadataKey]: the exact shape a database round-trip
// produces (numbers as float64, lists as []any, nested maps), so in-memory
// and database sessions hold the same value. It returns an error only when
// the marker cannot be encoded (e.g. a NaN timestamp).
func (m *Marker) Map() (map[string]any, error) {
	b, err := json.Marshal(m.wire())
	if err != nil {
		return nil, fmt.Errorf("compaction: encode marker: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("compaction: encode marker: %w", err)
	}
	return out, nil
}

// Validate reports whether the marker is usable (the same checks
// [ReadMarker] applies), as an *InvalidMarkerError.
func (m *Marker) Validate() error {
	if m == nil {
		return &InvalidMarkerError{Reason: "nil marker"}
	}
	return validate(m, "")
}

func validate(m *Marker, eventID string) error {
	bad := func(reason string) error { return &InvalidMarkerError{EventID: eventID, Reason: reason} }
	switch {
	case !finite(m.StartTimestamp) || !finite(m.EndTimestamp):
		return bad("non-finite timestamp")
	case m.StartTimestamp <= 0 || m.EndTimestamp <= 0:
		return bad("missing or non-positive timestamp")
	case micros(m.EndTimestamp) < micros(m.StartTimestamp):
		return bad("inverted range (endTimestamp < startTimestamp)")
	case m.FirstEventID == "" || m.LastEventID == "":
		return bad("missing firstEventId or lastEventId")
	case m.EventCount < 1:
		return bad("empty range (eventCount < 1)")
	case m.CompactedContent == nil:
		return bad("missing compactedContent")
	case !hasText(m.CompactedContent):
		return bad("compactedContent has no text")
	case m.Version < 0:
		return bad("negative version")
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func hasText(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && strings.TrimSpace(p.Text) != "" && !p.Thought {
			return true
		}
	}
	return false
}

// IsCompactionEvent reports whether e carries a compaction marker record
// (valid or not). Such events never appear in the [View].
func IsCompactionEvent(e *session.Event) bool {
	if e == nil || e.CustomMetadata == nil {
		return false
	}
	v, ok := e.CustomMetadata[MetadataKey]
	return ok && v != nil
}

// ReadMarker parses the marker carried by e. It accepts what any session
// service hands back: the map written by [NewMarkerEvent] after a database
// round-trip (map[string]any, float64 numbers, []any), a *Marker or Marker
// value, json.RawMessage, []byte or a JSON string. It returns [ErrNoMarker]
// when e carries no marker and an *InvalidMarkerError when the record does
// not parse, has an inverted or empty range, or lacks ids or content. The
// returned marker shares nothing with e.
func ReadMarker(e *session.Event) (*Marker, error) {
	if !IsCompactionEvent(e) {
		return nil, ErrNoMarker
	}
	return parseMarker(e.CustomMetadata[MetadataKey], e.ID)
}

// ParseMarker parses a marker record value (the value stored under
// [MetadataKey]) the way [ReadMarker] does.
func ParseMarker(v any) (*Marker, error) {
	if v == nil {
		return nil, &InvalidMarkerError{Reason: "nil record"}
	}
	return parseMarker(v, "")
}

func parseMarker(raw any, eventID string) (m *Marker, err error) {
	defer func() {
		// encoding/json does not panic on JSON-decoded values, but a caller
		// may have stored anything; never let a record crash history
		// building.
		if r := recover(); r != nil {
			m, err = nil, &InvalidMarkerError{EventID: eventID, Reason: fmt.Sprintf("cannot decode record (%T)", raw)}
		}
	}()
	var w wireMarker
	if v, ok := raw.(map[string]any); ok {
		if fw, ok := fastWire(v); ok {
			return fromWire(fw, eventID)
		}
	}
	var data []byte
	switch v := raw.(type) {
	case *Marker:
		if v == nil {
			return nil, &InvalidMarkerError{EventID: eventID, Reason: "nil *Marker"}
		}
		data, err = json.Marshal(v.wire())
	case Marker:
		data, err = json.Marshal(v.wire())
	case json.RawMessage:
		data = v
	case []byte:
		data = v
	case string:
		data = []byte(v)
	case map[string]any:
		data, err = json.Marshal(v)
	default:
		return nil, &InvalidMarkerError{EventID: eventID, Reason: fmt.Sprintf("unsupported record type %T", raw)}
	}
	if err != nil {
		return nil, &InvalidMarkerError{EventID: eventID, Reason: "cannot encode record", Err: err}
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, &InvalidMarkerError{EventID: eventID, Reason: "record does not decode", Err: err}
	}
	return fromWire(w, eventID)
}

// fromWire converts and validates a decoded record.
func fromWire(w wireMarker, eventID string) (*Marker, error) {
	if w.StartTimestamp == nil || w.EndTimestamp == nil {
		return nil, &InvalidMarkerError{EventID: eventID, Reason: "missing startTimestamp or endTimestamp"}
	}
	if w.EventCount == nil {
		return nil, &InvalidMarkerError{EventID: eventID, Reason: "missing eventCount"}
	}
	out := &Marker{
		StartTimestamp:    *w.StartTimestamp,
		EndTimestamp:      *w.EndTimestamp,
		CompactedContent:  w.CompactedContent,
		FirstEventID:      w.FirstEventID,
		LastEventID:       w.LastEventID,
		FirstInvocationID: w.FirstInvocationID,
		LastInvocationID:  w.LastInvocationID,
		EdgeEventIDs:      w.EdgeEventIDs,
		ExcludedEventIDs:  w.ExcludedEventIDs,
		EventCount:        *w.EventCount,
		OriginalTokens:    w.OriginalTokens,
		CompactedTokens:   w.CompactedTokens,
		CompressionRatio:  w.CompressionRatio,
		Trigger:           w.Trigger,
		Summarizer:        w.Summarizer,
		Version:           MarkerVersion,
	}
	if w.Version != nil {
		out.Version = *w.Version
	}
	if out.CompactedContent != nil {
		// Drop nil parts a hand-written record may contain.
		parts := out.CompactedContent.Parts[:0]
		for _, p := range out.CompactedContent.Parts {
			if p != nil {
				parts = append(parts, p)
			}
		}
		out.CompactedContent.Parts = parts
	}
	if err := validate(out, eventID); err != nil {
		return nil, err
	}
	return out, nil
}

// NewMarkerEvent returns a new event carrying m under
// CustomMetadata[MetadataKey] (as the JSON-compatible map of [Marker.Map]).
// The event has no Content, so adk-go's history building skips it even when
// the session is not read through [View]; its Author is "user", its ID a new
// UUID and its Timestamp ts. It returns nil when m cannot be encoded (a NaN
// timestamp); validate m first with [Marker.Validate].
func NewMarkerEvent(m *Marker, invocationID string, ts time.Time) *session.Event {
	if m == nil {
		return nil
	}
	rec, err := m.Map()
	if err != nil {
		return nil
	}
	ev := &session.Event{
		ID:           uuid.NewString(),
		Timestamp:    ts,
		InvocationID: invocationID,
		Author:       "user",
		Actions: session.EventActions{
			StateDelta:    map[string]any{},
			ArtifactDelta: map[string]int64{},
		},
	}
	ev.CustomMetadata = map[string]any{MetadataKey: rec}
	return ev
}

// SetMarker stores m in e.CustomMetadata[MetadataKey] (as [Marker.Map]),
// replacing e.CustomMetadata with a copy so a map shared with other events
// is never mutated. It validates m first (*InvalidMarkerError). Use it for
// an event the caller is building, e.g. in a plugin's OnEvent callback;
// [NewMarkerEvent] builds a fresh marker event.
func SetMarker(e *session.Event, m *Marker) error {
	if e == nil {
		return &InvalidMarkerError{Reason: "nil event"}
	}
	if err := m.Validate(); err != nil {
		return err
	}
	rec, err := m.Map()
	if err != nil {
		return &InvalidMarkerError{EventID: e.ID, Reason: "cannot encode marker", Err: err}
	}
	md := make(map[string]any, len(e.CustomMetadata)+1)
	for k, v := range e.CustomMetadata {
		md[k] = v
	}
	md[MetadataKey] = rec
	e.CustomMetadata = md
	return nil
}

func contentToMap(c *genai.Content) map[string]any {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// SetRange fills m's range fields (timestamps, first/last event and
// invocation ids, EdgeEventIDs, ExcludedEventIDs, EventCount) so that [View]
// covers exactly the events stream[from..to] (inclusive, stream order) that
// are not marker events and for which exclude (may be nil) returns false.
// Excluded events inside the range are listed in ExcludedEventIDs and stay
// raw in the view. StartTimestamp/EndTimestamp are the minimum/maximum
// covered timestamps (µs), so out-of-order clocks stay covered. It returns
// the number of covered events (also stored in EventCount); out-of-range
// bounds are clamped. It does not touch CompactedContent or the token
// fields.
func (m *Marker) SetRange(stream []*session.Event, from, to int, exclude func(*session.Event) bool) int {
	from = max(from, 0)
	to = min(to, len(stream)-1)
	m.FirstEventID, m.LastEventID = "", ""
	m.FirstInvocationID, m.LastInvocationID = "", ""
	m.EdgeEventIDs, m.ExcludedEventIDs = nil, nil
	m.StartTimestamp, m.EndTimestamp = 0, 0
	m.EventCount = 0
	var covered []*session.Event
	var minUS, maxUS int64
	for i := from; i <= to; i++ {
		e := stream[i]
		if e == nil || IsCompactionEvent(e) {
			continue
		}
		if exclude != nil && exclude(e) {
			if e.ID != "" {
				m.ExcludedEventIDs = append(m.ExcludedEventIDs, e.ID)
			}
			continue
		}
		ts := eventMicros(e)
		if len(covered) == 0 || ts < minUS {
			minUS = ts
		}
		if len(covered) == 0 || ts > maxUS {
			maxUS = ts
		}
		covered = append(covered, e)
	}
	if len(covered) == 0 {
		m.ExcludedEventIDs = nil
		return 0
	}
	first, last := covered[0], covered[len(covered)-1]
	m.FirstEventID, m.LastEventID = first.ID, last.ID
	m.FirstInvocationID, m.LastInvocationID = first.InvocationID, last.InvocationID
	m.StartTimestamp = float64(minUS) / 1e6
	m.EndTimestamp = float64(maxUS) / 1e6
	for _, e := range covered {
		if ts := eventMicros(e); ts == minUS || ts == maxUS {
			m.EdgeEventIDs = append(m.EdgeEventIDs, e.ID)
		}
	}
	m.EventCount = len(covered)
	return len(covered)
}
