package hooks

import (
	"context"
	"iter"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/internal/compactor"
	"github.com/adkctx/adkctx/internal/engine"
	"github.com/adkctx/adkctx/internal/glue"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
)

// Hooks is adkctx for one application. It is safe for concurrent use. Create it with New.
type Hooks struct {
	e *engine.Engine
}

// New validates cfg (every problem, as joined *adkctx.ConfigError values) and builds the hooks.
func New(cfg adkctx.Config) (*Hooks, error) {
	e, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Hooks{e: e}, nil
}

// Wire returns rc with adkctx wired in: its plugin added (after the application's own plugins)
// and its session service wrapped. With compaction on and no Summarizer configured, summaries are
// written by the root agent's own model (an LLM agent's, or the first LLM sub-agent's), with the
// extractive summarizer as fallback. It fails when rc has no session service or agent, or is
// already wired.
func (h *Hooks) Wire(rc runner.Config) (runner.Config, error) {
	if err := glue.CheckRunner(rc.SessionService != nil, rc.Agent != nil, rc.PluginConfig.Plugins); err != nil {
		return rc, err
	}
	if m, ok := glue.AgentModel[model.LLM](rc.Agent); ok {
		h.e.LearnAgentModel(SummarizerModel(m))
	}
	p, err := h.Plugin()
	if err != nil {
		return rc, err
	}
	rc.PluginConfig.Plugins = append(append([]*plugin.Plugin(nil), rc.PluginConfig.Plugins...), p)
	rc.SessionService = h.SessionService(rc.SessionService)
	return rc, nil
}

// Plugin returns adkctx's plugin: the model and tool callbacks for every agent of the runner,
// plus the run callbacks (state restore, compaction). Wire registers it.
func (h *Hooks) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name:                glue.PluginName,
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

// SessionService wraps base: sessions read through it show adk-go the compacted history, while
// every original event stays in base. With compaction off it returns base. Wire calls it.
func (h *Hooks) SessionService(base session.Service) session.Service {
	if !h.e.CompactionOn() {
		return base
	}
	s := version.Wrap(base, h.e)
	h.e.UseStore(s)
	return s
}

// Usage reports the session's token accounting: per user turn and per model call, totals, and
// how many turns remain before the soft limit.
func (h *Hooks) Usage(appName, userID, sessionID string) budget.Report {
	return h.e.Usage(compactor.Session{App: appName, User: userID, ID: sessionID})
}

// Limits returns the limits adkctx applies to the named model.
func (h *Hooks) Limits(model string) budget.Limits { return h.e.Limits(model) }

// Instructions returns the merged AGENTS.md instructions for workDir ("" = the configured one).
func (h *Hooks) Instructions(workDir string) (instructions.Merged, error) {
	return h.e.Instructions(workDir)
}

// Compact compacts the session now (trigger "manual"), keeping its newest invocations raw. It
// returns nil when there was nothing to compact.
func (h *Hooks) Compact(ctx context.Context, appName, userID, sessionID string) (*compaction.Marker, error) {
	return h.e.Compact(ctx, compactor.Session{App: appName, User: userID, ID: sessionID})
}

// Close waits for background compactions until ctx is done and stops starting new ones. Call it
// when the application shuts down; work it cannot finish is redone by the next process.
func (h *Hooks) Close(ctx context.Context) error { return h.e.Close(ctx) }

// SummarizerModel adapts an adk-go model for compaction.LLMSummarizer.
func SummarizerModel(m model.LLM) compaction.Model { return llmModel{m} }

type llmModel struct{ model.LLM }

func (m llmModel) GenerateContent(ctx context.Context, req *request.LLMRequest) iter.Seq2[*response.LLMResponse, error] {
	return glue.Map(m.LLM.GenerateContent(ctx, (*model.LLMRequest)(req), false),
		func(r *model.LLMResponse) *response.LLMResponse { return (*response.LLMResponse)(r) })
}

func (h *Hooks) beforeRun(ctx agent.InvocationContext) (*genai.Content, error) {
	if s, ok := glue.KeyOf(ctx.Session()); ok {
		h.e.BeforeRun(ctx, s, ctx.InvocationID(), ctx.UserContent(), version.Viewed(ctx.Session()), func() []compaction.Event {
			return version.CoreOf(version.Unwrap(ctx.Session()))
		})
	}
	return nil, nil
}

func (h *Hooks) beforeModel(ctx agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	return nil, h.e.BeforeModel(ctx, ctx, ctx.ReadonlyState(), (*request.LLMRequest)(req))
}

func (h *Hooks) afterModel(ctx agent.CallbackContext, resp *model.LLMResponse, _ error) (*model.LLMResponse, error) {
	h.e.AfterModel(ctx, ctx, (*response.LLMResponse)(resp))
	return nil, nil
}

func (h *Hooks) afterTool(ctx agent.ToolContext, t tool.Tool, _, result map[string]any, _ error) (map[string]any, error) {
	return h.e.AfterTool(ctx, ctx, glue.NameOf(t), ctx.FunctionCallID(), result, glue.Saver(ctx.Artifacts())), nil
}

func (h *Hooks) onEvent(ctx agent.InvocationContext, ev *session.Event) (*session.Event, error) {
	if s, ok := glue.KeyOf(ctx.Session()); ok && ev != nil && !ev.Partial {
		h.e.OnEvent(ctx, s, ctx.InvocationID(), ev.Content, ev.IsFinalResponse())
	}
	return nil, nil
}

func (h *Hooks) afterRun(ctx agent.InvocationContext) {
	if s, ok := glue.KeyOf(ctx.Session()); ok {
		h.e.AfterRun(ctx, s, ctx.InvocationID())
	}
}
