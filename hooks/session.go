package hooks

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/compactor"
	"github.com/adkctx/adkctx/internal/engine"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/history"
	"github.com/adkctx/adkctx/internal/lru"
)

// Bounds of a service's state.
const (
	maxBoardSessions = 10_000 // sessions whose appended markers are remembered
	maxBoardMarkers  = 4      // markers remembered per session
	maxQueries       = 4      // reads of one Get before the session is read whole
)

// noticeAuthor is the author of the events that show people a compaction (see viewSession.All).
const noticeAuthor = "adkctx"

// service is the session-service wrapper (Hooks.SessionService). Get reads only what the
// compacted view needs (history.Reader); a run's model sees that view; whatever reads a session
// outside a run sees every stored event; appends are stamped in order and retried past adkctx's
// own background writes (history.Append). It implements session.Service and compactor.Store.
type service struct {
	base   session.Service
	e      *engine.Engine
	reader *history.Reader
	log    *zap.Logger
	// board remembers the markers this process appended, per session, so that an invocation
	// that read its session before a background compaction stored its marker sees the summary
	// at its next model call.
	board *lru.Cache[history.Key, []*session.Event]
	// trace, when set (tests), sees which method of a view's events each reader calls.
	trace func(method string, run bool)
}

func newService(base session.Service, e *engine.Engine) *service {
	return &service{base: base, e: e, reader: e.Reader(), log: e.Logger(),
		board: lru.New[history.Key, []*session.Event](maxBoardSessions)}
}

func keyOf(s interface {
	AppName() string
	UserID() string
	ID() string
}) history.Key {
	return history.Key{App: s.AppName(), User: s.UserID(), ID: s.ID()}
}

// Create delegates and shows the view of the created session.
func (s *service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	resp, err := s.base.Create(ctx, req)
	if err != nil || resp == nil || resp.Session == nil {
		return resp, err
	}
	snap := s.snapshot(resp.Session)
	snap.whole = true
	return &session.CreateResponse{Session: s.view(ctx, snap)}, nil
}

// Get reads the session: when req asks for all of it, only the newest part that holds what the
// compacted view needs (see history.Reader), shown as a viewSession; a Get that sets
// NumRecentEvents or After is the caller's page of the stored events, returned as storage
// returns it.
func (s *service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req == nil || req.NumRecentEvents > 0 || !req.After.IsZero() {
		return s.base.Get(ctx, req)
	}
	snap, err := s.read(ctx, history.Key{App: req.AppName, User: req.UserID, ID: req.SessionID}, history.ForView)
	if err != nil {
		return nil, err
	}
	return &session.GetResponse{Session: s.view(ctx, snap)}, nil
}

// List delegates; the events a listed session carries are shown as stored, each marker as a
// notice of its compaction (adk-go's services list sessions without events).
func (s *service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	resp, err := s.base.List(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	out := make([]session.Session, len(resp.Sessions))
	for i, sess := range resp.Sessions {
		out[i] = sess
		if sess != nil {
			snap := s.snapshot(sess)
			snap.whole = true
			out[i] = s.view(ctx, snap)
		}
	}
	return &session.ListResponse{Sessions: out}, nil
}

// Delete delegates and forgets what this process knows of the session.
func (s *service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req != nil {
		k := history.Key{App: req.AppName, User: req.UserID, ID: req.SessionID}
		s.board.Delete(k)
		s.reader.Forget(k)
		s.e.Forget(k)
	}
	return s.base.Delete(ctx, req)
}

// AppendEvent appends ev through the stored session sess reads (a viewSession's, or sess itself),
// stamped in UTC after the newest event it holds (history.Stamp). A refusal because only
// adkctx's own markers were stored since the session was read (the database service refuses an
// append through an older read), or because the store was busy, is retried through a fresh read,
// which the viewSession keeps.
func (s *service) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	vs, ok := sess.(*viewSession)
	if !ok || ev == nil {
		if ev != nil && sess != nil {
			ev.Timestamp = history.Stamp(ev.Timestamp, newest(sess))
		}
		return s.base.AppendEvent(ctx, sess, ev)
	}
	snap := vs.snapshot()
	s.e.NoteAppend(snap.key, runOf(ctx), ev.Author)
	fresh, err := history.Append(ctx, snap, func(sn *snapshot) error {
		ev.Timestamp = history.Stamp(ev.Timestamp, newest(sn.sess))
		return s.base.AppendEvent(ctx, sn.sess, ev)
	}, func(ctx context.Context) (*snapshot, error) {
		return s.read(ctx, snap.key, history.ForView)
	}, func(c history.Changes) error {
		if c.Others > 0 {
			return fmt.Errorf("adkctx: session %q changed since it was read (%d events of another writer)", snap.key.ID, c.Others)
		}
		return nil
	})
	if err != nil || fresh == snap {
		fresh = nil // a failed append keeps the read; what it changed shows in the new state
	}
	vs.appended(ctx, fresh)
	return err
}

