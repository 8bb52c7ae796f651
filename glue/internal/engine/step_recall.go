package engine

import (
	"context"

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
func (e *Engine) recallStep(_ context.Context, c *chain) stepReport {
	if e.recallStores() == nil {
		return nil
	}
	agent := readback.InstalledIn(c.req.Config)
	if agent == (readback.Installed{}) {
		return nil
	}
	need := readback.Needed(c.req.Contents)
	shown := readback.Installed{Outputs: agent.Outputs && need.Outputs, History: agent.History && need.History}
	// A group the agent declares only in part is left as it is: its notes never name it.
	declared := c.req.Config
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
