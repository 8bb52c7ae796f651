package budget

import (
	"testing"
	"time"

	"github.com/adkctx/adkctx/internal/fixtures"
)

// BenchmarkEstimatorContent estimates the 1,000 contents of the chain
// benchmark's history one EstimateContent call at a time (as
// processors/request.EnforceBudget does), on a fresh adk-go-style clone
// each iteration (clone not timed): "plain" without an Estimator,
// "estimator" through a long-lived one, "each" through
// Estimator.EstimateEach (one call for all contents). Reports ns per
// content.
//
//	go test -run '^$' -bench BenchmarkEstimatorContent -benchmem ./budget/
func BenchmarkEstimatorContent(b *testing.B) {
	base := fixtures.ChainRequest(1000)
	for _, bc := range []struct {
		name string
		e    *Estimator
		each bool
	}{{"plain", nil, false}, {"estimator", NewEstimator(0), false}, {"each", NewEstimator(0), true}} {
		b.Run(bc.name, func(b *testing.B) {
			bc.e.EstimateRequest(base)
			var ns time.Duration
			total := 0
			sizes := make([]int, len(base.Contents))
			for b.Loop() {
				r := cloneRequest(base)
				t0 := time.Now()
				if bc.each {
					total = bc.e.EstimateEach(r.Contents, sizes)
				} else {
					total = 0
					for _, c := range r.Contents {
						total += bc.e.EstimateContent(c)
					}
				}
				ns += time.Since(t0)
			}
			if want := EstimateContents(base.Contents); total < want-len(base.Contents) || total > want+len(base.Contents) {
				b.Fatalf("total %d, want about %d", total, want)
			}
			b.ReportMetric(float64(ns.Nanoseconds())/float64(b.N)/float64(len(base.Contents)), "ns/content")
		})
	}
}
