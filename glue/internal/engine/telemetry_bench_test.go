package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	nooptrace "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/glue/internal/steps"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
)

// BenchmarkBeforeModelTelemetry runs BenchmarkBeforeModel's chain (a 1,000-content request
// extending the previous one) on two engines in turn, one with the OpenTelemetry SDK's meter and
// tracer providers (a manual reader; a recording invoke_agent span in the context, which gets the
// budget decision event) and one with no-op providers, and reports the ratio of their costs.
// The figures are medians of per-iteration timings (the two variants alternate their order), so
// that load from other processes on a shared machine does not decide them. Target:
// telemetry_overhead ≤ 1.05.
func BenchmarkBeforeModelTelemetry(b *testing.B) {
	base := fixtures.ChainRequest(1000)
	base.Config.SystemInstruction.Parts = append(base.Config.SystemInstruction.Parts,
		&genai.Part{Text: strings.Repeat("Follow the repository's conventions. ", 200)})
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) }()

	type variant struct {
		e      *Engine
		tracer trace.Tracer
		times  []time.Duration
	}
	variants := []*variant{
		{tracer: tp.Tracer("adk")},
		{tracer: nooptrace.NewTracerProvider().Tracer("adk")},
	}
	for i, cfg := range []adkctx.Config{
		{MeterProvider: mp, TracerProvider: tp},
		{MeterProvider: noopmetric.NewMeterProvider(), TracerProvider: nooptrace.NewTracerProvider()},
	} {
		e, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		prev := *base
		prev.Contents = base.Contents[:len(base.Contents)-2]
		if err := e.BeforeModel(context.Background(), benchCall{}, nil, &prev, nil); err != nil {
			b.Fatal(err)
		}
		variants[i].e = e
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for k := range variants {
			v := variants[(i+k)%len(variants)]
			req := &request.LLMRequest{Model: base.Model, Config: base.Config, Contents: append([]*genai.Content(nil), base.Contents...)}
			st := v.e.state(keyOf(benchCall{}))
			st.mu.Lock()
			sm := st.stream(streamKey{"", "coder"})
			saved := sm.prefix
			st.mu.Unlock()
			ctx, span := v.tracer.Start(context.Background(), "invoke_agent coder")
			start := time.Now()
			if err := v.e.BeforeModel(ctx, benchCall{}, nil, req, nil); err != nil {
				b.Fatal(err)
			}
			v.times = append(v.times, time.Since(start))
			span.End()
			st.mu.Lock()
			sm.prefix = saved
			st.mu.Unlock()
		}
	}
	sdk, noop := median(variants[0].times), median(variants[1].times)
	b.ReportMetric(float64(sdk.Nanoseconds()), "sdk_ns/op")
	b.ReportMetric(float64(noop.Nanoseconds()), "noop_ns/op")
	b.ReportMetric(float64(sdk)/float64(noop), "telemetry_overhead")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTelemetryPerCall is what adkctx's instrumentation costs per model call (the budget
// decision's metrics and span event, and the usage histograms), with the SDK and with no-op
// providers; "span_only" is the cost of adk-go's own invoke_agent span alone, which every
// iteration also starts and ends.
func BenchmarkTelemetryPerCall(b *testing.B) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) }()
	l := budget.Limits{Model: "gemini-2.5-flash", Soft: 700_000, Hard: 950_000}
	d := steps.BudgetDecision{Action: steps.ActionNone, EstimatedTokens: 90_000, PredictedTokens: 100_000, FinalTokens: 100_000}
	reports := []stepReport{&budgetReport{limits: l, decision: d, reused: 80_000, contents: 1_000, sent: true}}
	for _, v := range []struct {
		name string
		mp   metric.MeterProvider
		tp   trace.TracerProvider
		tel  bool
	}{
		{"sdk", mp, tp, true},
		{"span_only", mp, tp, false},
		{"noop", noopmetric.NewMeterProvider(), nooptrace.NewTracerProvider(), true},
	} {
		b.Run(v.name, func(b *testing.B) {
			tel, err := newTelemetry(adkctx.Config{MeterProvider: v.mp, TracerProvider: v.tp}, budget.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			tracer := v.tp.Tracer("adk")
			b.ReportAllocs()
			for b.Loop() {
				ctx, span := tracer.Start(context.Background(), "invoke_agent coder")
				if v.tel {
					tel.decision(ctx, reports)
					tel.usage(ctx, l.Model, budget.Usage{Prompt: 101_000, Output: 300})
				}
				span.End()
			}
		})
	}
}
