package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/lru"
	"github.com/adkctx/adkctx/internal/marks"
	"github.com/adkctx/adkctx/internal/record"
	"github.com/adkctx/adkctx/processors/truncate"
)

// maxResolved and maxResolvedBytes bound the winning markers a Viewer keeps resolved (their
// whole ledger and the summary composed with it): about one per active session, at most 64 MiB
// of ledger and summary text.
const (
	maxResolved      = 4096
	maxResolvedBytes = 64 << 20
)

// Viewer computes the compacted view of a session's events. It keeps the markers it resolved
// (their ledger continued from the last marker holding it whole, and their summary), so a view
// of a read holding only the newest marker needs nothing older. It is safe for concurrent use.
type Viewer struct {
	log      *zap.Logger
	resolved *lru.Cache[resolvedKey, resolvedMarker]
	records  *lru.Cache[string, parsedRecord] // by marker event id
}

// resolvedKey identifies a marker record: its event's id and the whole record's encoding (ids
// are not trusted to be unique across sessions, and a hash of the record could collide: one
// session must never be shown another's summary, so equal keys are equal bytes).
type resolvedKey struct {
	id     string
	record string
}

func keyOfMarker(id string, m *compaction.Marker) resolvedKey {
	b, _ := json.Marshal(m) // a parsed record encodes: it decoded
	return resolvedKey{id: id, record: string(b)}
}

// resolvedMarker is a marker's whole ledger and the summary a view shows for it.
type resolvedMarker struct {
	ledger  *compaction.Ledger
	summary *genai.Content
	size    int // the bytes of the key's record, the ledger's stored form and the summary's text
}

// newResolved is the resolved marker kept under key, weighed with the key's record.
func newResolved(key resolvedKey, ledger *compaction.Ledger, summary *genai.Content) resolvedMarker {
	b, _ := json.Marshal(ledger) // an error (never for a ledger) weighs it 0: still bounded by count
	return resolvedMarker{ledger: ledger, summary: summary, size: len(key.record) + len(b) + len(textOf(summary))}
}

// NewViewer returns a Viewer logging ignored markers to logger (nil: no logging).
func NewViewer(logger *zap.Logger) *Viewer {
	return newViewer(logger, maxResolvedBytes, maxRecordsBytes)
}

// newViewer returns a Viewer keeping at most resolvedBytes of resolved markers and recordsBytes
// of parsed records.
func newViewer(logger *zap.Logger, resolvedBytes, recordsBytes int) *Viewer {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Viewer{log: logger,
		resolved: lru.NewWeighted[resolvedKey](maxResolved, resolvedBytes, func(r resolvedMarker) int { return r.size }),
		records:  lru.NewWeighted[string](maxRecords, recordsBytes, func(p parsedRecord) int { return p.size })}
}

// Remember records the whole ledger and the summary of the marker stored as event id (the
// compactor that stored it knows them): views of reads holding only this marker need nothing
// older.
func (v *Viewer) Remember(id string, m *compaction.Marker, ledger *compaction.Ledger, summary *genai.Content) {
	if m != nil && id != "" {
		key := keyOfMarker(id, m)
		v.resolved.Put(key, newResolved(key, ledger, summary))
	}
}

// Item is one entry of a view: a stored event, or a summary standing in for the events its
// marker covers.
type Item struct {
	// Index is the stored event shown; for a summary, the event whose place (timestamp,
	// invocation) the summary takes.
	Index int
	// Summary, when non-nil, is the summary content to show (role user, text starting with
	// compaction.SummaryHeader); MarkerID is the id of the marker event it comes from, and EventID the id
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
	// content: its tool results cut to an excerpt (compaction.Marker.ExcerptedEventIDs).
	Content *genai.Content
}

// View returns what the model should see of events (one session's stored events in stream
// order, or the newest part of them that holds everything the view needs, see Needs):
//
//   - events carrying only a marker record never appear;
//   - per isolation scope, the valid marker with the highest Seq wins; it hides exactly the
//     events its chain covers by id (EventIDs of it and of the markers it rolls up), whatever
//     their position or timestamp, and nothing else;
//   - its summary appears once, first among the events of its scope (it stands for the oldest of
//     them): a read that holds everything the view needs shows the same items as a read of the
//     whole session;
//   - the tool results of the raw events the winning marker lists in ExcerptedEventIDs are cut
//     to ExcerptBytes (Item.Content);
//   - a record that does not parse, or names an impossible range, is ignored with a warning and
//     hides nothing; a broken link in a chain ends it (the older events show raw).
//
// View never mutates events.
func (v *Viewer) View(events []compaction.Event) []Item {
	p := v.plan(events)
	return p.itemsOf(events, p.places(events))
}

