package replay

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
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
// largest live heap after any of them (after a GC): it stays that of one session whatever n.
func BenchmarkReplayCorpus(b *testing.B) {
	data := fixture.Shell(9, 100)
	rp, err := New(Estimator, []Config{{Window: 16384, Summarizer: Extractive, Recall: true, Base: adkctx.Config{Compaction: &compaction.Config{}}}})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			var peak uint64
			var ms runtime.MemStats
			for b.Loop() {
				for range n {
					s := readFixture(b, "shell.json", data)
					if _, err := rp.Replay(context.Background(), s); err != nil {
						b.Fatal(err)
					}
					runtime.GC()
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
