package glue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/engine"
	"github.com/adkctx/adkctx/glue/internal/history"
	"github.com/adkctx/adkctx/glue/internal/readback"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/internal/lru"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
	"github.com/adkctx/adkctx/recall"
)

// Engine is adkctx for one application, independent of adk-go: the glue turns adk-go's
// callbacks into calls of its methods. It is safe for concurrent use.
type Engine struct {
	e *engine.Engine

	mu       sync.Mutex
	sessions *Sessions // the one store it reads (nil until Sessions)
}

// New validates cfg (every problem, as joined *adkctx.ConfigError values) and builds an engine.
func New(cfg adkctx.Config) (*Engine, error) {
	e, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Engine{e: e}, nil
}

// Call identifies where a callback runs: adk-go's callback and tool contexts (v1 and v2) all
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

// ErrNoArtifactService is what AfterTool's save returns when the runner has no artifact service
// after all (adk-go v2 hands tools artifacts that fail then): the output is cut without being
// saved.
var ErrNoArtifactService = engine.ErrNoArtifactService

// Sessions returns the read and view machine over st, making it (and starting compaction) the
// first time. An engine holds one store: a later call returns the same machine, whatever st (the
// glue compares stores and refuses another one before it asks).
func (e *Engine) Sessions(st Store) (*Sessions, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sessions != nil {
		return e.sessions, nil
	}
	s := &Sessions{e: e, store: st, reader: e.e.Reader(), log: e.e.Logger(),
		board: lru.NewWeighted[history.Key](maxBoardSessions, maxBoardBytes, recordBytes)}
	if err := e.e.UseStore(compactorStore{s}); err != nil {
		return nil, err
	}
	e.sessions = s
	return s, nil
}

// CompactionOn reports whether compaction is configured.
func (e *Engine) CompactionOn() bool { return e.e.CompactionOn() }

// BeforeRun runs when an invocation starts (its user message is stored): it restores the
// session's state when this process has none, checks the wiring (a wiring mistake returns an
// error that refuses the run), and waits for a pending compaction when the request it will
// build is projected over the hard limit. v is the run's view (nil: the runner's session was not
// read through the wrapper); stored returns the session's events otherwise.
func (e *Engine) BeforeRun(ctx context.Context, k Key, invocation string, userMessage *genai.Content, v *View, stored func() []compaction.Event) error {
	events := stored
	if v != nil {
		events = v.stored
	}
	err := e.e.BeforeRun(ctx, k.history(), invocation, userMessage, v != nil, events)
	if v != nil {
		// A run reads the model's view from now on, with the compaction BeforeRun may have
		// waited for.
		v.claim(ctx)
	}
	return err
}

// BeforeModel runs the request processors on req and logs one "budget decision"; it returns a
// *request.BudgetExceededError when the request cannot fit. origin identifies the adk-go request
// req was read from (the plugin and an agent callback may both see one, processed once).
func (e *Engine) BeforeModel(ctx context.Context, c Call, state StateReader, req *request.LLMRequest, origin any) error {
	return e.e.BeforeModel(ctx, c, state, req, origin)
}

// AfterModel records a final response's usage and puts the call record on it.
func (e *Engine) AfterModel(ctx context.Context, c Call, resp *response.LLMResponse) {
	e.e.AfterModel(ctx, c, resp)
}

// AfterTool bounds a tool's result before it is stored (saving the whole output under name with
// save, the tool context's artifacts; nil: not saved) and returns what to store.
func (e *Engine) AfterTool(ctx context.Context, c Call, tool, callID string, result map[string]any, save func(ctx context.Context, name string, part *genai.Part) error) map[string]any {
	var s engine.SaveFunc
	if save != nil {
		s = engine.SaveFunc(save)
	}
	return e.e.AfterTool(ctx, c, tool, callID, result, s)
}

// OnEvent runs before an event of a running invocation is stored: it may schedule a token
// compaction, or wait for a pending one.
func (e *Engine) OnEvent(ctx context.Context, k Key, invocation string, content *genai.Content, final bool) {
	e.e.OnEvent(ctx, k.history(), invocation, content, final)
}

// AfterRun runs after an invocation's last event is stored: it schedules the sliding window
// (with the cost policy), working from the run's view v (nil: none) when it holds every marker
// this process stored.
func (e *Engine) AfterRun(ctx context.Context, k Key, invocation string, v *View) {
	if v != nil {
		if sn := v.snapshot(); sn.current() {
			e.e.AfterRun(ctx, k.history(), invocation, sn)
			return
		}
	}
	e.e.AfterRun(ctx, k.history(), invocation, nil)
}

// Usage reports a session's accounting under the limits of the model it last used. When this
// process knows nothing of the session (another replica served it, or this one restarted since)
// and the engine has a store, it reads the session, as a run's start does, and restores the
// accounting from the newest call record stored; a read that fails returns its error and an
// unknown report.
func (e *Engine) Usage(ctx context.Context, k Key) (budget.Report, error) {
	if rep := e.e.Usage(k.history()); rep.Known {
		return rep, nil
	}
	e.mu.Lock()
	s := e.sessions
	e.mu.Unlock()
	if s == nil {
		return e.e.Usage(k.history()), nil
	}
	r, err := s.read(ctx, k.history(), history.ForView)
	if err != nil {
		return budget.Report{TurnsRemaining: -1}, err
	}
	e.e.RestoreUnknown(k.history(), r.Events)
	return e.e.Usage(k.history()), nil
}

