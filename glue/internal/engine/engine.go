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
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/calibrate"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/glue/internal/plan"
	"github.com/adkctx/adkctx/glue/internal/tally"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/internal/config"
	"github.com/adkctx/adkctx/internal/lru"
)

// Bounds of the per-process state.
const (
	maxSessions       = 10_000 // per-session state kept; the least recently used is rebuilt from events
	maxCallsInSession = 16     // calls in flight remembered per session
	maxModels         = 1_000  // model names warned about / cached limits
	maxRunsInSession  = 16     // ended invocations the plugin saw start, remembered per session
	// maxRunningInSession bounds the invocations still running remembered per session: one that
	// many invocations overtook (a busy session served by several runners) is still known to
	// have passed through the plugin when its model call or answer comes.
	maxRunningInSession = 256
	// maxUnclaimed bounds the invocations remembered per session whose user message was stored
	// and whose start the plugin has not seen yet: with the plugin, each is claimed at once.
	maxUnclaimed = 16
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
	viewer   *plan.Viewer
	reader   *history.Reader

	sessions *lru.Cache[compactor.Session, *sessionState]
	limits   *lru.Cache[string, budget.Limits]

	loader  *instructions.Loader // nil: AGENTS.md off
	workDir string

	// stepCheck, when set (tests), gets the result of checking the contents after each step of
	// the request chain against what was measured of them (steps.Measures.Check).
	stepCheck func(step string, err error)

	// keepSent: the summarizer is an LLMSummarizer, which may send a request the agent sent
	// (compaction.SummaryInput.Prefix), so BeforeModel keeps it. Set with the compactor.
	keepSent atomic.Bool

	recall recallState // the recall tools' needs (UseRecall)
	// recallCostly holds the models whose window was found too small for the recall tools
	// (logged once each).
	recallCostly *lru.Cache[string, struct{}]

	mu        sync.Mutex
	compactor *compactor.Compactor // nil until a store is set (compaction on)
	wiring    []error              // wiring problems found, each logged once (*adkctx.WiringError)
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
		viewer:   plan.NewViewer(cfg.Logger),
		sessions: lru.New[compactor.Session, *sessionState](maxSessions),
		limits:   lru.New[string, budget.Limits](maxModels),

		recallCostly: lru.New[string, struct{}](maxModels),
	}
	margin := time.Duration(0)
	if cfg.Compaction != nil {
		margin = cfg.Compaction.ReadMargin
	}
	e.reader = history.NewReader(e.viewer, margin)
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
func (e *Engine) Viewer() *plan.Viewer { return e.viewer }

// CompactionOn reports whether compaction is configured.
func (e *Engine) CompactionOn() bool { return e.cfg.Compaction != nil }

// Reader returns the reader of bounded session reads the glue's session wrapper uses.
func (e *Engine) Reader() *history.Reader { return e.reader }

// errSecondStore is UseStore's error for a second store.
var errSecondStore = &adkctx.WiringError{Problem: "second_store", Message: "this Hooks already holds a session store: one Hooks " +
	"serves one store (wire every runner over that store with it, or make another Hooks for another store)"}

// UseStore sets where compaction reads sessions and appends markers (the glue's wrapper over
// the runner's session service) and starts the compactor. A Hooks holds one store: a second one
// is refused (the glue passes the same store once). Without compaction it does nothing.
func (e *Engine) UseStore(st compactor.Store) error {
	if e.cfg.Compaction == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.compactor != nil {
		return errSecondStore
	}
	c, err := compactor.New(*e.cfg.Compaction, compactor.Deps{
		Store:  st,
		Viewer: e.viewer,
		Limits: e.Limits,
		Report: e.reportCompaction,
		Due:    e.reader.RawInvocations,
		Stored: e.reader.Learn,
		Recall: recallKeeper{e},
	})
	if err != nil {
		return config.Nest("Compaction", err) // validated in New: does not happen
	}
	e.compactor = c
	_, llm := c.Config().Summarizer.(*compaction.LLMSummarizer)
	e.keepSent.Store(llm)
	return nil
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
		e.log.Warn("unknown model: using the fallback context window; add it to Config.Models with its context window",
			zap.String("model", model), zap.Int("context_window", l.Window), zap.Int("max_output_tokens", info.MaxOutputTokens))
	}
	e.limits.Put(model, l)
	return l
}

// Instructions returns the merged AGENTS.md instructions for workDir ("" = the default).
func (e *Engine) Instructions(ctx context.Context, workDir string) (instructions.Merged, error) {
	if e.loader == nil {
		return instructions.Merged{}, errors.New("adkctx: AGENTS.md instructions are not configured (set Config.Instructions)")
	}
	if workDir == "" {
		workDir = e.workDir
	}
	return e.loader.Load(ctx, workDir)
}

