package compaction

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// SummaryMetadataKey marks the synthetic summary events [View] emits:
// CustomMetadata[SummaryMetadataKey] holds the id of the marker event the
// summary comes from. Summary events exist only in views, never in storage.
const SummaryMetadataKey = "_adk_compaction_summary"

// summaryIDPrefix prefixes the id of a summary event; the rest is the id of
// the marker event, so the id is deterministic across views.
const summaryIDPrefix = "compaction-summary-"

// IsSummaryEvent reports whether e is a summary event emitted by [View].
func IsSummaryEvent(e *session.Event) bool {
	if e == nil || e.CustomMetadata == nil {
		return false
	}
	_, ok := e.CustomMetadata[SummaryMetadataKey]
	return ok
}

// ViewStats describes what [ViewWithStats] did.
type ViewStats struct {
	// Events is the number of input events, markers included.
	Events int
	// Markers counts events carrying a marker record; Invalid those whose
	// record was ignored.
	Markers, Invalid int
	// Summaries is the number of summaries emitted; Hidden the number of
	// events they replaced.
	Summaries, Hidden int
}

// View returns the compacted view of events (a session's stored events in
// stream order): what the model should see.
//
//   - Marker events never appear.
//   - An event is replaced only by a marker appended after it (later in the
//     slice) whose range covers it; when several markers cover an event,
//     the newest (latest in the slice) wins. A rolled-up marker whose range
//     contains an older marker's range therefore subsumes it.
//   - Each winning marker's summary is emitted once, in place of the first
//     event it wins (see [IsSummaryEvent] for its shape).
//   - Events not covered stay, in order.
//   - A marker record that does not parse, or has an inverted or empty
//     range, is ignored with a warning and hides nothing.
//
// Coverage is exact at equal timestamps: an event positioned before the
// marker is covered iff its stream position lies between the positions of
// the marker's FirstEventID and LastEventID (inclusive), it is not listed in
// ExcludedEventIDs, and either its timestamp (µs) is strictly inside
// (StartTimestamp, EndTimestamp) or its id is FirstEventID, LastEventID or in
// EdgeEventIDs. When the first or last id is not in the slice (a Get with
// NumRecentEvents or After), the missing bound falls back to timestamps with
// the same rule.
//
// View never mutates its input; uncovered events are returned as the same
// pointers. Each event is assigned to its winning marker once, however many
// markers overlap it, so View is near-linear (O(n log n)) in the number of
// events; the only repeated work is for events a marker leaves uncovered
// inside its own range (excluded ids, edge ties), which each overlapping
// marker checks again.
// A nil logger is allowed.
func View(events []*session.Event, logger *zap.Logger) []*session.Event {
	out, _ := ViewWithStats(events, logger)
	return out
}

// viewMarker is a parsed marker during one View.
type viewMarker struct {
	m        *Marker
	at       int // stream position of the marker event
	lo, hi   int // candidate positions (inclusive)
	startUS  int64
	endUS    int64
	edges    map[string]struct{}
	excluded map[string]struct{}
	emitted  bool
}

func (vm *viewMarker) covers(e *session.Event, ts int64) bool {
	if vm.excluded != nil {
		if _, ok := vm.excluded[e.ID]; ok {
			return false
		}
	}
	if e.ID != "" && (e.ID == vm.m.FirstEventID || e.ID == vm.m.LastEventID) {
		return true
	}
	if vm.startUS < ts && ts < vm.endUS {
		return true
	}
	if ts != vm.startUS && ts != vm.endUS || e.ID == "" {
		return false
	}
	// At an edge timestamp: covered only if listed.
	_, ok := vm.edges[e.ID]
	return ok
}

func idSet(ids []string) map[string]struct{} {
	if len(ids) == 0 {
		return nil
	}
	s := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		if id != "" {
			s[id] = struct{}{}
		}
	}
	return s
}

