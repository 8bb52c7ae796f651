package request_test

import (
	"testing"
	"time"

	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
)

// BenchmarkNormalize1000 runs Normalize on a 1,000-content request, valid (nothing to do) and
// broken (synthetic responses, orphans, reordering), and reports the cost relative to the
// request's JSON encoding.
func BenchmarkNormalize1000(b *testing.B) {
	for _, broken := range []bool{false, true} {
		name := "valid"
		if broken {
			name = "broken"
		}
		b.Run(name, func(b *testing.B) {
			orig := fixtures.History(1000, broken)
			jsonCost := fixtures.JSONCost(b, orig)
			req := &request.LLMRequest{}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req.Contents = orig
				request.Normalize(req)
			}
			perOp := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(jsonCost.Nanoseconds()), "json_ns/op")
			b.ReportMetric(float64(perOp)/float64(jsonCost), "ratio_to_json")
		})
	}
}
