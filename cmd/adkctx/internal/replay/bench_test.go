package replay

import (
	"bytes"
	"context"
	"runtime"
	"testing"

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

// BenchmarkReplay replays a 120-step shell session without adkctx and with it (extractive
// summarizer, 32K window, recall tools on) and reports replayed steps per second: every model
// call of both runs counts as a step.
func BenchmarkReplay(b *testing.B) {
	s := readFixture(b, "shell.json", fixture.Shell(7, 120))
	rp, err := New(Estimator, []Config{{Window: 32768, Summarizer: Extractive, Recall: true, Base: adkctx.Config{Compaction: &compaction.Config{}}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := rp.Replay(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*s.Steps()*b.N)/b.Elapsed().Seconds(), "steps/s")
	_ = runtime.NumCPU
}