// Read implements compactor.Store: what a compaction needs of the session.
func (s *service) Read(ctx context.Context, k compactor.Session, p history.Purpose) (compactor.Snapshot, error) {
	return s.read(ctx, k, p)
}

// read reads session k for purpose p: the queries the Reader asks for, until one holds what p
// needs (the whole session after maxQueries).
func (s *service) read(ctx context.Context, k history.Key, p history.Purpose) (*snapshot, error) {
	q := s.reader.First(k, p)
	for n := 1; ; n++ {
		resp, err := s.base.Get(ctx, &session.GetRequest{AppName: k.App, UserID: k.User, SessionID: k.ID,
			NumRecentEvents: q.NumRecent, After: q.After})
		if err != nil {
			return nil, err
		}
		if resp == nil || resp.Session == nil {
			return nil, fmt.Errorf("adkctx: session %q: Get returned no session", k.ID)
		}
		snap := s.snapshot(resp.Session)
		snap.whole = q.Holds(len(snap.events))
		next, done, why := s.reader.Next(k, p, q, snap.events, resp.Session.LastUpdateTime())
		if done {
			if n > 1 && s.log.Core().Enabled(zap.DebugLevel) {
				s.log.Debug("session read", zap.String("session_id", k.ID), zap.Int("queries", n),
					zap.Int("events_read", len(snap.events)), zap.Bool("whole", q.Whole()))
			}
			if w, wide := s.reader.Wide(k); wide {
				// Something old holds the read back: say what it costs, once.
				s.log.Info("session read reaches back", zap.String("session_id", k.ID),
					zap.Int("events_read", w.EventsRead), zap.Int("events_shown", w.EventsShown),
					zap.Duration("reaches_back", w.Span))
			}
			return snap, nil
		}
		if n >= maxQueries {
			next = history.Query{}
		}
		if why.Corrects() {
			// A read that missed something it needs: read more, and say so.
			s.log.Info("session read again", zap.String("session_id", k.ID), zap.String("reason", string(why)),
				zap.Int("events_read", len(snap.events)), zap.Bool("whole", next.Whole()))
		}
		q = next
	}
}

// snapshot is one read of a session: adk-go's session (through which events are appended) and
// its events converted for the core. It implements compactor.Snapshot.
type snapshot struct {
	s     *service
	key   history.Key
	sess  session.Session
	whole bool // sess holds every stored event

	mu     sync.Mutex
	events []compaction.Event
}

func (s *service) snapshot(sess session.Session) *snapshot {
	return &snapshot{s: s, key: keyOf(sess), sess: sess, events: coreEvents(stored(sess))}
}

// Events implements history.Snapshot: the events sess holds, for the core (those read, and
// those appended through it since).
func (sn *snapshot) Events() []compaction.Event {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if evs := sn.sess.Events(); evs != nil && evs.Len() != len(sn.events) {
		sn.events = coreEvents(stored(sn.sess))
	}
	return sn.events
}

// current reports whether sn holds every marker this process appended to its session (none was
// stored during the invocation that read it). It looks the newest marker up among the session's
// events, newest first, without converting them: AfterRun asks it after the turn's final answer,
// while the caller waits.
func (sn *snapshot) current() bool {
	marks, _ := sn.s.board.Get(sn.key)
	if len(marks) == 0 {
		return true
	}
	last := marks[len(marks)-1].ID
	evs := sn.sess.Events()
	if evs == nil {
		return false
	}
	for i := evs.Len() - 1; i >= 0; i-- {
		if e := evs.At(i); e != nil && e.ID == last {
			return true
		}
	}
	return false
}

