package engine

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/errkind"
	"github.com/adkctx/adkctx/processors/request"
)

// instrumentation is the OpenTelemetry instrumentation scope of adkctx.
const instrumentation = "github.com/adkctx/adkctx"

// Attribute keys. gen_ai.* follow the OpenTelemetry GenAI semantic conventions; the rest are
// adkctx's. None carries a session id or conversation text: cardinality is bounded by the
// models, tools and the fixed value sets below.
const (
	attrModel      = attribute.Key("gen_ai.request.model")
	attrOperation  = attribute.Key("gen_ai.operation.name")
	attrTokenType  = attribute.Key("gen_ai.token.type")
	attrToolName   = attribute.Key("gen_ai.tool.name")
	attrErrorType  = attribute.Key("error.type")
	attrAction     = attribute.Key("adkctx.budget.action")
	attrTokenKind  = attribute.Key("adkctx.token.kind")
	attrTrigger    = attribute.Key("adkctx.compaction.trigger")
	attrOutcome    = attribute.Key("adkctx.compaction.outcome")
	attrSummarizer = attribute.Key("adkctx.compaction.summarizer")
)

// telemetry holds the instruments. With no SDK installed the global providers are no-ops and
// every call costs a few nanoseconds.
type telemetry struct {
	tracer trace.Tracer

	decisions      metric.Int64Counter
	requestTokens  metric.Int64Histogram
	tokenUsage     metric.Int64Histogram
	compactions    metric.Int64Counter
	compactionTime metric.Float64Histogram
	compression    metric.Float64Histogram
	summarizerErrs metric.Int64Counter
	fallbacks      metric.Int64Counter
	truncations    metric.Int64Counter
	bytesOmitted   metric.Int64Counter
	instrBytes     metric.Int64Histogram
	filesSkipped   metric.Int64Counter
}

func newTelemetry(mp metric.MeterProvider, tp trace.TracerProvider) (*telemetry, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	m := mp.Meter(instrumentation)
	t := &telemetry{tracer: tp.Tracer(instrumentation)}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, unit, desc string) metric.Int64Histogram {
		h, err := m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return h
	}
	t.decisions = counter("adkctx.budget.decisions", "{decision}", "Budget decisions, one per model call, by action and model.")
	t.requestTokens = histogram("adkctx.request.tokens", "{token}", "Request size per model call: estimated, predicted (calibrated), final (as sent) and prefix_reused (shared with the previous request).")
	t.tokenUsage = histogram("gen_ai.client.token.usage", "{token}", "Tokens the model reported per call (input and output).")
	t.compactions = counter("adkctx.compaction.attempts", "{attempt}", "Compaction attempts by trigger and outcome.")
	ft, err := m.Float64Histogram("adkctx.compaction.duration", metric.WithUnit("s"), metric.WithDescription("Duration of compaction attempts that ran."))
	t.compactionTime = ft
	errs = append(errs, err)
	fr, err := m.Float64Histogram("adkctx.compaction.compression_ratio", metric.WithUnit("1"), metric.WithDescription("Tokens replaced divided by summary tokens, per compaction."))
	t.compression = fr
	errs = append(errs, err)
	t.summarizerErrs = counter("adkctx.compaction.summarizer.errors", "{error}", "Summarizer failures by error kind and summarizer.")
	t.fallbacks = counter("adkctx.compaction.fallbacks", "{compaction}", "Compactions whose summary came from the fallback summarizer.")
	t.truncations = counter("adkctx.tool.truncations", "{result}", "Tool results cut before they were stored, by tool.")
	t.bytesOmitted = counter("adkctx.tool.omitted_bytes", "By", "Bytes of tool output kept out of the prompt, by tool.")
	t.instrBytes = histogram("adkctx.instructions.bytes", "By", "AGENTS.md bytes injected per model call.")
	t.filesSkipped = counter("adkctx.instructions.skipped_files", "{file}", "AGENTS.md files skipped (unreadable, outside the root, special files).")
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *telemetry) decision(ctx context.Context, l budget.Limits, d request.BudgetDecision, reused int) {
	model := attrModel.String(l.Model)
	t.decisions.Add(ctx, 1, metric.WithAttributes(model, attrAction.String(string(d.Action))))
	for _, kv := range []struct {
		kind string
		n    int
	}{{"estimated", d.EstimatedTokens}, {"predicted", d.PredictedTokens}, {"final", d.FinalTokens}, {"prefix_reused", reused}} {
		t.requestTokens.Record(ctx, int64(kv.n), metric.WithAttributes(model, attrTokenKind.String(kv.kind)))
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("adkctx.budget_decision", trace.WithAttributes(
			model,
			attrAction.String(string(d.Action)),
			attribute.Int("adkctx.tokens.estimated", d.EstimatedTokens),
			attribute.Int("adkctx.tokens.predicted", d.PredictedTokens),
			attribute.Int("adkctx.tokens.final", d.FinalTokens),
			attribute.Int("adkctx.tokens.prefix_reused", reused),
			attribute.Int("adkctx.limit.soft", l.Soft),
			attribute.Int("adkctx.limit.hard", l.Hard),
			attribute.Int("adkctx.turns_dropped", d.TurnsDropped),
			attribute.Bool("adkctx.summary_present", d.SummaryPresent),
		))
	}
}

