package hooks

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"
	"weak"

	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/hooks/sessiondb"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// pluginName is the name of adkctx's plugin.
const pluginName = "adkctx"

// Hooks is adkctx for one application. It is safe for concurrent use. Create it with New.
type Hooks struct {
	e   *glue.Engine
	log *zap.Logger

	mu           sync.Mutex
	store        *service // the one session store it holds (nil until wrapped)
	indexChecked bool     // checkIndex asked the session database

	recall recallWiring // the artifact service Wire captured, for RecallTools
}

// New validates cfg (every problem, as joined *adkctx.ConfigError values) and builds the hooks.
func New(cfg adkctx.Config) (*Hooks, error) {
	e, err := glue.New(cfg)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	return &Hooks{e: e, log: log}, nil
}

// Wire returns rc with adkctx wired in: its plugin added (after the application's own plugins)
// and its session service wrapped. One Hooks holds one session store: every runner wired with
// it must use the same store (a launcher and a background runner over one database is fine), and
// rc may already carry the wrapper Wire returned before. It captures rc's artifact service for
// RecallTools.
//
// Every refusal is an *adkctx.WiringError naming its Problem: rc has no session service
// (session_service_missing) or agent (agent_missing), already has adkctx's plugin
// (already_wired), uses another session store (second_store) or artifact service
// (second_artifact_service) than the one this Hooks holds, has no artifact service while
// RecallTools gave out the recall tools (recall_without_artifacts), or has an artifact service
// that says it cannot serve (artifact_service_not_ready: one with a Ready(context.Context) error
// method; hooks/dbartifact whose tables were not migrated gives a *dbartifact.NotMigratedError,
// which the WiringError unwraps to).
// Over adk-go's database session service it also checks that the database has adkctx's session
// index (sessiondb.CheckIndex) and warns once when it does not (session_index_missing, reported
// by Check). These checks ask the database at most wireCheckTimeout.
func (h *Hooks) Wire(rc runner.Config) (runner.Config, error) {
	switch {
	case rc.SessionService == nil:
		return rc, &adkctx.WiringError{Problem: "session_service_missing", Message: "runner.Config.SessionService is required"}
	case rc.Agent == nil:
		return rc, &adkctx.WiringError{Problem: "agent_missing", Message: "runner.Config.Agent is required"}
	}
	for _, p := range rc.PluginConfig.Plugins {
		if p != nil && p.Name() == pluginName {
			return rc, &adkctx.WiringError{Problem: "already_wired", Message: "runner.Config is already wired (it has the adkctx plugin)"}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wireCheckTimeout)
	defer cancel()
	if err := h.recall.check(ctx, rc.ArtifactService); err != nil {
		return rc, err
	}
	if err := h.recall.capture(rc.ArtifactService); err != nil {
		return rc, err
	}
	sessions, err := h.wrap(rc.SessionService)
	if err != nil {
		return rc, err
	}
	h.checkIndex(ctx, rc.SessionService)
	p, err := h.Plugin()
	if err != nil {
		return rc, err
	}
	rc.PluginConfig.Plugins = append(append([]*plugin.Plugin(nil), rc.PluginConfig.Plugins...), p)
	rc.SessionService = sessions
	return rc, nil
}

// Plugin returns adkctx's plugin: the model and tool callbacks for every agent of the runner,
// plus the run callbacks (state restore, compaction). Wire registers it.
func (h *Hooks) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name:                pluginName,
		BeforeRunCallback:   h.beforeRun,
		BeforeModelCallback: h.beforeModel,
		AfterModelCallback:  h.afterModel,
		AfterToolCallback:   h.afterTool,
		OnEventCallback:     h.onEvent,
		AfterRunCallback:    h.afterRun,
	})
}

// BeforeModel, AfterModel and AfterTool return the model and tool callbacks alone, for an
// llmagent.Config when the plugin is not used (budgets, truncation, normalization and AGENTS.md
// work; compaction needs the plugin). When both are registered, each call is processed once.
func (h *Hooks) BeforeModel() llmagent.BeforeModelCallback { return h.beforeModel }

// AfterModel: see BeforeModel.
func (h *Hooks) AfterModel() llmagent.AfterModelCallback { return h.afterModel }

// AfterTool: see BeforeModel.
func (h *Hooks) AfterTool() llmagent.AfterToolCallback { return h.afterTool }

// SessionService wraps base: a run reads the compacted, bounded view of its session, while every
// original event stays in base and whatever reads a session outside a run (adk-go's REST API and
// web UI, an application) gets every stored event (see the package documentation). With
// compaction off it returns base. Wire calls it. One Hooks holds one store: wrapping base again
// returns the same wrapper; another store is returned unwrapped, and the mistake is logged and
// reported by Check (Wire refuses it).
//
// Like Wire, it checks once that adk-go's database session service has adkctx's session index.
func (h *Hooks) SessionService(base session.Service) session.Service {
	s, err := h.wrap(base)
	if err != nil {
		w := &adkctx.WiringError{Problem: "second_store", Message: err.Error()}
		errors.As(err, &w)
		h.e.WiringError(w.Problem, w.Message)
		return base
	}
	ctx, cancel := context.WithTimeout(context.Background(), wireCheckTimeout)
	defer cancel()
	h.checkIndex(ctx, base)
	return s
}

