package history

import (
	"context"
	"fmt"
	"time"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/errkind"
)

// Bounds of Append's retries: maxTries appends at most, pausing retryPause, then twice as long
// each time (10, 20, 40, 80 ms) after a refusal as busy.
const (
	maxTries   = 5
	retryPause = 10 * time.Millisecond
)

// Changes is what a fresh read of a session holds that an older read did not.
type Changes struct {
	// Markers are the new events that carry only a marker record (adkctx's own writes).
	Markers []compaction.Event
	// Others counts the other new events (a writer's turn).
	Others int
}

// Since returns what fresh holds that old did not (by event id).
func Since(old, fresh []compaction.Event) Changes {
	known := make(map[string]bool, len(old))
	for i := range old {
		known[old[i].ID] = true
	}
	var c Changes
	for i := range fresh {
		e := &fresh[i]
		switch {
		case known[e.ID]:
		case e.Content == nil && e.Metadata[compaction.MetadataKey] != nil:
			c.Markers = append(c.Markers, *e)
		default:
			c.Others++
		}
	}
	return c
}

// NewerMarker reports whether c holds a valid marker of scope.
func (c Changes) NewerMarker(scope string) bool {
	for i := range c.Markers {
		if m, err := compaction.ReadMarker(&c.Markers[i]); err == nil && m != nil && m.Scope == scope {
			return true
		}
	}
	return false
}

// Snapshot is one read of a session, through which an event can be appended: the glue's adk-go
// session, read through its wrapper.
type Snapshot interface {
	// Events returns the events read (converted for the core), in stream order.
	Events() []compaction.Event
}

// ExhaustedError is Append's error when the store refused every try while the session kept
// changing: a conflict with other writers, not a failure of the store.
type ExhaustedError struct {
	Tries int
	Err   error // the last refusal
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("adkctx: the session kept changing: %d appends refused, the last: %v", e.Tries, e.Err)
}

func (e *ExhaustedError) Unwrap() error { return e.Err }

// ErrorKind implements errkind.Kinded.
func (e *ExhaustedError) ErrorKind() string { return string(errkind.Conflict) }

// Append appends through snap with try, and when the store refused it as busy (SQLite has one
// writer) or as a conflict (a stale read, a serialization failure), reads the session again
// with reread and, if accept takes what changed since snap, appends through the fresh read — a
// few times at most, pausing a little longer after each refusal as busy. accept returns nil to
// retry, or the error to end with. It returns the snapshot that took the event (to be used from
// then on) and the last error.
func Append[S Snapshot](ctx context.Context, snap S, try func(S) error, reread func(context.Context) (S, error), accept func(Changes) error) (S, error) {
	err := try(snap)
	for n := 1; err != nil && n < maxTries; n++ {
		kind, _ := errkind.Of(err)
		if kind != errkind.Busy && kind != errkind.Conflict && kind != errkind.Unknown && kind != errkind.Storage {
			return snap, err
		}
		if kind == errkind.Busy {
			select {
			case <-time.After(retryPause << (n - 1)):
			case <-ctx.Done():
				return snap, err
			}
		}
		fresh, rerr := reread(ctx)
		if rerr != nil {
			return snap, err
		}
		changes := Since(snap.Events(), fresh.Events())
		// adk-go's database Get reads a session's update time and its events apart: a read can
		// hold a marker stored after the update time it carries, so a stale refusal with
		// nothing new is retried too. Other refusals are retried only when something changed.
		if kind != errkind.Busy && kind != errkind.Conflict && changes.Others == 0 && len(changes.Markers) == 0 {
			return snap, err
		}
		if aerr := accept(changes); aerr != nil {
			return snap, aerr
		}
		snap = fresh
		if err = try(snap); err != nil && n == maxTries-1 {
			return snap, &ExhaustedError{Tries: maxTries, Err: err}
		}
	}
	return snap, err
}

// Stamp returns the timestamp adkctx stores an event with: t in UTC at microsecond precision
// (the database service's), and at least a microsecond after newest, the newest event the
// session held when it was read. Timestamps then order a session's events as they were
// appended, whatever the writers' time zones, daylight-saving changes and clocks: what bounded
// reads (GetRequest.After) rely on.
func Stamp(t, newest time.Time) time.Time {
	t = t.UTC().Truncate(time.Microsecond)
	if min := newest.UTC().Truncate(time.Microsecond).Add(time.Microsecond); !newest.IsZero() && t.Before(min) {
		return min
	}
	return t
}
