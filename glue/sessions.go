package glue

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/lru"
)

// Bounds of a store's state.
const (
	maxBoardSessions = 10_000   // sessions whose appended markers are remembered
	maxBoardMarkers  = 4        // markers remembered per session
	maxBoardBytes    = 64 << 20 // bytes of their records, at most
	maxQueries       = 4        // reads of one Get before the session is read whole
)

// noticeAuthor is the author of the events that show people a compaction (View.People).
const noticeAuthor = "adkctx"

// Key names a session.
type Key struct{ App, User, ID string }

func (k Key) history() history.Key { return history.Key(k) }

// Store is one adk-go session service as the core reads it: the glue implements it by calling
// the service and converting its events.
type Store interface {
	// Read reads session k: every stored event, the newest recent events (recent > 0), or the
	// events stamped at or after after (not zero) — adk-go's Get with GetRequest.NumRecentEvents
	// and After.
	Read(ctx context.Context, k Key, recent int, after time.Time) (Read, error)
}

// Read is one read of a session: an adk-go session value and its events, converted.
type Read interface {
	// Events returns the events the read holds now (those read, and those appended through it
	// since), converted, in stream order; each event's Source is the glue's own event.
	Events() []compaction.Event
	// Len is the number of events the read holds now (cheap: the core converts again only when
	// it changed).
	Len() int
	// Has reports whether the read holds an event with the given id.
	Has(id string) bool
	// LastUpdate is the session's last update time as the store read it.
	LastUpdate() time.Time
	// Append stores ev (the Source of an event the glue converted) through this read, stamped
	// at: adk-go's AppendEvent, which may refuse an append through a read older than the
	// session's last update.
	Append(ctx context.Context, ev any, at time.Time) error
	// AppendMarker stores a new event through this read — author "user", no content, the
	// invocation id, timestamp at, metadata as its CustomMetadata — and returns it converted.
	AppendMarker(ctx context.Context, invocation string, at time.Time, metadata map[string]any) (compaction.Event, error)
}

// Sessions is the read and view machine over one store: bounded reads of what the compacted
// view needs, appends stamped in order and retried past adkctx's own background writes, and the
// one view per session value that the glue's sessions show. Create it with Engine.Sessions.
type Sessions struct {
	e      *Engine
	store  Store
	reader *history.Reader
	log    *zap.Logger
	// board remembers the markers this process appended, per session, so that a session value
	// read before a background compaction stored its marker takes it in at its next change.
	board *lru.Cache[history.Key, []compaction.Event]
}

// ReadWhole makes every read a whole one: what tests compare bounded reads with.
func (s *Sessions) ReadWhole() { s.reader.ReadWhole() }

// Get reads session k: only the newest part that holds what the compacted view needs, with
// another query when a read missed something (logged), the whole session after four.
func (s *Sessions) Get(ctx context.Context, k Key) (*View, error) {
	r, err := s.read(ctx, k.history(), history.ForView)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, r), nil
}

// Whole returns the view of a read that holds every stored event (a created session, one a
// List returned).
func (s *Sessions) Whole(ctx context.Context, k Key, r Read) *View {
	sn := s.snapshot(k.history(), r)
	sn.whole = true
	return s.view(ctx, sn)
}

// Forget drops what this process knows of session k (it was deleted).
func (s *Sessions) Forget(k Key) {
	s.board.Delete(k.history())
	s.reader.Forget(k.history())
	s.e.e.Forget(k.history())
}

// Stamp returns the timestamp to store an event stamped at with, through a read whose newest
// event is newest: in UTC at microsecond precision, after newest (history.Stamp).
func Stamp(at, newest time.Time) time.Time { return history.Stamp(at, newest) }

// Append appends ev (converted, its Source the glue's event) through the read v holds, stamped
// after the newest event it holds; run is the invocation of the adk-go run appending it ("":
// none). A refusal because only adkctx's own markers were stored since the read (the database
// service refuses an append through an older read), or because the store was busy, is retried
// through a fresh read, which v keeps. A run that did not pass through the plugin is reported
// (Engine.Check).
func (s *Sessions) Append(ctx context.Context, v *View, ev compaction.Event, run string) error {
	sn := v.snapshot()
	s.e.e.NoteAppend(sn.key, run, ev.Author)
	fresh, err := history.Append(ctx, sn, func(r *snapshot) error {
		return r.read.Append(ctx, ev.Source, history.Stamp(ev.Timestamp, newest(r.Events())))
	}, func(ctx context.Context) (*snapshot, error) {
		return s.read(ctx, sn.key, history.ForView)
	}, func(c history.Changes) error {
		if c.Others > 0 {
			return fmt.Errorf("adkctx: session %q changed since it was read (%d events of another writer)", sn.key.ID, c.Others)
		}
		return nil
	})
	if err != nil || fresh == sn {
		fresh = nil // a failed append keeps the read; what it changed shows in the new state
	}
	v.appended(ctx, fresh)
	return err
}

