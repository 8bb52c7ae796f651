package history

import (
	"sync/atomic"
	"time"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/lru"
)

// Defaults of a Reader.
const (
	// DefaultMargin is how much further back than the view needs a bounded read reaches: room
	// for events another writer (not through adkctx) stamped with a clock that lags.
	DefaultMargin = 10 * time.Second
	// probeEvents is the first read of a session in a process: the newest events, which hold
	// the newest marker in any session compacting every few invocations.
	probeEvents = 64
	// A bounded read is wide when it returns more than wideFactor times the events the view
	// needs, plus wideSlack: something old holds the read back (a call still waiting for its
	// response, a scope that has not compacted for long, a ledger chain to resolve).
	wideFactor, wideSlack = 2, 64
	// maxSessions bounds the sessions a Reader remembers (the least recently read is probed
	// again).
	maxSessions = 10_000
)

// Key names a session.
type Key struct{ App, User, ID string }

// Query is what one read asks storage for: the whole session (the zero Query), the newest
// NumRecent events, or the events stamped at or after After (adk-go's GetRequest fields).
type Query struct {
	NumRecent int
	After     time.Time
}

// Whole reports whether q reads the whole session.
func (q Query) Whole() bool { return q.NumRecent <= 0 && q.After.IsZero() }

// Holds reports whether a read by q that returned n events holds every stored event: it read
// the whole session, or asked for more recent events than the session has.
func (q Query) Holds(n int) bool { return q.Whole() || q.NumRecent > 0 && n < q.NumRecent }

// Purpose is what a read is for.
type Purpose int

const (
	// ForView: a turn's compacted view (the raw events and the winning markers).
	ForView Purpose = iota
	// ForCompaction: the view plus the covered invocations the next summary is given again
	// (compaction.Config.Overlap).
	ForCompaction
)

// Reader decides the reads of sessions for one process and remembers, per session, what the
// last complete read learned. It is safe for concurrent use.
type Reader struct {
	viewer *plan.Viewer
	margin time.Duration
	memos  *lru.Cache[Key, memo]
	whole  atomic.Bool
}

// memo is what a complete read of a session learned.
type memo struct {
	from, contextFrom time.Time // oldest timestamps the view / the next compaction need
	offset            int       // lowest UTC offset (seconds) of the events read
	rawInvocations    int
	keep              int
	markers           bool // the session held a valid marker
	known             bool // from is known
	wide              bool // the last bounded read was wide (see Wide)
	reported          bool // Wide reported it
	read, shown       int  // events the last complete read returned, and the view needed
	newest            time.Time
}

// Wide is a bounded read that returned far more events than its view needs.
type Wide struct {
	// EventsRead is what the read returned; EventsShown what the view needs of them.
	EventsRead, EventsShown int
	// Span is how far the timestamps of what the view needs reach back from the newest event
	// read: the oldest of them is what holds the read back.
	Span time.Duration
}

// NewReader returns a Reader reaching margin further back than the view needs (0: DefaultMargin;
// negative: none).
func NewReader(v *plan.Viewer, margin time.Duration) *Reader {
	if margin == 0 {
		margin = DefaultMargin
	}
	return &Reader{viewer: v, margin: max(margin, 0), memos: lru.New[Key, memo](maxSessions)}
}

// ReadWhole makes every read a whole one (a bounded read's requests are compared with these).
func (r *Reader) ReadWhole() { r.whole.Store(true) }

// First returns the first query of a read of session k.
func (r *Reader) First(k Key, p Purpose) Query {
	if r.whole.Load() {
		return Query{}
	}
	m, ok := r.memos.Get(k)
	if !ok || !m.known {
		return Query{NumRecent: probeEvents}
	}
	from := m.from
	if p == ForCompaction && !m.contextFrom.IsZero() && m.contextFrom.Before(from) {
		from = m.contextFrom
	}
	return r.after(from, m.offset)
}

// Since returns the query for the events of session k stored since an event stamped t: what a
// writer asks before it appends through an older read.
func (r *Reader) Since(k Key, t time.Time) Query {
	m, _ := r.memos.Get(k)
	if t.IsZero() {
		return Query{}
	}
	return r.after(t, m.offset)
}

