package hooks_test

import (
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"os"
	"strconv"
	"testing"

	"github.com/adkctx/adkctx/compaction"
	"github.com/adkctx/adkctx/internal/scenario"
)

func TestTune(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	th, _ := strconv.Atoi(os.Getenv("THETA"))
	r, _ := strconv.Atoi(os.Getenv("R"))
	w, _ := strconv.Atoi(os.Getenv("W"))
	with := runScenarioWith(t, w, scenario.Invocations, true, compaction.Config{Interval: th, RetainRecentInvocations: r, Synchronous: true})
	f := with.figures
	logFigures(t, "with", f)
	t.Logf("soft %d eff %.0f ratio_vs_74515646 %.2f%% prompt_vs_724130058 %.2f%%", with.soft, f.Effective, 100*f.Effective/74515646, 100*float64(f.Prompt)/724130058)
}

func scenarioLogger(tb testing.TB) *zap.Logger {
	if os.Getenv("TUNELOG") == "" {
		return nil
	}
	return zaptest.NewLogger(tb, zaptest.Level(zapcore.InfoLevel))
}
