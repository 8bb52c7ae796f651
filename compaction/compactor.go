package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/adkctx/adkctx/budget"
	"go.uber.org/zap"
	"google.golang.org/adk/session"
)

// Trigger says why [Compactor.Compact] is called; see [TriggerInvocations],
// [TriggerTokens] and [TriggerManual].
type Trigger string

// Defaults of [Config].
const (
	DefaultInterval           = 5
	DefaultOverlap            = 2
	DefaultRetainRecentEvents = 2
	DefaultTimeout            = 2 * time.Minute
	// DefaultRetainFraction is the share of Request.TokenLimit kept raw
	// (the retention tail) when Config.RetainRecentTokens is 0. 0.75 keeps
	// the prompt flat between compactions: after one the view is summary +
	// ~75% of the limit and grows back to the limit before the next, so
	// prompts stay within about ±15% of their mean (see the figure test),
	// at the cost of a compaction every ~25% of the limit.
	DefaultRetainFraction = 0.75
)

// Config configures a [Compactor]. Zero values mean the documented
// defaults.
type Config struct {
	// Interval θ: a sliding-window compaction happens once ≥ θ completed
	// invocations are not covered by the live summary; it covers at most θ
	// of them. Default 5; must be ≥ 1 when set.
	Interval int
	// Overlap ω: how many invocations before the uncovered ones are given
	// to the summarizer again (raw) for continuity. Default 2 (use
	// NoOverlap for 0).
	Overlap int
	// NoOverlap sets ω to 0.
	NoOverlap bool
	// RetainRecentTokens: the retention tail of a token-triggered (or
	// manual) compaction keeps the newest events whose estimated tokens sum
	// to at most this. Default DefaultRetainFraction × Request.TokenLimit
	// (0 when the request has no limit: only RetainRecentEvents apply).
	RetainRecentTokens int
	// RetainRecentEvents: the retention tail has at least this many events.
	// Default 2.
	RetainRecentEvents int
	// Summarizer produces the summaries. Default: an
	// [ExtractiveSummarizer].
	Summarizer Summarizer
	// Fallback is used when Summarizer fails or its reply is rejected.
	// Default: an [ExtractiveSummarizer] when Summarizer is an
	// [*LLMSummarizer], none otherwise. Set NoFallback to disable.
	Fallback   Summarizer
	NoFallback bool
	// Timeout bounds one compaction (summarizer call included); it runs on
	// a context detached from the caller's cancellation. Default 2 min.
	Timeout time.Duration
	// Logger; nil → zap.NewNop(). Never receives conversation text.
	Logger *zap.Logger
	// Now is the clock (tests); nil → time.Now.
	Now func() time.Time
}

// ConfigError reports an invalid [Config] or [Request].
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return "compaction: invalid " + e.Field + ": " + e.Reason
}