// after is the query for events stamped at or after from less the margin, written in the
// offset zone: SQLite compares the text of timestamps, each in its own UTC offset, so a query in
// the lowest offset the session holds misses none of them.
func (r *Reader) after(from time.Time, offset int) Query {
	if from.IsZero() {
		return Query{}
	}
	return Query{After: from.Add(-r.margin).In(time.FixedZone("", offset))}
}

// Reason says why a read needs another query (the "reason" of the "session read again" log
// entry).
type Reason string

// Reasons of Next. ReasonNoMarker and ReasonReachBack extend a read by design; the others
// correct a read that missed something it needs (Corrects).
const (
	ReasonLedgerChain     Reason = "ledger_chain"      // a marker continues a ledger the read does not hold
	ReasonRawEventMissing Reason = "raw_event_missing" // a raw event a marker left before itself is missing
	ReasonNewestMissing   Reason = "newest_missing"    // the session's newest event is missing
	ReasonUTCOffset       Reason = "utc_offset"        // events stamped in a lower UTC offset than the query
	ReasonNoMarker        Reason = "no_marker"         // a probe found no marker to say how far back to read
	ReasonUnknownReach    Reason = "unknown_reach"     // the newest marker does not say how far back to read
	ReasonReachBack       Reason = "reach_back"        // the view reaches further back than the read
	ReasonMarkerMissing   Reason = "marker_missing"    // a marker the last complete read held is missing
)

// Corrects reports whether the next query corrects a read that missed something it needs
// (logged as "session read again"), rather than extending it by design.
func (r Reason) Corrects() bool { return r != "" && r != ReasonNoMarker && r != ReasonReachBack }

// Next checks the events a query q of session k returned (in stream order) against the
// session's last update time (zero: unknown) and returns the next query, or done when they hold
// everything the purpose needs; why says why another query is needed. When done, the Reader
// learns from them for the session's next read.
func (r *Reader) Next(k Key, p Purpose, q Query, events []compaction.Event, lastUpdate time.Time) (next Query, done bool, why Reason) {
	if len(events) == 0 || q.Holds(len(events)) {
		r.learn(k, r.viewer.Needs(events), events, wholeRead)
		return Query{}, true, ""
	}
	n := r.viewer.Needs(events)
	oldest, newest, offset := span(events)
	switch {
	case !n.LedgerFrom.IsZero():
		// A winning marker continues a ledger stored by an older marker than the read holds.
		if !oldest.After(n.LedgerFrom) || n.LedgerFrom.Unix() <= 0 {
			return Query{}, false, ReasonLedgerChain // the read reaches it, and the chain is broken: read whole
		}
		return r.after(n.LedgerFrom, offset), false, ReasonLedgerChain
	case n.Lost:
		return Query{}, false, ReasonRawEventMissing
	case !lastUpdate.IsZero() && newest.Before(lastUpdate.Truncate(time.Microsecond)):
		return Query{}, false, ReasonNewestMissing
	case !q.After.IsZero() && offset < zoneOffset(q.After):
		// An event stamped in a lower UTC offset than the query was written in: the store may
		// have left out others of that offset. Ask again, in it.
		return Query{After: q.After.In(time.FixedZone("", offset))}, false, ReasonUTCOffset
	}
	if q.NumRecent > 0 {
		// A probe sees only the newest events: the newest marker's writer knew how far back
		// the view reaches.
		if !n.Markers {
			return Query{}, false, ReasonNoMarker
		}
		if n.ReadFrom.IsZero() {
			return Query{}, false, ReasonUnknownReach
		}
		need := earliest(n.From, n.ReadFrom)
		if p == ForCompaction {
			need = earliest(need, n.ContextFrom)
		}
		switch {
		case n.UTCOffset < 0:
			// The session holds events stamped west of UTC: the newest ones by their text may
			// not be the newest ones. Ask by time, in their offset.
			return r.after(need, min(offset, n.UTCOffset)), false, ReasonUTCOffset
		case !oldest.Before(need):
			return r.after(need, offset), false, ReasonReachBack
		}
	} else {
		// The query reached back to what the view needed at the last complete read: later
		// markers only move that forward, and the checks above found nothing missing.
		if m, ok := r.memos.Get(k); ok && m.markers && !n.Markers {
			return Query{}, false, ReasonMarkerMissing
		}
		if p == ForCompaction && !n.ContextFrom.IsZero() && n.ContextFrom.Before(q.After) {
			return r.after(n.ContextFrom, offset), false, ReasonReachBack
		}
	}
	r.learn(k, n, events, boundedRead)
	return Query{}, true, ""
}

