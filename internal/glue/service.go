package glue

import (
	"context"
	"fmt"
	"time"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/compactor"
	"github.com/adkctx/adkctx/internal/engine"
)

// Session is adk-go's session.Session (either version), by its State and Events types.
type Session[St any, Evs any] interface {
	Identified
	State() St
	Events() Evs
	LastUpdateTime() time.Time
}

// Base is adk-go's session.Service (either version), by its session, event, request and
// response types.
type Base[S, E, CQ, CR, GQ, GR, LQ, LR, DQ any] interface {
	Create(context.Context, *CQ) (*CR, error)
	Get(context.Context, *GQ) (*GR, error)
	List(context.Context, *LQ) (*LR, error)
	Delete(context.Context, *DQ) error
	AppendEvent(context.Context, S, E) error
}

// Service is the session-service wrapper of one adk-go major version: its sessions show the
// compacted view, every other call delegates to the base service; it implements that version's
// session.Service, and compactor.Store. Its type parameters are the version's types (session,
// state, events, event, then the Create, Get, List and Delete requests and responses, which have
// the same fields in v1 and v2). A glue declares one Service value telling how its events
// convert (Kind, Marker); Wrap makes the wrappers.
type Service[S Session[St, Evs], St any, Evs Events[E], E comparable,
	CQ any, CR ~struct{ Session S },
	GQ ~struct {
		AppName, UserID, SessionID string
		NumRecentEvents            int
		After                      time.Time
	}, GR ~struct{ Session S },
	LQ any, LR ~struct{ Sessions []S },
	DQ ~struct{ AppName, UserID, SessionID string }] struct {
	Kind[S, E]
	// Marker returns the event that stores a marker record (author "user", no content).
	Marker func(ctx context.Context, invocation string, ts time.Time, metadata map[string]any) E

	base  Base[S, E, CQ, CR, GQ, GR, LQ, LR, DQ]
	e     *engine.Engine
	board *Board[E]
}

// view is a session whose Events() is the compacted view of the stored session's events
// (plus the markers this process appended since it was read). It implements session.Session.
type view[S Session[St, Evs], St any, Evs Events[E], E comparable] struct {
	h      *Handle[S, E]
	kind   Kind[S, E]
	viewer *compaction.Viewer
	board  *Board[E]
}

func (v *view[S, St, Evs, E]) ID() string                { return v.h.Inner().ID() }
func (v *view[S, St, Evs, E]) AppName() string           { return v.h.Inner().AppName() }
func (v *view[S, St, Evs, E]) UserID() string            { return v.h.Inner().UserID() }
func (v *view[S, St, Evs, E]) State() St                 { return v.h.Inner().State() }
func (v *view[S, St, Evs, E]) LastUpdateTime() time.Time { return v.h.Inner().LastUpdateTime() }

// Events returns the compacted view. Evs is adk-go's Events interface, which Slice implements.
func (v *view[S, St, Evs, E]) Events() Evs {
	return any(v.h.View(v.kind, v.viewer, v.board)).(Evs)
}

// Wrap returns a wrapper of base (of what base wraps, when it already is one: one view is
// enough) for engine e.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Wrap(base Base[S, E, CQ, CR, GQ, GR, LQ, LR, DQ], e *engine.Engine) *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ] {
	if w, ok := base.(*Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]); ok {
		base = w.base
	}
	return &Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]{Kind: s.Kind, Marker: s.Marker, base: base, e: e, board: NewBoard[E]()}
}

// Viewed reports whether sess is read through a wrapper.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Viewed(sess S) bool {
	_, ok := any(sess).(*view[S, St, Evs, E])
	return ok
}

// Unwrap returns the stored session behind sess.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Unwrap(sess S) S {
	if vs, ok := any(sess).(*view[S, St, Evs, E]); ok {
		return vs.h.Inner()
	}
	return sess
}