// Validate reports configuration errors as *ConfigError.
func (c Config) Validate() error {
	switch {
	case c.Interval < 0:
		return &ConfigError{"Interval", fmt.Sprintf("must be ≥ 1 (0 = default %d), got %d", DefaultInterval, c.Interval)}
	case c.Overlap < 0:
		return &ConfigError{"Overlap", fmt.Sprintf("must be ≥ 0, got %d", c.Overlap)}
	case c.RetainRecentTokens < 0:
		return &ConfigError{"RetainRecentTokens", fmt.Sprintf("must be ≥ 0, got %d", c.RetainRecentTokens)}
	case c.RetainRecentEvents < 0:
		return &ConfigError{"RetainRecentEvents", fmt.Sprintf("must be ≥ 0, got %d", c.RetainRecentEvents)}
	case c.Timeout < 0:
		return &ConfigError{"Timeout", fmt.Sprintf("must be ≥ 0, got %s", c.Timeout)}
	}
	if v, ok := c.Summarizer.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("compaction: invalid Summarizer: %w", err)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.NoOverlap {
		c.Overlap = 0
	} else if c.Overlap == 0 {
		c.Overlap = DefaultOverlap
	}
	if c.RetainRecentEvents == 0 {
		c.RetainRecentEvents = DefaultRetainRecentEvents
	}
	if c.Summarizer == nil {
		c.Summarizer = &ExtractiveSummarizer{}
	}
	if c.Fallback == nil && !c.NoFallback {
		if _, ok := c.Summarizer.(*LLMSummarizer); ok {
			c.Fallback = &ExtractiveSummarizer{}
		}
	}
	if c.NoFallback {
		c.Fallback = nil
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Request is one call to [Compactor.Compact].
type Request struct {
	// Service is the session service to re-read from and append to: a
	// [*Service] wrapper or its base.
	Service                    session.Service
	AppName, UserID, SessionID string
	// Live is the session object of an invocation still running (e.g.
	// agent.InvocationContext.Session() in an OnEvent callback): the window
	// is read from it, the marker appended through it (the runner keeps
	// appending to that object), and unanswered calls of its invocation are
	// pending. Optional.
	Live session.Session
	// Trigger: TriggerInvocations (after each invocation; default),
	// TriggerTokens (the prompt passed the soft limit) or TriggerManual.
	Trigger Trigger
	// TokenLimit is the soft limit (tokens) for the token trigger; 0 = off.
	// With TriggerInvocations, a view at or above it compacts as
	// TriggerTokens.
	TokenLimit int
	// InvocationID is the invocation that just finished (or is running,
	// with Live); default: the invocation of the last event. Used to skip
	// failed invocations and in logs.
	InvocationID string
}

// Outcomes logged for every compaction attempt.
const (
	OutcomeCompacted         = "compacted"
	OutcomeNothingToDo       = "nothing_to_do"
	OutcomeSkippedBusy       = "skipped_busy"
	OutcomeDiscardedConflict = "discarded_conflict"
	OutcomeFailed            = "failed"
)

// ErrConflict is wrapped by errors describing a discarded summary; Compact
// itself reports conflicts as (nil, nil) with a log entry.
var ErrConflict = errors.New("compaction: session changed during compaction")

// Compactor decides when and what to compact, summarizes and appends marker
// events. It is safe for concurrent use; at most one compaction per session
// runs at a time in one Compactor.
type Compactor struct {
	cfg Config

	mu   sync.Mutex
	busy map[string]struct{}
}

// NewCompactor validates cfg and returns a Compactor.
func NewCompactor(cfg Config) (*Compactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Compactor{cfg: cfg.withDefaults(), busy: map[string]struct{}{}}, nil
}

func (c *Compactor) tryLock(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.busy[key]; ok {
		return false
	}
	c.busy[key] = struct{}{}
	return true
}

func (c *Compactor) unlock(key string) {
	c.mu.Lock()
	delete(c.busy, key) // no entry outlives its compaction
	c.mu.Unlock()
}

// attempt collects the fields of the one log entry per attempt.
type attempt struct {
	req            Request
	trigger        Trigger
	invocationID   string
	eventsCovered  int
	original       int
	compacted      int
	summarizer     string
	fallbackUsed   bool
	reason         string
	err            error
	primaryErr     error
	excluded       int
	summarizerCall budget.Usage
}

func (c *Compactor) log(a *attempt, outcome string, start time.Time) {
	ratio := 0.0
	if a.compacted > 0 {
		ratio = float64(a.original) / float64(a.compacted)
	}
	fields := []zap.Field{
		zap.String("session_id", a.req.SessionID),
		zap.String("invocation_id", a.invocationID),
		zap.String("trigger", string(a.trigger)),
		zap.String("outcome", outcome),
		zap.Int("events_covered", a.eventsCovered),
		zap.Int("events_excluded", a.excluded),
		zap.Int("original_tokens", a.original),
		zap.Int("compacted_tokens", a.compacted),
		zap.Float64("compression_ratio", ratio),
		zap.Int64("duration_ms", time.Since(start).Milliseconds()),
		zap.String("summarizer", a.summarizer),
		zap.Bool("fallback_used", a.fallbackUsed),
	}
	if a.reason != "" {
		fields = append(fields, zap.String("reason", a.reason))
	}
	if a.summarizerCall.Total > 0 || a.summarizerCall.Prompt > 0 {
		fields = append(fields, zap.Int("summarizer_prompt_tokens", a.summarizerCall.Prompt),
			zap.Int("summarizer_output_tokens", a.summarizerCall.Output))
	}
	if a.primaryErr != nil {
		fields = append(fields, zap.String("primary_error", errorKind(a.primaryErr)))
	}
	if a.err != nil {
		fields = append(fields, zap.String("error", errorKind(a.err)))
	}
	l := c.cfg.Logger
	switch outcome {
	case OutcomeCompacted:
		l.Info("compaction", fields...)
	case OutcomeNothingToDo, OutcomeSkippedBusy:
		l.Debug("compaction", fields...)
	default:
		l.Warn("compaction", fields...)
	}
}

// errorKind describes err without conversation text: our typed errors
// verbatim, others by type (a model error message may quote the prompt).
func errorKind(err error) string {
	var rej *SummaryRejectedError
	if errors.As(err, &rej) {
		return rej.Error()
	}
	var cfgErr *ConfigError
	if errors.As(err, &cfgErr) {
		return cfgErr.Error()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, ErrConflict):
		return "conflict"
	}
	var se *SummarizerError
	if errors.As(err, &se) {
		return fmt.Sprintf("summarizer %s failed (%T)", se.Summarizer, se.Err)
	}
	return fmt.Sprintf("%T", err)
}

// Compact runs one compaction attempt for the session named in r and
// returns the marker it stored, or (nil, nil) when nothing was stored
// (nothing to do, another compaction of the session running, the summary
// discarded because the session changed, a stale-session append). It
// returns an error only for an invalid request or when every summarizer
// failed; callers in callbacks log it and continue — a compaction never
// fails the user's turn and never loses an event. One log entry is written
// per call.
//
// The work runs on a context detached from ctx's cancellation, bounded by
// Config.Timeout.
func (c *Compactor) Compact(ctx context.Context, r Request) (*Marker, error) {
	start := time.Now()
	if r.Trigger == "" {
		r.Trigger = TriggerInvocations
	}
	a := &attempt{req: r, trigger: r.Trigger, invocationID: r.InvocationID}
	if err := validateRequest(r); err != nil {
		a.err = err
		c.log(a, OutcomeFailed, start)
		return nil, err
	}
	key := r.AppName + "\x00" + r.UserID + "\x00" + r.SessionID
	if !c.tryLock(key) {
		c.log(a, OutcomeSkippedBusy, start)
		return nil, nil
	}
	defer c.unlock(key)

	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.Timeout)
	defer cancel()

	m, outcome, err := c.compact(ctx, r, a)
	c.log(a, outcome, start)
	if outcome == OutcomeFailed {
		return nil, err
	}
	return m, nil
}

