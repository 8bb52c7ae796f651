package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/processors/response"
)

// series reads every data point of adkctx's counters and histograms from reader, as the
// attribute set's encoding (key=value, sorted) → value (a histogram's count).
func series(t *testing.T, reader sdkmetric.Reader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	add := func(name string, set attribute.Set, v int64) {
		if out[name] == nil {
			out[name] = map[string]int64{}
		}
		out[name][set.Encoded(attribute.DefaultEncoder())] = v
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, int64(p.Count))
				}
			}
		}
	}
	return out
}

// gen_ai.client.token.usage carries gen_ai.provider.name, which the semantic conventions require:
// from Config.Models when an entry names it, else derived from the model's name.
func TestTokenUsageNamesTheProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	e, err := New(adkctx.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		Models: []budget.ModelInfo{{Name: "gemini-2.5-flash", Provider: "gcp.gemini"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, model := range []string{"gemini-2.5-flash", "claude-sonnet-4-5", "offline-coder"} {
		call := testCall{inv: string(rune('a' + i))}
		req := newRequest("hello")
		req.Model = model
		if err := e.BeforeModel(context.Background(), call, nil, req, nil); err != nil {
			t.Fatal(err)
		}
		e.AfterModel(context.Background(), call, &response.LLMResponse{Content: genai.NewContentFromText("hi", genai.RoleModel),
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 2}})
	}
	got := series(t, reader)[MetricTokenUsage]
	want := map[string]int64{}
	for model, provider := range map[string]string{"gemini-2.5-flash": "gcp.gemini", "claude-sonnet-4-5": "anthropic", "offline-coder": "_OTHER"} {
		for _, typ := range []string{"input", "output"} {
			want["gen_ai.operation.name=generate_content,gen_ai.provider.name="+provider+",gen_ai.request.model="+model+",gen_ai.token.type="+typ] = 1
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s data points (-want +got):\n%s", MetricTokenUsage, diff)
	}
}

// The counters whose attribute sets are fixed exist from the start, at 0, so a scrape shows them
// and a rate() sees their first increment: compaction attempts by trigger and outcome and
// fallbacks by error kind (with compaction on), skipped AGENTS.md files (with instructions on);
// a model's decisions by action and its dropped turns from its first call.
func TestFixedSeriesStartAtZero(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	cfg := adkctx.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		Compaction: &compaction.Config{}, Instructions: &adkctx.InstructionsConfig{WorkDir: t.TempDir()}}
	cfg.Instructions.Discovery.NoGlobal = true
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	count := func(s map[string]map[string]int64) map[string]int {
		n := map[string]int{}
		for name, pts := range s {
			for _, v := range pts {
				if v == 0 {
					n[name]++
				}
			}
		}
		return n
	}
	want := map[string]int{MetricCompactions: 3 * 8, MetricFallbacks: 16, MetricFilesSkipped: 1}
	if diff := cmp.Diff(want, count(series(t, reader))); diff != "" {
		t.Errorf("zero series after New (-want +got):\n%s", diff)
	}

	if err := e.BeforeModel(context.Background(), testCall{inv: "i"}, nil, newRequest("hello"), nil); err != nil {
		t.Fatal(err)
	}
	s := series(t, reader)
	if got := s[MetricDecisions]; len(got) != 4 || got["adkctx.budget.action=none,gen_ai.request.model=gemini-2.5-flash"] != 1 {
		t.Errorf("%s after one call: %v, want the four actions, none at 1", MetricDecisions, got)
	}
	if got := s[MetricTurnsDropped]; len(got) != 1 || got["gen_ai.request.model=gemini-2.5-flash"] != 0 {
		t.Errorf("%s after one call: %v, want one series at 0", MetricTurnsDropped, got)
	}

	// Off is off: no compaction or instruction series without them.
	reader = sdkmetric.NewManualReader()
	if _, err := New(adkctx.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}); err != nil {
		t.Fatal(err)
	}
	if s := series(t, reader); len(s) != 0 {
		t.Errorf("series with compaction and instructions off: %v", s)
	}
}
