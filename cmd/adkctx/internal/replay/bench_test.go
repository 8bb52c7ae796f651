package replay

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/fixture"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/trajectory"
	"github.com/adkctx/adkctx/compaction"
)

func readFixture(tb testing.TB, name string, data []byte) *trajectory.Session {
	tb.Helper()
	for s, err := range trajectory.Read(name, bytes.NewReader(data)) {
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	tb.Fatal("no session")
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReplay replays a 120-step shell session without adkctx and with it (extractive
// summarizer, 32K window, recall tools on) and reports replayed steps per second of wall time
// and per second of CPU time (every model call of both runs is a step). The CPU figure holds
// on a shared machine, where wall time depends on the neighbours.
func BenchmarkReplay(b *testing.B) {
	s := readFixture(b, "shell.json", fixture.Shell(7, 120))
	for _, window := range []int{8192, 32768} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			rp, err := New(Estimator, []Config{{Window: window, Summarizer: Extractive, Recall: true, Base: adkctx.Config{Compaction: &compaction.Config{}}}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			cpu := cpuTime()
			for b.Loop() {
				if _, err := rp.Replay(ctx, s); err != nil {
					b.Fatal(err)
				}
			}
			steps := float64(2 * s.Steps() * b.N)
			b.ReportMetric(steps/b.Elapsed().Seconds(), "steps/s")
			b.ReportMetric(steps/(cpuTime()-cpu).Seconds(), "steps/cpu-s")
		})
	}
}

// BenchmarkReplayCorpus replays n sessions in a row, as the command does, and reports the
// largest heap seen while they ran (sampled every millisecond: live objects and garbage not yet
// collected) and the largest heap left after any of them (after a GC): both stay those of one
// session whatever n.
func BenchmarkReplayCorpus(b *testing.B) {
	data := fixture.Shell(9, 100)
	rp, err := New(Estimator, []Config{{Window: 16384, Summarizer: Extractive, Recall: true, Base: adkctx.Config{Compaction: &compaction.Config{}}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			var retained uint64
			var ms runtime.MemStats
			peak := sampleHeap()
			for b.Loop() {
				for range n {
					s := readFixture(b, "shell.json", data)
					if _, err := rp.Replay(context.Background(), s); err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					runtime.ReadMemStats(&ms)
					retained = max(retained, ms.HeapAlloc)
				}
			}
			b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(retained)/(1<<20), "retained-heap-MB")
		})
	}
}

// sampleHeap samples the heap's objects (runtime/metrics, no stop-the-world) every millisecond
// until the returned function is called, which returns the largest sample.
func sampleHeap() func() uint64 {
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}
