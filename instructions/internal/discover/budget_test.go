package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/adkctx/adkctx/agentsmd"
)

// buildImportFan writes root/AGENTS.md importing n files of size bytes each
// (imp/f0000.md ...) and returns the top file's size.
func buildImportFan(tb testing.TB, root string, n, size int) int {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "imp"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var top strings.Builder
	top.WriteString("# Rules\n")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("imp/f%04d.md", i)
		fmt.Fprintf(&top, "@%s\n", name)
		line := fmt.Sprintf("rule from file %04d.\n", i)
		body := strings.Repeat(line, size/len(line)+1)[:size]
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte(top.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return top.Len()
}

// TestDiscoverImportsStopAtTheTextBudget: one AGENTS.md importing 300 files
// of 64 KiB. Only the imports the text budget can use are read.
func TestDiscoverImportsStopAtTheTextBudget(t *testing.T) {
	root := realTempDir(t)
	const n, size = 300, 64 << 10
	topSize := buildImportFan(t, root, n, size)
	d, err := Discover(root, agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	// The top file, then imports while the text is below the budget: the
	// first import (64 KiB) already fills the default 32 KiB.
	if want := int64(topSize + size); d.Stats.BytesRead != want {
		t.Errorf("BytesRead = %d, want %d (the top file and one import)", d.Stats.BytesRead, want)
	}
	if d.Stats.FilesOpened != 2 {
		t.Errorf("FilesOpened = %d, want 2", d.Stats.FilesOpened)
	}
	if len(d.Files) != 1 {
		t.Fatalf("files = %d, skipped = %+v", len(d.Files), d.Skipped)
	}
	f := d.Files[0]
	if !strings.HasPrefix(f.Content, "# Rules\nrule from file 0000.\n") || !strings.Contains(f.Content, "\n@imp/f0001.md\n@imp/f0002.md\n") {
		t.Errorf("content starts %q", f.Content[:min(len(f.Content), 60)])
	}
	if diff := cmp.Diff([]string{filepath.Join(root, "imp", "f0000.md")}, f.Imports); diff != "" {
		t.Errorf("imports (-want +got):\n%s", diff)
	}
	reason := fmt.Sprintf("%d import(s) not read: the text already fills the text budget of %d bytes", n-1, defaultTextBudget)
	if diff := cmp.Diff([]agentsmd.Skip{{Path: filepath.Join(root, "AGENTS.md"), Reason: reason}}, d.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	for _, p := range d.probes {
		if strings.HasSuffix(p.Path, "f0001.md") {
			t.Errorf("an unread import was probed: %s", p.Path)
		}
	}
}

// TestDiscoverTextBudgetGoesToTheMostSpecificFiles: files are read from the
// working directory up; once they fill the budget the less specific files
// (and the global file) are not read, but still reported, in output order.
func TestDiscoverTextBudgetGoesToTheMostSpecificFiles(t *testing.T) {
	tmp := realTempDir(t)
	big := func(c string) string { return strings.Repeat(c, 3000) + "\n" }
	writeTree(t, tmp, map[string]string{
		"cfg/AGENTS.md":         big("g"),
		"repo/.git/":            "",
		"repo/AGENTS.md":        big("r"),
		"repo/a/AGENTS.md":      big("a") + "@../shared.md\n",
		"repo/shared.md":        "shared\n",
		"repo/a/b/AGENTS.md":    big("b"),
		"repo/a/b/c/AGENTS.md":  "   \n", // whitespace only: uses no budget
		"repo/a/b/c/CLAUDE.md":  "c\n",
		"repo/a/b/c/d/":         "",
		"repo/a/b/c/d/e.md":     "unrelated",
		"repo/a/b/c/d/AGENTS.d": "unrelated",
	})
	repo := filepath.Join(tmp, "repo")
	cfg := agentsmd.Config{GlobalFile: filepath.Join(tmp, "cfg", "AGENTS.md"), TextBudget: 5000, FallbackNames: []string{"CLAUDE.md"}}
	d, err := Discover(filepath.Join(repo, "a", "b", "c", "d"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range d.Files {
		got = append(got, f.RelPath)
	}
	if diff := cmp.Diff([]string{"a/AGENTS.md", "a/b/AGENTS.md", "a/b/c/CLAUDE.md"}, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// a/AGENTS.md had 5000-3000-1 = 1999 bytes of room (b and c/CLAUDE.md
	// used the rest): its own text fills it, so its import is not read.
	full := "not read: the more specific files already fill the text budget of 5000 bytes"
	wantSkips := []agentsmd.Skip{
		{Path: filepath.Join(tmp, "cfg", "AGENTS.md"), Reason: full},
		{Path: filepath.Join(repo, "AGENTS.md"), Reason: full},
		{Path: filepath.Join(repo, "a", "AGENTS.md"), Reason: "1 import(s) not read: the text already fills the text budget of 5000 bytes"},
		{Path: filepath.Join(repo, "a", "b", "c", "AGENTS.md"), Reason: "empty or whitespace-only file"},
	}
	if diff := cmp.Diff(wantSkips, d.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if want := int64(len(big("a")+"@../shared.md\n") + len(big("b")) + len("   \n") + len("c\n")); d.Stats.BytesRead != want {
		t.Errorf("BytesRead = %d, want %d", d.Stats.BytesRead, want)
	}
}

// TestDiscoverReadLimit: refused files (binary here) use no text budget, so
// a separate limit bounds the bytes one discovery reads: 4 × (TextBudget +
// MaxFileBytes + 1). The most specific files are read first.
func TestDiscoverReadLimit(t *testing.T) {
	tmp := realTempDir(t)
	files := map[string]string{".git/": ""}
	binary := "\x00" + strings.Repeat("b", 1023)
	dir := ""
	for i := 0; i < 12; i++ {
		files[dir+"AGENTS.md"] = binary
		dir += fmt.Sprintf("d%02d/", i)
	}
	files[dir] = ""
	writeTree(t, tmp, files)
	cfg := agentsmd.Config{NoGlobal: true, TextBudget: 1024, MaxFileBytes: 1024}
	limit := 4 * (cfg.TextBudget + cfg.MaxFileBytes + 1)
	d, err := Discover(filepath.Join(tmp, filepath.FromSlash(dir)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if d.Stats.BytesRead > limit {
		t.Errorf("BytesRead = %d > limit %d", d.Stats.BytesRead, limit)
	}
	var reasons []string
	for _, s := range d.Skipped {
		reasons = append(reasons, rel(tmp, s.Path)+": "+s.Reason)
	}
	// A file is opened only while its cap (1025 bytes) still fits under the
	// limit (8196): after eight files (8192 bytes) it does not, so the four
	// nearest the root are not read.
	notRead := fmt.Sprintf("not read: the read limit of %d bytes per discovery is used up", limit)
	var want []string
	dir = ""
	for i := 0; i < 12; i++ {
		r := "binary file (NUL byte in the first 8 KiB)"
		if i < 4 {
			r = notRead
		}
		want = append(want, dir+"AGENTS.md: "+r)
		dir += fmt.Sprintf("d%02d/", i)
	}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

// BenchmarkDiscoverImportAmplification: one AGENTS.md importing 1,000 files
// of 64 KiB, with the default text budget (32 KiB). Reports the bytes read
// and allocated per discovery and their ratio.
func BenchmarkDiscoverImportAmplification(b *testing.B) {
	root := realTempDir(b)
	buildImportFan(b, root, 1000, 64<<10)
	cfg := agentsmd.Config{NoGlobal: true}
	var last *Discovery
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := Discover(root, cfg)
		if err != nil {
			b.Fatal(err)
		}
		last = d
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	allocated := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
	read := float64(last.Stats.BytesRead)
	b.ReportMetric(read, "bytes_read/op")
	b.ReportMetric(allocated, "bytes_allocated/op")
	b.ReportMetric(allocated/read, "allocated_per_read_byte")
	b.ReportMetric(float64(last.Stats.FilesOpened), "files_opened/op")
	b.ReportMetric(float64(len(last.Files[0].Content)), "text_bytes/op")
}
