// Package compactor runs compactions for the hooks of every adk-go major version: in the
// background, one at a time per session (triggers that arrive meanwhile run once after it), with
// a bound on each attempt, a backoff after failures, and a marker append that is retried when
// the session moved on. What to compact and the summary come from plan.Prepare.
package compactor

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/lru"
	"github.com/adkctx/adkctx/processors/request"
)

// maxBackoffDoublings bounds the backoff at 32 × Config.Backoff.
const maxBackoffDoublings = 5

// Session names one session.
type Session = history.Key

// Store is how the compactor reads a session and appends a marker. The glue for each adk-go
// major version implements it over a session.Service.
type Store interface {
	// Read reads what a compaction of the session needs: its view (history.ForView), and the
	// covered invocations the summarizer is given again when it reads them
	// (history.ForCompaction).
	Read(ctx context.Context, s Session, p history.Purpose) (Snapshot, error)
}

// Snapshot is one read of a session.
type Snapshot interface {
	history.Snapshot
	// Changes reads what the store holds that this read did not (only what was stored since).
	Changes(ctx context.Context) (history.Changes, error)
	// AppendMarker stores, through this read, an event with no content, author "user", the
	// given invocation id, a timestamp of ts or later, and metadata as its CustomMetadata, and
	// returns its id. A store may refuse it when the session changed since the read.
	AppendMarker(ctx context.Context, invocationID string, ts time.Time, metadata map[string]any) (string, error)
}

// Request is one compaction to run.
type Request struct {
	Session Session
	Trigger compaction.Trigger
	// Invocation is the invocation that triggered the compaction: the one that just finished,
	// or the one still running when Live.
	Invocation string
	Live       bool
	// Limits are the limits of the model the session uses (they size the token tail, the
	// summary bound and an LLM summarizer's prompt).
	Limits budget.Limits
	// TokenLimit is the soft limit in the compactor's unit: estimated tokens of the history
	// alone (the request minus system instruction and tools, calibration undone). 0: unknown.
	TokenLimit int
	// Reserve is what joins the view before the next request besides the stored events
	// (plan.Selection.Reserve).
	Reserve int
	// Link is the span of the call that triggered the compaction (for the compaction's span).
	Link trace.SpanContext
	// Sent are the session's newest model requests as sent, newest first (see
	// plan.Selection).
	Sent []*request.LLMRequest
	// Snapshot, when set, is a read of the session that holds its view (the triggering
	// invocation's, with the events it appended): a compaction that needs no more does not read
	// the session again.
	Snapshot Snapshot
}

// Outcome is how a compaction attempt ended.
type Outcome string

// The outcomes.
const (
	OutcomeCompacted Outcome = "compacted"
	OutcomeNothing   Outcome = "nothing_to_do"
	OutcomeCoalesced Outcome = "coalesced" // another compaction of the session was running: it runs again after
	OutcomeBackoff   Outcome = "backoff"   // skipped: the session's last attempts failed (see Config.Backoff)
	OutcomeConflict  Outcome = "conflict"  // discarded: a newer marker was stored first
	OutcomeFailed    Outcome = "failed"    // every summarizer failed, or the store did
	OutcomeCanceled  Outcome = "canceled"  // a manual compaction's caller cancelled it or its deadline passed: no failure of the session
	OutcomeClosed    Outcome = "closed"    // not run: the compactor was closed
)

// Attempt reports one compaction attempt (what the hooks log and measure): what Prepare
// decided, and how the attempt ended. Marker is the stored marker (OutcomeCompacted) and
// MarkerID its event id.
type Attempt struct {
	plan.Result
	Request  Request
	Trigger  compaction.Trigger // effective trigger
	Outcome  Outcome
	Start    time.Time
	Duration time.Duration
	MarkerID string
	// Failures is the number of consecutive failed attempts of the session (backoff).
	Failures int
}

// Deps are what a Compactor needs from the hooks.
type Deps struct {
	Store  Store
	Viewer *plan.Viewer
	// Limits returns the limits the hooks apply to a model (for an LLM summarizer's prompt).
	Limits func(model string) budget.Limits
	// Report receives every attempt (logs, metrics, spans). Nil: none.
	Report func(Attempt)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Due reports what the last read of a session showed raw (history.Reader.RawInvocations),
	// so that a sliding window that is not due reads nothing. Nil: always read.
	Due func(Session) (raw, keep int, ok bool)
	// Recall keeps what a stored marker takes out of the view reachable by the recall tools.
	// Nil: nothing is kept.
	Recall Recall
	// Stored receives the events of the read a marker was stored through, the marker included
	// (history.Reader.Learn): the next read of the session starts where the new view does, not
	// where the view before the marker did. Nil: nothing is told.
	Stored func(Session, []compaction.Event)
}

