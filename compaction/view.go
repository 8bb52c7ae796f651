package compaction

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/lru"
	"github.com/adkctx/adkctx/processors/truncate"
)

// SummaryMetadataKey marks the summary events a view shows: CustomMetadata[SummaryMetadataKey]
// holds the id of the marker event the summary comes from. Summary events exist only in views,
// never in storage.
const SummaryMetadataKey = "_adk_compaction_summary"

// maxCachedMarkers bounds the parsed marker records a Viewer keeps.
const maxCachedMarkers = 4096

// Viewer computes the compacted view of a session's events. It keeps parsed marker records
// (a stored record never changes), so a view costs one pass over the events however many
// markers a session holds. It is safe for concurrent use.
type Viewer struct {
	log     *zap.Logger
	records *lru.Cache[string, parsedRecord]
}

type parsedRecord struct {
	fingerprint uint64
	m           *Marker
	err         error
}

// NewViewer returns a Viewer logging ignored markers to logger (nil: no logging).
func NewViewer(logger *zap.Logger) *Viewer {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Viewer{log: logger, records: lru.New[string, parsedRecord](maxCachedMarkers)}
}

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
	// event must carry it, so only the agents of that scope see it.
	Scope string
	// Content, when non-nil for a stored event, is what to show instead of the event's own
	// content: its tool results cut to an excerpt (Marker.ExcerptedEventIDs).
	Content *genai.Content
}

// View returns what the model should see of events (one session's stored events, in stream
// order):
//
//   - events carrying only a marker record never appear;
//   - per isolation scope, the valid marker with the highest Seq wins; it hides exactly the
//     events its chain covers by id (EventIDs of it and of the markers it rolls up), whatever
//     their position or timestamp, and nothing else;
//   - its summary appears once, in place of the first covered event present in events, or at
//     the marker's own position when none is (a Get with NumRecentEvents): the summary is then
//     the only trace of older history and must not vanish;
//   - the tool results of the raw events the winning marker lists in ExcerptedEventIDs are cut
//     to ExcerptBytes (Item.Content);
//   - a record that does not parse, or names an impossible range, is ignored with a warning and
//     hides nothing; a broken link in a chain ends it (the older events show raw).
//
// View never mutates events.
func (v *Viewer) View(events []Event) []Item {
	p := v.plan(events)
	return p.itemsOf(events, p.places(events))
}

// plan is what a view hides, and why: what compaction needs to know about it (View turns it
// into items).
type plan struct {
	covered []bool // per event: hidden by a live marker
	// live is the winning marker per scope, with its event's index and id.
	live    map[string]liveMarker
	invalid int
}

type liveMarker struct {
	at int
	id string
	m  *Marker
}

type candidate struct {
	at int
	m  *Marker
}

// newer reports whether a wins over b: higher Seq, then more covered events, then later in the
// stream (concurrent writers can produce markers of equal Seq; the choice is deterministic).
func (a candidate) newer(b candidate) bool {
	if a.m.Seq != b.m.Seq {
		return a.m.Seq > b.m.Seq
	}
	if a.m.EventCount != b.m.EventCount {
		return a.m.EventCount > b.m.EventCount
	}
	return a.at > b.at
}

func (v *Viewer) plan(events []Event) *plan {
	p := &plan{covered: make([]bool, len(events)), live: map[string]liveMarker{}}
	if cands, byID := v.candidates(events, p); len(cands) > 0 {
		p.cover(events, cands, byID)
	}
	return p
}

// candidates parses the marker records of events (counting and logging the invalid ones in p)
// and returns them in stream order, with the index of each marker event id among them.
func (v *Viewer) candidates(events []Event, p *plan) ([]candidate, map[string]int) {
	var cands []candidate
	byID := map[string]int{} // marker event id → index in cands (first one)
	for i := range events {
		e := &events[i]
		if !hasRecord(e) {
			continue
		}
		m, err := v.read(e)
		if err != nil {
			p.invalid++
			v.log.Warn("compaction: ignoring marker", zap.String("event_id", e.ID), zap.Int("position", i), zap.String("reason", reasonOf(err)))
			continue
		}
		if _, dup := byID[e.ID]; !dup && e.ID != "" {
			byID[e.ID] = len(cands)
		}
		cands = append(cands, candidate{at: i, m: m})
	}
	return cands, byID
}

