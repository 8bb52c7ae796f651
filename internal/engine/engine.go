// Package engine is adkctx's coordinator, independent of adk-go's types: the per-session state
// (calibration, accounting, the calls in flight), the request processor chain, compaction
// scheduling, and every log entry, metric and span. The glue of each adk-go major version
// (package hooks, adk2/hooks) turns adk-go callbacks into calls of its methods, so the glue
// holds no logic of its own.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"weak"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/internal/compactor"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/lru"
	"github.com/adkctx/adkctx/processors/request"
)

// Bounds of the per-process state.
const (
	maxSessions       = 10_000 // per-session state kept; the least recently used is rebuilt from events
	maxCallsInSession = 16     // calls in flight remembered per session
	maxModels         = 1_000  // model names warned about / cached limits
	maxRunsInSession  = 16     // invocations seen by the plugin, per session
)

// Call identifies where a callback runs. adk-go's callback and tool contexts (v1 and v2) all
// have these methods.
type Call interface {
	AppName() string
	UserID() string
	SessionID() string
	InvocationID() string
	Branch() string
	AgentName() string
}

// StateReader reads session state (adk-go's session.ReadonlyState).
type StateReader interface {
	Get(key string) (any, error)
}

// Engine is safe for concurrent use by many sessions and parallel tool calls.
type Engine struct {
	cfg      adkctx.Config
	log      *zap.Logger
	registry *budget.Registry
	tel      *telemetry
	viewer   *compaction.Viewer

	sessions *lru.Cache[compactor.Session, *sessionState]
	limits   *lru.Cache[string, budget.Limits]

	loader  *instructions.Loader // nil: AGENTS.md off
	workDir string

	// keepSent: the summarizer is an LLMSummarizer, which may send the agent's last request
	// (compaction.SummaryInput.Prefix), so BeforeModel keeps it. Set with the compactor.
	keepSent atomic.Bool

	mu         sync.Mutex
	compactor  *compactor.Compactor // nil until a store is set (compaction on)
	agentModel compaction.Model     // learned by the glue's wiring
	wiring     map[string]bool      // wiring problems already logged
}

// New validates cfg and builds an engine.
func New(cfg adkctx.Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	e := &Engine{
		cfg:      cfg,
		log:      cfg.Logger,
		registry: budget.NewRegistry(cfg.Models...),
		viewer:   compaction.NewViewer(cfg.Logger),
		sessions: lru.New[compactor.Session, *sessionState](maxSessions),
		limits:   lru.New[string, budget.Limits](maxModels),
		wiring:   map[string]bool{},
	}
	var err error
	if e.tel, err = newTelemetry(cfg, e.registry); err != nil {
		return nil, fmt.Errorf("adkctx: telemetry: %w", err)
	}
	if ic := cfg.Instructions; ic != nil {
		disc := ic.Discovery
		if disc.Logger == nil {
			disc.Logger = cfg.Logger
		}
		if e.loader, err = instructions.NewLoader(disc, ic.Merge, cfg.Logger); err != nil {
			return nil, config.Nest("Instructions", err)
		}
		e.workDir = ic.WorkDir
		if e.workDir == "" {
			if e.workDir, err = os.Getwd(); err != nil {
				return nil, config.Errorf("Instructions.WorkDir", nil, "no working directory: %v", err)
			}
		}
	}
	return e, nil
}

// Logger returns the configured logger.
func (e *Engine) Logger() *zap.Logger { return e.log }

// Viewer returns the view computer the glue's session wrapper uses.
func (e *Engine) Viewer() *compaction.Viewer { return e.viewer }

// CompactionOn reports whether compaction is configured.
func (e *Engine) CompactionOn() bool { return e.cfg.Compaction != nil }

// LearnAgentModel records the agent's own model: with compaction on and no Summarizer
// configured, summaries are written by an LLMSummarizer on it (extractive fallback).
func (e *Engine) LearnAgentModel(m compaction.Model) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.agentModel == nil {
		e.agentModel = m
	}
}

