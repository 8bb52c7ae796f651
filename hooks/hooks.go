package hooks

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
	"weak"

	"go.uber.org/zap"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/instructions"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/response"
	"github.com/adkctx/adkctx/processors/truncate"
)

// PluginName is the name of the plugin returned by Plugin.
const PluginName = "adkctx"

// Hooks holds adkctx's state for one application: model limits, per-session calibration and
// accounting, the AGENTS.md cache and the compactor. It is safe for concurrent use by many
// sessions and by parallel tool calls. Create it with New.
type Hooks struct {
	cfg      Config
	log      *zap.Logger
	registry *budget.Registry

	calibrator *budget.Calibrator
	accountant *budget.Accountant
	loader     *instructions.Loader  // nil: AGENTS.md off
	compactor  *compaction.Compactor // nil: compaction off
	workDir    string                // default working directory for AGENTS.md

	sessions *sessionTable

	mu            sync.Mutex
	service       *compaction.Service // the wrapper built by SessionService
	unknownLogged map[string]bool     // unknown model names already warned about
	noServiceSeen bool                // the missing-wrapper warning was logged
}

// New validates cfg and builds the hooks. See Config for every default.
func New(cfg Config) (*Hooks, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	h := &Hooks{
		cfg:           cfg,
		log:           cfg.Logger,
		registry:      budget.NewRegistry(cfg.Models...),
		calibrator:    budget.NewCalibrator(),
		accountant:    budget.NewAccountant(),
		sessions:      newSessionTable(defaultMaxSessions),
		unknownLogged: map[string]bool{},
	}
	if ic := cfg.Instructions; ic != nil {
		disc := ic.Discovery
		if disc.Logger == nil {
			disc.Logger = cfg.Logger
		}
		loader, err := instructions.NewLoader(disc, ic.Merge, cfg.Logger)
		if err != nil {
			return nil, fmt.Errorf("%w: instructions: %w", ErrInvalidConfig, err)
		}
		h.loader = loader
		h.workDir = ic.WorkDir
		if h.workDir == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, fmt.Errorf("%w: instructions: no working directory: %w", ErrInvalidConfig, err)
			}
			h.workDir = wd
		}
	}
	if cc := cfg.Compaction; cc != nil {
		c := *cc
		if c.Logger == nil {
			c.Logger = cfg.Logger
		}
		compactor, err := compaction.NewCompactor(c)
		if err != nil {
			return nil, fmt.Errorf("%w: compaction: %w", ErrInvalidConfig, err)
		}
		h.compactor = compactor
	}
	return h, nil
}

// BeforeModel returns the callback to put in llmagent.Config.BeforeModelCallbacks. It runs the
// request processors in this order:
//
//  1. instructions: the merged AGENTS.md text is appended to the system instruction;
//  2. truncate: function responses already in history are cut to the truncation limits;
//  3. normalize: every call gets a response, orphan responses are removed, parallel responses
//     follow call order;
//  4. budget: the whole request is counted; above the soft limit the session is marked for
//     compaction, above the hard limit the oldest whole turns are left out, and a request whose
//     newest turn alone does not fit is refused with a *request.BudgetExceededError.
//
// Each call emits exactly one "budget decision" log entry.
func (h *Hooks) BeforeModel() llmagent.BeforeModelCallback { return h.beforeModel }

// AfterModel returns the callback to put in llmagent.Config.AfterModelCallbacks: it records the
// usage of every non-partial response into the session's accounting and calibrates the estimator.
func (h *Hooks) AfterModel() llmagent.AfterModelCallback { return h.afterModel }

// AfterTool returns the callback to put in llmagent.Config.AfterToolCallbacks: it truncates each
// tool result (head and tail kept, with a marker) before it is stored, saving the full result as
// an artifact when the runner has an artifact service.
func (h *Hooks) AfterTool() llmagent.AfterToolCallback { return h.afterTool }