// Changes implements compactor.Snapshot: it reads the events stored since the newest one sn
// holds (and a margin before it) and returns those sn does not hold.
func (sn *snapshot) Changes(ctx context.Context) (history.Changes, error) {
	q := sn.s.reader.Since(sn.key, newest(sn.sess))
	resp, err := sn.s.base.Get(ctx, &session.GetRequest{AppName: sn.key.App, UserID: sn.key.User, SessionID: sn.key.ID, After: q.After})
	if err != nil {
		return history.Changes{}, err
	}
	if resp == nil || resp.Session == nil {
		return history.Changes{}, fmt.Errorf("adkctx: session %q: Get returned no session", sn.key.ID)
	}
	return history.Since(sn.Events(), coreEvents(stored(resp.Session))), nil
}

// AppendMarker implements compactor.Snapshot: a marker event (author "user", no content) stamped
// ts or after the newest event read, appended through this read and put on the board.
func (sn *snapshot) AppendMarker(ctx context.Context, invocationID string, ts time.Time, metadata map[string]any) (string, error) {
	ev := newEvent(ctx, invocationID)
	ev.Author, ev.CustomMetadata = "user", metadata
	ev.Timestamp = history.Stamp(ts, newest(sn.sess))
	if err := sn.s.base.AppendEvent(ctx, sn.sess, ev); err != nil {
		return "", err
	}
	sn.s.board.Update(sn.key, nil, func(old []*session.Event) []*session.Event {
		return append(old[max(len(old)+1-maxBoardMarkers, 0):len(old):len(old)], ev)
	})
	return ev.ID, nil
}

// newest returns the timestamp of the newest event sess holds (zero when none): what the next
// event appended through it is stamped after.
func newest(sess session.Session) time.Time {
	var t time.Time
	if evs := sess.Events(); evs != nil {
		for e := range evs.All() {
			if e != nil && e.Timestamp.After(t) {
				t = e.Timestamp
			}
		}
	}
	return t
}