func (t *telemetry) usage(ctx context.Context, model string, u budget.Usage) {
	attrs := func(typ string) metric.MeasurementOption {
		return metric.WithAttributes(attrModel.String(model), attrOperation.String("generate_content"), attrTokenType.String(typ))
	}
	t.tokenUsage.Record(ctx, int64(u.Prompt), attrs("input"))
	t.tokenUsage.Record(ctx, int64(u.Output), attrs("output"))
	t.requestTokens.Record(ctx, int64(u.Prompt), metric.WithAttributes(attrModel.String(model), attrTokenKind.String("reported")))
}

func (t *telemetry) truncation(ctx context.Context, tool string, omitted int) {
	attrs := metric.WithAttributes(attrToolName.String(tool))
	t.truncations.Add(ctx, 1, attrs)
	t.bytesOmitted.Add(ctx, int64(omitted), attrs)
}

func (t *telemetry) instructions(ctx context.Context, bytes, skipped int) {
	t.instrBytes.Record(ctx, int64(bytes))
	if skipped > 0 {
		t.filesSkipped.Add(ctx, int64(skipped))
	}
}

// compaction records an attempt: metrics, and a span (with the attempt's real start and end)
// linked to the invocation that triggered it.
func (t *telemetry) compaction(a compaction.Attempt) {
	ctx := context.Background()
	attrs := []attribute.KeyValue{attrTrigger.String(string(a.Trigger)), attrOutcome.String(string(a.Outcome))}
	t.compactions.Add(ctx, 1, metric.WithAttributes(attrs...))
	switch a.Outcome {
	case compaction.OutcomeCoalesced, compaction.OutcomeBackoff, compaction.OutcomeClosed:
		return // nothing ran
	}
	t.compactionTime.Record(ctx, a.Duration.Seconds(), metric.WithAttributes(attrs...))
	if a.Outcome == compaction.OutcomeCompacted && a.CompactedTokens > 0 {
		t.compression.Record(ctx, float64(a.OriginalTokens)/float64(a.CompactedTokens))
	}
	if a.FallbackUsed {
		t.fallbacks.Add(ctx, 1)
	}
	for _, err := range []error{a.PrimaryErr, a.Err} {
		if err != nil {
			kind, _ := errkind.Of(err)
			t.summarizerErrs.Add(ctx, 1, metric.WithAttributes(attrErrorType.String(string(kind)), attrSummarizer.String(a.Summarizer)))
		}
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(a.Start), trace.WithSpanKind(trace.SpanKindInternal)}
	if a.Request.Link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: a.Request.Link}))
	}
	_, span := t.tracer.Start(ctx, "adkctx.compaction", opts...)
	span.SetAttributes(append(attrs,
		attrSummarizer.String(a.Summarizer),
		attribute.String("gen_ai.conversation.id", a.Request.Session.ID),
		attribute.String("adkctx.invocation_id", a.Request.Invocation),
		attribute.Int("adkctx.compaction.events_covered", a.EventsCovered),
		attribute.Int("adkctx.compaction.tokens_before", a.OriginalTokens),
		attribute.Int("adkctx.compaction.tokens_after", a.CompactedTokens),
		attribute.Bool("adkctx.compaction.fallback_used", a.FallbackUsed),
	)...)
	if a.Err != nil {
		kind, _ := errkind.Of(a.Err)
		span.SetAttributes(attrErrorType.String(string(kind)))
	}
	span.End(trace.WithTimestamp(a.Start.Add(a.Duration)))
}