// Plugin returns a plugin for runner.Config.PluginConfig with the same model and tool callbacks
// (for multi-agent apps: one registration covers every agent) plus the compaction triggers:
// after each invocation (sliding window) and, when a request passed the soft limit, before the
// next event is stored (so one long invocation stays bounded too).
//
// Register either the plugin or the agent callbacks for the model and tool steps: when both are
// registered, a request already processed by the plugin is not processed again. Compaction needs
// the plugin.
func (h *Hooks) Plugin() (*plugin.Plugin, error) {
	return plugin.New(plugin.Config{
		Name:                PluginName,
		BeforeModelCallback: h.beforeModel,
		AfterModelCallback:  h.afterModel,
		AfterToolCallback:   h.afterTool,
		OnEventCallback:     h.onEvent,
		AfterRunCallback:    h.afterRun,
	})
}

// SessionService wraps the runner's session service. With compaction on, sessions read through
// it show the compacted history (summary + recent events) to adk-go, while every original event
// stays in base. With compaction off it returns base unchanged.
func (h *Hooks) SessionService(base session.Service) session.Service {
	if h.compactor == nil {
		return base
	}
	svc := compaction.NewService(base, h.log)
	h.mu.Lock()
	h.service = svc
	h.mu.Unlock()
	return svc
}

// Usage reports the session's token accounting: per-turn usage, totals, and how many turns remain
// before the soft limit of the model it last used.
func (h *Hooks) Usage(appName, userID, sessionID string) budget.Report {
	key := sessionKey(appName, userID, sessionID)
	var limits budget.Limits
	h.sessions.peek(key, func(st *sessionState) { limits = st.limits })
	return h.accountant.Report(key, limits)
}

// Limits returns the limits adkctx applies to the named model.
func (h *Hooks) Limits(modelName string) budget.Limits {
	info, known := h.registry.Lookup(modelName)
	return budget.NewLimits(info, known, h.cfg.Limits)
}

// Instructions returns the merged AGENTS.md instructions for workDir ("" = the configured
// default), with provenance. It fails when instructions are not configured.
func (h *Hooks) Instructions(workDir string) (instructions.Merged, error) {
	if h.loader == nil {
		return instructions.Merged{}, fmt.Errorf("adkctx: AGENTS.md instructions are not configured")
	}
	if workDir == "" {
		workDir = h.workDir
	}
	return h.loader.Load(workDir)
}

// Compact compacts the session now (trigger "manual"), keeping the most recent events raw. It
// returns (nil, nil) when there is nothing to compact. It needs compaction on and SessionService
// called.
func (h *Hooks) Compact(ctx context.Context, appName, userID, sessionID string) (*compaction.Marker, error) {
	svc := h.compactionService()
	if h.compactor == nil || svc == nil {
		return nil, fmt.Errorf("adkctx: compaction is not configured (set Config.Compaction and wrap the session service with SessionService)")
	}
	key := sessionKey(appName, userID, sessionID)
	var limit int
	h.sessions.peek(key, func(st *sessionState) { limit = st.compactionTokenLimit })
	return h.compactor.Compact(ctx, compaction.Request{
		Service: svc, AppName: appName, UserID: userID, SessionID: sessionID,
		Trigger: compaction.TriggerManual, TokenLimit: limit,
	})
}

func (h *Hooks) compactionService() *compaction.Service {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.service
}

