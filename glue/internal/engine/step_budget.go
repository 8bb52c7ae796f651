package engine

import (
	"context"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/steps"
)

// budgetStep holds the request to the model's limits (steps.EnforceBudget, the summary
// pinned): it marks a request over the soft limit for compaction, trims one over the hard limit,
// or refuses it (chain.err). It runs last: it prints the request as sent (and as it was before
// its trim, which the stream's next request extends) and counts the tokens of its prefix the
// stream's previous request held.
func (e *Engine) budgetStep(_ context.Context, c *chain) stepReport {
	m := c.measures()
	c.sized.contents, c.sized.sizes = m.Prints(c.req.Contents)
	untrimmed := c.req.Contents
	d, err := steps.EnforceBudget(c.req, steps.BudgetInput{
		Limits:               c.in.limits,
		Predict:              c.in.cal.Predict,
		Pinned:               compaction.IsSummary,
		Measures:             m,
		PreviousTurnsDropped: c.in.prevDrop,
	})
	c.print = prefixPrint{fixed: fixedPrint(c.req), fixedTokens: d.FixedTokens, contents: c.sized.contents, sizes: c.sized.sizes}
	if !sameContents(c.req.Contents, untrimmed) {
		c.print.contents, c.print.sizes = m.Prints(c.req.Contents)
	}
	c.err = err
	c.budget = budgetReport{limits: c.in.limits, decision: d, reused: c.print.reused(c.in.prev),
		contents: len(c.req.Contents), sent: err == nil}
	return &c.budget
}

// budgetReport is the budget's decision on a request: the limits it held the request to, what
// it found and did, the tokens of the request's prefix the stream's previous request held, and
// the contents sent.
type budgetReport struct {
	limits   budget.Limits
	decision steps.BudgetDecision
	reused   int
	contents int
	sent     bool // not refused
}

func (r *budgetReport) logFields(f []zap.Field) []zap.Field {
	l, d := r.limits, r.decision
	return append(f,
		zap.String("model", l.Model),
		zap.Bool("model_known", l.Known),
		zap.String("window_source", string(l.Source)),
		zap.Int("context_window", l.Window),
		zap.Int("reserved_output", l.ReservedOutput),
		zap.Int("usable_input", l.Usable),
		zap.Int("soft_limit", l.Soft),
		zap.Int("hard_limit", l.Hard),
		zap.Int("estimated_tokens", d.EstimatedTokens),
		zap.Float64("calibration_factor", round3(calibrationFactor(d))),
		zap.Int("predicted_tokens", d.PredictedTokens),
		zap.Int("safety_margin", d.Margin),
		zap.String("margin_source", marginSource(d)),
		zap.Bool("margin_waived", d.MarginWaived),
		zap.Int("final_tokens", d.FinalTokens),
		zap.Int("prefix_reused_tokens", r.reused),
		zap.String("action", string(d.Action)),
		zap.Int("turns_dropped", d.TurnsDropped),
		zap.Int("contents_dropped", d.ContentsDropped),
		zap.Int("tokens_dropped", d.TokensDropped),
		zap.Int("exchanges_dropped", d.ExchangesDropped),
		zap.Int("newest_responses_cut", d.ResponsesCut),
		zap.Bool("summary_present", d.SummaryPresent),
		zap.Int("summary_tokens", d.SummaryTokens),
		zap.Int("floor_tokens", d.FloorTokens),
		zap.Bool("summary_cut", d.SummaryCut),
		zap.Bool("message_cut", d.MessageCut),
		zap.Int("contents", r.contents),
	)
}

func (r *budgetReport) spanAttrs(a []attribute.KeyValue) []attribute.KeyValue {
	d := r.decision
	return append(a,
		AttrModel.String(r.limits.Model),
		AttrAction.String(string(d.Action)),
		attribute.Int("adkctx.tokens.estimated", d.EstimatedTokens),
		attribute.Int("adkctx.tokens.predicted", d.PredictedTokens),
		attribute.Int("adkctx.tokens.final", d.FinalTokens),
		attribute.Int("adkctx.tokens.prefix_reused", r.reused),
		attribute.Int("adkctx.limit.soft", r.limits.Soft),
		attribute.Int("adkctx.limit.hard", r.limits.Hard),
		attribute.Int("adkctx.turns_dropped", d.TurnsDropped),
		attribute.Bool("adkctx.summary_present", d.SummaryPresent),
	)
}

// record counts the decision by action and model, the turns a sent request left out, and the
// request's sizes by kind (a refused request was never sent: no final or reused size).
func (r *budgetReport) record(t *telemetry) {
	ctx := context.Background() // no exemplars, as in telemetry.decision
	if !t.decisions.Enabled(ctx) && !t.requestTokens.Enabled(ctx) {
		return
	}
	d := r.decision
	o := t.opts(r.limits.Model)
	t.decisions.Add(ctx, 1, o.action(d.Action))
	if r.sent && d.TurnsDropped > 0 {
		t.turnsDropped.Add(ctx, int64(d.TurnsDropped), o.model)
	}
	values := [...]int{d.EstimatedTokens, d.PredictedTokens, d.FinalTokens, r.reused}
	n := len(values)
	if !r.sent {
		n = 2
	}
	for i, v := range values[:n] {
		t.requestTokens.Record(ctx, int64(v), o.kinds[i])
	}
}

// marginSource is the decision's margin source as logged: "prior", "learned", or "none" when the
// prediction named none.
func marginSource(d steps.BudgetDecision) string {
	if d.MarginSource == "" {
		return "none"
	}
	return string(d.MarginSource)
}

// calibrationFactor is the decision's PredictedTokens / EstimatedTokens (1 when either is
// unknown).
func calibrationFactor(d steps.BudgetDecision) float64 {
	if d.EstimatedTokens <= 0 || d.PredictedTokens <= 0 {
		return 1
	}
	return float64(d.PredictedTokens) / float64(d.EstimatedTokens)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
