package instructions

import (
	"errors"
	"fmt"
	"github.com/adkctx/adkctx/internal/config"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/adkctx/adkctx/agentsmd"
)

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// edit rewrites p and moves its mtime 2 s forward of the previous one, so
// an edit within the same second (or the same coarse mtime tick) is seen.
func edit(t testing.TB, p, content string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, p, content)
	next := fi.ModTime().Add(2 * time.Second)
	if err := os.Chtimes(p, next, next); err != nil {
		t.Fatal(err)
	}
}

func tempRepo(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestLoaderCachesAndLogsOncePerChange(t *testing.T) {
	root := tempRepo(t)
	write(t, filepath.Join(root, "AGENTS.md"), "root rules @inc.md\n")
	write(t, filepath.Join(root, "inc.md"), "included")
	leaf := filepath.Join(root, "svc")
	write(t, filepath.Join(leaf, "AGENTS.md"), "svc v1\n")

	core, logs := observer.New(zapcore.InfoLevel)
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name        string
		change      func()
		contains    string
		discoveries int64
		logs        int
	}{
		{"first load", func() {}, "svc v1", 1, 1},
		{"cache hit", func() {}, "svc v1", 1, 1},
		{"leaf edited", func() { edit(t, filepath.Join(leaf, "AGENTS.md"), "svc v2\n") }, "svc v2", 2, 2},
		{"cache hit after edit", func() {}, "svc v2", 2, 2},
		{"import edited", func() { edit(t, filepath.Join(root, "inc.md"), "included v2") }, "included v2", 3, 3},
		{"touched without change: re-read, not logged", func() { edit(t, filepath.Join(root, "inc.md"), "included v2") }, "included v2", 4, 3},
		{"override created", func() { write(t, filepath.Join(leaf, "AGENTS.override.md"), "override\n") }, "override", 5, 4},
		{"unrelated file", func() { write(t, filepath.Join(leaf, "main.go"), "package main") }, "override", 5, 4},
	}
	for _, st := range steps {
		st.change()
		m, err := l.Load(t.Context(), leaf)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if !strings.Contains(m.Text, st.contains) {
			t.Errorf("%s: text lacks %q:\n%s", st.name, st.contains, m.Text)
		}
		if got := l.discoveries.Load(); got != st.discoveries {
			t.Errorf("%s: discoveries = %d, want %d", st.name, got, st.discoveries)
		}
		if got := logs.Len(); got != st.logs {
			t.Errorf("%s: log entries = %d, want %d", st.name, got, st.logs)
		}
	}
	last := logs.All()[logs.Len()-1]
	want := map[string]any{
		"work_dir":      leaf,
		"root":          root,
		"files":         []any{filepath.Join(root, "AGENTS.md"), filepath.Join(leaf, "AGENTS.override.md")},
		"bytes":         int64(len(mustLoad(t, l, leaf).Text)),
		"truncated":     false,
		"skipped":       int64(0),
		"skipped_paths": []any{},
	}
	if diff := cmp.Diff(want, last.ContextMap()); diff != "" {
		t.Errorf("log fields (-want +got):\n%s", diff)
	}
	if last.Message != "instructions: AGENTS.md instructions changed" || last.Level != zapcore.InfoLevel {
		t.Errorf("log entry = %s %q", last.Level, last.Message)
	}
}