func (h *Hooks) beforeModel(ctx agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	if req == nil {
		return nil, nil
	}
	key := sessionKey(ctx.AppName(), ctx.UserID(), ctx.SessionID())
	limits := h.limitsFor(req.Model)

	ck := callKey(ctx.InvocationID(), ctx.Branch(), ctx.AgentName())
	wreq := weak.Make(req)
	already := false
	h.sessions.with(key, func(st *sessionState) {
		c := h.sessions.call(st, ck)
		already = c.lastRequest == wreq
		c.lastRequest = wreq
		c.model, c.limits = req.Model, limits
		st.limits = limits
	})
	if already { // the plugin and the agent callback are both registered: process once.
		return nil, nil
	}

	// 1. AGENTS.md instructions.
	instructionBytes := 0
	if h.loader != nil {
		merged, err := h.loader.Load(h.workDirFor(ctx))
		if err != nil {
			h.log.Warn("agents.md instructions unavailable", zap.String("session_id", ctx.SessionID()), zap.Error(err))
		} else if merged.Text != "" {
			request.InjectInstructions(req, merged.Text)
			instructionBytes = len(merged.Text)
		}
	}
	// 2. Truncate large function responses already in history.
	cut := request.TruncateFunctionResponses(req, h.cfg.Truncation)
	// 3. Valid call/response pairs.
	norm := request.Normalize(req)
	// 4. Budget.
	decision, err := request.EnforceBudget(req, request.BudgetInput{
		Limits: limits,
		Calibrate: func(estimate int) int {
			return h.calibrator.Calibrate(key, req.Model, estimate)
		},
	})

	h.sessions.with(key, func(st *sessionState) {
		h.sessions.call(st, ck).pendingEstimate = decision.FinalEstimatedTokens
		if decision.OverSoft {
			st.compactionDue = true
		}
		st.compactionTokenLimit = compactionLimit(limits.Soft, decision)
	})

	fields := append([]zap.Field{
		zap.String("session_id", ctx.SessionID()),
		zap.String("invocation_id", ctx.InvocationID()),
		zap.String("agent", ctx.AgentName()),
	}, limits.LogFields()...)
	fields = append(fields,
		zap.Int("estimated_tokens", decision.EstimatedTokens),
		zap.Float64("calibration_factor", decision.CalibrationFactor()),
		zap.Int("calibrated_tokens", decision.CalibratedTokens),
		zap.Int("final_tokens", decision.FinalTokens),
		zap.String("action", decision.Action),
		zap.Int("turns_dropped", decision.TurnsDropped),
		zap.Int("contents_dropped", decision.ContentsDropped),
		zap.Int("tokens_dropped", decision.TokensDropped),
		zap.Int("exchanges_dropped", decision.ExchangesDropped),
		zap.Int("contents", len(req.Contents)),
		zap.Int("responses_truncated", cut.StringsCut),
		zap.Int("truncated_bytes", cut.OmittedBytes),
		zap.Int("synthetic_responses", norm.SyntheticResponses),
		zap.Int("orphans_removed", norm.OrphansRemoved),
		zap.Int("responses_reordered", norm.Reordered),
		zap.Int("instruction_bytes", instructionBytes),
	)
	if err != nil {
		h.log.Warn("budget decision", fields...)
		return nil, err
	}
	h.log.Info("budget decision", fields...)
	return nil, nil
}

// compactionLimit converts the soft limit (calibrated tokens of the whole request) into the
// compactor's unit: raw estimated tokens of the history alone.
func compactionLimit(soft int, d request.BudgetDecision) int {
	return max(int(float64(soft)/d.CalibrationFactor())-d.FixedTokens, 1)
}

func (h *Hooks) afterModel(ctx agent.CallbackContext, resp *model.LLMResponse, _ error) (*model.LLMResponse, error) {
	usage, ok := response.UsageOf(resp)
	if !ok {
		return nil, nil
	}
	key := sessionKey(ctx.AppName(), ctx.UserID(), ctx.SessionID())
	var modelName string
	var estimate int
	var limits budget.Limits
	ck := callKey(ctx.InvocationID(), ctx.Branch(), ctx.AgentName())
	h.sessions.with(key, func(st *sessionState) {
		c := h.sessions.call(st, ck)
		modelName, estimate, limits = c.model, c.pendingEstimate, c.limits
		c.pendingEstimate = 0 // one observation per request, even if callbacks run twice
		if limits.Soft > 0 && usage.Prompt > limits.Soft {
			st.compactionDue = true
		}
	})
	if estimate == 0 {
		return nil, nil // already recorded for this request (plugin and agent callback both registered)
	}
	h.accountant.Record(key, budget.Turn{InvocationID: ctx.InvocationID(), Model: modelName, Usage: usage})
	h.calibrator.Observe(key, modelName, estimate, usage.Prompt)
	h.log.Debug("model usage",
		zap.String("session_id", ctx.SessionID()),
		zap.String("invocation_id", ctx.InvocationID()),
		zap.String("model", modelName),
		zap.Int("estimated_tokens", estimate),
		zap.Int("prompt_tokens", usage.Prompt),
		zap.Int("output_tokens", usage.Output),
		zap.Int("cached_tokens", usage.Cached),
		zap.Int("thought_tokens", usage.Thought),
		zap.Float64("calibration_factor", h.calibrator.Factor(key, modelName)),
	)
	return nil, nil
}

