package request_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// BenchmarkChain runs the BeforeModel processors (instructions, truncate, normalize, budget) on a
// 1,000-content request and reports their cost beside json.Marshal of the same request — the
// work any model adapter does anyway. Target: chain_vs_json ≤ 0.20 (not met without a cache of
// the estimates: see README).
func BenchmarkChain(b *testing.B) {
	base := fixtures.ChainRequest(1000)
	limits := budget.LimitsFor(budget.NewRegistry(), "gemini-2.5-flash", budget.LimitConfig{})
	instructions := strings.Repeat("Follow the repository's conventions. ", 200)
	cfg := truncate.Config{}

	var chain, marshal time.Duration
	b.ReportAllocs()
	for b.Loop() {
		req := *base
		start := time.Now()
		request.InjectInstructions(&req, instructions)
		request.TruncateFunctionResponses(&req, cfg)
		request.Normalize(&req)
		if _, err := request.EnforceBudget(&req, request.BudgetInput{Limits: limits}); err != nil {
			b.Fatal(err)
		}
		chain += time.Since(start)

		start = time.Now()
		if _, err := json.Marshal(base.Contents); err != nil {
			b.Fatal(err)
		}
		marshal += time.Since(start)
	}
	b.ReportMetric(float64(chain.Nanoseconds())/float64(b.N), "chain_ns/op")
	b.ReportMetric(float64(marshal.Nanoseconds())/float64(b.N), "json_ns/op")
	b.ReportMetric(float64(chain)/float64(marshal), "chain_vs_json")
}
