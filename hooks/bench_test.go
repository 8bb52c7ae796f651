package hooks_test

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/hooks/internal/llmtest"
)

// BenchmarkHugeToolOutput runs one turn whose tool returns a 256 MB output, through adk-go's
// runner with an in-memory artifact service: truncation, the full-output artifact and the rest of
// the turn. It reports the time per turn and the extra memory as multiples of the output size:
// alloc_x (bytes allocated during the turn; the artifact copy is 1) and peak_heap_x (the heap's
// peak above its level before the turn, sampled every millisecond).
//
//	go test -run '^$' -bench BenchmarkHugeToolOutput -benchtime 3x .   (in hooks/)
func BenchmarkHugeToolOutput(b *testing.B) {
	const size = 256 << 20
	line := "compiling package with a moderately long line of output ...\n"
	output := strings.Repeat(line, size/len(line)) + "FAIL: exit status 1\n"
	var allocated, peak uint64
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		m := &llmtest.Model{Script: []llmtest.Step{
			llmtest.Call(&genai.FunctionCall{Name: "build", Args: map[string]any{"target": "//app"}}),
			llmtest.Text("The build failed."),
		}}
		s := newStack(b, m, stackOptions{tools: []tool.Tool{&rawTool{name: "build", result: map[string]any{"output": output}}}})
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := samplePeakHeap()
		b.StartTimer()

		t0 := time.Now()
		if err := s.send(b, "s1", "build the app"); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(t0)

		b.StopTimer()
		p := stop()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		allocated += after.TotalAlloc - before.TotalAlloc
		if p > before.HeapAlloc {
			peak = max(peak, p-before.HeapAlloc)
		}
		if !strings.Contains(llmtest.AllText(m.Requests()[1]), "FAIL: exit status 1") {
			b.Fatal("the output's tail did not reach the model")
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(elapsed.Seconds()/n, "s/turn")
	b.ReportMetric(float64(allocated)/n/float64(len(output)), "alloc_x")
	b.ReportMetric(float64(peak)/float64(len(output)), "peak_heap_x")
}

// samplePeakHeap samples the heap's object bytes every millisecond until the returned function
// is called, which returns the peak.
func samplePeakHeap() func() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}
