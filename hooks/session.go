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
	"github.com/adkctx/adkctx/internal/engine"
	"github.com/adkctx/adkctx/internal/glue"
)

// service is the session.Service wrapper: its sessions show the compacted view, every other
// method delegates to base. It is also the compactor's store.
type service struct {
	base  session.Service
	e     *engine.Engine
	board *glue.Board[*session.Event]
}

var (
	_ session.Service  = (*service)(nil)
	_ compaction.Store = (*service)(nil)
)

// kind converts adk-go v1 events for the core.
var kind = glue.Kind[*session.Event]{
	Core: coreEvents,
	ID:   func(e *session.Event) string { return e.ID },
	Summary: func(it compaction.Item, at *session.Event) *session.Event {
		return &session.Event{
			ID: compaction.SummaryEventID(it.MarkerID), Timestamp: at.Timestamp, InvocationID: at.InvocationID, Author: "user",
			LLMResponse: model.LLMResponse{Content: it.Summary, CustomMetadata: map[string]any{compaction.SummaryMetadataKey: it.MarkerID}},
		}
	},
}

func newService(base session.Service, e *engine.Engine) *service {
	if s, ok := base.(*service); ok {
		base = s.base // one view is enough
	}
	return &service{base: base, e: e, board: glue.NewBoard[*session.Event]()}
}

func keyOf(s session.Session) compaction.Session {
	return compaction.Session{App: s.AppName(), User: s.UserID(), ID: s.ID()}
}

