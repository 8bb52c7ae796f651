package hooks

import "context"

// WaitIdle waits until no background compaction of h is scheduled or running.
func WaitIdle(ctx context.Context, h *Hooks) bool { return h.e.Idle(ctx) }

// ReadWhole makes every session read of h a whole one: what bounded reads are compared with.
func ReadWhole(h *Hooks) { h.store.sessions.ReadWhole() }

// TraceEvents calls f for each call of a method ("Len", "At", "All") of the events of a session
// read through h's wrapper, saying whether a run had claimed the session then. Set it after
// Wire, before the first run.
func TraceEvents(h *Hooks, f func(method string, run bool)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.store.trace = f
}