// Usage reports a session's accounting under the limits of the model it last used. Its Known is
// false when the engine has none: it served no model call of the session and restored no
// accounting from its events at a run's start (a session it never served, or one it forgot).
func (e *Engine) Usage(s compactor.Session) budget.Report {
	st, ok := e.sessions.Get(s)
	if !ok {
		return budget.Report{TurnsRemaining: -1}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.known {
		return budget.Report{TurnsRemaining: -1}
	}
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

// Close waits for pending compactions until ctx is done (later triggers are not run) and
// returns the wiring problems found (Check) joined with ctx's error when it gave up waiting.
func (e *Engine) Close(ctx context.Context) error {
	var err error
	if c := e.getCompactor(); c != nil {
		err = c.Close(ctx)
	}
	return errors.Join(e.Check(), err)
}

// Check returns the wiring problems found so far, joined (*adkctx.WiringError values); nil when
// none.
func (e *Engine) Check() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return errors.Join(e.wiring...)
}

// WiringError records a wiring problem and logs it once per engine, at error level. It returns
// the problem's *adkctx.WiringError (the one recorded first).
func (e *Engine) WiringError(kind, msg string) error {
	return e.wiringFinding(kind, msg, zapcore.ErrorLevel)
}

// WiringWarning records a wiring problem that costs time, not correctness, and logs it once per
// engine, at warn level. Check reports it like the others.
func (e *Engine) WiringWarning(kind, msg string) error {
	return e.wiringFinding(kind, msg, zapcore.WarnLevel)
}

func (e *Engine) wiringFinding(kind, msg string, level zapcore.Level) error {
	e.mu.Lock()
	for _, err := range e.wiring {
		if err.(*adkctx.WiringError).Problem == kind {
			e.mu.Unlock()
			return err
		}
	}
	err := &adkctx.WiringError{Problem: kind, Message: msg}
	e.wiring = append(e.wiring, err)
	e.mu.Unlock()
	e.log.Log(level, err.Error(), zap.String("problem", kind))
	return err
}

// sessionState is everything the engine remembers about one session. It can be rebuilt from the
// session's stored events (Restore), so any process can serve any turn.
type sessionState struct {
	mu     sync.Mutex
	calib  map[string]*calibrate.Calibration // by normalized model name
	tally  tally.Tally
	limits budget.Limits // of the model last used
	// tokenLimit is the soft limit in the compactor's unit; lastEstimate our estimate of the
	// last request sent, lastModel its model and added the estimate of the events stored since:
	// the next request is projected from them.
	tokenLimit, lastEstimate, added int
	lastModel                       string
	// softTriggered: the projection of the next request passed the soft limit since the last
	// request was sent, and a token compaction was scheduled.
	softTriggered bool
	// tokenCompacting: a token compaction the engine scheduled has not ended (reported) yet.
	// No other is scheduled meanwhile: the projections and requests over the soft limit until
	// then do not count what it takes out of the view, and one more would summarize again what
	// it leaves (two markers, two prompt cache breaks for one trigger).
	tokenCompacting bool
	userTokens      int                            // estimate of the last user message (BeforeRun)
	seq             int                            // model calls so far (call_seq)
	calls           *lru.Cache[callKey, *call]     // calls in flight
	streams         *lru.Cache[streamKey, *stream] // per agent and branch
	runs            []run                          // invocations the plugin saw start (newest last)
	// unclaimed are invocations whose user message adk-go's runner stored through adkctx's
	// session wrapper and whose start the plugin has not seen yet (newest last): an agent's event
	// of one of them comes from a runner without the plugin (NoteAppend).
	unclaimed []string
	// known: the accounting is the session's, from a model call served or restored from its
	// events (Usage).
	known bool
	// sent are the newest requests sent in the session, as sent: a summary of what one of them
	// shows shares its prefix (plan.Selection.Sent). Kept only when the summarizer is an
	// LLMSummarizer (Engine.keepSent).
	sent sentLog
}

// run is an invocation the plugin saw start, with the span of its first model call.
type run struct {
	id      string
	span    trace.SpanContext
	ended   bool // AfterRun came
	refused bool // BeforeRun refused it (a wiring mistake): AfterRun schedules nothing
}

// callKey names the model calls of one agent in one branch of one invocation: they are
// sequential, while invocations of a session and branches of a parallel agent may run at once.
type callKey struct{ invocation, branch, agent string }

type call struct {
	lastRequest any // the origin of the request processed last: processed once even if two callbacks see it
	model       string
	estimate    int // our estimate of the request sent, waiting for the reported count
	predicted   int
	seq         int
	// recallOutputs: the call's agent declares read_saved_output (recall tools in use)
	recallOutputs bool
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
		return &sessionState{calib: map[string]*calibrate.Calibration{},
			calls: lru.New[callKey, *call](maxCallsInSession), streams: lru.New[streamKey, *stream](maxCallsInSession),
			sent: sentLog{ttl: sentTTL}}
	},
		func(v *sessionState) *sessionState { st = v; return v })
	return st
}

// calibration returns the session's calibration for a model. Hold st.mu.
func (st *sessionState) calibration(model string) *calibrate.Calibration {
	c, ok := st.calib[model]
	if !ok {
		if len(st.calib) >= 8 { // a session uses few models; bound hostile input
			clear(st.calib)
		}
		c = &calibrate.Calibration{}
		st.calib[model] = c
	}
	return c
}

// forgetInvocation drops the calls of a finished invocation. Hold st.mu.
func (st *sessionState) forgetInvocation(inv string) {
	st.calls.DeleteFunc(func(k callKey) bool { return k.invocation == inv })
}

// Forget drops what the engine keeps of session s, whose session was deleted: its state (the
// requests kept for its summarizer among it) and its compaction backoff. A later call on s
// starts afresh.
func (e *Engine) Forget(s compactor.Session) {
	if st, ok := e.sessions.Get(s); ok {
		st.mu.Lock()
		st.sent.stop()
		st.mu.Unlock()
		e.sessions.Delete(s)
	}
	if c := e.getCompactor(); c != nil {
		c.Forget(s)
	}
}