func (s *service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	resp, err := s.base.Create(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	return &session.CreateResponse{Session: s.wrap(resp.Session)}, nil
}

// Get delegates (NumRecentEvents and After apply to the stored events) and shows the view of
// what came back.
func (s *service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	resp, err := s.base.Get(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	return &session.GetResponse{Session: s.wrap(resp.Session)}, nil
}

func (s *service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
	resp, err := s.base.List(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	out := &session.ListResponse{Sessions: make([]session.Session, len(resp.Sessions))}
	for i, sess := range resp.Sessions {
		out.Sessions[i] = s.wrap(sess)
	}
	return out, nil
}

func (s *service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	if req != nil {
		s.board.Forget(compaction.Session{App: req.AppName, User: req.UserID, ID: req.SessionID})
	}
	return s.base.Delete(ctx, req)
}

// AppendEvent appends through the stored session; a refusal caused by adkctx's own background
// writes is retried through a fresh handle, which the view then keeps (see glue.Append).
func (s *service) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	vs, _ := sess.(*viewSession)
	inner := unwrap(sess)
	if ev == nil || inner == nil || vs == nil {
		return s.base.AppendEvent(ctx, inner, ev)
	}
	s.e.NoteAppend(keyOf(inner), ev.InvocationID, ev.Author)
	handle, err := glue.Append(ctx, inner,
		func(h session.Session) error { return s.base.AppendEvent(ctx, h, ev) },
		func(h session.Session) (session.Session, bool, bool) {
			resp, err := s.base.Get(ctx, &session.GetRequest{AppName: h.AppName(), UserID: h.UserID(), SessionID: h.ID()})
			if err != nil || resp == nil || resp.Session == nil {
				return nil, false, false
			}
			advanced, ok := glue.Refresh(coreEvents(rawEvents(h)), coreEvents(rawEvents(resp.Session)))
			return resp.Session, advanced, ok
		})
	if err == nil && handle != inner {
		vs.setInner(handle)
	}
	return err
}

// Load implements compaction.Store.
func (s *service) Load(ctx context.Context, key compaction.Session) ([]compaction.Event, any, error) {
	resp, err := s.base.Get(ctx, &session.GetRequest{AppName: key.App, UserID: key.User, SessionID: key.ID})
	if err != nil {
		return nil, nil, err
	}
	if resp == nil || resp.Session == nil {
		return nil, nil, fmt.Errorf("adkctx: session %q: Get returned no session", key.ID)
	}
	return coreEvents(rawEvents(resp.Session)), resp.Session, nil
}

// Append implements compaction.Store.
func (s *service) Append(ctx context.Context, handle any, invocationID string, ts time.Time, metadata map[string]any) (string, error) {
	sess, ok := handle.(session.Session)
	if !ok {
		return "", fmt.Errorf("adkctx: store handle is %T, not a session", handle)
	}
	ev := session.NewEvent(invocationID)
	ev.Timestamp, ev.Author, ev.CustomMetadata = ts, "user", metadata
	if err := s.base.AppendEvent(ctx, sess, ev); err != nil {
		return "", err
	}
	s.board.Add(keyOf(sess), ev)
	return ev.ID, nil
}

func (s *service) wrap(sess session.Session) session.Session {
	if sess == nil {
		return nil
	}
	return &viewSession{svc: s, inner: unwrap(sess)}
}

// unwrap returns the session stored by the base service.
func unwrap(sess session.Session) session.Session {
	if vs, ok := sess.(*viewSession); ok {
		return vs.getInner()
	}
	return sess
}

// viewSession is a session whose Events() is the compacted view of the stored session's events
// (plus the markers this process appended since it was read), cached until they change.
type viewSession struct {
	svc *service

	mu     sync.Mutex
	inner  session.Session
	cached viewEvents
	key    viewKey
}

// viewKey identifies what a cached view was computed from.
type viewKey struct {
	n           int
	first, last *session.Event
	board       int
	boardLast   *session.Event
	valid       bool
}

func (v *viewSession) getInner() session.Session {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.inner
}

func (v *viewSession) setInner(s session.Session) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.inner, v.key = s, viewKey{}
}

func (v *viewSession) ID() string                { return v.getInner().ID() }
func (v *viewSession) AppName() string           { return v.getInner().AppName() }
func (v *viewSession) UserID() string            { return v.getInner().UserID() }
func (v *viewSession) State() session.State      { return v.getInner().State() }
func (v *viewSession) LastUpdateTime() time.Time { return v.getInner().LastUpdateTime() }

// Events returns the compacted view.
func (v *viewSession) Events() session.Events {
	v.mu.Lock()
	defer v.mu.Unlock()
	raw := v.inner.Events()
	if raw == nil {
		return viewEvents(nil)
	}
	board := v.svc.board.Get(keyOf(v.inner))
	k := viewKey{n: raw.Len(), board: len(board), valid: true}
	if k.n > 0 {
		k.first, k.last = raw.At(0), raw.At(k.n-1)
	}
	if len(board) > 0 {
		k.boardLast = board[len(board)-1]
	}
	if v.key != k {
		v.cached, v.key = glue.View(kind, v.svc.e.Viewer(), rawEvents(v.inner), board), k
	}
	return v.cached
}

// viewEvents implements session.Events over a slice.
type viewEvents []*session.Event

func (e viewEvents) All() iter.Seq[*session.Event] { return slices.Values(e) }
func (e viewEvents) Len() int                      { return len(e) }
func (e viewEvents) At(i int) *session.Event {
	if i >= 0 && i < len(e) {
		return e[i]
	}
	return nil
}

// rawEvents returns every stored event of sess (markers included, nil dropped), in stream order.
func rawEvents(sess session.Session) []*session.Event {
	sess = unwrap(sess)
	if sess == nil || sess.Events() == nil {
		return nil
	}
	out := make([]*session.Event, 0, sess.Events().Len())
	for e := range sess.Events().All() {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// coreEvents converts events for the adk-go-independent core (pointers shared, nothing copied).
func coreEvents(evs []*session.Event) []compaction.Event {
	out := make([]compaction.Event, len(evs))
	for i, e := range evs {
		out[i] = compaction.Event{
			ID: e.ID, InvocationID: e.InvocationID, Author: e.Author, Branch: e.Branch, Timestamp: e.Timestamp,
			Content: e.Content, Metadata: e.CustomMetadata, LongRunningToolIDs: e.LongRunningToolIDs,
			ErrorCode: e.ErrorCode, Partial: e.Partial, Final: e.IsFinalResponse(), Usage: e.UsageMetadata,
		}
		for id := range e.Actions.RequestedToolConfirmations {
			out[i].ConfirmationIDs = append(out[i].ConfirmationIDs, id)
		}
		slices.Sort(out[i].ConfirmationIDs)
	}
	return out
}
