package engine

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/glue/internal/compactor"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/internal/errkind"
)

// Instrumentation is the OpenTelemetry instrumentation scope of adkctx's meter and tracer.
const Instrumentation = "github.com/adkctx/adkctx"

// Attribute keys. gen_ai.* and error.type follow the OpenTelemetry semantic conventions; the
// rest are adkctx's. No metric attribute carries a session id or conversation text: cardinality
// is bounded by the models, the tools, the summarizers and the fixed value sets below.
const (
	AttrModel      = attribute.Key("gen_ai.request.model")
	AttrProvider   = attribute.Key("gen_ai.provider.name")
	AttrOperation  = attribute.Key("gen_ai.operation.name")
	AttrTokenType  = attribute.Key("gen_ai.token.type")
	AttrToolName   = attribute.Key("gen_ai.tool.name")
	AttrSession    = attribute.Key("gen_ai.conversation.id") // spans only
	AttrErrorType  = attribute.Key("error.type")
	AttrAction     = attribute.Key("adkctx.budget.action")
	AttrTokenKind  = attribute.Key("adkctx.token.kind")
	AttrTrigger    = attribute.Key("adkctx.compaction.trigger")
	AttrOutcome    = attribute.Key("adkctx.compaction.outcome")
	AttrSummarizer = attribute.Key("adkctx.compaction.summarizer")
)

// Metric names.
const (
	MetricDecisions      = "adkctx.budget.decisions"
	MetricTurnsDropped   = "adkctx.budget.turns_dropped"
	MetricRequestTokens  = "adkctx.request.tokens"
	MetricTokenUsage     = "gen_ai.client.token.usage"
	MetricCompactions    = "adkctx.compaction.attempts"
	MetricDuration       = "adkctx.compaction.duration"
	MetricCompression    = "adkctx.compaction.compression_ratio"
	MetricSummarizerErrs = "adkctx.compaction.summarizer.errors"
	MetricFallbacks      = "adkctx.compaction.fallbacks"
	MetricTruncations    = "adkctx.tool.truncations"
	MetricOmitted        = "adkctx.tool.omitted"
	MetricInstrBytes     = "adkctx.instructions.injected"
	MetricFilesSkipped   = "adkctx.instructions.files_skipped"
)

// Span and span event names.
const (
	SpanCompaction      = "adkctx.compaction"
	EventBudgetDecision = "adkctx.budget_decision"
	EventTruncation     = "adkctx.tool_output_truncated"
)

// Bucket boundaries. The SDK's default histogram buckets end at 10,000: too low for tokens and
// bytes. Token buckets are the GenAI semantic conventions' advice for gen_ai.client.token.usage.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}
	byteBuckets     = []float64{256, 1024, 4096, 16384, 32768, 65536, 262144, 1048576}
	durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120}
	ratioBuckets    = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}
)

// telemetry holds the instruments. With no SDK installed the global providers are no-ops and a
// model call costs a few nanoseconds of telemetry.
type telemetry struct {
	tracer trace.Tracer

	decisions      metric.Int64Counter
	turnsDropped   metric.Int64Counter
	requestTokens  metric.Int64Histogram
	tokenUsage     metric.Int64Histogram
	compactions    metric.Int64Counter
	compactionTime metric.Float64Histogram
	compression    metric.Float64Histogram
	summarizerErrs metric.Int64Counter
	fallbacks      metric.Int64Counter
	truncations    metric.Int64Counter
	omitted        metric.Int64Counter
	instrBytes     metric.Int64Histogram
	filesSkipped   metric.Int64Counter

	// Attribute sets per model, built once: building a set costs more than recording it.
	mu       sync.Mutex
	byModel  map[string]*modelOpts
	registry *budget.Registry // names a model's provider
}

// Token kinds of adkctx.request.tokens, in the order of modelOpts.kinds.
var tokenKinds = [...]string{"estimated", "predicted", "final", "prefix_reused", "reported"}

