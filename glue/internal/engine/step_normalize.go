package engine

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/adkctx/adkctx/processors/request"
)

// normalizeStep makes the request's calls and responses valid (request.Normalize).
func (e *Engine) normalizeStep(_ context.Context, c *chain) stepReport {
	return normalizeReport(request.Normalize(c.req))
}

// normalizeReport reports what normalization fixed.
type normalizeReport request.NormalizeReport

func (r normalizeReport) logFields(f []zap.Field) []zap.Field {
	return append(f,
		zap.Int("synthetic_responses", r.SyntheticResponses),
		zap.Int("orphans_removed", r.OrphansRemoved),
		zap.Int("responses_reordered", r.Reordered),
		zap.Int("responses_merged", r.ContentsMerged),
	)
}

func (normalizeReport) spanAttrs(a []attribute.KeyValue) []attribute.KeyValue { return a }
func (normalizeReport) record(*telemetry)                                     {}