// read reads session k for purpose p: the queries the Reader asks for, until one holds what p
// needs (the whole session after maxQueries).
func (s *Sessions) read(ctx context.Context, k history.Key, p history.Purpose) (*snapshot, error) {
	q := s.reader.First(k, p)
	for n := 1; ; n++ {
		r, err := s.store.Read(ctx, Key(k), q.NumRecent, q.After)
		if err != nil {
			return nil, err
		}
		sn := s.snapshot(k, r)
		events := sn.Events()
		sn.whole = q.Holds(len(events))
		next, done, why := s.reader.Next(k, p, q, events, r.LastUpdate())
		if done {
			if n > 1 && s.log.Core().Enabled(zap.DebugLevel) {
				s.log.Debug("session read", zap.String("session_id", k.ID), zap.Int("queries", n),
					zap.Int("events_read", len(events)), zap.Bool("whole", q.Whole()))
			}
			if w, wide := s.reader.Wide(k); wide {
				// Something old holds the read back: say what it costs, once.
				s.log.Info("session read reaches back", zap.String("session_id", k.ID),
					zap.Int("events_read", w.EventsRead), zap.Int("events_shown", w.EventsShown),
					zap.Duration("reaches_back", w.Span))
			}
			return sn, nil
		}
		if n >= maxQueries {
			next = history.Query{}
		}
		if why.Corrects() {
			// A read that missed something it needs: read more, and say so.
			s.log.Info("session read again", zap.String("session_id", k.ID), zap.String("reason", string(why)),
				zap.Int("events_read", len(events)), zap.Bool("whole", next.Whole()))
		}
		q = next
	}
}

// compactorStore is how the compactor reads sessions: through the machine's bounded reads.
type compactorStore struct{ s *Sessions }

func (c compactorStore) Read(ctx context.Context, k compactor.Session, p history.Purpose) (compactor.Snapshot, error) {
	return c.s.read(ctx, k, p)
}

// snapshot is one read of a session and its events converted (kept while the read holds as
// many). It implements compactor.Snapshot.
type snapshot struct {
	s     *Sessions
	key   history.Key
	read  Read
	whole bool // read holds every stored event

	mu     sync.Mutex
	events []compaction.Event
	n      int // read.Len() when events were taken
}

func (s *Sessions) snapshot(k history.Key, r Read) *snapshot {
	return &snapshot{s: s, key: k, read: r, n: -1}
}

// Events implements history.Snapshot: the events the read holds (converted again only when
// their number changed: an append went through it).
func (sn *snapshot) Events() []compaction.Event {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if n := sn.read.Len(); n != sn.n {
		sn.events, sn.n = sn.read.Events(), n
	}
	return sn.events
}

// current reports whether sn holds every marker this process appended to its session (none was
// stored during the invocation that read it), without converting its events: AfterRun asks it
// after the turn's final answer, while the caller waits.
func (sn *snapshot) current() bool {
	marks, _ := sn.s.board.Get(sn.key)
	return len(marks) == 0 || sn.read.Has(marks[len(marks)-1].ID)
}

// Changes implements compactor.Snapshot: it reads the events stored since the newest one sn
// holds (and a margin before it) and returns those sn does not hold.
func (sn *snapshot) Changes(ctx context.Context) (history.Changes, error) {
	events := sn.Events()
	q := sn.s.reader.Since(sn.key, newest(events))
	r, err := sn.s.store.Read(ctx, Key(sn.key), 0, q.After)
	if err != nil {
		return history.Changes{}, err
	}
	return history.Since(events, r.Events()), nil
}

// AppendMarker implements compactor.Snapshot: a marker event stamped ts or after the newest
// event read, appended through this read and put on the board.
func (sn *snapshot) AppendMarker(ctx context.Context, invocationID string, ts time.Time, metadata map[string]any) (string, error) {
	ev, err := sn.read.AppendMarker(ctx, invocationID, history.Stamp(ts, newest(sn.Events())), metadata)
	if err != nil {
		return "", err
	}
	sn.s.board.Update(sn.key, nil, func(old []compaction.Event) []compaction.Event {
		return append(old[max(len(old)+1-maxBoardMarkers, 0):len(old):len(old)], ev)
	})
	return ev.ID, nil
}

// recordBytes weighs the markers on the board: the bytes of their records' stored form.
func recordBytes(markers []compaction.Event) int {
	n := 0
	for _, m := range markers {
		b, _ := json.Marshal(m.Metadata) // a record the store took encodes; an error weighs 0
		n += len(b)
	}
	return n
}

