package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adkctx/adkctx"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/corpus"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/replay"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/report"
	"github.com/adkctx/adkctx/cmd/adkctx/internal/source"
	"github.com/adkctx/adkctx/compaction"
)

// The retention figure (issue 28): what the tools told the agent survives compaction, on the
// two classes of real agents' sessions, generated at test time (package corpus): shell-only
// coding agents working on copies of real Go modules from the module cache, every command run
// for real, and structured-tool service agents over a generated airline whose ids are written
// back by later calls. Each session is replayed through adk-go's runner without adkctx and with
// it as the README wires it (default configuration, extractive summarizer, no recall tools) at
// 8K, 16K and 32K windows. Per class and window:
//   - references kept by adkctx ≥ those kept by a plain cut of the same requests to adkctx's
//     hard limit, at no more prompt tokens than that cut;
//   - where every session fits the window, ≥ 99% of the references kept;
//   - no request trimmed while its floor (instruction, tools, summary, task, newest step) fits;
//   - no request refused.
func TestFigureRetention(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("figure run skipped in -short and -race mode; run: cd cmd/adkctx && go test -run TestFigureRetention -v .")
	}
	ctx := context.Background()
	dir := t.TempDir()
	shell, service := filepath.Join(dir, "shell"), filepath.Join(dir, "service")
	if _, err := corpus.Shell(ctx, corpus.ShellOptions{Seed: 1, Dir: shell, WorkDir: filepath.Join(dir, "work"), CommandTimeout: 5 * time.Minute}); err != nil {
		t.Fatalf("shell corpus: %v", err)
	}
	if _, err := corpus.Service(corpus.ServiceOptions{Seed: 1, Dir: service}); err != nil {
		t.Fatalf("service corpus: %v", err)
	}
	var configs []replay.Config
	for _, w := range []int{8_192, 16_384, 32_768} {
		configs = append(configs, replay.Config{Window: w, Summarizer: replay.Extractive,
			Base: adkctx.Config{Compaction: &compaction.Config{}}})
	}
	rp, err := replay.New(replay.Estimator, configs)
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-8s %7s %7s  %-24s %-26s %-14s %-14s %-16s %s\n", "class", "window", "steps",
		"tokens: cut / adkctx", "references kept: cut / adkctx", "user facts", "task head", "compactions", "trimmed (floor fit) · refused")
	for _, class := range []struct{ name, dir string }{{"shell", shell}, {"service", service}} {
		files, err := source.Files([]string{class.dir})
		if err != nil {
			t.Fatal(err)
		}
		totals, _, err := report.Replay(ctx, rp, source.ReadFiles(ctx, files), report.Options{})
		if err != nil {
			t.Fatalf("%s: %v", class.name, err)
		}
		for i, f := range totals {
			w := configs[i].Window
			fmt.Fprintf(&table, "%-8s %7d %7d  %5.1f%% / %5.1f%%          %5.1f%% / %5.1f%%            %5.1f%% / %5.1f%%  %5.1f%% / %5.1f%%  %11d  %d (%d) · %d\n",
				class.name, w, f.Steps, pct(f.TokensPlainCut, f.TokensNoAdkctx), pct(f.TokensAdkctx, f.TokensNoAdkctx),
				pct(int64(f.ReferencesKeptPlainCut), int64(f.References)), pct(int64(f.ReferencesKeptAdkctx), int64(f.References)),
				pct(int64(f.UserFactsKeptPlainCut), int64(f.UserFacts)), pct(int64(f.UserFactsKeptAdkctx), int64(f.UserFacts)),
				pct(int64(f.TaskHeadPlainCut), int64(f.Steps)), pct(int64(f.TaskHeadAdkctx), int64(f.Steps)),
				f.Compactions, f.RequestsTrimmed, f.RequestsTrimmedFloorFit, f.RequestsRefused)
			where := fmt.Sprintf("%s at %d", class.name, w)
			if f.References == 0 || f.Steps == 0 {
				t.Errorf("%s: %d references in %d steps: the corpus measures nothing", where, f.References, f.Steps)
				continue
			}
			if f.ReferencesKeptAdkctx < f.ReferencesKeptPlainCut {
				t.Errorf("%s: adkctx kept %d references, the plain cut %d", where, f.ReferencesKeptAdkctx, f.ReferencesKeptPlainCut)
			}
			if f.TokensAdkctx > f.TokensPlainCut {
				t.Errorf("%s: adkctx sent %d prompt tokens, the plain cut %d", where, f.TokensAdkctx, f.TokensPlainCut)
			}
			if f.LargestNoAdkctx <= rp.Limits(i).Hard && 100*f.ReferencesKeptAdkctx < 99*f.References {
				t.Errorf("%s: every session fits the window, and adkctx kept %d of %d references (want ≥ 99%%)", where, f.ReferencesKeptAdkctx, f.References)
			}
			if f.RequestsTrimmedFloorFit > 0 {
				t.Errorf("%s: %d requests trimmed while their floor fit", where, f.RequestsTrimmedFloorFit)
			}
			if f.RequestsRefused > 0 {
				t.Errorf("%s: %d requests refused", where, f.RequestsRefused)
			}
		}
	}
	t.Logf("retention, replayed (prompt tokens as %% of the sessions without adkctx):\n%s", table.String())
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}