// Recall keeps what a marker takes out of the view reachable by the recall tools (package
// recall): the engine implements it over the artifact store the glue captured. Its methods
// handle (log) their own failures: none fails a compaction.
type Recall interface {
	// SaveExcerpts saves whole the tool results marker m shows as excerpts among events (the
	// read the marker was prepared from), before m is stored: the notes naming them appear
	// with it.
	SaveExcerpts(ctx context.Context, s Session, m *compaction.Marker, events []compaction.Event)
	// WriteHistory keeps the events a stored marker newly covers (Result.Covered); turns is
	// the marker's Invocations, the turns of its scope up to the last of them (the history
	// numbers its turns from it as the user counts them).
	WriteHistory(ctx context.Context, s Session, covered []compaction.Event, turns int)
}

// Compactor runs compactions: in the background (one at a time per session, coalescing
// triggers that arrive meanwhile) or inline. It is safe for concurrent use.
type Compactor struct {
	cfg  compaction.Config
	deps Deps

	purpose history.Purpose // what a read for a compaction needs

	mu       sync.Mutex
	flights  map[Session]*flight
	closed   bool
	wg       sync.WaitGroup
	failures *lru.Cache[Session, backoff]
}

type flight struct {
	done chan struct{}
	next *Request // a trigger that arrived while running
}

type backoff struct {
	failures int
	until    time.Time
}

// maxTrackedFailures bounds the sessions whose failures are remembered for backoff.
const maxTrackedFailures = 10_000

// New validates cfg and returns a Compactor.
func New(cfg compaction.Config, deps Deps) (*Compactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if deps.Store == nil {
		return nil, config.Errorf("Store", nil, "is required")
	}
	if deps.Viewer == nil {
		deps.Viewer = plan.NewViewer(nil)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Report == nil {
		deps.Report = func(Attempt) {}
	}
	c := &Compactor{cfg: plan.WithDefaults(cfg), deps: deps, flights: map[Session]*flight{},
		failures: lru.New[Session, backoff](maxTrackedFailures), purpose: history.ForView}
	if _, llm := c.cfg.Summarizer.(*compaction.LLMSummarizer); llm && c.cfg.Overlap > 0 {
		c.purpose = history.ForCompaction // its transcript holds the covered invocations given again
	}
	return c, nil
}

// Forget drops the backoff of session s, whose session was deleted.
func (c *Compactor) Forget(s Session) { c.failures.Delete(s) }

// Config returns the configuration in use, defaults applied.
func (c *Compactor) Config() compaction.Config { return c.cfg }

// Schedule runs r in the background (inline when Config.Synchronous). While a compaction of the
// session runs, a new trigger is not started beside it: it runs once after it (the newest
// trigger wins; a token trigger wins over a sliding-window one).
func (c *Compactor) Schedule(r Request) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.deps.Report(Attempt{Request: r, Trigger: r.Trigger, Outcome: OutcomeClosed, Start: c.deps.Now()})
		return
	}
	if f, ok := c.flights[r.Session]; ok {
		if f.next == nil || r.Trigger != compaction.TriggerInvocations || f.next.Trigger == compaction.TriggerInvocations {
			f.next = &r
		}
		c.mu.Unlock()
		c.deps.Report(Attempt{Request: r, Trigger: r.Trigger, Outcome: OutcomeCoalesced, Start: c.deps.Now()})
		return
	}
	f := &flight{done: make(chan struct{})}
	c.flights[r.Session] = f
	c.wg.Add(1)
	c.mu.Unlock()
	if c.cfg.Synchronous {
		c.fly(f, r)
		return
	}
	go c.fly(f, r)
}

func (c *Compactor) fly(f *flight, r Request) {
	defer c.wg.Done()
	for {
		c.attempt(context.Background(), r, false)
		c.mu.Lock()
		if f.next == nil {
			delete(c.flights, r.Session)
			close(f.done)
			c.mu.Unlock()
			return
		}
		r, f.next = *f.next, nil
		r.Snapshot = nil // read before the run it waited for stored its marker: read again
		c.mu.Unlock()
	}
}

