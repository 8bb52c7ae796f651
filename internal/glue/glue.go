// Package glue holds what the glues of every adk-go major version (package hooks for adk-go v1,
// adk2/hooks for v2) do alike, written once over type parameters: the session-service wrapper
// and its sessions, which show the compacted view (with the markers this process appended since
// a session was read) and append so that adkctx's own background writes never fail a turn
// (Service); the wiring checks, the agent's model and the artifact saver (wire.go). The
// per-version packages only name their types, convert their events and call adk-go's API.
package glue

import (
	"context"
	"iter"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/compactor"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/lru"
)

// Bounds of the board: the markers this process appended, per session.
const (
	maxBoardSessions = 10_000
	maxBoardMarkers  = 4
)

// Retries of an append refused because of adkctx's own writes.
const (
	maxAppendRetries = 4
	busyBackoff      = 25 * time.Millisecond
)

// Kind converts one adk-go version's sessions and events for the core.
type Kind[S Identified, E comparable] struct {
	// Core converts events to the core's events, one for one, in order.
	Core func(events []E) []compaction.Event
	// ID returns an event's id.
	ID func(E) string
	// Summary builds the event a view shows for a summary item, placed at event at.
	Summary func(it compaction.Item, at E) E
	// WithContent returns a copy of e showing c (an excerpt) instead of its content.
	WithContent func(e E, c *genai.Content) E
	// Events returns a session's stored events (nil when it has none).
	Events func(S) Events[E]
}

// Events is adk-go's session.Events of either version.
type Events[E any] interface {
	All() iter.Seq[E]
	Len() int
	At(i int) E
}

// Identified is what identifies a session (adk-go's session.Session of either version).
type Identified interface {
	AppName() string
	UserID() string
	ID() string
}

// KeyOf returns the key of a session; false for no session.
func KeyOf(s Identified) (compactor.Session, bool) {
	if s == nil {
		return compactor.Session{}, false
	}
	return compactor.Session{App: s.AppName(), User: s.UserID(), ID: s.ID()}, true
}

// Stored returns every stored event of s (markers included, nil dropped), in stream order.
func (k Kind[S, E]) Stored(s S) []E {
	if any(s) == nil {
		return nil
	}
	evs := k.Events(s)
	if evs == nil {
		return nil
	}
	var zero E
	out := make([]E, 0, evs.Len())
	for e := range evs.All() {
		if e != zero {
			out = append(out, e)
		}
	}
	return out
}

// CoreOf converts the stored events of s for the core.
func (k Kind[S, E]) CoreOf(s S) []compaction.Event { return k.Core(k.Stored(s)) }

// Board remembers the markers this process appended per session, so an invocation that read
// its session before a background compaction stored its marker sees the summary at its next
// model call.
type Board[E any] struct {
	m *lru.Cache[compactor.Session, []E]
}

// NewBoard returns an empty board.
func NewBoard[E any]() *Board[E] {
	return &Board[E]{m: lru.New[compactor.Session, []E](maxBoardSessions)}
}

// Add records a marker event appended for s.
func (b *Board[E]) Add(s compactor.Session, ev E) {
	b.m.Update(s, nil, func(old []E) []E {
		return append(old[max(len(old)+1-maxBoardMarkers, 0):len(old):len(old)], ev)
	})
}

// Get returns the markers recorded for s, oldest first.
func (b *Board[E]) Get(s compactor.Session) []E {
	out, _ := b.m.Get(s)
	return out
}

// Forget drops s (its session was deleted).
func (b *Board[E]) Forget(s compactor.Session) { b.m.Delete(s) }

// View returns what the model sees of stored (a session's stored events, in stream order, no
// nil) plus the board's markers not among them.
func View[S Identified, E comparable](k Kind[S, E], v *compaction.Viewer, stored, board []E) []E {
	all := stored
	if len(board) > 0 {
		seen := make(map[string]bool, len(stored))
		for _, e := range stored {
			seen[k.ID(e)] = true
		}
		all = append(make([]E, 0, len(stored)+len(board)), stored...)
		for _, m := range board {
			if !seen[k.ID(m)] {
				all = append(all, m)
			}
		}
	}
	core := k.Core(all)
	items := v.View(core)
	out := make([]E, 0, len(items))
	for _, it := range items {
		switch {
		case it.Summary != nil:
			out = append(out, k.Summary(it, all[it.Index]))
		case it.Content != nil:
			out = append(out, k.WithContent(all[it.Index], it.Content))
		default:
			out = append(out, all[it.Index])
		}
	}
	return out
}

// Refresh tells whether a session re-read (fresh) differs from what a handle read (old) only by
// markers: ok is false when other events were stored (another writer, whose conflict stands);
// advanced when markers were.
func Refresh(old, fresh []compaction.Event) (advanced, ok bool) {
	known := make(map[string]bool, len(old))
	for i := range old {
		known[old[i].ID] = true
	}
	for i := range fresh {
		e := &fresh[i]
		if known[e.ID] {
			continue
		}
		if e.Content != nil || e.Metadata[compaction.MetadataKey] == nil {
			return false, false
		}
		advanced = true
	}
	return advanced, true
}

// Append appends through handle and, when the store refused it as busy (SQLite has one writer,
// backed off) or as a conflict (a stale handle, a serialization failure), or after adkctx's own
// background marker made the handle stale, appends through a fresh handle, as long as nothing but
// markers was stored since handle was read — a few times at most.
// appendTo appends through a handle; reread reads the session again. It returns the handle that
// took the event (to be used from then on), and the last error.
func Append[S Identified, E comparable](ctx context.Context, k Kind[S, E], handle S, appendTo func(S) error, reread func(S) (S, error)) (S, error) {
	err := appendTo(handle)
	for try := 0; err != nil && try < maxAppendRetries; try++ {
		kind, _ := errkind.Of(err)
		if kind == errkind.Busy {
			select {
			case <-time.After(busyBackoff << try):
			case <-ctx.Done():
				return handle, err
			}
		}
		fresh, rerr := reread(handle)
		if rerr != nil || any(fresh) == nil {
			return handle, err
		}
		// Only adkctx's markers may have been stored since handle was read: another writer's
		// conflict stands. A stale refusal with nothing new is retried too: adk-go's database
		// Get reads the session's update time and its events apart, so a handle can hold a
		// marker stored after the update time it carries.
		advanced, ok := Refresh(k.CoreOf(handle), k.CoreOf(fresh))
		if !ok || kind != errkind.Busy && kind != errkind.Conflict && !advanced {
			return handle, err
		}
		handle = fresh
		err = appendTo(handle)
	}
	return handle, err
}