// stored returns the stored events of sess (nil dropped), in stream order.
func stored(sess session.Session) []*session.Event {
	evs := sess.Events()
	if evs == nil {
		return nil
	}
	out := make([]*session.Event, 0, evs.Len())
	for e := range evs.All() {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// coreEvents converts events for the core, one for one.
func coreEvents(evs []*session.Event) []compaction.Event {
	out := make([]compaction.Event, len(evs))
	for i, e := range evs {
		out[i] = coreEvent(e)
	}
	return out
}

// ModelView returns what a run's model sees of sess: each isolation scope's summary and the raw
// tail, in order. For a session read through the wrapper (Hooks.SessionService, or the
// runner.Config Wire returns) it is the view a run reads (outside a run, sess.Events().All() is
// every stored event instead); for a session read from the store itself, the view of all its
// events.
func ModelView(sess session.Session) []*session.Event {
	switch s := sess.(type) {
	case nil:
		return nil
	case *viewSession:
		return slices.Clone(s.model())
	}
	return viewOf(compaction.NewViewer(nil), stored(sess))
}

// viewSession is a session read through the wrapper. Its events are what a reader of it needs:
//
//   - a run (from the plugin's BeforeRun on, when it claims the session) reads the compacted
//     view: summary and raw tail, from the bounded read, plus the markers this process appended
//     since;
//   - before that, adk-go's runner looks for the agent to run from the newest event backwards
//     (Len and At): they give the same compacted view, so the runner decides as it does during
//     the run;
//   - whatever reads it outside a run — adk-go's REST API and web UI, an application — iterates
//     All: every stored event in order, read whole with the Get's context at that moment, each
//     compaction shown as an event of its own (author "adkctx", the summary the model reads in
//     its text). A read that fails shows the events at hand after a notice saying so.
//
// One value shows one state: Len, At and All agree with each other however often they are
// called and whatever compactions land meanwhile (adk-go's runner reads Len, then At(Len()-1)).
// The state changes only when the value itself changes: an event appended through it, or the
// run claiming it; each change takes in the markers this process appended since, so a run sees
// a compaction that landed during it at its next event, and a later read sees it at once.
type viewSession struct {
	s      *service
	getCtx context.Context // the Get's: the whole read All does outside a run uses it

	mu   sync.Mutex
	snap *snapshot
	run  bool // claimed by a run
	st   *viewState
}

// viewState is one state of a viewSession: the events its read holds and the board's markers
// when it was taken, and the views computed from them (when first asked for).
type viewState struct {
	events []*session.Event // stored events of the read, in stream order
	marks  []*session.Event // the board's markers, newest last
	model  []*session.Event // nil until computed
	people []*session.Event // nil until computed
}

func (s *service) view(ctx context.Context, snap *snapshot) *viewSession {
	vs := &viewSession{s: s, getCtx: ctx, snap: snap}
	vs.st = vs.newState(nil)
	return vs
}

// newState takes the value's state now: the events its read holds, and the board's markers.
// With ctx (a change of the value: an append through it, its run claiming it), a marker this
// process appended since the read makes it read the session again (history.ForView), so the
// view holds the whole chain of markers stored meanwhile — a long tool loop compacted many
// times over keeps its requests within the compacted view; the board's markers stand in
// for what that read cannot give. Hold vs.mu (or own vs alone).
func (vs *viewSession) newState(ctx context.Context) *viewState {
	if ctx != nil && !vs.snap.current() {
		if fresh, err := vs.s.read(ctx, vs.snap.key, history.ForView); err == nil {
			vs.snap = fresh
		} else {
			kind, msg := errkind.Of(err)
			vs.s.log.Info("session read for a stored compaction failed", zap.String("session_id", vs.snap.key.ID),
				zap.String("error_kind", string(kind)), zap.String("error", msg))
		}
	}
	marks, _ := vs.s.board.Get(vs.snap.key)
	return &viewState{events: stored(vs.snap.sess), marks: marks}
}

// state returns the value's current state.
func (vs *viewSession) state() *viewState {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.st
}

func (vs *viewSession) snapshot() *snapshot {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.snap
}

// appended takes a new state after an append through the value; fresh, when not nil, is the
// fresher read of the same session the append went through.
func (vs *viewSession) appended(ctx context.Context, fresh *snapshot) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if fresh != nil {
		vs.snap = fresh
	}
	vs.st = vs.newState(ctx)
}

// traced reports a call of the events' method to the service's trace, if any.
func (vs *viewSession) traced(method string) {
	if f := vs.s.trace; f != nil {
		vs.mu.Lock()
		run := vs.run
		vs.mu.Unlock()
		f(method, run)
	}
}

// claim marks the session as read by a run: All returns the model's view from now on, which
// takes in the markers appended since the session was read (BeforeRun may have waited for one).
func (vs *viewSession) claim(ctx context.Context) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.run = true
	vs.st = vs.newState(ctx)
}

// stored returns the events read, for the core (converted once, by the snapshot).
func (vs *viewSession) stored() []compaction.Event {
	return vs.snapshot().Events()
}

func (vs *viewSession) ID() string                { return vs.snapshot().sess.ID() }
func (vs *viewSession) AppName() string           { return vs.snapshot().sess.AppName() }
func (vs *viewSession) UserID() string            { return vs.snapshot().sess.UserID() }
func (vs *viewSession) State() session.State      { return vs.snapshot().sess.State() }
func (vs *viewSession) LastUpdateTime() time.Time { return vs.snapshot().sess.LastUpdateTime() }

// Events returns the session's events: see viewSession.
func (vs *viewSession) Events() session.Events { return viewEvents{vs} }

type viewEvents struct{ vs *viewSession }

// Len and At are the model's view, for adk-go's runner and flows.
func (v viewEvents) Len() int {
	v.vs.traced("Len")
	return len(v.vs.model())
}

// At returns event i of the model's view (nil out of range).
func (v viewEvents) At(i int) *session.Event {
	v.vs.traced("At")
	evs := v.vs.model()
	if i < 0 || i >= len(evs) {
		return nil
	}
	return evs[i]
}

// All is the model's view in a run, every stored event outside one (see viewSession).
func (v viewEvents) All() iter.Seq[*session.Event] {
	v.vs.mu.Lock()
	run := v.vs.run
	v.vs.mu.Unlock()
	v.vs.traced("All")
	if run {
		return slices.Values(v.vs.model())
	}
	return slices.Values(v.vs.people())
}

