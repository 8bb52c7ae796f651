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

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/engine"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/lru"
)

// maxBoardSessions and maxBoardMarkers bound the markers this process appended and still shows
// to invocations that read their session before the marker was stored.
const (
	maxBoardSessions = 10_000
	maxBoardMarkers  = 4
)

// service is the session.Service wrapper: its sessions show the compacted view, every other
// method delegates to base. It is also the compactor's store.
type service struct {
	base session.Service
	e    *engine.Engine
	// board holds the markers this process appended per session, so an invocation that is
	// already running sees a background compaction at its next model call.
	board *lru.Cache[compaction.Session, []*session.Event]
}

var (
	_ session.Service  = (*service)(nil)
	_ compaction.Store = (*service)(nil)
)

func newService(base session.Service, e *engine.Engine) *service {
	if s, ok := base.(*service); ok {
		base = s.base // one view is enough
	}
	return &service{base: base, e: e, board: lru.New[compaction.Session, []*session.Event](maxBoardSessions)}
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
		s.board.Delete(compaction.Session{App: req.AppName, User: req.UserID, ID: req.SessionID})
	}
	return s.base.Delete(ctx, req)
}

// AppendEvent appends through the stored session. adkctx's own background writes must never fail
// a turn, so when the base service refuses the append because a marker appended in the
// background made the runner's handle stale, or because the store was busy with that write
// (SQLite has one writer), it appends through a fresh handle — a few times, backing off while
// busy — and the view keeps using that handle. Other errors, and a handle made stale by other
// writers, are returned as they are.
func (s *service) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	vs, _ := sess.(*viewSession)
	inner := unwrap(sess)
	if ev != nil && inner != nil {
		s.e.NoteAppend(compaction.Session{App: inner.AppName(), User: inner.UserID(), ID: inner.ID()}, ev.InvocationID, ev.Author)
	}
	err := s.base.AppendEvent(ctx, inner, ev)
	for try := 0; err != nil && vs != nil && ev != nil && try < maxAppendRetries; try++ {
		busy := false
		if kind, _ := errkind.Of(err); kind == errkind.Busy {
			busy = true
			select {
			case <-time.After(busyBackoff << try):
			case <-ctx.Done():
				return err
			}
		}
		fresh, advanced := s.refresh(ctx, inner)
		if fresh == nil || !busy && !advanced {
			return err
		}
		if err = s.base.AppendEvent(ctx, fresh, ev); err == nil {
			vs.setInner(fresh)
		}
		inner = fresh
	}
	return err
}

// Retries of AppendEvent.
const (
	maxAppendRetries = 4
	busyBackoff      = 25 * time.Millisecond
)

// refresh reads the session again. It returns nil when events other than markers were stored
// since handle was read (another writer: its error stands), and whether anything was stored.
func (s *service) refresh(ctx context.Context, handle session.Session) (fresh session.Session, advanced bool) {
	resp, err := s.base.Get(ctx, &session.GetRequest{AppName: handle.AppName(), UserID: handle.UserID(), SessionID: handle.ID()})
	if err != nil || resp == nil || resp.Session == nil {
		return nil, false
	}
	known := map[string]bool{}
	for e := range handle.Events().All() {
		known[e.ID] = true
	}
	for e := range resp.Session.Events().All() {
		if known[e.ID] {
			continue
		}
		if e.Content != nil || e.CustomMetadata[compaction.MetadataKey] == nil {
			return nil, false
		}
		advanced = true
	}
	return resp.Session, advanced
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
	key := compaction.Session{App: sess.AppName(), User: sess.UserID(), ID: sess.ID()}
	s.board.Update(key, nil, func(old []*session.Event) []*session.Event {
		return append(old[max(len(old)+1-maxBoardMarkers, 0):len(old):len(old)], ev)
	})
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
	board, _ := v.svc.board.Get(compaction.Session{App: v.inner.AppName(), User: v.inner.UserID(), ID: v.inner.ID()})
	k := viewKey{n: raw.Len(), board: len(board), valid: true}
	if k.n > 0 {
		k.first, k.last = raw.At(0), raw.At(k.n-1)
	}
	if len(board) > 0 {
		k.boardLast = board[len(board)-1]
	}
	if v.key == k {
		return v.cached
	}
	all := make([]*session.Event, 0, k.n+len(board))
	seen := map[string]bool{}
	for e := range raw.All() {
		if e != nil {
			all = append(all, e)
			seen[e.ID] = true
		}
	}
	for _, m := range board {
		if !seen[m.ID] {
			all = append(all, m)
		}
	}
	items := v.svc.e.Viewer().View(coreEvents(all))
	out := make(viewEvents, 0, len(items))
	for _, it := range items {
		if it.Summary == nil {
			out = append(out, all[it.Index])
			continue
		}
		at := all[it.Index]
		out = append(out, &session.Event{
			ID: compaction.SummaryEventID(it.MarkerID), Timestamp: at.Timestamp, InvocationID: at.InvocationID, Author: "user",
			LLMResponse: model.LLMResponse{Content: it.Summary, CustomMetadata: map[string]any{compaction.SummaryMetadataKey: it.MarkerID}},
		})
	}
	v.cached, v.key = out, k
	return out
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

// rawEvents returns every stored event of sess, markers included, in stream order.
func rawEvents(sess session.Session) []*session.Event {
	sess = unwrap(sess)
	if sess == nil || sess.Events() == nil {
		return nil
	}
	return slices.Collect(sess.Events().All())
}

// coreEvents converts events for the adk-go-independent core (pointers shared, nothing copied).
func coreEvents(evs []*session.Event) []compaction.Event {
	out := make([]compaction.Event, 0, len(evs))
	for _, e := range evs {
		if e == nil {
			continue
		}
		ce := compaction.Event{
			ID: e.ID, InvocationID: e.InvocationID, Author: e.Author, Branch: e.Branch, Timestamp: e.Timestamp,
			Content: e.Content, Metadata: e.CustomMetadata, LongRunningToolIDs: e.LongRunningToolIDs,
			ErrorCode: e.ErrorCode, Partial: e.Partial, Final: e.IsFinalResponse(), Usage: e.UsageMetadata,
		}
		for id := range e.Actions.RequestedToolConfirmations {
			ce.ConfirmationIDs = append(ce.ConfirmationIDs, id)
		}
		slices.Sort(ce.ConfirmationIDs)
		out = append(out, ce)
	}
	return out
}

func errorFields(err error) []zap.Field {
	kind, msg := errkind.Of(err)
	return []zap.Field{zap.String("error_kind", string(kind)), zap.String("error", msg)}
}