// Pending reports whether a compaction of s is scheduled or running.
func (c *Compactor) Pending(s Session) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.flights[s]
	return ok
}

// Wait waits until no compaction of s is scheduled or running, or ctx is done; it reports
// whether none is.
func (c *Compactor) Wait(ctx context.Context, s Session) bool {
	return c.waitWhile(ctx, func() *flight { return c.flights[s] })
}

// Idle waits until no compaction is scheduled or running, or ctx is done; it reports whether
// none is.
func (c *Compactor) Idle(ctx context.Context) bool {
	return c.waitWhile(ctx, func() *flight {
		for _, f := range c.flights {
			return f
		}
		return nil
	})
}

// waitWhile waits for the flights next returns (under c.mu) until it returns nil.
func (c *Compactor) waitWhile(ctx context.Context, next func() *flight) bool {
	for {
		c.mu.Lock()
		f := next()
		c.mu.Unlock()
		if f == nil {
			return true
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return false
		}
	}
}

// Close stops accepting new compactions and waits for the running ones until ctx is done.
// Work that does not finish is simply redone by a later process (storage stays append-only).
func (c *Compactor) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Compact runs one compaction of r now, on the caller's goroutine, ignoring backoff (a manual
// compaction): after the compaction of the session in flight, if any; a trigger that arrives
// meanwhile runs after it. It honours ctx (and Config.Timeout) and fails after Close. It returns
// the stored marker, or nil when nothing was stored, and the error of a failed attempt.
func (c *Compactor) Compact(ctx context.Context, r Request) (*compaction.Marker, error) {
	f, err := c.acquire(ctx, r.Session)
	if err != nil {
		return nil, err
	}
	defer c.release(r.Session, f)
	a := c.attempt(ctx, r, true)
	return a.Marker, a.Err
}