func mustLoad(t testing.TB, l *Loader, dir string) Merged {
	t.Helper()
	m, err := l.Load(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoaderReturnsCopies(t *testing.T) {
	root := tempRepo(t)
	write(t, filepath.Join(root, "AGENTS.md"), "x @a.md")
	write(t, filepath.Join(root, "a.md"), "a")
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := mustLoad(t, l, root)
	m.Sources[0].Path = "mutated"
	m.Sources[0].Imports[0] = "mutated"
	again := mustLoad(t, l, root)
	if again.Sources[0].Path != "AGENTS.md" || again.Sources[0].Imports[0] != filepath.Join(root, "a.md") {
		t.Errorf("cache was mutated through a returned value: %+v", again.Sources[0])
	}
}

func TestLoaderBoundedCache(t *testing.T) {
	root := tempRepo(t)
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{MaxCachedDirs: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		dir := filepath.Join(root, fmt.Sprint(i))
		write(t, filepath.Join(dir, "AGENTS.md"), fmt.Sprint("dir ", i))
		mustLoad(t, l, dir)
	}
	if l.cachedDirs() != 2 {
		t.Errorf("cached dirs = %d, want 2", l.cachedDirs())
	}
	// The two most recent are cached: loading them again discovers nothing.
	before := l.discoveries.Load()
	mustLoad(t, l, filepath.Join(root, "4"))
	mustLoad(t, l, filepath.Join(root, "3"))
	if got := l.discoveries.Load(); got != before {
		t.Errorf("discoveries %d → %d, want cache hits", before, got)
	}
	l.forget(filepath.Join(root, "4"))
	if l.cachedDirs() != 1 {
		t.Errorf("after Forget: %d", l.cachedDirs())
	}
}

func TestLoaderConcurrent(t *testing.T) {
	root := tempRepo(t)
	dirs := []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")}
	for i, d := range dirs {
		write(t, filepath.Join(d, "AGENTS.md"), fmt.Sprint("level ", i))
	}
	core, logs := observer.New(zapcore.InfoLevel)
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				d := dirs[(g+i)%len(dirs)]
				m, err := l.Load(t.Context(), d)
				if err != nil {
					t.Error(err)
					return
				}
				if !strings.Contains(m.Text, "level 0") {
					t.Errorf("text lacks the root file: %q", m.Text)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if logs.Len() != len(dirs) || l.discoveries.Load() != int64(len(dirs)) {
		t.Errorf("logs = %d, discoveries = %d, want %d each", logs.Len(), l.discoveries.Load(), len(dirs))
	}
}

func TestLoaderErrors(t *testing.T) {
	var ce *config.Error
	if _, err := NewLoader(agentsmd.Config{}, Config{MaxBytes: 10}, nil); !errors.As(err, &ce) {
		t.Errorf("bad instructions config: %v", err)
	}
	var ace *config.Error
	if _, err := NewLoader(agentsmd.Config{MaxFileBytes: -1}, Config{}, nil); !errors.As(err, &ace) {
		t.Errorf("bad agentsmd config: %v", err)
	}
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	root := tempRepo(t)
	write(t, filepath.Join(root, "d", "AGENTS.md"), "x")
	mustLoad(t, l, filepath.Join(root, "d"))
	if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	var wde *agentsmd.WorkDirError
	if _, err := l.Load(t.Context(), filepath.Join(root, "d")); !errors.As(err, &wde) {
		t.Errorf("removed work dir: err = %v, want *agentsmd.WorkDirError", err)
	}
}

// BenchmarkLoaderLoadHit is the cached path: re-stat the probes, no read.
func BenchmarkLoaderLoadHit(b *testing.B) {
	root := tempRepo(b)
	leaf := filepath.Join(root, "a", "b", "c")
	for _, d := range []string{root, filepath.Join(root, "a"), leaf} {
		write(b, filepath.Join(d, "AGENTS.md"), strings.Repeat("rule\n", 200))
	}
	l, err := NewLoader(agentsmd.Config{NoGlobal: true}, Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	mustLoad(b, l, leaf)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Load(b.Context(), leaf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if l.discoveries.Load() != 1 {
		b.Fatalf("discoveries = %d, want 1 (cache hits only)", l.discoveries.Load())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/load")
}

// BenchmarkMerge merges three files that overflow the default budget.
func BenchmarkMerge(b *testing.B) {
	d := disc(global(strings.Repeat("g", 20000)), file("AGENTS.md", strings.Repeat("r", 20000)), file("a/AGENTS.md", strings.Repeat("l", 5000)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		merge(d, Config{})
	}
	b.ReportMetric(float64(defaultMaxBytes), "budget_bytes")
}
