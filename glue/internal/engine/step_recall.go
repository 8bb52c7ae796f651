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
	agentsMD := 0 // the AGENTS.md text the instructions step adds to the instruction
	if merged, ok := e.agentsMD(ctx, c); ok && merged.Text != "" {
		agentsMD = budget.EstimateText(merged.Text)
	}
	if without, cost, costly := recallTooCostly(declared, agent, c.in.limits, agentsMD); costly {
		// Not declared in this model's window at all (so not counted as withheld: no later
		// request declares them), and their notes do not name them.
		c.req.Config = without
		e.noteRecallTooCostly(c.in.limits, cost)
		return nil
	}
	need := readback.Needed(c.req.Contents)
	shown := readback.Installed{Outputs: agent.Outputs && need.Outputs, History: agent.History && need.History}
	// A group the agent declares only in part is left as it is: its notes never name it.
	c.req.Config = readback.Withhold(declared, readback.Installed{Outputs: shown.Outputs || !agent.Outputs, History: shown.History || !agent.History})
	if c.req.Config != declared {
		c.withheldTokens = budget.EstimateRequest(nil, declared) - budget.EstimateRequest(nil, c.req.Config)
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

// recallTooCostly reports whether the recall tools cfg declares would take more than a quarter of
// the room limits' soft limit leaves the conversation beside the instruction and the agent's
// other tools, and returns cfg without them and their cost. At a 4K window their declarations
// (about 900 tokens) are about 40% of that room: every request would pay them, the summary
// and raw tail would shrink to make room, and what a call of them returns could not fit beside
// the history anyway. A config that forces a call or names the allowed functions keeps them
// (readback.Withhold).
//
// Only the groups the agent declares whole (agent) are left out: a group declared in part is the
// application's own choice, and its notes never name it. extra is what joins the instruction
// later in the chain (the AGENTS.md text).
func recallTooCostly(cfg *genai.GenerateContentConfig, agent readback.Installed, limits budget.Limits, extra int) (*genai.GenerateContentConfig, int, bool) {
	if limits.Soft <= 0 {
		return cfg, 0, false
	}
	without := readback.Withhold(cfg, readback.Installed{Outputs: !agent.Outputs, History: !agent.History})
	if without == cfg {
		return cfg, 0, false
	}
	rest := budget.EstimateRequest(nil, without)
	cost := budget.EstimateRequest(nil, cfg) - rest
	rest += extra
	return without, cost, cost*maxRecallShare > limits.Soft-rest
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
