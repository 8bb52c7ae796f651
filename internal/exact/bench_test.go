package exact_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/adkctx/adkctx/internal/exact"
	"github.com/adkctx/adkctx/internal/fixtures"
)

// BenchmarkPrint prints every content of the chain benchmark's 1,000-content request and
// reports the cost beside json.Marshal of the same contents (print_vs_json), the work any model
// adapter does on every request anyway.
func BenchmarkPrint(b *testing.B) {
	contents := fixtures.ChainRequest(1000).Contents
	var printing, marshal time.Duration
	var sink uint64
	for b.Loop() {
		start := time.Now()
		for _, c := range contents {
			sink ^= exact.Print(c)
		}
		printing += time.Since(start)
		start = time.Now()
		if _, err := json.Marshal(contents); err != nil {
			b.Fatal(err)
		}
		marshal += time.Since(start)
	}
	_ = sink
	b.ReportMetric(float64(printing)/float64(marshal), "print_vs_json")
}