// wireCheckTimeout bounds what Wire and SessionService ask the databases they are given.
const wireCheckTimeout = 5 * time.Second

// checkIndex checks, once per Hooks (once more after a check that could not ask the database),
// that base, when it is adk-go's database session service, reads sessions through adkctx's
// session index; without it every read scans the whole events table. A missing index is logged
// once at warn level and reported by Check (session_index_missing).
func (h *Hooks) checkIndex(ctx context.Context, base session.Service) {
	if w, ok := base.(*service); ok {
		base = w.base
	}
	db := gormOf(base)
	if db == nil {
		return
	}
	h.mu.Lock()
	done := h.indexChecked
	h.indexChecked = true
	h.mu.Unlock()
	if done {
		return
	}
	// adkctx's catalog queries are its own: kept out of the application's gorm log.
	err := sessiondb.CheckIndex(ctx, db.Session(&gorm.Session{NewDB: true, Logger: gormlogger.Discard}))
	var conflict *sessiondb.ConflictError
	switch {
	case err == nil:
	case errors.Is(err, sessiondb.ErrNoIndex), errors.As(err, &conflict):
		msg := "adk-go's database session service has no adkctx session index: every read of a session scans the whole " +
			"events table, so turns slow down as the table grows. Create it once when the application starts: " +
			"sessiondb.CreateIndex(ctx, db, sessiondb.Config{}) (package hooks/sessiondb)"
		if err != sessiondb.ErrNoIndex {
			msg += " (" + err.Error() + ")"
		}
		h.e.WiringWarning("session_index_missing", msg)
	default:
		h.mu.Lock()
		h.indexChecked = false // ask again at the next Wire
		h.mu.Unlock()
		kind, msg := glue.ErrorKind(err)
		h.log.Info("session index not checked", zap.String("error_kind", kind), zap.String("error", msg))
	}
}

// wrap returns the wrapper of base, making it (and starting compaction) the first time.
func (h *Hooks) wrap(base session.Service) (session.Service, error) {
	if !h.e.CompactionOn() {
		return base, nil
	}
	if w, ok := base.(*service); ok {
		base = w.base
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.store != nil {
		if sameService(h.store.base, base) {
			return h.store, nil
		}
		return nil, &adkctx.WiringError{Problem: "second_store", Message: fmt.Sprintf("this Hooks already wraps another session service (%T): "+
			"one Hooks holds one store; wire every runner over that store, or make another Hooks for this one", h.store.base)}
	}
	s, err := newService(base, h.e)
	if err != nil {
		return nil, err
	}
	h.store = s
	return s, nil
}

// sameService reports whether a and b are the same session service (false when the type
// cannot be compared).
func sameService(a, b session.Service) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// Usage reports the session's token accounting: per user turn and per model call, totals, and
// how many turns remain before the soft limit. A session this Hooks has not served (another
// replica served it, or this process restarted since) is read through the wrapped session
// service, as a run's start reads it (within usageReadTimeout), and its accounting restored from
// the newest model call stored. Its Known is false when there is no accounting to report: a
// Hooks never wired, a session without a model call, a session not stored, or a read that
// failed (logged at warn level with its error kind).
func (h *Hooks) Usage(appName, userID, sessionID string) budget.Report {
	ctx, cancel := context.WithTimeout(context.Background(), usageReadTimeout)
	defer cancel()
	rep, err := h.e.Usage(ctx, glue.Key{App: appName, User: userID, ID: sessionID})
	if err != nil {
		kind, msg := glue.ErrorKind(err)
		h.log.Warn("usage not read", zap.String("session_id", sessionID), zap.String("error_kind", kind), zap.String("error", msg))
	}
	return rep
}

// usageReadTimeout bounds the read of a session Usage does when this Hooks has not served it.
const usageReadTimeout = 10 * time.Second

// Limits returns the limits adkctx applies to the named model.
func (h *Hooks) Limits(model string) budget.Limits { return h.e.Limits(model) }

// Instructions returns the merged AGENTS.md instructions for workDir ("" = the configured one).
func (h *Hooks) Instructions(ctx context.Context, workDir string) (instructions.Merged, error) {
	return h.e.Instructions(ctx, workDir)
}

// Compact compacts the session now (trigger "manual"), keeping its newest invocations raw, one
// isolation scope per call. It returns nil when there was nothing to compact. It runs even while
// the session's automatic compactions back off after failures; one that ctx ends (cancelled, or
// its deadline passed) returns ctx's error and is no failure of the session (outcome canceled:
// it starts no backoff).
func (h *Hooks) Compact(ctx context.Context, appName, userID, sessionID string) (*compaction.Marker, error) {
	return h.e.Compact(ctx, glue.Key{App: appName, User: userID, ID: sessionID})
}

// Check returns the wiring mistakes found so far (joined *adkctx.WiringError values; nil when
// none): with compaction on, a Hooks never wired that a run or a model call passes through
// (not_wired), a runner whose session service is not wrapped (view_missing: its runs are
// refused with that error), one that bypasses adkctx's plugin (plugin_missing); a second
// session store (second_store); recall tools declared to a model while no artifact service was
// wired (recall_without_artifacts); adk-go's database session service without adkctx's session
// index (session_index_missing, a warning). Each is also logged once (the index at warn level,
// the others at error level), but a Logger is optional: Check (and Close) report them without
// one.
func (h *Hooks) Check() error { return h.e.Check() }

// Close waits for background compactions until ctx is done and stops starting new ones. Call it
// when the application shuts down; work it cannot finish is redone by the next process. It
// returns the wiring mistakes found (Check), joined with ctx's error when it gave up waiting.
func (h *Hooks) Close(ctx context.Context) error { return h.e.Close(ctx) }

// SummarizerModel adapts an adk-go model for compaction.LLMSummarizer. Summaries written by the
// agent's own model share its prompt cache:
//
//	Compaction: &compaction.Config{Summarizer: &compaction.LLMSummarizer{Model: hooks.SummarizerModel(agentModel)}}
func SummarizerModel(m model.LLM) compaction.Model { return llmModel{m} }

type llmModel struct{ model.LLM }

func (m llmModel) GenerateContent(ctx context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	return func(yield func(*response.LLMResponse, error) bool) {
		in := &model.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config}
		for r, err := range m.LLM.GenerateContent(ctx, in, false) {
			if !yield(responseOf(r), err) {
				return
			}
		}
	}
}