// model returns the compacted view of the value's state: its events plus the board's markers
// not among them (computed once per state).
func (vs *viewSession) model() []*session.Event {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	st := vs.st
	if st.model == nil {
		st.model = vs.s.modelView(st.events, st.marks)
	}
	return st.model
}

// modelView returns what the model sees of events (a read, in stream order) plus the markers
// of board not among them.
func (s *service) modelView(events, board []*session.Event) []*session.Event {
	all := events
	if len(board) > 0 {
		seen := make(map[string]bool, len(events))
		for _, e := range events {
			seen[e.ID] = true
		}
		all = slices.Clip(events)
		for _, m := range board {
			if !seen[m.ID] {
				all = append(all, m)
			}
		}
	}
	return viewOf(s.e.Viewer(), all)
}

// viewOf returns what viewer shows of all (a session's events, in stream order).
func viewOf(viewer *compaction.Viewer, all []*session.Event) []*session.Event {
	items := viewer.View(coreEvents(all))
	out := make([]*session.Event, 0, len(items))
	for _, it := range items {
		switch {
		case it.Summary != nil:
			out = append(out, summaryEvent(it))
		case it.Content != nil:
			cp := *all[it.Index] // a shallow copy: the view never changes what the session holds
			cp.Content = it.Content
			out = append(out, &cp)
		default:
			out = append(out, all[it.Index])
		}
	}
	return out
}

// summaryEvent is the event a view shows for a summary.
func summaryEvent(it compaction.Item) *session.Event {
	ev := &session.Event{
		ID: it.EventID, Timestamp: it.Timestamp, InvocationID: it.InvocationID, Author: "user",
		LLMResponse: model.LLMResponse{Content: it.Summary, CustomMetadata: map[string]any{compaction.SummaryMetadataKey: it.MarkerID}},
	}
	inScope(ev, it.Scope)
	return ev
}

// people returns every stored event of the session, in order, each marker shown as a notice
// (see viewSession), read whole with the Get's context once per state of the value.
func (vs *viewSession) people() []*session.Event {
	vs.mu.Lock()
	st, sn := vs.st, vs.snap
	cached := st.people
	vs.mu.Unlock()
	if cached != nil {
		return cached
	}
	evs := vs.readPeople(sn, st)
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if st.people == nil {
		st.people = evs
	}
	return st.people
}

// readPeople reads what people see of the session in state st of read sn.
func (vs *viewSession) readPeople(sn *snapshot, st *viewState) []*session.Event {
	if sn.whole {
		return vs.notices(st.events)
	}
	resp, err := vs.s.base.Get(vs.getCtx, &session.GetRequest{AppName: sn.key.App, UserID: sn.key.User, SessionID: sn.key.ID})
	if err == nil && (resp == nil || resp.Session == nil) {
		err = fmt.Errorf("adkctx: session %q: Get returned no session", sn.key.ID)
	}
	if err != nil {
		have := st.events
		notice := newEvent(vs.getCtx, "")
		notice.Author = noticeAuthor
		notice.Content = genai.NewContentFromText(fmt.Sprintf("[adkctx] The whole history of this session could not be read (%v); "+
			"what follows are only the %d newest stored events.", err, len(have)), genai.RoleModel)
		return append([]*session.Event{notice}, vs.notices(have)...)
	}
	return vs.notices(stored(resp.Session))
}

// notices returns events with each marker event replaced by a notice of its compaction.
func (vs *viewSession) notices(events []*session.Event) []*session.Event {
	out := make([]*session.Event, len(events))
	core := coreEvents(events)
	for i, e := range events {
		out[i] = e
		m, err := compaction.ReadMarker(&core[i])
		if err != nil || m == nil || e.Content != nil {
			continue
		}
		summary := "(its summary cannot be shown: the markers it continues are not stored)"
		if _, s, ok := vs.s.e.Viewer().Resolve(core, e.ID); ok {
			summary = textOf(s)
		}
		cp := *e
		cp.Author = noticeAuthor
		cp.Content = genai.NewContentFromText(compactionNotice(m, summary), genai.RoleModel)
		out[i] = &cp
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