// ViewWithStats is [View] that also reports what it did.
func ViewWithStats(events []*session.Event, logger *zap.Logger) ([]*session.Event, ViewStats) {
	if logger == nil {
		logger = zap.NewNop()
	}
	n := len(events)
	stats := ViewStats{Events: n}

	// Fast path: no marker at all.
	hasMarker := false
	for _, e := range events {
		if IsCompactionEvent(e) {
			hasMarker = true
			break
		}
	}
	if !hasMarker {
		out := make([]*session.Event, 0, n)
		for _, e := range events {
			if e != nil {
				out = append(out, e)
			}
		}
		return out, stats
	}

	// Parse markers; note timestamp order.
	isMarker := make([]bool, n)
	stamps := make([]int64, n) // µs timestamps, read once
	sorted := true
	var prevTS int64
	havePrev := false
	type parsed struct {
		at int
		m  *Marker
	}
	var valid []parsed
	needed := map[string]int{} // first/last ids of valid markers → position (-1: not seen)
	for i, e := range events {
		if e == nil {
			sorted = false // keep the binary searches below monotone
			continue
		}
		ts := eventMicros(e)
		stamps[i] = ts
		if havePrev && ts < prevTS {
			sorted = false
		}
		prevTS, havePrev = ts, true
		if !IsCompactionEvent(e) {
			continue
		}
		isMarker[i] = true
		stats.Markers++
		m, err := ReadMarker(e)
		if err != nil {
			reason := "unreadable record"
			var ime *InvalidMarkerError
			if errors.As(err, &ime) {
				reason = ime.Reason
			}
			stats.Invalid++
			warnMarker(logger, e, i, reason)
			continue
		}
		valid = append(valid, parsed{i, m})
		needed[m.FirstEventID] = -1
		needed[m.LastEventID] = -1
	}
	// Positions (first occurrence) of the ids the markers name.
	for i, e := range events {
		if e == nil || e.ID == "" {
			continue
		}
		if p, ok := needed[e.ID]; ok && p < 0 {
			needed[e.ID] = i
		}
	}

	var markers []*viewMarker
	for _, pm := range valid {
		vm, reason := prepareMarker(events, stamps, pm.at, pm.m, needed, sorted)
		if vm == nil {
			stats.Invalid++
			warnMarker(logger, events[pm.at], pm.at, reason)
			continue
		}
		markers = append(markers, vm)
	}

	// Assign each event to the newest marker covering it: markers newest
	// first; next[] skips positions already assigned (or never assignable),
	// so each event is assigned once however many markers overlap it.
	winner := make([]int32, n)
	for i := range winner {
		winner[i] = -1
	}
	next := make([]int32, n+1)
	for i := range next {
		next[i] = int32(i)
	}
	find := func(p int) int {
		for int(next[p]) != p {
			next[p] = next[next[p]] // path halving
			p = int(next[p])
		}
		return p
	}
	for i, e := range events {
		if e == nil || isMarker[i] {
			next[i] = int32(i + 1)
		}
	}
	for k := len(markers) - 1; k >= 0; k-- {
		vm := markers[k]
		for p := find(vm.lo); p <= vm.hi; p = find(p + 1) {
			if vm.covers(events[p], stamps[p]) {
				winner[p] = int32(k)
				next[p] = int32(p + 1)
			}
		}
	}

	out := make([]*session.Event, 0, n)
	for i, e := range events {
		if e == nil || isMarker[i] {
			continue
		}
		w := winner[i]
		if w < 0 {
			out = append(out, e)
			continue
		}
		stats.Hidden++
		vm := markers[w]
		if vm.emitted {
			continue
		}
		vm.emitted = true
		stats.Summaries++
		out = append(out, summaryEvent(events[vm.at], vm.at, vm.m, e))
	}
	return out, stats
}

func warnMarker(logger *zap.Logger, e *session.Event, at int, reason string) {
	logger.Warn("compaction: ignoring marker",
		zap.String("event_id", e.ID),
		zap.Int("position", at),
		zap.String("reason", reason))
}

// prepareMarker computes the candidate range of the marker m at position
// at. It returns nil and a reason (no conversation text) when the marker
// must be ignored.
func prepareMarker(events []*session.Event, stamps []int64, at int, m *Marker, pos map[string]int, sorted bool) (*viewMarker, string) {
	vm := &viewMarker{
		m:        m,
		at:       at,
		startUS:  micros(m.StartTimestamp),
		endUS:    micros(m.EndTimestamp),
		edges:    idSet(m.EdgeEventIDs),
		excluded: idSet(m.ExcludedEventIDs),
	}
	fp, lp := pos[m.FirstEventID], pos[m.LastEventID]
	firstFound, lastFound := fp >= 0, lp >= 0
	if firstFound && fp >= at {
		return nil, "first covered event is not before the marker"
	}
	if firstFound && lastFound && fp > lp {
		return nil, "firstEventId is after lastEventId"
	}
	switch {
	case firstFound:
		vm.lo = fp
	case sorted:
		// First event with a timestamp ≥ start.
		vm.lo = sort.Search(at, func(i int) bool {
			return events[i] != nil && stamps[i] >= vm.startUS
		})
	default:
		vm.lo = 0
	}
	switch {
	case lastFound && lp < at:
		vm.hi = lp
	case !lastFound && sorted:
		// Last event with a timestamp ≤ end.
		vm.hi = sort.Search(at, func(i int) bool {
			return events[i] != nil && stamps[i] > vm.endUS
		}) - 1
	default:
		vm.hi = at - 1
	}
	return vm, ""
}

// summaryEvent builds the synthetic event standing in for the events a
// marker wins: Author "user", role "user", text starting with
// [SummaryHeader], placed at (and timestamped like) the first event it
// replaces.
func summaryEvent(markerEv *session.Event, at int, m *Marker, first *session.Event) *session.Event {
	id := markerEv.ID
	if id == "" {
		id = "at-" + strconv.Itoa(at)
	}
	return &session.Event{
		ID:           summaryIDPrefix + id,
		Timestamp:    first.Timestamp,
		InvocationID: first.InvocationID,
		Author:       "user",
		LLMResponse: model.LLMResponse{
			Content: &genai.Content{
				Role:  genai.RoleUser,
				Parts: summaryParts(m.CompactedContent),
			},
			CustomMetadata: map[string]any{SummaryMetadataKey: markerEv.ID},
		},
	}
}

// SummaryContent returns the content the view shows for a marker: role
// "user", non-thought parts of m.CompactedContent (copied), the first text
// prefixed with "[Summary of earlier conversation]\n" unless it already
// starts with it.
func SummaryContent(m *Marker) *genai.Content {
	if m == nil {
		return nil
	}
	return &genai.Content{Role: genai.RoleUser, Parts: summaryParts(m.CompactedContent)}
}

func summaryParts(c *genai.Content) []*genai.Part {
	var parts []*genai.Part
	if c != nil {
		for _, p := range c.Parts {
			if p == nil || p.Thought {
				continue
			}
			cp := *p
			parts = append(parts, &cp)
		}
	}
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if !strings.HasPrefix(strings.TrimLeft(p.Text, " \t\r\n"), SummaryHeader) {
			p.Text = SummaryHeader + "\n" + p.Text
		}
		return parts
	}
	// No text part (ReadMarker rejects such markers; defensive).
	return append([]*genai.Part{{Text: SummaryHeader}}, parts...)
}
