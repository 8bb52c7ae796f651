package hooks

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"google.golang.org/adk/model"
	"google.golang.org/adk/session"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue"
)

// service is the session-service wrapper (Hooks.SessionService): adk-go's session service as
// the core's read and view machine sees it (glue.Sessions). Get reads only what the compacted
// view needs; a run's model sees that view; whatever reads a session outside a run sees every
// stored event; appends are stamped in order and retried past adkctx's own background writes.
// It converts; the core decides.
type service struct {
	base     session.Service
	sessions *glue.Sessions
	// trace, when set (tests, before the first run), sees each call of a session value's events
	// (method "Len", "At" or "All") and whether a run had claimed the value then.
	trace func(method string, run bool)
}

func newService(base session.Service, e *glue.Engine) (*service, error) {
	s := &service{base: base}
	sessions, err := e.Sessions(store{s})
	if err != nil {
		return nil, err
	}
	s.sessions = sessions
	return s, nil
}

func keyOf(s interface {
	AppName() string
	UserID() string
	ID() string
}) glue.Key {
	return glue.Key{App: s.AppName(), User: s.UserID(), ID: s.ID()}
}

// Create delegates and shows the view of the created session.
func (s *service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	resp, err := s.base.Create(ctx, req)
	if err != nil || resp == nil || resp.Session == nil {
		return resp, err
	}
	return &session.CreateResponse{Session: s.show(ctx, s.sessions.Whole(ctx, keyOf(resp.Session), s.read(resp.Session)))}, nil
}

// Get reads the session: when req asks for all of it, only the newest part that holds what the
// compacted view needs, shown as a viewSession; a Get that sets NumRecentEvents or After is the
// caller's page of the stored events, returned as storage returns it.
func (s *service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	if req == nil || req.NumRecentEvents > 0 || !req.After.IsZero() {
		return s.base.Get(ctx, req)
	}
	v, err := s.sessions.Get(ctx, glue.Key{App: req.AppName, User: req.UserID, ID: req.SessionID})
	if err != nil {
		return nil, err
	}
	return &session.GetResponse{Session: s.show(ctx, v)}, nil
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
			out[i] = s.show(ctx, s.sessions.Whole(ctx, keyOf(sess), s.read(sess)))
		}
	}
	return &session.ListResponse{Sessions: out}, nil
}

// Delete delegates and forgets what this process knows of the session.
func (s *service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req != nil {
		s.sessions.Forget(glue.Key{App: req.AppName, User: req.UserID, ID: req.SessionID})
	}
	return s.base.Delete(ctx, req)
}

// AppendEvent appends ev through the session sess reads (a viewSession's, or sess itself),
// stamped in UTC after the newest event it holds (glue.Sessions.Append retries a refusal
// through a fresh read, which the viewSession keeps).
func (s *service) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	vs, ok := sess.(*viewSession)
	if !ok || ev == nil {
		if ev != nil && sess != nil {
			ev.Timestamp = glue.Stamp(ev.Timestamp, newest(sess))
		}
		return s.base.AppendEvent(ctx, sess, ev)
	}
	return s.sessions.Append(ctx, vs.v, coreEvent(ev), runOf(ctx))
}

// store implements glue.Store over the base service.
type store struct{ s *service }

func (st store) Read(ctx context.Context, k glue.Key, recent int, after time.Time) (glue.Read, error) {
	resp, err := st.s.base.Get(ctx, &session.GetRequest{AppName: k.App, UserID: k.User, SessionID: k.ID,
		NumRecentEvents: recent, After: after})
	if err != nil {
		return nil, err
	}
	if resp == nil || resp.Session == nil {
		return nil, fmt.Errorf("adkctx: session %q: Get returned no session", k.ID)
	}
	return st.s.read(resp.Session), nil
}

// read implements glue.Read over one adk-go session value.
type read struct {
	s    *service
	sess session.Session
}

func (s *service) read(sess session.Session) *read { return &read{s: s, sess: sess} }

func (r *read) Events() []compaction.Event { return coreEvents(stored(r.sess)) }

func (r *read) Len() int {
	if evs := r.sess.Events(); evs != nil {
		return evs.Len()
	}
	return 0
}

// Has looks id up among the session's events, newest first, without converting them.
func (r *read) Has(id string) bool {
	evs := r.sess.Events()
	if evs == nil {
		return false
	}
	for i := evs.Len() - 1; i >= 0; i-- {
		if e := evs.At(i); e != nil && e.ID == id {
			return true
		}
	}
	return false
}

func (r *read) LastUpdate() time.Time { return r.sess.LastUpdateTime() }

func (r *read) Append(ctx context.Context, ev any, at time.Time) error {
	e, ok := ev.(*session.Event)
	if !ok {
		return fmt.Errorf("adkctx: appending %T: not an adk-go event", ev)
	}
	e.Timestamp = at
	return r.s.base.AppendEvent(ctx, r.sess, e)
}

