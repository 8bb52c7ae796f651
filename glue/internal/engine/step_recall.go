package engine

import (
	"context"

	"github.com/adkctx/adkctx/glue/internal/readback"
)

// recallStep points the request's notes at the recall tools: when the tools are in use and the
// request declares them, the notes of the view name them (readback.RewriteNotes: excerpt notes
// point at the saved result, the summary says earlier turns can be searched); otherwise the
// request keeps its bytes. It reports nothing; it notes whether the request declared
// read_saved_output, since the truncation notes of the call's tool results name it then (the
// call remembers it for AfterTool).
func (e *Engine) recallStep(_ context.Context, c *chain) stepReport {
	if e.recallStores() == nil {
		return nil
	}
	in := readback.InstalledIn(c.req.Config)
	if in != (readback.Installed{}) {
		c.req.Contents = readback.RewriteNotes(c.req.Contents, in)
	}
	c.recallOutputs = in.Outputs
	return nil
}