func validateRequest(r Request) error {
	switch {
	case r.Service == nil:
		return &ConfigError{"Request.Service", "required"}
	case r.AppName == "" || r.UserID == "" || r.SessionID == "":
		return &ConfigError{"Request", "AppName, UserID and SessionID are required"}
	case r.TokenLimit < 0:
		return &ConfigError{"Request.TokenLimit", "must be ≥ 0"}
	}
	switch r.Trigger {
	case TriggerInvocations, TriggerTokens, TriggerManual:
	default:
		return &ConfigError{"Request.Trigger", fmt.Sprintf("unknown trigger %q", r.Trigger)}
	}
	if r.Live != nil && (r.Live.ID() != r.SessionID || r.Live.AppName() != r.AppName || r.Live.UserID() != r.UserID) {
		return &ConfigError{"Request.Live", "names another session"}
	}
	return nil
}

func (c *Compactor) getRaw(ctx context.Context, r Request) (session.Session, []*session.Event, error) {
	resp, err := r.Service.Get(ctx, &session.GetRequest{AppName: r.AppName, UserID: r.UserID, SessionID: r.SessionID})
	if err != nil {
		return nil, nil, err
	}
	if resp == nil || resp.Session == nil {
		return nil, nil, fmt.Errorf("compaction: Get returned no session")
	}
	return resp.Session, RawEvents(resp.Session), nil
}

