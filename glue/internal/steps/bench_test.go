package steps

import (
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkctx/adkctx/internal/fixtures"
	"github.com/adkctx/adkctx/processors/request"
	"github.com/adkctx/adkctx/processors/truncate"
)

// BenchmarkTruncateFunctionResponses1000 runs TruncateFunctionResponses on a 1,000-content
// request holding 500 responses: "cut" has 10 outputs of 20 KB that must be cut on every call;
// "within_limits" is the same request after one pass (the steady state when AfterTool already
// truncates), where nothing is cut.
func BenchmarkTruncateFunctionResponses1000(b *testing.B) {
	raw := fixtures.History(1000, false)
	done := &request.LLMRequest{Contents: raw}
	TruncateFunctionResponses(done, truncate.Config{})
	for _, bc := range []struct {
		name    string
		orig    []*genai.Content
		wantCut bool
	}{
		{"cut", raw, true},
		{"within_limits", done.Contents, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			jsonCost := fixtures.JSONCost(b, bc.orig)
			req := &request.LLMRequest{}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				req.Contents = bc.orig
				if st := TruncateFunctionResponses(req, truncate.Config{}); (st.Responses > 0) != bc.wantCut {
					b.Fatalf("Responses = %v", st.Responses)
				}
			}
			perOp := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(jsonCost.Nanoseconds()), "json_ns/op")
			b.ReportMetric(float64(perOp)/float64(jsonCost), "ratio_to_json")
		})
	}
}