// Limits returns the limits adkctx applies to a model.
func (e *Engine) Limits(model string) budget.Limits { return e.e.Limits(model) }

// Instructions returns the merged AGENTS.md instructions for workDir ("" = the configured one).
func (e *Engine) Instructions(ctx context.Context, workDir string) (instructions.Merged, error) {
	return e.e.Instructions(ctx, workDir)
}

// Compact compacts the session now (trigger "manual").
func (e *Engine) Compact(ctx context.Context, k Key) (*compaction.Marker, error) {
	return e.e.Compact(ctx, k.history())
}

// Idle waits until no compaction is scheduled or running (tests, batch jobs).
func (e *Engine) Idle(ctx context.Context) bool { return e.e.Idle(ctx) }

// Check returns the wiring problems found so far (joined *adkctx.WiringError values).
func (e *Engine) Check() error { return e.e.Check() }

// Close waits for pending compactions until ctx is done and returns the wiring problems found.
func (e *Engine) Close(ctx context.Context) error { return e.e.Close(ctx) }

// WiringError records a wiring problem (logged once at error level) and returns it.
func (e *Engine) WiringError(problem, msg string) error { return e.e.WiringError(problem, msg) }

// WiringWarning records a wiring finding that does not break adkctx (logged once at warn
// level) and returns it.
func (e *Engine) WiringWarning(problem, msg string) error { return e.e.WiringWarning(problem, msg) }

// UseRecall turns on what the recall tools need: notes that name them, excerpts saved whole,
// history segments, all through the store stores returns for a session (nil when the glue has no
// artifact service).
func (e *Engine) UseRecall(stores func(k Key) recall.Store) {
	e.e.UseRecall(func(s compactor.Session) recall.Store { return stores(Key(s)) })
}

// RecallCall is one call of a recall tool, as the glue's tool received it.
type RecallCall struct {
	// Tool is the tool's name (recall.ToolReadOutput, …).
	Tool string
	// Args are its arguments: a value that encodes to the tool's JSON object.
	Args any
	// Store holds the calling session's saved outputs; nil: the runner has no artifact service.
	Store recall.Store
	// Scope is the caller's isolation scope (adk-go v2; "" in v1): with its branch, it bounds
	// what a history search shows.
	Scope string
	// Timeout bounds the call. Default 10 s. A search of saved outputs stops before it (with time
	// left to return what it found and the cursor that continues).
	Timeout time.Duration
}

// defaultRecallTimeout is RecallCall.Timeout's default.
const defaultRecallTimeout = 10 * time.Second

// errNoArtifacts is a recall call's error when there is no artifact service to read.
var errNoArtifacts = errors.New("the recall tools cannot read anything here: this application keeps no saved outputs or " +
	"earlier turns (no artifact service is wired: its operator must pass runner.Config.ArtifactService to adkctx's Wire); " +
	"answer from the conversation as it is")

// Recall runs one call of a recall tool for c (nil: no caller, no branch) and returns the text
// the tool returns, within the recall limits under the truncation limits. Its error is for the
// model to read: a request it can correct (a bad range, name or pattern) as it is; a failure of
// the store, or of the time bound, named and logged once (tool, session, error kind; never the
// query or the result).
func (e *Engine) Recall(ctx context.Context, c Call, rc RecallCall) (string, error) {
	var v readback.Viewer
	if c != nil {
		v.Branch = c.Branch()
	}
	v.Scope = rc.Scope
	if rc.Store == nil {
		e.recallFailed(c, rc.Tool, "no_artifact_service", "")
		return "", errNoArtifacts
	}
	timeout := rc.Timeout
	if timeout <= 0 {
		timeout = defaultRecallTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := readback.Run(runCtx, rc.Store, rc.Tool, rc.Args, v, e.e.RecallLimits())
	if err == nil {
		return res.Text, nil
	}
	if readback.IsInputError(err) {
		return "", err
	}
	kind, msg := errkind.Of(err)
	if runCtx.Err() != nil && ctx.Err() == nil {
		// Our timeout, whatever error the store turned it into.
		err = fmt.Errorf("%s took longer than %s and was stopped: narrow the range or the query", rc.Tool, timeout)
		kind, msg = errkind.Timeout, err.Error()
	}
	e.recallFailed(c, rc.Tool, string(kind), msg)
	// The model reads the whole message (names and numbers, never another session's data); the
	// log keeps errkind's redacted form.
	return "", fmt.Errorf("%s failed: %w", rc.Tool, err)
}

// recallFailed logs a recall call that failed on storage.
func (e *Engine) recallFailed(c Call, tool, kind, msg string) {
	fields := []zap.Field{zap.String("tool", tool)}
	if c != nil {
		fields = append(fields, zap.String("session_id", c.SessionID()), zap.String("invocation_id", c.InvocationID()))
	}
	fields = append(fields, zap.String("error_kind", kind))
	if msg != "" {
		fields = append(fields, zap.String("error", msg))
	}
	e.e.Logger().Warn("recall tool failed", fields...)
}

// RecallWithoutArtifacts is the wiring error of recall tools without an artifact service.
func RecallWithoutArtifacts() *adkctx.WiringError { return engine.RecallWithoutArtifacts() }

// ErrorKind classifies err for logs: a kind ("busy": the store was busy with another writer,
// worth trying again; "quota", "timeout", …) and a text that holds no conversation or provider
// message, only codes.
func ErrorKind(err error) (kind, text string) {
	k, msg := errkind.Of(err)
	return string(k), msg
}