// UseStore sets where compaction reads sessions and appends markers (the glue's wrapper over
// the runner's session service) and starts the compactor. Without compaction it does nothing; a
// compactor that cannot start is logged at error level (the configuration was validated, so
// this does not happen).
func (e *Engine) UseStore(st compactor.Store) {
	if e.cfg.Compaction == nil {
		return
	}
	cc := *e.cfg.Compaction
	e.mu.Lock()
	replaced := e.compactor != nil
	if cc.Summarizer == nil && e.agentModel != nil {
		cc.Summarizer = &compaction.LLMSummarizer{Model: e.agentModel}
	}
	c, err := compactor.New(cc, compactor.Deps{
		Store:  st,
		Viewer: e.viewer,
		Limits: e.Limits,
		Report: e.reportCompaction,
	})
	if err == nil {
		e.compactor = c
		_, llm := cc.Summarizer.(*compaction.LLMSummarizer)
		e.keepSent.Store(llm)
	}
	e.mu.Unlock()
	if err != nil {
		e.log.Error("adkctx: compaction not started", zap.String("error", config.Nest("Compaction", err).Error()))
		return
	}
	if replaced {
		e.wiringError("store_replaced", "the session service was wrapped twice: compaction now uses the latest one")
	}
}

func (e *Engine) getCompactor() *compactor.Compactor {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.compactor
}

// Limits returns the limits the engine applies to a model (logging an unknown model once).
func (e *Engine) Limits(model string) budget.Limits {
	if l, ok := e.limits.Get(model); ok {
		return l
	}
	l := budget.LimitsFor(e.registry, model, e.cfg.Limits)
	if !l.Known {
		info, _ := e.registry.Lookup(model)
		e.log.Warn("unknown model: using the fallback context window",
			zap.String("model", model), zap.Int("context_window", l.Window), zap.Int("max_output_tokens", info.MaxOutputTokens))
	}
	e.limits.Put(model, l)
	return l
}

// Instructions returns the merged AGENTS.md instructions for workDir ("" = the default).
func (e *Engine) Instructions(workDir string) (instructions.Merged, error) {
	if e.loader == nil {
		return instructions.Merged{}, errors.New("adkctx: AGENTS.md instructions are not configured (set Config.Instructions)")
	}
	if workDir == "" {
		workDir = e.workDir
	}
	return e.loader.Load(context.Background(), workDir)
}