// cover picks each scope's winning marker and marks the events its chain covers.
func (p *plan) cover(events []Event, cands []candidate, byID map[string]int) {
	best := map[string]int{}
	for k, c := range cands {
		if b, ok := best[c.m.Scope]; !ok || c.newer(cands[b]) {
			best[c.m.Scope] = k
		}
	}
	var idIndex map[string][]int // event id → positions, built on first need
	mark := func(positions []int, scope string) {
		for _, i := range positions {
			if events[i].Scope == scope {
				p.covered[i] = true
			}
		}
	}
	for scope, k := range best {
		p.live[scope] = liveMarker{at: cands[k].at, id: events[cands[k].at].ID, m: cands[k].m}
		seen := map[int]bool{}
		for !seen[k] {
			seen[k] = true
			c := cands[k]
			if c.m.legacy() {
				mark(legacyCovered(events, c.at, c.m), scope)
				break // a version 1 record already covers everything before it
			}
			if idIndex == nil {
				idIndex = make(map[string][]int, len(events))
				for i := range events {
					if events[i].ID != "" && !events[i].isMarkerOnly() {
						idIndex[events[i].ID] = append(idIndex[events[i].ID], i)
					}
				}
			}
			for _, id := range c.m.EventIDs {
				mark(idIndex[id], scope)
			}
			next, ok := byID[c.m.Previous]
			if c.m.Previous == "" || !ok || cands[next].m.Scope != scope {
				break
			}
			k = next
		}
	}
}

// places returns where each scope's summary goes: event index → scopes, in place of the first
// covered event of the scope, or at its marker when none is present.
func (p *plan) places(events []Event) map[int][]string {
	firstCovered := make(map[string]int, len(p.live)) // one pass, however many scopes
	for i := range events {
		if p.covered[i] {
			if _, ok := firstCovered[events[i].Scope]; !ok {
				firstCovered[events[i].Scope] = i
			}
		}
	}
	place := map[int][]string{}
	for scope, lm := range p.live {
		at := lm.at
		if i, ok := firstCovered[scope]; ok {
			at = i
		}
		place[at] = append(place[at], scope)
	}
	for _, scopes := range place {
		slices.Sort(scopes) // several scopes at one place: the same order in every view
	}
	return place
}

// itemsOf lists what the view shows, in stream order: the summaries at their places, the raw
// events (tool results cut when the winning marker says so), never the covered or marker-only
// events.
func (p *plan) itemsOf(events []Event, place map[int][]string) []Item {
	excerpts := excerptsOf(p.live)
	items := make([]Item, 0, len(events))
	for i := range events {
		for _, scope := range place[i] {
			lm := p.live[scope]
			items = append(items, Item{Index: i, Summary: summaryContent(lm.m.CompactedContent), MarkerID: lm.id, EventID: summaryEventID(lm.id), Scope: scope})
		}
		if p.covered[i] || events[i].isMarkerOnly() {
			continue
		}
		it := Item{Index: i}
		e := &events[i]
		if n := excerpts[e.Scope][e.ID]; n > 0 && e.ID != "" {
			if c, cut, _ := truncate.Responses(e.Content, truncate.Config{MaxBytes: n, MaxLines: max(n/40, 16)}, excerptNote); cut > 0 {
				it.Content = c
			}
		}
		items = append(items, it)
	}
	return items
}

// excerptsOf returns, per scope, the events whose tool results the winning marker has cut, with
// the size to cut them to.
func excerptsOf(live map[string]liveMarker) map[string]map[string]int {
	var out map[string]map[string]int
	for scope, lm := range live {
		if lm.m.ExcerptBytes <= 0 || len(lm.m.ExcerptedEventIDs) == 0 {
			continue
		}
		if out == nil {
			out = map[string]map[string]int{}
		}
		// A record another writer stored may name a size Config refuses: it is raised to the
		// smallest excerpt the cutter bounds (a size that is not positive shows results whole).
		n := max(lm.m.ExcerptBytes, minRetainedToolResultBytes)
		ids := make(map[string]int, len(lm.m.ExcerptedEventIDs))
		for _, id := range lm.m.ExcerptedEventIDs {
			ids[id] = n
		}
		out[scope] = ids
	}
	return out
}

// excerptNote is the note in the cut mark of an excerpted tool result: what happened, and how
// the model gets the rest.
func excerptNote(truncate.Cut) string {
	return "older tool result shortened when the history was summarized; call the tool again for all of it"
}

// read parses e's record, through the cache when e has an id.
func (v *Viewer) read(e *Event) (*Marker, error) {
	if e.ID == "" {
		return ReadMarker(e)
	}
	fp := fingerprint(e.Metadata[MetadataKey])
	if r, ok := v.records.Get(e.ID); ok && r.fingerprint == fp {
		return r.m, r.err
	}
	m, err := ReadMarker(e)
	v.records.Put(e.ID, parsedRecord{fingerprint: fp, m: m, err: err})
	return m, err
}

