package hooks_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/budget"
	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/hooks"
	"github.com/adkctx/adkctx/hooks/internal/llmtest"
	"github.com/adkctx/adkctx/hooks/internal/scenario"
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

// BenchmarkWaitAfterFinalAnswer plays the 200-invocation session (1M window, compaction in the
// background with a summarizer that takes 2 s, as BenchmarkAddedLatency) and reports what a turn
// waits after its final answer reached the caller until runner.Run's iterator ends
// (wait_p50_ms, wait_p99_ms), and of it adkctx's AfterRun (afterrun_p50_ms, afterrun_p99_ms),
// timed by plugins registered before and after adkctx's. The rest is adk-go's: the agent's flow
// ending and the other plugins.
//
//	go test -run '^$' -bench BenchmarkWaitAfterFinalAnswer -benchtime 1x .   (in hooks/)
func BenchmarkWaitAfterFinalAnswer(b *testing.B) {
	for b.Loop() {
		wait, ours := waitAfterFinalAnswer(b, scenario.Invocations)
		b.ReportMetric(quantileMS(wait, 0.5), "wait_p50_ms")
		b.ReportMetric(quantileMS(wait, 0.99), "wait_p99_ms")
		b.ReportMetric(quantileMS(ours, 0.5), "afterrun_p50_ms")
		b.ReportMetric(quantileMS(ours, 0.99), "afterrun_p99_ms")
	}
}

// waitAfterFinalAnswer plays n invocations of the scenario and returns, per turn, the wait after
// its final answer and adkctx's AfterRun within it.
func waitAfterFinalAnswer(b *testing.B, n int) (wait, ours []time.Duration) {
	info := budget.ModelInfo{Name: modelName, ContextWindow: 1_048_576, MaxOutputTokens: 8_192}
	m := llmtest.NewScenario(modelName, 0)
	tools, err := llmtest.ScenarioTools()
	if err != nil {
		b.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "coder", Model: m, Instruction: "You are a careful coding assistant.", Tools: tools})
	if err != nil {
		b.Fatal(err)
	}
	var start, end time.Time // of adkctx's AfterRun
	before, err := plugin.New(plugin.Config{Name: "before", AfterRunCallback: func(agent.InvocationContext) { start = time.Now() }})
	if err != nil {
		b.Fatal(err)
	}
	after, err := plugin.New(plugin.Config{Name: "after", AfterRunCallback: func(agent.InvocationContext) { end = time.Now() }})
	if err != nil {
		b.Fatal(err)
	}
	h, err := hooks.New(adkctx.Config{Models: []budget.ModelInfo{info}, Compaction: &compaction.Config{Interval: 5, Summarizer: &slowSummarizer{delay: 2 * time.Second}}})
	if err != nil {
		b.Fatal(err)
	}
	rc := runner.Config{AppName: appName, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{before}}}
	if rc, err = h.Wire(rc); err != nil {
		b.Fatal(err)
	}
	rc.PluginConfig.Plugins = append(rc.PluginConfig.Plugins, after)
	r, err := runner.New(rc)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		var answered time.Time
		for _, err := range r.Run(b.Context(), "user", "s1", genai.NewContentFromText(scenario.UserMessage(i), genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				b.Fatal(err)
			}
			answered = time.Now()
		}
		wait, ours = append(wait, time.Since(answered)), append(ours, end.Sub(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		b.Fatal(err)
	}
	return wait, ours
}

// quantileMS is the q-quantile of ts in milliseconds.
func quantileMS(ts []time.Duration, q float64) float64 {
	s := slices.Sorted(slices.Values(ts))
	return float64(s[min(int(q*float64(len(s))), len(s)-1)].Microseconds()) / 1000
}