func (h *Hooks) afterTool(ctx agent.ToolContext, t tool.Tool, _, result map[string]any, _ error) (map[string]any, error) {
	if result == nil {
		return nil, nil
	}
	toolName := ""
	if t != nil {
		toolName = t.Name()
	}
	// Each cut (a string, byte-exact, or the elements a list left out) is saved whole as its own
	// artifact named in its marker.
	var saved []fullOutput
	var note func(truncate.Cut) string
	arts := ctx.Artifacts()
	if h.cfg.keepFullOutputs() && arts != nil {
		note = func(c truncate.Cut) string {
			out := fullOutput{cut: c, text: leafIsText(c)}
			out.name = fullOutputArtifactName(toolName, ctx.FunctionCallID(), c.Index, c.Count, out.text)
			saved = append(saved, out)
			return fmt.Sprintf("full output saved as artifact %q", out.name)
		}
	}
	cut, stats := response.TruncateToolResult(result, h.cfg.Truncation, note)
	if !stats.Truncated {
		return nil, nil
	}
	var artifacts []string
	for _, out := range saved {
		if err := out.save(ctx, arts); err != nil {
			h.log.Warn("full tool output not saved",
				zap.String("session_id", ctx.SessionID()), zap.String("tool", toolName),
				zap.String("artifact", out.name), zap.Error(err))
			// No marker may name an artifact that is not there.
			artifacts = nil
			cut, stats = response.TruncateToolResult(result, h.cfg.Truncation, nil)
			break
		}
		artifacts = append(artifacts, out.name)
	}
	h.log.Info("tool output truncated",
		zap.String("session_id", ctx.SessionID()),
		zap.String("invocation_id", ctx.InvocationID()),
		zap.String("tool", toolName),
		zap.String("function_call_id", ctx.FunctionCallID()),
		zap.Int("original_bytes", stats.OriginalBytes),
		zap.Int("kept_bytes", stats.KeptBytes),
		zap.Int("original_lines", stats.OriginalLines),
		zap.Int("omitted_lines", stats.OmittedLines),
		zap.Int("strings_cut", stats.StringsCut),
		zap.Int("items_omitted", stats.ItemsOmitted),
		zap.Strings("artifacts", artifacts),
	)
	return cut, nil
}

// fullOutput is one cut of a tool result and the artifact that holds it whole.
type fullOutput struct {
	cut  truncate.Cut
	text bool // valid UTF-8
	name string
}

// save stores the leaf's original bytes as they were (one copy for a string, none for a
// []byte): text/plain when they are valid UTF-8, application/octet-stream otherwise.
func (o fullOutput) save(ctx context.Context, arts agent.Artifacts) error {
	data := o.cut.Bytes
	if data == nil {
		data = []byte(o.cut.Text)
	}
	mime := "application/octet-stream"
	if o.text {
		mime = "text/plain; charset=utf-8"
	}
	_, err := arts.Save(ctx, o.name, &genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: data}})
	return err
}

func leafIsText(c truncate.Cut) bool {
	if c.Bytes != nil {
		return utf8.Valid(c.Bytes)
	}
	return utf8.ValidString(c.Text)
}

// fullOutputArtifactName names the artifact holding cut leaf index of count of a tool's result:
// adkctx-tool-output-<tool>-<call>.txt when it is the only one, -<call>-<n>.txt (n from 1) when
// there are several; .bin instead of .txt when the leaf is not valid UTF-8 text.
func fullOutputArtifactName(toolName, callID string, index, count int, text bool) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
				return r
			}
			return '_'
		}, s)
	}
	if callID == "" {
		callID = "call"
	}
	ext := ".bin"
	if text {
		ext = ".txt"
	}
	if count > 1 {
		return fmt.Sprintf("adkctx-tool-output-%s-%s-%d%s", clean(toolName), clean(callID), index+1, ext)
	}
	return fmt.Sprintf("adkctx-tool-output-%s-%s%s", clean(toolName), clean(callID), ext)
}

