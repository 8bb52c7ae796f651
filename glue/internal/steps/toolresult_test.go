package steps

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/processors/truncate"
)

func TestTruncateToolResult(t *testing.T) {
	twoMB := strings.Repeat("0123456789abcdef\n", 2<<20/17) + "error: tests failed\n"
	small := map[string]any{"stdout": "ok", "exit_code": 0.0}
	for _, tc := range []struct {
		name      string
		in        map[string]any
		wantCut   bool
		wantSame  bool
		wantTails []string
	}{
		{name: "nil", in: nil, wantSame: true},
		{name: "small", in: small, wantSame: true},
		{
			name:      "2 MB stdout",
			in:        map[string]any{"stdout": twoMB, "exit_code": 1.0},
			wantCut:   true,
			wantTails: []string{"error: tests failed\n"},
		},
		{
			name:      "nested",
			in:        map[string]any{"result": map[string]any{"logs": []any{twoMB}}},
			wantCut:   true,
			wantTails: []string{"error: tests failed\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before map[string]any
			if tc.in != nil {
				before = map[string]any{}
				for k, v := range tc.in {
					before[k] = v
				}
			}
			out, st := TruncateToolResult(tc.in, truncate.Config{}, func(truncate.Cut) string { return `full output saved as artifact "a.txt"` })
			if st.Truncated != tc.wantCut {
				t.Fatalf("Truncated = %v, want %v", st.Truncated, tc.wantCut)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Fatalf("input mutated:\n%s", diff)
			}
			if tc.wantSame {
				if diff := cmp.Diff(tc.in, out); diff != "" {
					t.Fatalf("result changed:\n%s", diff)
				}
				return
			}
			s := flatten(out)
			if len(s) > (truncate.Config{}).WithDefaults().MaxBytes {
				t.Errorf("result strings total %d bytes", len(s))
			}
			if !strings.Contains(s, truncate.MarkerPrefix) || !strings.Contains(s, `artifact "a.txt"`) {
				t.Errorf("no marker with note in result")
			}
			for _, tail := range tc.wantTails {
				if !strings.HasSuffix(s, tail) {
					t.Errorf("tail %q lost", tail)
				}
			}
		})
	}
}

func flatten(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		var b strings.Builder
		for _, e := range x {
			b.WriteString(flatten(e))
		}
		return b.String()
	case []any:
		var b strings.Builder
		for _, e := range x {
			b.WriteString(flatten(e))
		}
		return b.String()
	}
	return ""
}

// BenchmarkTruncateToolResult100MB cuts a tool result holding a 100 MB output (the AfterTool
// path: Value over the map) and reports its speed beside bytes.Count of the same buffer.
func BenchmarkTruncateToolResult100MB(b *testing.B) {
	buf := []byte(strings.Repeat("compiling package with a moderately long line ...\n", (100<<20)/51) + "FAIL\n")
	result := map[string]any{"stdout": string(buf), "stderr": "exit status 1", "exit_code": 1.0}
	var cut, count time.Duration
	for b.Loop() {
		t0 := time.Now()
		out, st := TruncateToolResult(result, truncate.Config{}, func(truncate.Cut) string { return `full output saved as artifact "x"` })
		t1 := time.Now()
		n := bytes.Count(buf, []byte{'\n'})
		t2 := time.Now()
		cut += t1.Sub(t0)
		count += t2.Sub(t1)
		if !st.Truncated || n == 0 || !strings.HasSuffix(out["stdout"].(string), "FAIL\n") {
			b.Fatal("bad cut")
		}
	}
	mb := float64(len(buf)) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/cut.Seconds(), "truncate_MB/s")
	b.ReportMetric(mb/count.Seconds(), "bytes.Count_MB/s")
	b.ReportMetric(count.Seconds()/cut.Seconds(), "truncate/count_speed_ratio")
}