// newest returns the newest timestamp among events (zero when none): what the next event
// appended through their read is stamped after.
func newest(events []compaction.Event) time.Time {
	var t time.Time
	for i := range events {
		if events[i].Timestamp.After(t) {
			t = events[i].Timestamp
		}
	}
	return t
}

// View is one session value the glue shows (a session read through the wrapper). What a reader
// of it sees:
//
//   - a run (from the plugin's BeforeRun on, when it claims the view) reads the compacted view:
//     summary and raw tail, from the bounded read, plus the markers this process appended since;
//   - before that, adk-go's runner looks for the agent to run from the newest event backwards
//     (Len and At): it reads the same compacted view, so it decides as it does during the run;
//   - whatever reads it outside a run — adk-go's REST API and web UI, an application — reads
//     every stored event in order (People), read whole with the Get's context at that moment,
//     each compaction shown as an event of its own (author noticeAuthor, the summary the model
//     reads in its text). A read that fails shows the events at hand after a notice saying so.
//
// One value shows one state: the model's view and people's agree with each other however often
// they are asked and whatever compactions land meanwhile (adk-go's runner reads Len, then
// At(Len()-1)). The state changes only when the value itself changes: an event appended through
// it, or the run claiming it. A change takes in the markers this process appended since — when
// one was, the session is read again, so a long tool loop compacted many times over keeps the
// whole chain of markers in its view — and a later Get sees them at once.
type View struct {
	s      *Sessions
	getCtx context.Context // the Get's: the whole read People does outside a run uses it

	mu   sync.Mutex
	snap *snapshot
	run  bool // claimed by a run
	st   *viewState
}

// viewState is one state of a View: the events its read holds and the board's markers when it
// was taken, and the views computed from them (when first asked for).
type viewState struct {
	events []compaction.Event
	marks  []compaction.Event
	model  []Shown // nil until computed
	people []Shown // nil until computed
}

// Shown is one event of a view, as the glue shows it.
type Shown struct {
	// Event is the stored event shown (its Source the glue's); nil for a summary or a notice
	// without one.
	Event *compaction.Event
	// Content, when not nil, is what to show instead of Event's content: a tool result cut to an
	// excerpt, a notice's text.
	Content *genai.Content
	// Author, when not "", is the author to show instead of Event's (noticeAuthor); with no
	// Event, the glue shows a new event with Content.
	Author string
	// Summary, when not nil, is a summary standing in for the events its marker covers (no
	// Event): the event the glue shows for it, authored "user", its Metadata naming the marker
	// (compaction.SummaryMetadataKey), its ID, Timestamp and InvocationID the same in every view
	// of the session, its Scope that of the events it stands for.
	Summary *compaction.Event
}

func (s *Sessions) view(ctx context.Context, sn *snapshot) *View {
	v := &View{s: s, getCtx: ctx, snap: sn}
	v.st = v.newState(ctx, false)
	return v
}

// newState takes the value's state now: the events its read holds, and the board's markers.
// On a change of the value (reread), a marker this process appended since the read makes it read
// the session again (history.ForView), so the view holds the whole chain of markers stored
// meanwhile; the board's markers stand in for what that read cannot give. Hold v.mu (or own v
// alone).
func (v *View) newState(ctx context.Context, reread bool) *viewState {
	if reread && !v.snap.current() {
		if fresh, err := v.s.read(ctx, v.snap.key, history.ForView); err == nil {
			v.snap = fresh
		} else {
			kind, msg := errkind.Of(err)
			v.s.log.Info("session read for a stored compaction failed", zap.String("session_id", v.snap.key.ID),
				zap.String("error_kind", string(kind)), zap.String("error", msg))
		}
	}
	marks, _ := v.s.board.Get(v.snap.key)
	return &viewState{events: v.snap.Events(), marks: marks}
}

func (v *View) snapshot() *snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.snap
}

// Read returns the read the view holds now: the glue's adk-go session is in it.
func (v *View) Read() Read { return v.snapshot().read }

// stored returns the events the view's read holds, converted.
func (v *View) stored() []compaction.Event { return v.snapshot().Events() }

// appended takes a new state after an append through the value; fresh, when not nil, is the
// fresher read of the same session the append went through.
func (v *View) appended(ctx context.Context, fresh *snapshot) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if fresh != nil {
		v.snap = fresh
	}
	v.st = v.newState(ctx, true)
}

// claim marks the view as read by a run: the run reads the model's view from now on, with the
// markers appended since the value was read (BeforeRun may have waited for one).
func (v *View) claim(ctx context.Context) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.run = true
	v.st = v.newState(ctx, true)
}

