package glue

import (
	"iter"
	"slices"
	"sync"

	"github.com/adkctx/adkctx/compaction"
)

// Handle is the state of a session shown as its compacted view: the stored session it reads
// (replaced when an append went through a fresh handle, see Append) and the view computed from
// it, kept until the stored events or the board's markers change. It is safe for concurrent use.
type Handle[S Identified, E comparable] struct {
	mu     sync.Mutex
	inner  S
	cached Slice[E]
	key    viewKey[E]
}

// viewKey identifies what a cached view was computed from.
type viewKey[E comparable] struct {
	n           int
	first, last E
	board       int
	boardLast   E
	valid       bool
}

// NewHandle returns the view state of a stored session.
func NewHandle[S Identified, E comparable](inner S) *Handle[S, E] {
	return &Handle[S, E]{inner: inner}
}

// Inner returns the stored session.
func (h *Handle[S, E]) Inner() S {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inner
}

// SetInner replaces the stored session (a fresher handle of the same session).
func (h *Handle[S, E]) SetInner(s S) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inner, h.key = s, viewKey[E]{}
}

// View returns the compacted view of the stored session plus the markers board holds for it.
// The stored events are only counted and their ends compared until they change.
func (h *Handle[S, E]) View(k Kind[S, E], v *compaction.Viewer, board *Board[E]) Slice[E] {
	h.mu.Lock()
	defer h.mu.Unlock()
	raw := k.Events(h.inner)
	if raw == nil {
		return nil
	}
	key, _ := KeyOf(h.inner)
	marks := board.Get(key)
	vk := viewKey[E]{n: raw.Len(), board: len(marks), valid: true}
	if vk.n > 0 {
		vk.first, vk.last = raw.At(0), raw.At(vk.n-1)
	}
	if len(marks) > 0 {
		vk.boardLast = marks[len(marks)-1]
	}
	if h.key != vk {
		h.cached, h.key = View(k, v, k.Stored(h.inner), marks), vk
	}
	return h.cached
}

// Slice is adk-go's session.Events (either version) over a slice.
type Slice[E any] []E

// All returns the events in order.
func (s Slice[E]) All() iter.Seq[E] { return slices.Values(s) }

// Len returns the number of events.
func (s Slice[E]) Len() int { return len(s) }

// At returns event i, or the zero value when i is out of range.
func (s Slice[E]) At(i int) E {
	if i >= 0 && i < len(s) {
		return s[i]
	}
	var zero E
	return zero
}