func (c *Compactor) compact(ctx context.Context, r Request, a *attempt) (*Marker, string, error) {
	// 1. Snapshot.
	var raw []*session.Event
	if r.Live != nil {
		raw = RawEvents(r.Live)
	} else {
		_, evs, err := c.getRaw(ctx, r)
		if err != nil {
			a.err = err
			return nil, OutcomeFailed, err
		}
		raw = evs
	}

	// 2. Select.
	retain := c.cfg.RetainRecentTokens
	if retain == 0 && r.TokenLimit > 0 {
		retain = int(float64(r.TokenLimit) * DefaultRetainFraction)
	}
	w, reason := selectWindow(raw, windowParams{
		trigger:      r.Trigger,
		interval:     c.cfg.Interval,
		overlap:      c.cfg.Overlap,
		retainTokens: retain,
		retainEvents: c.cfg.RetainRecentEvents,
		tokenLimit:   r.TokenLimit,
		live:         r.Live != nil,
		running:      r.InvocationID,
	}, c.cfg.Logger)
	if w == nil {
		a.reason = reason
		return nil, OutcomeNothingToDo, nil
	}
	a.trigger = w.trigger
	if a.invocationID == "" {
		a.invocationID = w.runningInv
	}
	a.eventsCovered = w.m.EventCount
	a.excluded = len(w.m.ExcludedEventIDs)
	a.original = w.originalTokens

	// 3. Summarize (fallback on failure).
	sum, err := runSummarizer(ctx, c.cfg.Summarizer, w.input)
	a.summarizer = summarizerName(c.cfg.Summarizer)
	if err != nil && c.cfg.Fallback != nil {
		a.primaryErr = err
		a.fallbackUsed = true
		a.summarizer = summarizerName(c.cfg.Fallback)
		sum, err = runSummarizer(ctx, c.cfg.Fallback, w.input)
	}
	if err != nil {
		a.err = err
		return nil, OutcomeFailed, err
	}
	if sum == nil {
		a.reason = "summarizer_nothing_to_do"
		return nil, OutcomeNothingToDo, nil
	}
	a.summarizer = sum.Summarizer
	a.summarizerCall = sum.Usage

	m := w.m
	m.CompactedContent = sum.Content
	m.OriginalTokens = w.originalTokens
	m.CompactedTokens = budget.EstimateContent(sum.Content)
	if m.CompactedTokens > 0 {
		m.CompressionRatio = float64(m.OriginalTokens) / float64(m.CompactedTokens)
	}
	m.Trigger = string(w.trigger)
	m.Summarizer = sum.Summarizer
	a.compacted = m.CompactedTokens
	if err := m.Validate(); err != nil {
		a.err = err
		return nil, OutcomeFailed, err
	}

	// 4. Re-read and check for conflicts.
	fresh, freshRaw, err := c.getRaw(ctx, r)
	if err != nil {
		a.err = err
		return nil, OutcomeFailed, err
	}
	if why := conflict(raw, freshRaw, m); why != "" {
		a.reason = why
		return nil, OutcomeDiscardedConflict, nil
	}

	// 5. Append.
	ts := c.cfg.Now()
	lastUS := w.lastStreamTS
	for _, e := range freshRaw {
		if e != nil && e.Timestamp.UnixMicro() > lastUS {
			lastUS = e.Timestamp.UnixMicro()
		}
	}
	if minTS := time.UnixMicro(lastUS + 1); ts.Before(minTS) {
		ts = minTS
	}
	inv := r.InvocationID
	if inv == "" {
		inv = m.LastInvocationID
	}
	ev := NewMarkerEvent(m, inv, ts)
	if ev == nil {
		err := &ConfigError{"Marker", "cannot be encoded"}
		a.err = err
		return nil, OutcomeFailed, err
	}
	target := fresh
	if r.Live != nil {
		target = r.Live
	}
	if _, wrapped := r.Service.(*Service); !wrapped {
		target = Unwrap(target)
	}
	if err := r.Service.AppendEvent(ctx, target, ev); err != nil {
		if reason := appendConflict(err); reason != "" {
			a.reason = reason
			return nil, OutcomeDiscardedConflict, nil
		}
		a.err = err
		return nil, OutcomeFailed, err
	}
	return m, OutcomeCompacted, nil
}

// appendConflict classifies an append error caused by a concurrent writer
// (the database service's stale-session check, SQLite's busy/locked): the
// summary is discarded, the next trigger recomputes it.
func appendConflict(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "stale session"):
		return "stale_session"
	case strings.Contains(msg, "database is locked"), strings.Contains(msg, "SQLITE_BUSY"):
		return "database_busy"
	}
	return ""
}

// conflict reports why the summary of m (selected from snapshot) must be
// discarded given the freshly read stream, or "".
func conflict(snapshot, fresh []*session.Event, m *Marker) string {
	known := make(map[string]bool, len(snapshot))
	for _, e := range snapshot {
		if e != nil {
			known[e.ID] = true
		}
	}
	startUS, endUS := micros(m.StartTimestamp), micros(m.EndTimestamp)
	for _, e := range fresh {
		if e == nil || known[e.ID] {
			continue
		}
		if IsCompactionEvent(e) {
			om, err := ReadMarker(e)
			if err != nil {
				continue // an invalid marker hides nothing
			}
			if micros(om.StartTimestamp) <= endUS && micros(om.EndTimestamp) >= startUS {
				return "newer_marker"
			}
			continue
		}
		if ts := e.Timestamp.UnixMicro(); ts >= startUS && ts <= endUS {
			return "event_in_range"
		}
	}
	return ""
}