// responseOf is what adkctx reads of an adk-go response (nil for nil).
func responseOf(r *model.LLMResponse) *response.LLMResponse {
	if r == nil {
		return nil
	}
	return &response.LLMResponse{Content: r.Content, UsageMetadata: r.UsageMetadata, CustomMetadata: r.CustomMetadata,
		Partial: r.Partial, FinishReason: r.FinishReason, ErrorCode: r.ErrorCode}
}

func (h *Hooks) beforeRun(ctx agent.InvocationContext) (*genai.Content, error) {
	sess := ctx.Session()
	if sess == nil {
		return nil, nil
	}
	err := h.e.BeforeRun(ctx, keyOf(sess), ctx.InvocationID(), ctx.UserContent(), viewOf(sess), func() []compaction.Event {
		return coreEvents(stored(sess))
	})
	return nil, err // a wiring mistake refuses the run: adk-go's runner returns the error from Run
}

// viewOf returns the core's view of sess (nil when it was not read through the wrapper).
func viewOf(sess session.Session) *glue.View {
	if vs, ok := sess.(*viewSession); ok {
		return vs.v
	}
	return nil
}

// runOf returns the invocation of the adk-go run ctx belongs to ("" outside a run): adk-go's
// runner appends a run's events with the invocation's context.
func runOf(ctx context.Context) string {
	if c, ok := ctx.(interface{ InvocationID() string }); ok {
		return c.InvocationID()
	}
	return ""
}

func (h *Hooks) beforeModel(ctx callbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	if req == nil {
		return nil, nil
	}
	r := &request.LLMRequest{Model: req.Model, Contents: req.Contents, Config: req.Config}
	err := h.e.BeforeModel(ctx, ctx, ctx.ReadonlyState(), r, weak.Make(req))
	req.Contents, req.Config = r.Contents, r.Config
	return nil, err
}

func (h *Hooks) afterModel(ctx callbackContext, resp *model.LLMResponse, _ error) (*model.LLMResponse, error) {
	if r := responseOf(resp); r != nil {
		h.e.AfterModel(ctx, ctx, r)
		resp.CustomMetadata = r.CustomMetadata
	}
	return nil, nil
}

func (h *Hooks) afterTool(ctx toolContext, t tool.Tool, _, result map[string]any, _ error) (map[string]any, error) {
	name := ""
	if t != nil {
		name = t.Name()
	}
	return h.e.AfterTool(ctx, ctx, name, ctx.FunctionCallID(), result, saverOf(ctx)), nil
}

func (h *Hooks) onEvent(ctx agent.InvocationContext, ev *session.Event) (*session.Event, error) {
	if sess := ctx.Session(); sess != nil && ev != nil && !ev.Partial {
		h.e.OnEvent(ctx, keyOf(sess), ctx.InvocationID(), ev.Content, ev.IsFinalResponse())
	}
	return nil, nil
}

func (h *Hooks) afterRun(ctx agent.InvocationContext) {
	sess := ctx.Session()
	if sess == nil {
		return
	}
	h.e.AfterRun(ctx, keyOf(sess), ctx.InvocationID(), viewOf(sess))
}