// acquire waits until no compaction of s is in flight and registers one for the caller.
func (c *Compactor) acquire(ctx context.Context, s Session) (*flight, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, errClosed
		}
		f, busy := c.flights[s]
		if !busy {
			f = &flight{done: make(chan struct{})}
			c.flights[s] = f
			c.mu.Unlock()
			return f, nil
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release ends the caller's flight, or hands it to a trigger that arrived meanwhile.
func (c *Compactor) release(s Session, f *flight) {
	c.mu.Lock()
	next := f.next
	f.next = nil
	if next == nil {
		delete(c.flights, s)
		close(f.done)
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go c.fly(f, *next)
}

// errClosed is returned by Compact after Close.
var errClosed = errors.New("adkctx: the compactor is closed")

// attempt runs one compaction and reports it. Backoff applies unless manual.
func (c *Compactor) attempt(ctx context.Context, r Request, manual bool) Attempt {
	a := Attempt{Request: r, Trigger: r.Trigger, Start: c.deps.Now()}
	defer func() {
		a.Duration = c.deps.Now().Sub(a.Start)
		c.deps.Report(a)
	}()
	if !manual {
		if b, ok := c.failures.Get(r.Session); ok && a.Start.Before(b.until) {
			a.Outcome, a.Failures = OutcomeBackoff, b.failures
			return a
		}
	}
	// A background compaction outlives the request that triggered it; a manual one is the
	// caller's to cancel.
	caller := ctx
	if !manual {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	c.run(ctx, r, &a)
	if a.Outcome == OutcomeFailed && caller.Err() != nil {
		// The caller gave up (cancelled, or its deadline passed before Config.Timeout): that
		// says nothing of the session's summarizer or store, so it neither backs the session
		// off nor resets a backoff. The driver's error need not wrap the context's, so the
		// context decides, not the error.
		a.Outcome = OutcomeCanceled
		if b, ok := c.failures.Get(r.Session); ok {
			a.Failures = b.failures
		}
		return a
	}
	switch a.Outcome {
	case OutcomeFailed:
		var b backoff
		c.failures.Update(r.Session, nil, func(old backoff) backoff {
			b.failures = old.failures + 1
			b.until = c.deps.Now().Add(c.cfg.Backoff << min(b.failures-1, maxBackoffDoublings))
			return b
		})
		a.Failures = b.failures
	case OutcomeCompacted:
		c.failures.Delete(r.Session)
	}
	return a
}

// run is one attempt: prepare the marker, then store it; a is filled in.
func (c *Compactor) run(ctx context.Context, r Request, a *Attempt) {
	if c.notDue(r) {
		a.Outcome, a.Reason = OutcomeNothing, "below_interval"
		return
	}
	snap := r.Snapshot
	if snap == nil || c.purpose != history.ForView {
		var err error
		if snap, err = c.deps.Store.Read(ctx, r.Session, c.purpose); err != nil {
			a.Outcome, a.Err = OutcomeFailed, err
			return
		}
	}
	a.Result = plan.Prepare(ctx, c.cfg, c.deps.Viewer, snap.Events(), plan.Selection{
		Trigger: r.Trigger, Invocation: r.Invocation, Live: r.Live,
		Limits: r.Limits, TokenLimit: r.TokenLimit, LimitsFor: c.deps.Limits, Now: c.deps.Now(),
		Sent: r.Sent, Reserve: r.Reserve,
	})
	switch {
	case a.Err != nil:
		a.Outcome = OutcomeFailed
	case a.Marker == nil:
		a.Outcome = OutcomeNothing
	default:
		c.store(ctx, r, snap, a)
	}
}

// notDue reports that a sliding window after a finished invocation has nothing to do, from what
// the last read of the session showed raw plus that invocation: no read is needed to know it.
// Another process's invocations are not counted, so the window may come a turn late, never
// early.
func (c *Compactor) notDue(r Request) bool {
	if r.Trigger != compaction.TriggerInvocations || r.Live || c.deps.Due == nil {
		return false
	}
	raw, keep, ok := c.deps.Due(r.Session)
	return ok && !plan.SlidingWindowDue(c.cfg, raw+1, keep)
}

// errNewerMarker ends a marker append: a newer marker of its scope was stored first.
var errNewerMarker = errors.New("adkctx: a newer marker was stored first")

// store appends the marker a prepared from snap, unless a newer marker of its scope landed since.
// A refusal because the session moved on (the database service refuses an append through a read
// older than the session's last update, as one is when another writer stored a marker while
// the summary was written) or because the store is busy is retried through a fresh read
// (history.Append), unless that read holds a newer marker of the scope; after the last try the
// summary is discarded as a conflict, to be redone by the next trigger (no backoff). Only a
// stored marker stays in a.
func (c *Compactor) store(ctx context.Context, r Request, snap Snapshot, a *Attempt) {
	defer func() {
		if a.Outcome != OutcomeCompacted {
			a.Marker, a.Metadata = nil, nil
		}
	}()
	// The summary took a while: another writer's marker may have landed meanwhile, which not
	// every store refuses an append over (adk-go's in-memory service does not).
	if ch, err := snap.Changes(ctx); err != nil {
		a.Outcome, a.Err = OutcomeFailed, err
		return
	} else if ch.NewerMarker(a.Marker.Scope) {
		a.Outcome, a.Reason = OutcomeConflict, "newer_marker"
		return
	}
	if c.deps.Recall != nil {
		c.deps.Recall.SaveExcerpts(ctx, r.Session, a.Marker, snap.Events())
	}
	read := func(ctx context.Context) (Snapshot, error) { return c.deps.Store.Read(ctx, r.Session, history.ForView) }
	var id string
	final, err := history.Append(ctx, snap, func(s Snapshot) (err error) {
		id, err = s.AppendMarker(ctx, r.Invocation, c.deps.Now(), a.Metadata)
		return err
	}, read, func(ch history.Changes) error {
		if ch.NewerMarker(a.Marker.Scope) {
			return errNewerMarker
		}
		return nil
	})
	var exhausted *history.ExhaustedError
	switch {
	case err == nil:
		a.Outcome, a.MarkerID = OutcomeCompacted, id
		// Views of reads that hold only this marker need nothing older.
		c.deps.Viewer.Remember(id, a.Marker, a.Ledger, a.Summary)
		if c.deps.Stored != nil {
			c.deps.Stored(r.Session, final.Events())
		}
		if c.deps.Recall != nil {
			c.deps.Recall.WriteHistory(ctx, r.Session, a.Covered, a.Marker.Invocations)
		}
	case errors.Is(err, errNewerMarker):
		a.Outcome, a.Reason = OutcomeConflict, "newer_marker"
	case errors.As(err, &exhausted):
		a.Outcome, a.Reason, a.Err = OutcomeConflict, "session_busy", err
	default:
		a.Outcome, a.Err = OutcomeFailed, err
	}
}