var actions = [...]steps.Action{steps.ActionNone, steps.ActionCompactionNeeded, steps.ActionTrimmed, steps.ActionRejected}

// modelOpts are the measurement options of one model.
type modelOpts struct {
	model         metric.MeasurementOption
	actions       [len(actions)]metric.MeasurementOption
	kinds         [len(tokenKinds)]metric.MeasurementOption
	input, output metric.MeasurementOption
}

func (t *telemetry) opts(model string) *modelOpts {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.byModel[model]; ok {
		return o
	}
	if len(t.byModel) >= maxModels {
		clear(t.byModel) // hostile input: many model names
	}
	m := AttrModel.String(model)
	o := &modelOpts{model: metric.WithAttributes(m)}
	for i, a := range actions {
		o.actions[i] = metric.WithAttributes(m, AttrAction.String(string(a)))
	}
	for i, k := range tokenKinds {
		o.kinds[i] = metric.WithAttributes(m, AttrTokenKind.String(k))
	}
	info, _ := t.registry.Lookup(model)
	op, provider := AttrOperation.String("generate_content"), AttrProvider.String(info.Provider)
	o.input = metric.WithAttributes(m, op, provider, AttrTokenType.String("input"))
	o.output = metric.WithAttributes(m, op, provider, AttrTokenType.String("output"))
	t.byModel[model] = o
	// The model's fixed series exist from its first call, at 0 (see zeroSeries).
	ctx := context.Background()
	for _, a := range o.actions {
		t.decisions.Add(ctx, 0, a)
	}
	t.turnsDropped.Add(ctx, 0, o.model)
	return o
}

func (o *modelOpts) action(a steps.Action) metric.MeasurementOption {
	for i, known := range actions {
		if a == known {
			return o.actions[i]
		}
	}
	return metric.WithAttributes(AttrAction.String(string(a))) // not reached: the actions are fixed
}

