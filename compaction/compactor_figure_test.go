package compaction

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/adkctx/adkctx/budget"
)

// The figure: a scripted 200-invocation tool-heavy session (each
// invocation: a user message, 2–3 tool calls with 1–3 KB outputs, an
// answer). The scripted model reports PromptTokenCount =
// budget.EstimateRequest(req.Contents, req.Config); we record it per model call with and without
// compaction (Interval 5 + token trigger at the test model's soft limit).

const figureInvocations = 200

// figureModel is the test model's window: 32K tokens.
var figureModel = budget.ModelInfo{Name: "scripted-model", ContextWindow: 32768, MaxOutputTokens: 4096}

func figureLimit() int {
	return budget.NewLimits(figureModel, true, budget.LimitConfig{}).Soft
}

func hashOf(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// runFigure runs the session and returns the prompt tokens of every model
// call.
func runFigure(tb testing.TB, compact bool) ([]int, int) {
	limit := 0
	if compact {
		limit = figureLimit()
	}
	m := &scriptedModel{toolsPerTurn: 2}
	h := newHarness(tb, harnessOpts{
		cfg:        Config{Interval: 5},
		model:      m,
		outSize:    func(q string) int { return 1024 + int(hashOf(q)%2048) }, // 1–3 KB
		tokenLimit: limit,
		noPlugin:   !compact,
	})
	for i := 0; i < figureInvocations; i++ {
		m.mu.Lock()
		m.toolsPerTurn = 2 + i%2 // 2 or 3 tool calls
		m.mu.Unlock()
		h.turn(fmt.Sprintf("step %d: inspect module %d and report what changed", i, i))
	}
	prompts, _ := m.snapshot()
	if len(h.errs) > 0 {
		tb.Fatalf("compaction errors: %v", h.errs)
	}
	return prompts, len(markersIn(tb, h.raw()))
}

type figure struct {
	calls                      int
	cumulativeWith, cumulative int
	reductionPct               float64
	flatnessPct                float64 // max |p - mean| / mean over the last 50 calls, in %
	maxWith, maxWithout        int
}

func computeFigure(with, without []int) figure {
	f := figure{calls: len(with)}
	for _, p := range with {
		f.cumulativeWith += p
		f.maxWith = max(f.maxWith, p)
	}
	for _, p := range without {
		f.cumulative += p
		f.maxWithout = max(f.maxWithout, p)
	}
	f.reductionPct = 100 * (1 - float64(f.cumulativeWith)/float64(f.cumulative))
	last := with[max(len(with)-50, 0):]
	mean := 0.0
	for _, p := range last {
		mean += float64(p)
	}
	mean /= float64(len(last))
	for _, p := range last {
		d := float64(p) - mean
		if d < 0 {
			d = -d
		}
		f.flatnessPct = max(f.flatnessPct, 100*d/mean)
	}
	return f
}

func TestFigurePromptTokensFlat(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("figure run skipped in -short and -race mode (≈45 s without -race); run: go test -run TestFigure ./compaction/")
	}
	with, markers := runFigure(t, true)
	without, _ := runFigure(t, false)
	if len(with) != len(without) {
		t.Fatalf("model calls differ: %d with, %d without", len(with), len(without))
	}
	f := computeFigure(with, without)
	t.Logf("markers=%d calls=%d limit=%d cumulative: with=%d without=%d reduction=%.1f%% flatness(last 50)=±%.1f%% max prompt: with=%d without=%d",
		markers, f.calls, figureLimit(), f.cumulativeWith, f.cumulative, f.reductionPct, f.flatnessPct, f.maxWith, f.maxWithout)
	if f.reductionPct < 85 {
		t.Errorf("cumulative prompt tokens drop %.1f%%, want ≥ 85%%", f.reductionPct)
	}
	if f.flatnessPct > 20 {
		t.Errorf("last 50 calls deviate up to ±%.1f%% from their mean, want ≤ ±20%%", f.flatnessPct)
	}
}

func BenchmarkFigurePromptTokens(b *testing.B) {
	var f figure
	markers := 0
	for i := 0; i < b.N; i++ {
		var with, without []int
		with, markers = runFigure(b, true)
		without, _ = runFigure(b, false)
		f = computeFigure(with, without)
	}
	b.ReportMetric(float64(markers), "compactions")
	b.ReportMetric(f.reductionPct, "cumulative_reduction_pct")
	b.ReportMetric(f.flatnessPct, "flatness_pct")
	b.ReportMetric(float64(f.maxWith), "max_prompt_tokens")
	b.ReportMetric(float64(f.maxWithout), "max_prompt_tokens_uncompacted")
	b.ReportMetric(float64(f.calls), "model_calls")
}