// Learn records what the view of session k needs after a marker was stored through a read that
// holds what the view needs (events, in stream order, the marker among them): the next read
// starts where the new view does. Without it, that read would start where the view before the
// marker did, and read everything another writer stored in between.
func (r *Reader) Learn(k Key, events []compaction.Event) {
	if len(events) > 0 {
		r.learn(k, r.viewer.Needs(events), events, markerRead)
	}
}

// readKind is what taught a Reader what a session's view needs.
type readKind int

const (
	wholeRead   readKind = iota // a read that held every stored event
	boundedRead                 // a complete bounded read
	markerRead                  // the read a marker was stored through (Learn)
)

// learn records what a read of k (of kind) needs next time.
func (r *Reader) learn(k Key, n plan.Needs, events []compaction.Event, kind readKind) {
	_, newest, offset := span(events)
	m := memo{newest: newest, from: n.From, contextFrom: n.ContextFrom, offset: min(offset, n.UTCOffset), rawInvocations: n.RawInvocations, keep: n.Keep,
		markers: n.Markers, known: !n.From.IsZero(), read: len(events), shown: n.Shown}
	old, ok := r.memos.Get(k)
	if ok && old.offset < m.offset {
		m.offset = old.offset // an offset seen once may come back
	}
	switch kind {
	case boundedRead:
		m.wide = len(events) > wideFactor*n.Shown+wideSlack
		m.reported = m.wide && ok && old.reported
	case markerRead:
		// Whether the session's bounded reads are wide, and whether that was said, is for
		// those reads to tell: a compaction's read is not one of them.
		m.wide, m.reported, m.read, m.shown = old.wide, old.reported, old.read, old.shown
	}
	r.memos.Put(k, m)
}

// Wide reports, once each time it starts, that the bounded reads of session k return far more
// events than its view needs (more than twice as many, and 64 more): the time one of its turns
// takes grows with what lies between the point that holds the read back and now. ok is false
// when the last read of k was not wide, or this was reported already.
func (r *Reader) Wide(k Key) (w Wide, ok bool) {
	m, found := r.memos.Get(k)
	if !found || !m.wide || m.reported {
		return Wide{}, false
	}
	m.reported = true
	r.memos.Put(k, m)
	return Wide{EventsRead: m.read, EventsShown: m.shown, Span: m.newest.Sub(m.from)}, true
}

// Forget drops what the Reader knows of k (its session was deleted).
func (r *Reader) Forget(k Key) { r.memos.Delete(k) }

// RawInvocations reports the invocations of scope "" the view of k showed raw at its last read,
// and the raw tail its winning marker asks a sliding window to keep; ok is false when no read
// of k is remembered.
func (r *Reader) RawInvocations(k Key) (raw, keep int, ok bool) {
	m, ok := r.memos.Get(k)
	return m.rawInvocations, m.keep, ok
}

// span returns the oldest and newest timestamps among events and their lowest UTC offset.
func span(events []compaction.Event) (oldest, newest time.Time, offset int) {
	for i := range events {
		t := events[i].Timestamp
		if i == 0 || t.Before(oldest) {
			oldest = t
		}
		if i == 0 || t.After(newest) {
			newest = t
		}
		if o := zoneOffset(t); i == 0 || o < offset {
			offset = o
		}
	}
	return oldest, newest, offset
}

func zoneOffset(t time.Time) int {
	_, off := t.Zone()
	return off
}

// earliest returns the earlier of a and b, ignoring a zero time.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