// onEvent runs a token-triggered compaction when the last request passed the soft limit, before
// the next event is stored: the next model call of the same invocation then sees the summary.
func (h *Hooks) onEvent(ctx agent.InvocationContext, ev *session.Event) (*session.Event, error) {
	if h.compactor == nil || ev == nil || ev.Partial || ctx.Session() == nil {
		return nil, nil
	}
	sess := ctx.Session()
	key := sessionKey(sess.AppName(), sess.UserID(), sess.ID())
	due, limit := false, 0
	h.sessions.with(key, func(st *sessionState) {
		due, limit = st.compactionDue, st.compactionTokenLimit
		st.compactionDue = false
	})
	if !due {
		return nil, nil
	}
	svc := h.compactionService()
	if svc == nil {
		h.warnNoService()
		return nil, nil
	}
	// Errors are logged by the compactor; the user's turn goes on either way.
	_, _ = h.compactor.Compact(ctx, compaction.Request{
		Service: svc, AppName: sess.AppName(), UserID: sess.UserID(), SessionID: sess.ID(),
		Live: sess, InvocationID: ctx.InvocationID(), Trigger: compaction.TriggerTokens, TokenLimit: limit,
	})
	return nil, nil
}

// afterRun forgets the invocation's call states and runs the sliding-window compaction once the
// invocation's last event is stored.
func (h *Hooks) afterRun(ctx agent.InvocationContext) {
	sess := ctx.Session()
	if sess == nil {
		return
	}
	key := sessionKey(sess.AppName(), sess.UserID(), sess.ID())
	h.sessions.with(key, func(st *sessionState) { st.forgetInvocation(ctx.InvocationID()) })
	if h.compactor == nil {
		return
	}
	svc := h.compactionService()
	if svc == nil {
		h.warnNoService()
		return
	}
	var trigger compaction.Trigger = compaction.TriggerInvocations
	limit := 0
	h.sessions.with(key, func(st *sessionState) {
		// The token limit is passed only when a request passed the soft limit: with a limit, the
		// compactor keeps a token-sized tail raw, which would postpone the θ-invocation window
		// until the history is large.
		if st.compactionDue {
			trigger, limit = compaction.TriggerTokens, st.compactionTokenLimit
			st.compactionDue = false
		}
	})
	_, _ = h.compactor.Compact(ctx, compaction.Request{
		Service: svc, AppName: sess.AppName(), UserID: sess.UserID(), SessionID: sess.ID(),
		InvocationID: ctx.InvocationID(), Trigger: trigger, TokenLimit: limit,
	})
}

func (h *Hooks) warnNoService() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.noServiceSeen {
		return
	}
	h.noServiceSeen = true
	h.log.Warn("compaction is configured but the runner's session service was not wrapped with Hooks.SessionService; compaction is skipped")
}

func (h *Hooks) limitsFor(modelName string) budget.Limits {
	info, known := h.registry.Lookup(modelName)
	if !known {
		h.mu.Lock()
		first := !h.unknownLogged[modelName]
		h.unknownLogged[modelName] = true
		h.mu.Unlock()
		if first {
			h.log.Warn("unknown model: using the fallback context window",
				zap.String("model", modelName),
				zap.Int("context_window", info.ContextWindow),
				zap.Int("max_output_tokens", info.MaxOutputTokens))
		}
	}
	return budget.NewLimits(info, known, h.cfg.Limits)
}

func (h *Hooks) workDirFor(ctx agent.CallbackContext) string {
	if key := h.cfg.Instructions.WorkDirStateKey; key != "" && ctx.ReadonlyState() != nil {
		if v, err := ctx.ReadonlyState().Get(key); err == nil {
			if s, ok := v.(string); ok && s != "" {
				return s
			}
		}
	}
	return h.workDir
}
