package truncate

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// mixedOutput builds about size bytes of build-log-like output: short and long lines, some
// non-ASCII, a final error line.
func mixedOutput(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 256)
	for i := 0; b.Len() < size; i++ {
		switch i % 7 {
		case 0:
			fmt.Fprintf(&b, "ok  \tgithub.com/example/pkg%d\t0.%03ds\n", i, i%1000)
		case 3:
			b.WriteString(strings.Repeat("long line with data ", 20))
			b.WriteByte('\n')
		case 5:
			b.WriteString("ビルド中… ünïcödé ✓\n")
		default:
			fmt.Fprintf(&b, "compiling file_%d.go\n", i)
		}
	}
	b.WriteString("FAIL: exit status 1\n")
	return b.Bytes()
}

// BenchmarkText100MB cuts a 100 MB output and, in the same run, counts its newlines with
// bytes.Count; it reports both throughputs and their ratio (target: ratio >= 0.5).
func BenchmarkText100MB(b *testing.B) {
	buf := mixedOutput(100 << 20)
	s := string(buf)
	cfg := Config{}
	var textTime, countTime time.Duration
	var sink int
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		out, st := Text(s, cfg, `full output saved as artifact "x"`)
		t1 := time.Now()
		sink += bytes.Count(buf, []byte{'\n'})
		t2 := time.Now()
		textTime += t1.Sub(t0)
		countTime += t2.Sub(t1)
		if !st.Truncated || !strings.HasSuffix(out, "FAIL: exit status 1\n") {
			b.Fatal("tail lost")
		}
	}
	_ = sink
	mb := float64(len(s)) / (1 << 20) * float64(b.N)
	b.ReportMetric(mb/textTime.Seconds(), "text_MB/s")
	b.ReportMetric(mb/countTime.Seconds(), "bytes.Count_MB/s")
	b.ReportMetric(countTime.Seconds()/textTime.Seconds(), "text/count_speed_ratio")
}

func BenchmarkValue(b *testing.B) {
	big := string(mixedOutput(2 << 20))
	v := map[string]any{"stdout": big, "stderr": big[:4096], "exit_code": 1.0, "files": []any{"a.go", "b.go"}}
	b.ReportAllocs()
	for b.Loop() {
		_, st := Value(v, Config{}, nil)
		if !st.Truncated {
			b.Fatal("not cut")
		}
	}
}