// newTelemetry builds the instruments on cfg's providers (nil: the global ones); registry names
// the models' providers.
func newTelemetry(cfg adkctx.Config, registry *budget.Registry) (*telemetry, error) {
	mp, tp := cfg.MeterProvider, cfg.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	m := mp.Meter(Instrumentation)
	t := &telemetry{tracer: tp.Tracer(Instrumentation), byModel: map[string]*modelOpts{}, registry: registry}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, unit, desc string, buckets []float64) metric.Int64Histogram {
		h, err := m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	fhistogram := func(name, unit, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	t.decisions = counter(MetricDecisions, "{decision}", "Budget decisions, one per model call, by action (trimmed and rejected are the trims and refusals) and model.")
	t.turnsDropped = counter(MetricTurnsDropped, "{turn}", "Whole user turns left out of trimmed requests, by model.")
	t.requestTokens = histogram(MetricRequestTokens, "{token}", "Request size per model call, by kind: estimated, predicted (calibrated), final (as sent), prefix_reused (shared with the previous request), reported (by the model).", tokenBuckets)
	t.tokenUsage = histogram(MetricTokenUsage, "{token}", "Tokens the model reported per call (input and output), by model and provider.", tokenBuckets)
	t.compactions = counter(MetricCompactions, "{attempt}", "Compaction attempts by trigger and outcome.")
	t.compactionTime = fhistogram(MetricDuration, "s", "Duration of the compaction attempts that ran, by trigger and outcome.", durationBuckets)
	t.compression = fhistogram(MetricCompression, "1", "Tokens replaced divided by summary tokens, per stored compaction, by trigger.", ratioBuckets)
	t.summarizerErrs = counter(MetricSummarizerErrs, "{error}", "Summarizer failures by error kind and summarizer.")
	t.fallbacks = counter(MetricFallbacks, "{compaction}", "Compactions whose summary came from the fallback summarizer, by the primary's error kind.")
	t.truncations = counter(MetricTruncations, "{result}", "Tool results cut before they were stored, by tool.")
	t.omitted = counter(MetricOmitted, "By", "Bytes of tool output kept out of the prompt, by tool.")
	t.instrBytes = histogram(MetricInstrBytes, "By", "AGENTS.md bytes injected into the system instruction, per model call.", byteBuckets)
	t.filesSkipped = counter(MetricFilesSkipped, "{file}", "AGENTS.md files left out of the injected instructions (unreadable, special, outside the root, over budget), counted on each model call.")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t.zeroSeries(cfg.Compaction != nil, cfg.Instructions != nil)
	return t, nil
}

// Value sets of the compaction attributes (compaction.Trigger, compactor.Outcome).
var (
	triggers = [...]compaction.Trigger{compaction.TriggerInvocations, compaction.TriggerTokens, compaction.TriggerManual}
	outcomes = [...]compactor.Outcome{compactor.OutcomeCompacted, compactor.OutcomeNothing, compactor.OutcomeCoalesced,
		compactor.OutcomeBackoff, compactor.OutcomeConflict, compactor.OutcomeFailed, compactor.OutcomeCanceled, compactor.OutcomeClosed}
)

// zeroSeries adds 0 to the counters whose attribute sets are fixed, so a Prometheus scrape shows
// them before their first increment and a rate() sees that increment: the compaction attempts by
// trigger and outcome and the fallbacks by error kind (when compaction is on), the skipped
// AGENTS.md files (when instructions are on). A model's decisions by action and its dropped turns
// start at its first call (opts). With the global meter provider, only an SDK installed before
// New sees them.
func (t *telemetry) zeroSeries(compactionOn, instructionsOn bool) {
	ctx := context.Background()
	if compactionOn {
		for _, tr := range triggers {
			for _, o := range outcomes {
				t.compactions.Add(ctx, 0, metric.WithAttributes(AttrTrigger.String(string(tr)), AttrOutcome.String(string(o))))
			}
		}
		for _, k := range errkind.Kinds() {
			t.fallbacks.Add(ctx, 0, metric.WithAttributes(AttrErrorType.String(string(k))))
		}
	}
	if instructionsOn {
		t.filesSkipped.Add(ctx, 0)
	}
}

// decision records a request's step reports (in the chain's order): each report's metric points,
// and one adkctx.budget_decision event with each report's attributes on the span current in
// BeforeModel. adk-go v1 starts its generate_content span only after the before-model
// callbacks, so the current span there is the agent's invoke_agent span. Metrics are recorded
// without the span (each report records on context.Background()): exemplars would cost more
// than the measurements.
func (t *telemetry) decision(ctx context.Context, reports []stepReport) {
	for _, r := range reports {
		if r != nil {
			r.record(t)
		}
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 16)
		for _, r := range reports {
			if r != nil {
				attrs = r.spanAttrs(attrs)
			}
		}
		span.AddEvent(EventBudgetDecision, trace.WithAttributes(attrs...))
	}
}

func (t *telemetry) usage(_ context.Context, model string, u budget.Usage) {
	ctx := context.Background() // no exemplars, as in decision
	if !t.tokenUsage.Enabled(ctx) && !t.requestTokens.Enabled(ctx) {
		return
	}
	o := t.opts(model)
	t.tokenUsage.Record(ctx, int64(u.Prompt), o.input)
	t.tokenUsage.Record(ctx, int64(u.Output), o.output)
	t.requestTokens.Record(ctx, int64(u.Prompt), o.kinds[4])
}

// truncation records a cut tool result: metrics, and an event on the current span (adk-go's
// execute_tool span, which covers the after-tool callbacks).
func (t *telemetry) truncation(ctx context.Context, tool string, original, kept int) {
	if mctx := context.Background(); t.truncations.Enabled(mctx) || t.omitted.Enabled(mctx) {
		attrs := metric.WithAttributes(AttrToolName.String(tool))
		t.truncations.Add(mctx, 1, attrs)
		t.omitted.Add(mctx, int64(original-kept), attrs)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(EventTruncation, trace.WithAttributes(AttrToolName.String(tool),
			attribute.Int("adkctx.bytes.original", original), attribute.Int("adkctx.bytes.kept", kept)))
	}
}