// Usage reports a session's accounting under the limits of the model it last used.
func (e *Engine) Usage(s compactor.Session) budget.Report {
	st, ok := e.sessions.Get(s)
	if !ok {
		return budget.Report{TurnsRemaining: -1}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tally.Report(st.limits)
}

// Compact compacts the session now (trigger "manual"), keeping the newest invocations raw.
func (e *Engine) Compact(ctx context.Context, s compactor.Session) (*compaction.Marker, error) {
	c := e.getCompactor()
	if c == nil {
		return nil, errors.New("adkctx: compaction is not configured (set Config.Compaction and wire the session service)")
	}
	r := compactor.Request{Session: s, Trigger: compaction.TriggerManual, Link: trace.SpanContextFromContext(ctx)}
	if st, ok := e.sessions.Get(s); ok {
		st.mu.Lock()
		r.Limits, r.TokenLimit = st.limits, st.tokenLimit
		st.mu.Unlock()
	}
	return c.Compact(ctx, r)
}

// Idle waits until no compaction is scheduled or running (tests, batch jobs).
func (e *Engine) Idle(ctx context.Context) bool {
	if c := e.getCompactor(); c != nil {
		return c.Idle(ctx)
	}
	return true
}

// Close waits for pending compactions until ctx is done; later triggers are not run.
func (e *Engine) Close(ctx context.Context) error {
	if c := e.getCompactor(); c != nil {
		return c.Close(ctx)
	}
	return nil
}

// wiringError logs a wiring problem once per engine, at error level.
func (e *Engine) wiringError(kind, msg string) {
	e.mu.Lock()
	seen := e.wiring[kind]
	e.wiring[kind] = true
	e.mu.Unlock()
	if !seen {
		e.log.Error("adkctx is wired wrong: "+msg, zap.String("problem", kind))
	}
}

// sessionState is everything the engine remembers about one session. It can be rebuilt from the
// session's stored events (Restore), so any process can serve any turn.
type sessionState struct {
	mu     sync.Mutex
	calib  map[string]*budget.Calibration // by normalized model name
	tally  budget.Tally
	limits budget.Limits // of the model last used
	// tokenLimit is the soft limit in the compactor's unit; lastTokens the predicted size (with
	// margin) of the last request and lastFactor its raw-to-predicted ratio.
	tokenLimit, lastTokens int
	lastFactor             float64
	// lastPredicted is the predicted size of the last request as it came in; growth the largest
	// recent growth between two requests (decaying).
	lastPredicted int
	growth        float64
	seq           int                            // model calls so far (call_seq)
	calls         *lru.Cache[callKey, *call]     // calls in flight
	streams       *lru.Cache[streamKey, *stream] // per agent and branch
	runs          []run                          // invocations the plugin saw start (newest last)
	// sent is the last request sent in the session, as sent, and sentBy its invocation: a
	// summary of what it shows shares its prefix (compaction.Selection.LastRequest). Kept only
	// when the summarizer is an LLMSummarizer (Engine.keepSent), until its invocation ends.
	sent   *request.LLMRequest
	sentBy string
}

// run is an invocation the plugin saw start, with the span of its first model call.
type run struct {
	id   string
	span trace.SpanContext
}

// callKey names the model calls of one agent in one branch of one invocation: they are
// sequential, while invocations of a session and branches of a parallel agent may run at once.
type callKey struct{ invocation, branch, agent string }

type call struct {
	lastRequest weak.Pointer[request.LLMRequest] // processed once even if two callbacks see it
	model       string
	estimate    int // our estimate of the request sent, waiting for the reported count
	predicted   int
	seq         int
}

// streamKey names the requests of one agent in one branch of a session, across invocations:
// each extends the previous one until a compaction or a trim.
type streamKey struct{ branch, agent string }

type stream struct {
	prefix    prefixPrint // of the last request sent
	turnsDrop int         // turns the last trimmed request left out
	// sized is the last request before the budget's trim (its contents' prints and sizes): the
	// next request extends it, not the trimmed one, so its sizes are found at their positions.
	sized prefixPrint
}

// stream returns the state of a stream, creating it.
func (st *sessionState) stream(k streamKey) *stream {
	return getOrCreate(st.streams, k)
}

// call returns the state of a call, creating it.
func (st *sessionState) call(k callKey) *call {
	return getOrCreate(st.calls, k)
}

func getOrCreate[K comparable, V any](c *lru.Cache[K, *V], k K) *V {
	var v *V
	c.Update(k, func() *V { return new(V) }, func(old *V) *V { v = old; return old })
	return v
}

func keyOf(c Call) compactor.Session {
	return compactor.Session{App: c.AppName(), User: c.UserID(), ID: c.SessionID()}
}

// state returns the session's state, creating it when new.
func (e *Engine) state(s compactor.Session) *sessionState {
	var st *sessionState
	e.sessions.Update(s, func() *sessionState {
		return &sessionState{calib: map[string]*budget.Calibration{},
			calls: lru.New[callKey, *call](maxCallsInSession), streams: lru.New[streamKey, *stream](maxCallsInSession)}
	},
		func(v *sessionState) *sessionState { st = v; return v })
	return st
}

// calibration returns the session's calibration for a model. Hold st.mu.
func (st *sessionState) calibration(model string) *budget.Calibration {
	c, ok := st.calib[model]
	if !ok {
		if len(st.calib) >= 8 { // a session uses few models; bound hostile input
			clear(st.calib)
		}
		c = &budget.Calibration{}
		st.calib[model] = c
	}
	return c
}

// forgetInvocation drops the calls of a finished invocation and returns the last request it
// sent (nil when a later invocation sent one since). Hold st.mu.
func (st *sessionState) forgetInvocation(inv string) *request.LLMRequest {
	st.calls.DeleteFunc(func(k callKey) bool { return k.invocation == inv })
	if st.sentBy != inv {
		return nil
	}
	sent := st.sent
	st.sent, st.sentBy = nil, ""
	return sent
}
