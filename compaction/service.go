package compaction

import (
	"context"
	"iter"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/adk/session"
)

// Service is a [session.Service] wrapper whose sessions return the
// compacted [View] from Events(), so adk-go's own history building sees
// summaries plus recent events while storage keeps every event. Every other
// method delegates to the base service; AppendEvent unwraps the session
// first (each built-in service type-asserts its own session type).
//
// Wrap a service only when compaction is configured: a marker is an
// erase-and-inject primitive and is honoured by whoever reads through this
// wrapper.
type Service struct {
	base   session.Service
	logger *zap.Logger
}

var _ session.Service = (*Service)(nil)

// NewService wraps base. A nil logger means zap.NewNop().
func NewService(base session.Service, logger *zap.Logger) *Service {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Service{base: base, logger: logger}
}

// Base returns the wrapped service.
func (s *Service) Base() session.Service { return s.base }

// Create delegates and wraps the created session.
func (s *Service) Create(ctx context.Context, req *session.CreateRequest) (*session.CreateResponse, error) {
	resp, err := s.base.Create(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	return &session.CreateResponse{Session: s.wrap(resp.Session)}, nil
}

// Get delegates (NumRecentEvents and After are applied by the base service)
// and wraps the session: its Events() is the view over what came back.
func (s *Service) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	resp, err := s.base.Get(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	return &session.GetResponse{Session: s.wrap(resp.Session)}, nil
}

// List delegates and wraps every session.
func (s *Service) List(ctx context.Context, req *session.ListRequest) (*session.ListResponse, error) {
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

// Delete delegates.
func (s *Service) Delete(ctx context.Context, req *session.DeleteRequest) error {
	return s.base.Delete(ctx, req)
}

// AppendEvent unwraps sess and delegates; the base service's error is
// returned as is.
func (s *Service) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	return s.base.AppendEvent(ctx, Unwrap(sess), ev)
}

func (s *Service) wrap(sess session.Session) session.Session {
	if sess == nil {
		return nil
	}
	if vs, ok := sess.(*viewSession); ok {
		// The base is itself a wrapper: one view is enough.
		sess = Unwrap(vs)
	}
	return &viewSession{inner: sess, logger: s.logger}
}

// Unwrap returns the session stored by the base service: sess itself when
// it was not returned by a [Service].
func Unwrap(sess session.Session) session.Session {
	for {
		vs, ok := sess.(*viewSession)
		if !ok || vs == nil {
			return sess
		}
		sess = vs.inner
	}
}

// RawEvents returns every stored event of sess, markers included, in
// stream order (wrapped or not). It returns nil for a nil session.
func RawEvents(sess session.Session) []*session.Event {
	sess = Unwrap(sess)
	if sess == nil {
		return nil
	}
	evs := sess.Events()
	if evs == nil {
		return nil
	}
	out := make([]*session.Event, 0, evs.Len())
	for e := range evs.All() {
		out = append(out, e)
	}
	return out
}

// viewSession is a session whose Events() is the compacted view of the
// inner session's current events. The view is computed lazily and cached
// until the inner session's events change (the runner keeps one session
// object for a whole invocation and appends to the inner one).
type viewSession struct {
	inner  session.Session
	logger *zap.Logger

	mu         sync.Mutex
	cached     viewEvents
	cacheValid bool
	cacheLen   int
	cacheFirst *session.Event
	cacheLast  *session.Event
}

func (v *viewSession) ID() string                { return v.inner.ID() }
func (v *viewSession) AppName() string           { return v.inner.AppName() }
func (v *viewSession) UserID() string            { return v.inner.UserID() }
func (v *viewSession) State() session.State      { return v.inner.State() }
func (v *viewSession) LastUpdateTime() time.Time { return v.inner.LastUpdateTime() }

// Events returns the compacted view.
func (v *viewSession) Events() session.Events {
	raw := v.inner.Events()
	if raw == nil {
		return viewEvents(nil)
	}
	n := raw.Len()
	var first, last *session.Event
	if n > 0 {
		first, last = raw.At(0), raw.At(n-1)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cacheValid && v.cacheLen == n && v.cacheFirst == first && v.cacheLast == last {
		return v.cached
	}
	all := make([]*session.Event, 0, n)
	for e := range raw.All() {
		all = append(all, e)
	}
	v.cached = viewEvents(View(all, v.logger))
	v.cacheValid, v.cacheLen, v.cacheFirst, v.cacheLast = true, n, first, last
	return v.cached
}

// viewEvents implements session.Events over a slice.
type viewEvents []*session.Event

func (e viewEvents) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func (e viewEvents) Len() int { return len(e) }

func (e viewEvents) At(i int) *session.Event {
	if i >= 0 && i < len(e) {
		return e[i]
	}
	return nil
}