// Claimed reports whether a run claimed the view.
func (v *View) Claimed() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.run
}

// Model returns the compacted view of the value's state: its events plus the board's markers
// not among them (computed once per state).
func (v *View) Model() []Shown {
	v.mu.Lock()
	defer v.mu.Unlock()
	st := v.st
	if st.model == nil {
		all := st.events
		if len(st.marks) > 0 {
			seen := make(map[string]bool, len(all))
			for i := range all {
				seen[all[i].ID] = true
			}
			all = slices.Clip(all)
			for _, m := range st.marks {
				if !seen[m.ID] {
					all = append(all, m)
				}
			}
		}
		st.model = shownOf(v.s.e.e.Viewer(), all)
	}
	return st.model
}

// ModelOf returns what a run's model sees of events (a session's stored events, in stream
// order, converted): each isolation scope's summary and the raw tail.
func ModelOf(events []compaction.Event) []Shown { return shownOf(plan.NewViewer(nil), events) }

// shownOf returns what viewer shows of all.
func shownOf(viewer *plan.Viewer, all []compaction.Event) []Shown {
	items := viewer.View(all)
	out := make([]Shown, 0, len(items))
	for i := range items {
		it := &items[i]
		switch {
		case it.Summary != nil:
			out = append(out, Shown{Summary: &compaction.Event{ID: it.EventID, Timestamp: it.Timestamp, InvocationID: it.InvocationID,
				Author: "user", Content: it.Summary, Scope: it.Scope, Metadata: map[string]any{compaction.SummaryMetadataKey: it.MarkerID}}})
		default:
			out = append(out, Shown{Event: &all[it.Index], Content: it.Content})
		}
	}
	return out
}

// People returns every stored event of the session, in order, each marker shown as a notice of
// its compaction, read whole with the Get's context once per state of the value.
func (v *View) People() []Shown {
	v.mu.Lock()
	st, sn := v.st, v.snap
	cached := st.people
	v.mu.Unlock()
	if cached != nil {
		return cached
	}
	shown := v.readPeople(sn, st)
	v.mu.Lock()
	defer v.mu.Unlock()
	if st.people == nil {
		st.people = shown
	}
	return st.people
}

// readPeople reads what people see of the session in state st of read sn.
func (v *View) readPeople(sn *snapshot, st *viewState) []Shown {
	if sn.whole {
		return v.s.notices(st.events)
	}
	r, err := v.s.store.Read(v.getCtx, Key(sn.key), 0, time.Time{})
	if err != nil {
		have := st.events
		notice := Shown{Author: noticeAuthor, Content: genai.NewContentFromText(fmt.Sprintf("[adkctx] The whole history of this session could not be read (%v); "+
			"what follows are only the %d newest stored events.", err, len(have)), genai.RoleModel)}
		return append([]Shown{notice}, v.s.notices(have)...)
	}
	return v.s.notices(r.Events())
}

// notices returns events with each marker event shown as a notice of its compaction.
func (s *Sessions) notices(events []compaction.Event) []Shown {
	out := make([]Shown, len(events))
	for i := range events {
		out[i] = Shown{Event: &events[i]}
		m, err := compaction.ReadMarker(&events[i])
		if err != nil || m == nil || events[i].Content != nil {
			continue
		}
		summary := "(its summary cannot be shown: the markers it continues are not stored)"
		if _, sc, ok := s.e.e.Viewer().Resolve(events, events[i].ID); ok && sc != nil {
			summary = textOf(sc)
		}
		out[i].Author = noticeAuthor
		out[i].Content = genai.NewContentFromText(compactionNotice(m, summary), genai.RoleModel)
	}
	return out
}

// compactionNotice is what people read where a compaction was stored.
func compactionNotice(m *compaction.Marker, summary string) string {
	if m.MasksOnly() {
		return fmt.Sprintf("[adkctx] Compaction %d (%s): from here on the model reads %d older tool results as excerpts "+
			"(their head and tail) and nothing is summarized; every event stays stored and is shown here whole.",
			m.Seq, m.Trigger, len(m.ExcerptedEventIDs))
	}
	return fmt.Sprintf("[adkctx] Compaction %d (%s): from here on the model reads a summary in place of the %d events "+
		"(%d invocations) before the newest ones; every event stays stored and is shown here. The summary:\n\n%s",
		m.Seq, m.Trigger, m.EventCount, m.Invocations, summary)
}

// textOf joins the text parts of c.
func textOf(c *genai.Content) string {
	var out string
	if c == nil {
		return out
	}
	for _, p := range c.Parts {
		if p != nil && !p.Thought && p.Text != "" {
			if out != "" {
				out += "\n"
			}
			out += p.Text
		}
	}
	return out
}