// wrap shows a stored session as its view. S is adk-go's Session interface, which view
// implements.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) wrap(sess S) S {
	if any(sess) == nil {
		return sess
	}
	return any(&view[S, St, Evs, E]{h: NewHandle[S, E](s.Unwrap(sess)), kind: s.Kind, viewer: s.e.Viewer(), board: s.board}).(S)
}

// Create delegates and shows the view of the created session.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Create(ctx context.Context, req *CQ) (*CR, error) {
	resp, err := s.base.Create(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	return &CR{Session: s.wrap(struct{ Session S }(*resp).Session)}, nil
}

// Get delegates (NumRecentEvents and After apply to the stored events) and shows the view of
// what came back.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Get(ctx context.Context, req *GQ) (*GR, error) {
	resp, err := s.base.Get(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	return &GR{Session: s.wrap(struct{ Session S }(*resp).Session)}, nil
}

// List delegates and shows the view of each session.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) List(ctx context.Context, req *LQ) (*LR, error) {
	resp, err := s.base.List(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	sessions := struct{ Sessions []S }(*resp).Sessions
	out := make([]S, len(sessions))
	for i, sess := range sessions {
		out[i] = s.wrap(sess)
	}
	return &LR{Sessions: out}, nil
}

// Delete delegates and forgets the session's markers.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Delete(ctx context.Context, req *DQ) error {
	if req != nil {
		k := struct{ AppName, UserID, SessionID string }(*req)
		s.board.Forget(compactor.Session{App: k.AppName, User: k.UserID, ID: k.SessionID})
	}
	return s.base.Delete(ctx, req)
}

// AppendEvent appends through the stored session; a busy or stale refusal with nothing but
// adkctx's markers stored since the session was read is retried through a fresh handle, which
// the view then keeps (see Append).
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) AppendEvent(ctx context.Context, sess S, ev E) error {
	vs, _ := any(sess).(*view[S, St, Evs, E])
	inner := s.Unwrap(sess)
	var none E
	if ev == none || any(inner) == nil || vs == nil {
		return s.base.AppendEvent(ctx, inner, ev)
	}
	key, _ := KeyOf(inner)
	core := s.Core([]E{ev})[0]
	s.e.NoteAppend(key, core.InvocationID, core.Author)
	handle, err := Append(ctx, s.Kind, inner,
		func(h S) error { return s.base.AppendEvent(ctx, h, ev) },
		func(S) (S, error) { return s.get(ctx, key) })
	if err == nil && any(handle) != any(inner) {
		vs.h.SetInner(handle)
	}
	return err
}

// get reads a stored session.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) get(ctx context.Context, key compactor.Session) (S, error) {
	var none S
	resp, err := s.base.Get(ctx, &GQ{AppName: key.App, UserID: key.User, SessionID: key.ID})
	if err != nil {
		return none, err
	}
	if resp == nil || any(struct{ Session S }(*resp).Session) == nil {
		return none, fmt.Errorf("adkctx: session %q: Get returned no session", key.ID)
	}
	return struct{ Session S }(*resp).Session, nil
}

// Load implements compactor.Store.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Load(ctx context.Context, key compactor.Session) ([]compaction.Event, any, error) {
	sess, err := s.get(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	return s.CoreOf(sess), sess, nil
}

// Append implements compactor.Store: the marker event is appended through the base service
// and put on the board, so views read before it landed show it.
func (s *Service[S, St, Evs, E, CQ, CR, GQ, GR, LQ, LR, DQ]) Append(ctx context.Context, handle any, invocationID string, ts time.Time, metadata map[string]any) (string, error) {
	sess, ok := handle.(S)
	if !ok {
		return "", fmt.Errorf("adkctx: store handle is %T, not a session", handle)
	}
	ev := s.Marker(ctx, invocationID, ts, metadata)
	if err := s.base.AppendEvent(ctx, sess, ev); err != nil {
		return "", err
	}
	key, _ := KeyOf(sess)
	s.board.Add(key, ev)
	return s.ID(ev), nil
}
