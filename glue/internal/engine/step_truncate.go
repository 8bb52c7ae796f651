package engine

import (
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// truncateStep cuts the large function responses of the request's history with the AfterTool
// rules (steps.TruncateFunctionResponses). What the stream's previous request held unchanged
// was cut then: only the contents after that prefix are walked.
func (e *Engine) truncateStep(_ context.Context, c *chain) stepReport {
	c.measures()
	return truncateReport(truncateFrom(c.req, unchangedPrefix(c.base, c.in.prev), e.cfg.Truncation))
}

// truncateFrom applies the truncation rules to the function responses of req.Contents[from:]
// (copy-on-write, see steps.TruncateFunctionResponses).
func truncateFrom(req *request.LLMRequest, from int, cfg truncate.Config) steps.TruncateReport {
	tail := &request.LLMRequest{Contents: req.Contents[from:]}
	cut := steps.TruncateFunctionResponses(tail, cfg)
	if cut.Responses > 0 {
		req.Contents = append(slices.Clip(req.Contents[:from]), tail.Contents...)
	}
	return cut
}

// truncateReport reports the function responses cut and the bytes left out of them.
type truncateReport steps.TruncateReport

func (r truncateReport) logFields(f []zap.Field) []zap.Field {
	return append(f, zap.Int("responses_truncated", r.Responses), zap.Int("truncated_bytes", r.OmittedBytes))
}

func (truncateReport) spanAttrs(a []attribute.KeyValue) []attribute.KeyValue { return a }
func (truncateReport) record(*telemetry)                                     {}