func (r *read) AppendMarker(ctx context.Context, invocation string, at time.Time, metadata map[string]any) (compaction.Event, error) {
	ev := newEvent(ctx, invocation)
	ev.Author, ev.CustomMetadata, ev.Timestamp = "user", metadata, at
	if err := r.s.base.AppendEvent(ctx, r.sess, ev); err != nil {
		return compaction.Event{}, err
	}
	return coreEvent(ev), nil
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
	return eventsOf(context.Background(), glue.ModelOf(coreEvents(stored(sess))))
}

// viewSession is a session read through the wrapper: the core's view of it (glue.View, which
// says what each reader sees and keeps one state per change of the value), shown as adk-go
// events. Len and At are the model's view; All is the model's view once a run claimed the
// session, every stored event before (people's view).
type viewSession struct {
	s   *service
	v   *glue.View
	ctx context.Context // the Get's: notices are new events made with it

	mu                    sync.Mutex
	modelView, peopleView shown // the views, converted
}

// shown is a view the core computed (its entries, kept by the core for one state of the value)
// and its events as adk-go shows them.
type shown struct {
	from   []glue.Shown
	events []*session.Event
}

func (s *service) show(ctx context.Context, v *glue.View) *viewSession {
	return &viewSession{s: s, v: v, ctx: ctx}
}

// sess returns the adk-go session the view reads now.
func (vs *viewSession) sess() session.Session { return vs.v.Read().(*read).sess }

func (vs *viewSession) ID() string                { return vs.sess().ID() }
func (vs *viewSession) AppName() string           { return vs.sess().AppName() }
func (vs *viewSession) UserID() string            { return vs.sess().UserID() }
func (vs *viewSession) State() session.State      { return vs.sess().State() }
func (vs *viewSession) LastUpdateTime() time.Time { return vs.sess().LastUpdateTime() }

// Events returns the session's events: see viewSession. The value takes the model's view once,
// at its first use, so its Len, At and All agree with each other whatever the view does after
// (adk-go's runner calls Len, then At): a later call of Events sees the later state, as adk-go's
// own sessions do.
func (vs *viewSession) Events() session.Events {
	return &viewEvents{vs: vs, claimed: vs.v.Claimed()}
}

type viewEvents struct {
	vs      *viewSession
	claimed bool // whether a run had claimed the view when Events was called
	once    sync.Once
	events  []*session.Event // the model's view, taken once
}

func (v *viewEvents) model() []*session.Event {
	v.once.Do(func() { v.events = v.vs.model() })
	return v.events
}

// Len and At are the model's view, for adk-go's runner and flows.
func (v *viewEvents) Len() int {
	v.traced("Len")
	return len(v.model())
}

// At returns event i of the model's view (nil out of range).
func (v *viewEvents) At(i int) *session.Event {
	v.traced("At")
	evs := v.model()
	if i < 0 || i >= len(evs) {
		return nil
	}
	return evs[i]
}

// All is the model's view in a run, every stored event outside one (see viewSession).
func (v *viewEvents) All() iter.Seq[*session.Event] {
	v.traced("All")
	if v.claimed {
		return slices.Values(v.model())
	}
	return slices.Values(v.vs.people())
}

// traced reports a call of the events' method to the service's trace, if any.
func (v *viewEvents) traced(method string) {
	if f := v.vs.s.trace; f != nil {
		f(method, v.claimed)
	}
}

// model returns the model's view as adk-go events, converted again only when the core's view
// changed (the same events for one state of the value).
func (vs *viewSession) model() []*session.Event { return vs.convert(&vs.modelView, vs.v.Model()) }

// people returns people's view as adk-go events (see model).
func (vs *viewSession) people() []*session.Event { return vs.convert(&vs.peopleView, vs.v.People()) }

func (vs *viewSession) convert(c *shown, from []glue.Shown) []*session.Event {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if c.events == nil || len(from) != len(c.from) || len(from) > 0 && &from[0] != &c.from[0] {
		c.from, c.events = from, eventsOf(vs.ctx, from)
	}
	return c.events
}

// eventsOf shows a view's entries as adk-go events: a stored event as it is, or a shallow copy
// with another content or author (the stored event is never changed); a summary or a notice of
// its own as a new event.
func eventsOf(ctx context.Context, from []glue.Shown) []*session.Event {
	out := make([]*session.Event, 0, len(from))
	for _, sh := range from {
		switch {
		case sh.Summary != nil:
			out = append(out, summaryEvent(sh.Summary))
		case sh.Event == nil:
			ev := newEvent(ctx, "")
			ev.Author, ev.Content = sh.Author, sh.Content
			out = append(out, ev)
		default:
			e, _ := sh.Event.Source.(*session.Event)
			if e == nil {
				continue
			}
			if sh.Content != nil || sh.Author != "" {
				cp := *e
				if sh.Content != nil {
					cp.Content = sh.Content
				}
				if sh.Author != "" {
					cp.Author = sh.Author
				}
				e = &cp
			}
			out = append(out, e)
		}
	}
	return out
}

// summaryEvent is the event a view shows for a summary.
func summaryEvent(e *compaction.Event) *session.Event {
	ev := &session.Event{
		ID: e.ID, Timestamp: e.Timestamp, InvocationID: e.InvocationID, Author: e.Author,
		LLMResponse: model.LLMResponse{Content: e.Content, CustomMetadata: e.Metadata},
	}
	inScope(ev, e.Scope)
	return ev
}