// plan is what a view hides, and why: what compaction needs to know about it (View turns it
// into items).
type plan struct {
	covered []bool // per event: hidden by a live marker
	// live is the winning marker per scope, with its event's index and id, its whole ledger
	// and its summary.
	live    map[string]liveMarker
	invalid int
	// newest is the newest valid marker of any scope (nil: none).
	newest *compaction.Marker
	// unresolved is, per scope whose winner could not be resolved from events (the markers
	// holding its ledger are older than what was read), the timestamp of the marker holding
	// the whole ledger it continues: a read reaching back to it resolves the winner.
	unresolved map[string]time.Time
}

type liveMarker struct {
	at int
	id string
	m  *compaction.Marker
	resolvedMarker
}

type candidate struct {
	at  int
	m   *compaction.Marker
	key resolvedKey // of its resolved ledger
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

func (v *Viewer) plan(events []compaction.Event) *plan {
	p := &plan{covered: make([]bool, len(events)), live: map[string]liveMarker{}}
	if cands, byID := v.candidates(events, p); len(cands) > 0 {
		p.newest = cands[len(cands)-1].m
		p.cover(events, cands, byID, v.resolver(events, cands, byID))
	}
	return p
}

// Resolve returns the whole ledger of the marker stored as event markerID among events (a
// session's events in stream order) and the summary a view shows for it: what the marker stores,
// with its ledger continued from the last marker of its chain that holds it whole (see
// Marker.Ledger). ok is false when events hold no valid marker markerID or not its chain.
func (v *Viewer) Resolve(events []compaction.Event, markerID string) (ledger *compaction.Ledger, summary *genai.Content, ok bool) {
	cands, byID := v.candidates(events, &plan{})
	k, found := byID[markerID]
	if !found {
		return nil, nil, false
	}
	r, ok := v.resolver(events, cands, byID)(k)
	return r.ledger, r.summary, ok
}

// resolver returns how a plan resolves a winning marker (cands[k]): its whole ledger, from the
// Viewer's memory or from the chain of markers in events back to one holding it whole, and the
// summary composed with it; ok false when the chain leaves events first.
func (v *Viewer) resolver(events []compaction.Event, cands []candidate, byID map[string]int) func(k int) (resolvedMarker, bool) {
	return func(k int) (resolvedMarker, bool) {
		c := cands[k]
		key := c.key
		if r, ok := v.resolved.Get(key); ok {
			return r, true
		}
		var deltas []*compaction.LedgerDelta
		m, seen := c.m, map[int]bool{k: true}
		for m.Ledger == nil && m.LedgerDelta != nil {
			deltas = append(deltas, m.LedgerDelta)
			j, ok := byID[m.Previous]
			if !ok || seen[j] || cands[j].m.Scope != c.m.Scope {
				return resolvedMarker{}, false
			}
			seen[j] = true
			m = cands[j].m
		}
		slices.Reverse(deltas) // collected newest first
		l := m.Ledger.Apply(deltas...)
		r := newResolved(key, l, c.m.Summary(l))
		v.resolved.Put(key, r)
		return r, true
	}
}

// candidates parses the marker records of events (counting and logging the invalid ones in p)
// and returns them in stream order, with the index of each marker event id among them.
func (v *Viewer) candidates(events []compaction.Event, p *plan) ([]candidate, map[string]int) {
	var cands []candidate
	byID := map[string]int{} // marker event id → index in cands (first one)
	for i := range events {
		e := &events[i]
		if !hasRecord(e) {
			continue
		}
		m, key, err := v.readMarker(e)
		if err != nil {
			p.invalid++
			v.log.Warn("compaction: ignoring marker", zap.String("event_id", e.ID), zap.Int("position", i), zap.String("reason", reasonOf(err)))
			continue
		}
		if _, dup := byID[e.ID]; !dup && e.ID != "" {
			byID[e.ID] = len(cands)
		}
		cands = append(cands, candidate{at: i, m: m, key: key})
	}
	return cands, byID
}

// cover picks each scope's winning marker and marks the events its chain covers. A winner whose
// ledger cannot be resolved from events is left out (its scope shows raw) and noted as
// unresolved.
func (p *plan) cover(events []compaction.Event, cands []candidate, byID map[string]int, resolve func(k int) (resolvedMarker, bool)) {
	best := map[string]int{}
	for k, c := range cands {
		if b, ok := best[c.m.Scope]; !ok || c.newer(cands[b]) {
			best[c.m.Scope] = k
		}
	}
	resolved := map[string]resolvedMarker{}
	for scope, k := range best {
		r, ok := resolve(k)
		if !ok {
			if p.unresolved == nil {
				p.unresolved = map[string]time.Time{}
			}
			p.unresolved[scope] = record.Time(cands[k].m.LedgerFrom)
			delete(best, scope)
			continue
		}
		resolved[scope] = r
	}
	idIndex := make(map[string][]int, len(events)) // event id → positions
	for i := range events {
		if events[i].ID != "" && !isMarkerOnly(&events[i]) {
			idIndex[events[i].ID] = append(idIndex[events[i].ID], i)
		}
	}
	for scope, k := range best {
		p.live[scope] = liveMarker{at: cands[k].at, id: events[cands[k].at].ID, m: cands[k].m, resolvedMarker: resolved[scope]}
		seen := map[int]bool{}
		for !seen[k] {
			seen[k] = true
			c := cands[k]
			for _, id := range c.m.EventIDs {
				for _, i := range idIndex[id] {
					if events[i].Scope == scope {
						p.covered[i] = true
					}
				}
			}
			next, ok := byID[c.m.Previous]
			if c.m.Previous == "" || !ok || cands[next].m.Scope != scope {
				break
			}
			k = next
		}
	}
}

// places returns where each scope's summary goes: event index → scopes. A summary comes first
// among the events of its scope (before the first of them, or at its marker when none comes
// before it): where it stands then does not depend on how much of the session was read, or on
// how the store ordered timestamps it stamped in different offsets.
func (p *plan) places(events []compaction.Event) map[int][]string {
	firstOfScope := make(map[string]int, len(p.live))
	for i := range events {
		if _, ok := firstOfScope[events[i].Scope]; !ok {
			firstOfScope[events[i].Scope] = i
		}
	}
	place := map[int][]string{}
	for scope, lm := range p.live {
		at := lm.at
		if i, ok := firstOfScope[scope]; ok && i < at {
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
func (p *plan) itemsOf(events []compaction.Event, place map[int][]string) []Item {
	excerpts := excerptsOf(p.live)
	items := make([]Item, 0, len(events))
	for i := range events {
		for _, scope := range place[i] {
			lm := p.live[scope]
			if lm.summary == nil {
				continue // a marker that only masks, with no summary before it
			}
			items = append(items, Item{Index: i, Summary: summaryContent(lm.summary), MarkerID: lm.id,
				EventID: summaryEventID(lm.id), Scope: scope, Timestamp: record.Time(lm.m.StartTimestamp), InvocationID: lm.m.FirstInvocationID})
		}
		if !p.shown(events, i) {
			continue
		}
		it := Item{Index: i}
		e := &events[i]
		if n := excerpts[e.Scope][e.ID]; n > 0 && e.ID != "" {
			it.Content = excerptOf(e.Content, n)
		}
		items = append(items, it)
	}
	return items
}

// shown reports whether the view shows event i raw.
func (p *plan) shown(events []compaction.Event, i int) bool {
	return !p.covered[i] && !isMarkerOnly(&events[i])
}

// Needs is what a view of a read needs from storage: what a session reader checks before it
// trusts a read that did not cover the whole session, and what it asks for next time.
type Needs struct {
	// From is the oldest timestamp among the events the view needs: the raw events it shows and
	// each scope's winning marker. Zero when the read holds none.
	From time.Time
	// Markers reports a valid marker in the read. Newest is the newest of them in stream order;
	// its ReadFrom and ContextFrom say what its writer knew the view (and the next compaction)
	// needs, as times (zero: unknown).
	Markers               bool
	ReadFrom, ContextFrom time.Time
	// UTCOffset is the lowest UTC offset (seconds) the newest marker's writer saw (0: none
	// below UTC).
	UTCOffset int
	// LedgerFrom, when not zero, is how far back a read must reach to resolve a scope's winning
	// marker: the marker holding the whole ledger it continues (see Marker.Ledger). The view of
	// this read shows that scope raw.
	LedgerFrom time.Time
	// Lost reports that a scope's winning marker left more raw events before it than the read
	// holds: the read missed events (their timestamps put them before the window).
	Lost bool
	// Shown counts the events the view needs: those it shows raw and each scope's winning marker.
	Shown int
	// RawInvocations counts the invocations of scope "" the view shows raw (what a sliding
	// window counts); Keep is the raw tail the winning marker of scope "" asks later sliding
	// windows to keep (Marker.KeepInvocations of a token or manual compaction; 0 otherwise).
	RawInvocations, Keep int
}

// Needs reports what the view of events (a read, in stream order) needs from storage.
func (v *Viewer) Needs(events []compaction.Event) Needs {
	p := v.plan(events)
	var n Needs
	need := func(t time.Time) {
		if n.From.IsZero() || t.Before(n.From) {
			n.From = t
		}
	}
	before := map[string]int{} // per scope: raw events before its winning marker
	for i := range events {
		if p.shown(events, i) {
			need(events[i].Timestamp)
			n.Shown++
			if lm, ok := p.live[events[i].Scope]; ok && i < lm.at {
				before[events[i].Scope]++
			}
		}
	}
	for scope, lm := range p.live {
		need(events[lm.at].Timestamp)
		n.Shown++
		if before[scope] < lm.m.RawCount {
			n.Lost = true
		}
	}
	if m := p.newest; m != nil {
		n.Markers, n.ReadFrom, n.ContextFrom, n.UTCOffset = true, record.Time(m.ReadFrom), record.Time(m.ContextFrom), m.UTCOffset
	}
	for _, g := range invocationGroups(events, p, "") {
		if g.content {
			n.RawInvocations++
		}
	}
	if lm, ok := p.live[""]; ok && lm.m.Trigger != compaction.TriggerInvocations {
		n.Keep = lm.m.KeepInvocations
	}
	for _, t := range p.unresolved {
		n.LedgerFrom = earliestTime(n.LedgerFrom, t)
		if t.IsZero() { // a chain that cannot be resolved at all: read whole
			n.LedgerFrom = time.Unix(0, 0).UTC()
		}
	}
	return n
}

// earliestTime returns the earlier of a and b, ignoring a zero time.
func earliestTime(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
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
		n := max(lm.m.ExcerptBytes, record.MinExcerptBytes)
		ids := make(map[string]int, len(lm.m.ExcerptedEventIDs))
		for _, id := range lm.m.ExcerptedEventIDs {
			ids[id] = n
		}
		out[scope] = ids
	}
	return out
}

// excerptOf returns c with its tool results cut to excerpts of n bytes, as a view shows them;
// nil when none is cut. It is a pure function of c and n.
func excerptOf(c *genai.Content, n int) *genai.Content {
	var cuts []marks.Mark // the truncation marks of stored texts cut again, by token
	note := func(cut truncate.Cut) string {
		if cut.Bytes != nil || cut.Omitted != 0 {
			return marks.ExcerptNote
		}
		found := marks.Find(cut.Text)
		if len(found) != 1 || found[0].Note == "" {
			return marks.ExcerptNote
		}
		cuts = append(cuts, found[0].Mark)
		return fmt.Sprintf("%s #%d", marks.ExcerptHead, len(cuts)-1)
	}
	out, k, _ := truncate.Responses(c, truncate.Config{MaxBytes: n, MaxLines: max(n/40, 16)}, note)
	if k == 0 {
		return nil
	}
	if len(cuts) > 0 {
		for j, p := range out.Parts {
			if p != c.Parts[j] && p.FunctionResponse != nil { // a cut part is a copy
				if v, changed := rebaseMarks(p.FunctionResponse.Response, cuts); changed {
					p.FunctionResponse.Response = v.(map[string]any)
				}
			}
		}
	}
	return out
}

// rebaseMarks returns v with the marks of excerpts of cut texts restated against the output the
// cut was taken from: their figures count the lines and bytes of that output the excerpt leaves
// out, and their note is marks.ExcerptHead and the cut's own note. It copies only what changes (v
// shares what the cutter kept with the stored event), and reports whether anything did.
func rebaseMarks(v any, cuts []marks.Mark) (any, bool) {
	switch x := v.(type) {
	case string:
		s := rebaseText(x, cuts)
		return s, s != x
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if ne, changed := rebaseMarks(e, cuts); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if ne, changed := rebaseMarks(e, cuts); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// rebaseText rewrites the excerpt marks of s that carry a token of cuts (see rebaseMarks).
func rebaseText(s string, cuts []marks.Mark) string {
	if !strings.Contains(s, marks.ExcerptHead+" #") {
		return s
	}
	var b strings.Builder
	at := 0
	for _, f := range marks.Find(s) {
		tok, ok := strings.CutPrefix(f.Note, marks.ExcerptHead+" #")
		i, err := strconv.Atoi(tok)
		if !ok || err != nil || i < 0 || i >= len(cuts) {
			continue
		}
		stored := cuts[i]
		// What the excerpt keeps of the stored text is original output, but for the stored
		// mark's line when the excerpt keeps it too.
		keptLines := max(f.OriginalLines-f.OmittedLines, 0)
		keptBytes := max(f.OriginalBytes-f.OmittedBytes, 0)
		m := marks.Mark{
			OmittedLines:  max(stored.OriginalLines-keptLines, 0),
			OmittedBytes:  max(stored.OriginalBytes-keptBytes, 0),
			OriginalLines: stored.OriginalLines, OriginalBytes: stored.OriginalBytes,
			Note: marks.ExcerptHead + "; " + stored.Note,
		}
		b.WriteString(s[at:f.Start])
		b.WriteString(m.String())
		at = f.End
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// Excerpted is a tool result a view shows as an excerpt: the function response as stored and
// as the view shows it.
type Excerpted struct {
	EventID, InvocationID string
	// Tool is the function response's name.
	Tool          string
	Stored, Shown map[string]any
}

// ExcerptsOf returns the tool results a view shows as excerpts while marker m wins (the events
// of m's scope it lists in ExcerptedEventIDs, found among events), in stream order, each as
// stored and exactly as the view shows it. The compactor that stores m saves them whole for the
// recall tools; nil when m cuts none.
func ExcerptsOf(events []compaction.Event, m *compaction.Marker) []Excerpted {
	if m == nil || m.ExcerptBytes <= 0 || len(m.ExcerptedEventIDs) == 0 {
		return nil
	}
	n := excerptsOf(map[string]liveMarker{m.Scope: {m: m}})[m.Scope]
	var out []Excerpted
	for i := range events {
		e := &events[i]
		if e.Scope != m.Scope || e.ID == "" || n[e.ID] <= 0 || isMarkerOnly(e) {
			continue
		}
		shown := excerptOf(e.Content, n[e.ID])
		if shown == nil {
			continue
		}
		for j, p := range shown.Parts {
			if p != e.Content.Parts[j] && p.FunctionResponse != nil { // a cut part is a copy
				out = append(out, Excerpted{EventID: e.ID, InvocationID: e.InvocationID, Tool: p.FunctionResponse.Name,
					Stored: e.Content.Parts[j].FunctionResponse.Response, Shown: p.FunctionResponse.Response})
			}
		}
	}
	return out
}

func reasonOf(err error) string {
	if ime, ok := err.(*compaction.InvalidMarkerError); ok {
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
		if trimmed := strings.TrimLeft(p.Text, " \t\r\n"); strings.HasPrefix(trimmed, compaction.SummaryHeader) {
			p.Text = trimmed // IsSummary (what a budget pins) needs the header first
		} else {
			p.Text = compaction.SummaryHeader + "\n" + p.Text
		}
		break
	}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// summaryEventID is the id a view gives the summary of the marker event markerID: deterministic,
// so two views of one session agree.
func summaryEventID(markerID string) string { return "compaction-summary-" + markerID }