// fingerprint identifies a record, so a cached parse is reused only for the same record (ids are
// not trusted to be unique across sessions: a collision must never show one session another's
// summary). It hashes the whole record (64-bit, keyed per process): cheaper than parsing it again,
// and no field is left out.
func fingerprint(rec any) uint64 {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	hashValue(&h, rec, 0)
	return h.Sum64()
}

var fingerprintSeed = maphash.MakeSeed()

// hashValue writes v (a JSON-like value: what a session service hands back) to h, each value
// tagged and strings length-prefixed so that different values never write the same bytes. Map
// entries are written in key order; values of other types are hashed through their type and %v
// text. depth bounds the walk (deeper values are hashed as text).
func hashValue(h *maphash.Hash, v any, depth int) {
	if depth > 64 {
		hashString(h, '?', fmt.Sprintf("%T %v", v, v))
		return
	}
	switch x := v.(type) {
	case nil:
		h.WriteByte('n')
	case string:
		hashString(h, 's', x)
	case []byte:
		hashString(h, 'b', string(x))
	case json.RawMessage:
		hashString(h, 'r', string(x))
	case float64:
		hashUint(h, 'f', math.Float64bits(x))
	case bool:
		if x {
			h.WriteByte('t')
		} else {
			h.WriteByte('F')
		}
	case []any:
		hashUint(h, 'a', uint64(len(x)))
		for _, e := range x {
			hashValue(h, e, depth+1)
		}
	case map[string]any:
		keys := make([]string, 0, 32)
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		hashUint(h, 'm', uint64(len(x)))
		for _, k := range keys {
			hashString(h, 'k', k)
			hashValue(h, x[k], depth+1)
		}
	default:
		hashString(h, '?', fmt.Sprintf("%T %v", v, v))
	}
}

func hashUint(h *maphash.Hash, tag byte, n uint64) {
	var buf [binary.MaxVarintLen64 + 1]byte
	buf[0] = tag
	h.Write(binary.AppendUvarint(buf[:1], n))
}

func hashString(h *maphash.Hash, tag byte, s string) {
	hashUint(h, tag, uint64(len(s)))
	h.WriteString(s)
}

func reasonOf(err error) string {
	if ime, ok := err.(*InvalidMarkerError); ok {
		return ime.Reason
	}
	return "unreadable record"
}

// summaryContent is what a view shows for a summary: role user, the non-thought parts of c
// (copied), the first text starting with SummaryHeader.
func summaryContent(c *genai.Content) *genai.Content {
	var parts []*genai.Part
	for _, p := range c.Parts {
		if p != nil && !p.Thought {
			cp := *p
			parts = append(parts, &cp)
		}
	}
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if trimmed := strings.TrimLeft(p.Text, " \t\r\n"); strings.HasPrefix(trimmed, SummaryHeader) {
			p.Text = trimmed // IsSummary (what a budget pins) needs the header first
		} else {
			p.Text = SummaryHeader + "\n" + p.Text
		}
		break
	}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// summaryEventID is the id a view gives the summary of the marker event markerID: deterministic,
// so two views of one session agree.
func summaryEventID(markerID string) string { return "compaction-summary-" + markerID }

// legacyCovered returns the positions a version 1 record at position at covers: events before
// it, between the positions of FirstEventID and LastEventID (when found; else the timestamp
// range decides), not excluded, strictly inside the timestamp range or named as first, last or
// edge event.
func legacyCovered(events []Event, at int, m *Marker) []int {
	lo, hi := -1, -1
	for i := 0; i < at; i++ {
		id := events[i].ID
		if lo < 0 && id == m.FirstEventID {
			lo = i
		}
		if hi < 0 && id == m.LastEventID {
			hi = i
		}
	}
	if lo < 0 {
		lo = 0
	}
	if hi < 0 {
		hi = at - 1
	}
	start, end := micros(m.StartTimestamp), micros(m.EndTimestamp)
	excluded := map[string]bool{}
	for _, id := range m.ExcludedEventIDs {
		excluded[id] = true
	}
	edges := map[string]bool{m.FirstEventID: true, m.LastEventID: true}
	for _, id := range m.EdgeEventIDs {
		edges[id] = true
	}
	var out []int
	for i := lo; i <= hi; i++ {
		e := &events[i]
		if e.isMarkerOnly() || excluded[e.ID] && e.ID != "" {
			continue
		}
		ts := e.Timestamp.UnixMicro()
		inside := start < ts && ts < end
		atEdge := (ts == start || ts == end) && e.ID != "" && edges[e.ID]
		named := e.ID != "" && (e.ID == m.FirstEventID || e.ID == m.LastEventID)
		if inside || atEdge || named {
			out = append(out, i)
		}
	}
	return out
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
