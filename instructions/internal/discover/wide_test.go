package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adkctx/adkctx/agentsmd"
)

// buildWideTree makes a repository with `depth` nested directories
// l0/l1/.../l{depth-1}, an AGENTS.md in each, and `siblings` sibling
// directories (each with its own AGENTS.md) next to the path at the levels
// listed in wideLevels. It returns the root and the deepest directory.
func buildWideTree(tb testing.TB, depth, siblings int, wideLevels func(level int) bool) (string, string) {
	tb.Helper()
	root := realTempDir(tb)
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		tb.Fatal(err)
	}
	dir := root
	for level := 0; level < depth; level++ {
		if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(fmt.Sprintf("level %d\n", level)), 0o644); err != nil {
			tb.Fatal(err)
		}
		if wideLevels(level) {
			for s := 0; s < siblings; s++ {
				sib := filepath.Join(dir, fmt.Sprintf("sib%04d", s))
				if err := os.Mkdir(sib, 0o755); err != nil {
					tb.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(sib, "AGENTS.md"), []byte("sibling, never read\n"), 0o644); err != nil {
					tb.Fatal(err)
				}
			}
		}
		dir = filepath.Join(dir, fmt.Sprintf("l%02d", level))
		if err := os.Mkdir(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	return root, dir
}

func TestDiscoverWideTreeReadsOnlyThePath(t *testing.T) {
	const depth = 20
	_, leaf := buildWideTree(t, depth, 1000, func(level int) bool { return level == 10 })
	d, err := Discover(leaf, agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != depth {
		t.Fatalf("files = %d, want %d", len(d.Files), depth)
	}
	for i, f := range d.Files {
		if want := fmt.Sprintf("level %d\n", i); f.Content != want || strings.Contains(f.RelPath, "sib") {
			t.Errorf("file %d = %q (%s), want %q", i, f.Content, f.RelPath, want)
		}
	}
	// One open per file on the path; the 1,000 siblings are never touched.
	if d.Stats.FilesOpened != depth {
		t.Errorf("FilesOpened = %d, want %d", d.Stats.FilesOpened, depth)
	}
	// 21 directories (root + 20 levels): one root-marker probe each up to the
	// root, and the candidate names until one is found (override, AGENTS.md)
	// or all are missing in the leaf. A file read costs no Stat: the opened
	// file is checked (fstat).
	if limit := 21*1 + 21*3; d.Stats.StatCalls > limit {
		t.Errorf("StatCalls = %d, want <= %d", d.Stats.StatCalls, limit)
	}
}

// BenchmarkDiscoverWideTree: a 20-level path with 1,000 sibling directories
// (each holding an AGENTS.md) at EVERY level. Reports the file system work
// per Discover call.
func BenchmarkDiscoverWideTree(b *testing.B) {
	const depth = 20
	// Built once: the outer benchmark body runs a single time around b.Run.
	_, leaf := buildWideTree(b, depth, 1000, func(int) bool { return true })
	cfg := agentsmd.Config{NoGlobal: true}
	b.Run("depth20_siblings1000_each_level", func(b *testing.B) {
		var last *Discovery
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			d, err := Discover(leaf, cfg)
			if err != nil {
				b.Fatal(err)
			}
			last = d
		}
		b.ReportMetric(float64(last.Stats.FilesOpened), "files_opened/op")
		b.ReportMetric(float64(last.Stats.StatCalls), "stat_calls/op")
		b.ReportMetric(float64(last.Stats.ResolveCalls), "resolves/op")
		b.ReportMetric(0, "dirs_listed/op") // Discover never lists a directory
		b.ReportMetric(float64(len(last.Files)), "files_used/op")
	})
}

// BenchmarkStale is the cost of checking a cached discovery for changes.
func BenchmarkStale(b *testing.B) {
	_, leaf := buildWideTree(b, 20, 0, func(int) bool { return false })
	d, err := Discover(leaf, agentsmd.Config{NoGlobal: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d.Stale() {
			b.Fatal("stale")
		}
	}
	b.ReportMetric(float64(len(d.probes)), "probes/op")
}
