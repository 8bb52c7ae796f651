package engine

import (
	"context"

	"github.com/adkctx/adkctx/internal/recallinternal"
)

// recallStep points the request's notes at the recall tools: when the tools are in use and the
// request declares them, the notes of the view name them (recallinternal.RewriteNotes: excerpt notes
// point at the saved result, the summary says earlier turns can be searched); otherwise the
// request keeps its bytes. It reports nothing; it notes whether the request declared
// read_saved_output, since the truncation notes of the call's tool results name it then (the
// call remembers it for AfterTool).
func (e *Engine) recallStep(_ context.Context, c *chain) stepReport {
	if e.recallStores() == nil {
		return nil
	}
	in := recallinternal.InstalledIn(c.req.Config)
	if in != (recallinternal.Installed{}) {
		c.req.Contents = recallinternal.RewriteNotes(c.req.Contents, in)
	}
	c.recallOutputs = in.Outputs
	return nil
}
