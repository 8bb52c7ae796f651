package hooks

import "context"

// WaitIdle waits until no background compaction of h is scheduled or running.
func WaitIdle(ctx context.Context, h *Hooks) bool { return h.e.Idle(ctx) }