// compaction records an attempt: metrics, and, for an attempt that did work, a span with the
// attempt's real start and end, linked to the span of the invocation that triggered it. The
// span is the root of its own trace: a background compaction outlives the invocation.
func (t *telemetry) compaction(a compactor.Attempt) {
	ctx := context.Background()
	attrs := []attribute.KeyValue{AttrTrigger.String(string(a.Trigger)), AttrOutcome.String(string(a.Outcome))}
	t.compactions.Add(ctx, 1, metric.WithAttributes(attrs...))
	switch a.Outcome {
	case compactor.OutcomeCoalesced, compactor.OutcomeBackoff, compactor.OutcomeClosed:
		return // nothing ran
	}
	t.compactionTime.Record(ctx, a.Duration.Seconds(), metric.WithAttributes(attrs...))
	if a.Outcome == compactor.OutcomeCompacted && a.CompactedTokens > 0 {
		t.compression.Record(ctx, float64(a.OriginalTokens)/float64(a.CompactedTokens), metric.WithAttributes(attrs[0]))
	}
	primaryKind := errkind.None
	for i, err := range []error{a.PrimaryErr, a.Err} {
		var se *compaction.SummarizerError
		if !errors.As(err, &se) {
			continue // a store failure is not the summarizer's
		}
		kind, _ := errkind.Of(err)
		if i == 0 {
			primaryKind = kind
		}
		t.summarizerErrs.Add(ctx, 1, metric.WithAttributes(AttrErrorType.String(string(kind)), AttrSummarizer.String(se.Summarizer)))
	}
	if a.FallbackUsed {
		t.fallbacks.Add(ctx, 1, metric.WithAttributes(AttrErrorType.String(string(primaryKind))))
	}
	if a.Outcome == compactor.OutcomeNothing && a.Summarizer == "" {
		return // looked and found nothing to summarize: not worth a span per invocation
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(a.Start), trace.WithSpanKind(trace.SpanKindInternal), trace.WithNewRoot()}
	if a.Request.Link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: a.Request.Link}))
	}
	_, span := t.tracer.Start(ctx, SpanCompaction, opts...)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(append(attrs,
		AttrSummarizer.String(a.Summarizer),
		AttrSession.String(a.Request.Session.ID),
		attribute.String("adkctx.invocation_id", a.Request.Invocation),
		attribute.Int("adkctx.compaction.events_covered", a.EventsCovered),
		attribute.Int("adkctx.compaction.invocations_covered", a.InvocationsCovered),
		attribute.Int("adkctx.compaction.tokens_before", a.OriginalTokens),
		attribute.Int("adkctx.compaction.tokens_after", a.CompactedTokens),
		attribute.Bool("adkctx.compaction.fallback_used", a.FallbackUsed),
	)...)
	if a.Reason != "" {
		span.SetAttributes(attribute.String("adkctx.compaction.reason", a.Reason))
	}
	if u := a.SummarizerUsage; u.Prompt > 0 {
		span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", u.Prompt), attribute.Int("gen_ai.usage.output_tokens", u.Output),
			attribute.Int("gen_ai.usage.cache_read.input_tokens", u.Cached),
			attribute.Bool("adkctx.compaction.summarizer_shared_prefix", a.SharedPrefix))
	}
	if a.Err != nil {
		kind, _ := errkind.Of(a.Err)
		span.SetAttributes(AttrErrorType.String(string(kind)))
		span.SetStatus(codes.Error, string(kind))
	}
	span.End(trace.WithTimestamp(a.Start.Add(a.Duration)))
}
