package engine

import (
	"context"

	"go.uber.org/zap"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/readback"
)

// recallStep declares the recall tools the model has a use for and points the request's notes
// at them. Of the recall tools the agent declares, those nothing in the request can use yet are
// withheld (readback.Needed: the output tools until a tool result names a saved output, every
// one until a summary stands for earlier turns): a session that never compacts or cuts an output
// does not pay their declarations on every request. The notes of the view name the tools
// declared (readback.RewriteNotes: excerpt notes point at the saved result, the summary says
// earlier turns can be searched); otherwise the request keeps its bytes. It reports nothing; it
// notes whether the agent declares read_saved_output, since the truncation notes of the call's
// tool results name it then (the call remembers it for AfterTool), and the next request, holding
// such a note, declares it.
//
// In a window too small for them (recallTooCostly) the recall tools are never declared: what
// they would cost every request is more than what they could bring back into it.
func (e *Engine) recallStep(ctx context.Context, c *chain) stepReport {
	if e.recallStores() == nil {
		return nil
	}
	agent := readback.InstalledIn(c.req.Config)
	if agent == (readback.Installed{}) {
		return nil
	}
	declared := c.req.Config
	// bare == declared: a config that forces a call or names the allowed functions keeps every
	// declaration (readback.Withhold).
	bare, full, rest := recallCost(declared, agent)
	if bare != declared && e.recallTooCostly(ctx, c, full-rest, rest) {
		// Not declared in this model's window at all (so not counted as withheld: no later
		// request declares them), and their notes do not name them.
		c.req.Config = bare
		e.noteRecallTooCostly(c.in.limits, full-rest)
		return nil
	}
	need := readback.Needed(c.req.Contents)
	shown := readback.Installed{Outputs: agent.Outputs && need.Outputs, History: agent.History && need.History}
	// A group the agent declares only in part is left as it is: its notes never name it.
	switch {
	case bare == declared:
	case shown == readback.Installed{}: // nothing to recall yet: every group declared whole waits
		c.req.Config, c.withheldTokens = bare, full-rest
	case shown != agent:
		c.req.Config = readback.Withhold(declared, readback.Installed{Outputs: shown.Outputs || !agent.Outputs, History: shown.History || !agent.History})
		c.withheldTokens = full - budget.EstimateRequest(nil, c.req.Config)
	}
	if shown != (readback.Installed{}) {
		c.req.Contents = readback.RewriteNotes(c.req.Contents, shown)
	}
	c.recallOutputs = agent.Outputs
	return nil
}

// maxRecallShare is the largest share of the conversation's room (the soft limit less the
// instruction and the agent's other tools) the recall tools' declarations may take.
const maxRecallShare = 4 // a quarter

// recallCost returns cfg without the recall groups the agent declares whole (agent: a group
// declared in part is the application's own choice, and its notes never name it), with the
// estimates of cfg (full) and of that config (rest); cfg itself when nothing is left out (a
// config that forces a call or names the allowed functions keeps them: readback.Withhold).
func recallCost(cfg *genai.GenerateContentConfig, agent readback.Installed) (bare *genai.GenerateContentConfig, full, rest int) {
	bare = readback.Withhold(cfg, readback.Installed{Outputs: !agent.Outputs, History: !agent.History})
	if bare == cfg {
		return cfg, 0, 0
	}
	return bare, budget.EstimateRequest(nil, cfg), budget.EstimateRequest(nil, bare)
}

// tooCostly reports whether declarations estimated at cost would take more than a quarter of
// the room limits' soft limit leaves the conversation beside rest (the instruction and the
// agent's other tools). At a 4K window the recall tools' declarations (about 900 tokens) are
// about 40% of that room: every request would pay them, the summary and raw tail would shrink
// to make room, and what a call of them returns could not fit beside the history anyway.
func tooCostly(cost, rest int, limits budget.Limits) bool {
	return limits.Soft > 0 && cost*maxRecallShare > limits.Soft-rest
}

// recallTooCostly is tooCostly for the recall tools of c's request, the AGENTS.md text the
// instructions step adds to its instruction counted (read only when the rest does not decide).
func (e *Engine) recallTooCostly(ctx context.Context, c *chain, cost, rest int) bool {
	if tooCostly(cost, rest, c.in.limits) {
		return true
	}
	if merged, ok := e.agentsMD(ctx, c); ok && merged.Text != "" {
		rest += budget.EstimateText(merged.Text)
	}
	return tooCostly(cost, rest, c.in.limits)
}

// noteRecallTooCostly logs, once per model, that its window leaves the recall tools out.
func (e *Engine) noteRecallTooCostly(l budget.Limits, cost int) {
	if _, seen := e.recallCostly.Get(l.Model); seen {
		return
	}
	e.recallCostly.Put(l.Model, struct{}{})
	e.log.Info("recall tools not declared: their declarations would take more than a quarter of what the model's soft limit leaves the conversation",
		zap.String("model", l.Model), zap.Int("context_window", l.Window), zap.Int("soft_limit", l.Soft), zap.Int("declarations_tokens", cost))
}
