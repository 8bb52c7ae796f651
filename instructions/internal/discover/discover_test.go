package discover

import (
	"errors"
	"github.com/adkctx/adkctx/internal/config"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/adkctx/adkctx/agentsmd"
)

type gotFile struct {
	Rel     string
	Scope   agentsmd.Scope
	Content string
}

type gotSkip struct {
	Path, Reason string
}

func TestDiscover(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		workDir string // relative to the temp root
		cfg     agentsmd.Config
		root    string // expected root, relative to the temp root
		want    []gotFile
		skips   []gotSkip // paths relative to the temp root
	}{
		{
			name: "nested files root to leaf",
			files: map[string]string{
				"repo/.git/":           "",
				"repo/AGENTS.md":       "root\n",
				"repo/a/AGENTS.md":     "a\n",
				"repo/a/b/AGENTS.md":   "b\n",
				"repo/a/b/c/":          "",
				"repo/x/AGENTS.md":     "not on the path\n",
				"AGENTS.md":            "above the root\n",
				"repo/a/b/c/README.md": "not instructions",
			},
			workDir: "repo/a/b/c",
			root:    "repo",
			want: []gotFile{
				{"AGENTS.md", agentsmd.ScopeProject, "root\n"},
				{"a/AGENTS.md", agentsmd.ScopeProject, "a\n"},
				{"a/b/AGENTS.md", agentsmd.ScopeProject, "b\n"},
			},
		},
		{
			name: "override beats AGENTS.md",
			files: map[string]string{
				"repo/.git/":                  "",
				"repo/AGENTS.md":              "plain\n",
				"repo/AGENTS.override.md":     "override\n",
				"repo/sub/AGENTS.md":          "sub\n",
				"repo/sub/AGENTS.override.md": "sub override\n",
			},
			workDir: "repo/sub",
			root:    "repo",
			want: []gotFile{
				{"AGENTS.override.md", agentsmd.ScopeProject, "override\n"},
				{"sub/AGENTS.override.md", agentsmd.ScopeProject, "sub override\n"},
			},
		},
		{
			name: "fallback names in order, AGENTS.md first",
			files: map[string]string{
				"repo/.git/":            "",
				"repo/CLAUDE.md":        "claude\n",
				"repo/GEMINI.md":        "gemini\n",
				"repo/sub/AGENTS.md":    "agents\n",
				"repo/sub/CLAUDE.md":    "not used\n",
				"repo/sub/s2/GEMINI.md": "gemini 2\n",
			},
			workDir: "repo/sub/s2",
			cfg:     agentsmd.Config{FallbackNames: []string{"CLAUDE.md", "GEMINI.md"}},
			root:    "repo",
			want: []gotFile{
				{"CLAUDE.md", agentsmd.ScopeProject, "claude\n"},
				{"sub/AGENTS.md", agentsmd.ScopeProject, "agents\n"},
				{"sub/s2/GEMINI.md", agentsmd.ScopeProject, "gemini 2\n"},
			},
		},
		{
			name: ".git as a file (worktree or submodule)",
			files: map[string]string{
				"outer/.git/":            "",
				"outer/AGENTS.md":        "outer\n",
				"outer/wt/.git":          "gitdir: ../.git/worktrees/wt\n",
				"outer/wt/AGENTS.md":     "worktree\n",
				"outer/wt/pkg/AGENTS.md": "pkg\n",
			},
			workDir: "outer/wt/pkg",
			root:    "outer/wt",
			want: []gotFile{
				{"AGENTS.md", agentsmd.ScopeProject, "worktree\n"},
				{"pkg/AGENTS.md", agentsmd.ScopeProject, "pkg\n"},
			},
		},
		{
			name: "go.mod below .git with default markers: the repository is the root",
			files: map[string]string{
				"repo/.git/":         "",
				"repo/AGENTS.md":     "repo\n",
				"repo/mod/go.mod":    "module x\n",
				"repo/mod/AGENTS.md": "module\n",
			},
			workDir: "repo/mod",
			root:    "repo",
			want: []gotFile{
				{"AGENTS.md", agentsmd.ScopeProject, "repo\n"},
				{"mod/AGENTS.md", agentsmd.ScopeProject, "module\n"},
			},
		},
		{
			name: "go.mod below .git with both markers: nearest wins, the module is the root",
			files: map[string]string{
				"repo/.git/":                  "",
				"repo/AGENTS.md":              "repo\n",
				"repo/mod/go.mod":             "module x\n",
				"repo/mod/AGENTS.md":          "module\n",
				"repo/mod/internal/AGENTS.md": "internal\n",
			},
			workDir: "repo/mod/internal",
			cfg:     agentsmd.Config{RootMarkers: []string{"go.mod", ".git"}},
			root:    "repo/mod",
			want: []gotFile{
				{"AGENTS.md", agentsmd.ScopeProject, "module\n"},
				{"internal/AGENTS.md", agentsmd.ScopeProject, "internal\n"},
			},
		},
		{
			name: "no marker: only the working directory",
			files: map[string]string{
				"AGENTS.md":   "parent\n",
				"w/AGENTS.md": "here\n",
			},
			workDir: "w",
			root:    "w",
			want:    []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "here\n"}},
		},
		{
			name: "whitespace-only files skipped; the next candidate name is tried",
			files: map[string]string{
				"repo/.git/":                  "",
				"repo/AGENTS.md":              " \n\t\n",
				"repo/sub/AGENTS.override.md": "\n\n",
				"repo/sub/AGENTS.md":          "sub\n",
			},
			workDir: "repo/sub",
			root:    "repo",
			want:    []gotFile{{"sub/AGENTS.md", agentsmd.ScopeProject, "sub\n"}},
			skips: []gotSkip{
				{"repo/AGENTS.md", "empty or whitespace-only file"},
				{"repo/sub/AGENTS.override.md", "empty or whitespace-only file"},
			},
		},
		{
			name: "directory named AGENTS.md is not a regular file",
			files: map[string]string{
				"repo/.git/":      "",
				"repo/AGENTS.md/": "",
				"repo/CLAUDE.md":  "fallback\n",
			},
			workDir: "repo",
			cfg:     agentsmd.Config{FallbackNames: []string{"CLAUDE.md"}},
			root:    "repo",
			want:    []gotFile{{"CLAUDE.md", agentsmd.ScopeProject, "fallback\n"}},
			skips:   []gotSkip{{"repo/AGENTS.md", "not a regular file (d---------)"}},
		},
		{
			name: "binary file skipped",
			files: map[string]string{
				"repo/.git/":     "",
				"repo/AGENTS.md": "text\x00more",
			},
			workDir: "repo",
			root:    "repo",
			skips:   []gotSkip{{"repo/AGENTS.md", "binary file (NUL byte in the first 8 KiB)"}},
		},
		{
			name: "invalid UTF-8 replaced",
			files: map[string]string{
				"repo/.git/":     "",
				"repo/AGENTS.md": "caf\xe9 \xff ok\n",
			},
			workDir: "repo",
			root:    "repo",
			want:    []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "caf\uFFFD \uFFFD ok\n"}},
		},
		{
			name: "imports: relative, ./, ../, nested",
			files: map[string]string{
				"repo/.git/":          "",
				"repo/AGENTS.md":      "top\n@docs/style.md\nsee @./notes.md.\n",
				"repo/docs/style.md":  "style\n@../shared/deep.md\n",
				"repo/shared/deep.md": "deep\n",
				"repo/notes.md":       "notes\n",
			},
			workDir: "repo",
			root:    "repo",
			want:    []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "top\nstyle\ndeep\nsee notes.\n"}},
		},
		{
			name: "imports: emails, mentions, escaped, code spans and fences are not imports",
			files: map[string]string{
				"repo/.git/": "",
				"repo/AGENTS.md": "mail me@example.com, ask @alice, (@x.md) \\@x.md\n" +
					"inline `@x.md` and ``a ` @x.md``\n" +
					"```md\n@x.md\n```\n" +
					"~~~~\n@x.md\n~~~\n~~~~\n" +
					"after @x.md\n",
				"repo/x.md": "X",
			},
			workDir: "repo",
			root:    "repo",
			want: []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "mail me@example.com, ask @alice, (@x.md) \\@x.md\n" +
				"inline `@x.md` and ``a ` @x.md``\n" +
				"```md\n@x.md\n```\n" +
				"~~~~\n@x.md\n~~~\n~~~~\n" +
				"after X\n"}},
		},
		{
			name: "imports: cycle, duplicate, missing, escaping the root",
			files: map[string]string{
				"repo/.git/":     "",
				"repo/AGENTS.md": "A @a.md\nagain @a.md\n@missing.md\n@../outside.md\n@/etc/passwd.md\n",
				"repo/a.md":      "in a @b.md",
				"repo/b.md":      "in b @a.md @AGENTS.md",
				"outside.md":     "secret",
			},
			workDir: "repo",
			root:    "repo",
			want: []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "A in a in b [import @a.md skipped: import cycle] [import @AGENTS.md skipped: import cycle]\n" +
				"again [import @a.md skipped: already included from REPO/a.md]\n" +
				"[import @missing.md skipped: not found]\n" +
				"[import @../outside.md skipped: outside project root]\n" +
				"[import @/etc/passwd.md skipped: outside project root]\n"}},
			skips: []gotSkip{
				{"repo/a.md", "import @a.md in REPO/b.md: import cycle"},
				{"repo/AGENTS.md", "import @AGENTS.md in REPO/b.md: import cycle"},
				{"repo/a.md", "import @a.md in REPO/AGENTS.md: already included from REPO/a.md"},
				{"repo/missing.md", "import @missing.md in REPO/AGENTS.md: not found"},
				{"outside.md", "import @../outside.md in REPO/AGENTS.md: outside project root"},
				{"/etc/passwd.md", "import @/etc/passwd.md in REPO/AGENTS.md: outside project root"},
			},
		},
		{
			name: "imports: depth over 5",
			files: map[string]string{
				"repo/.git/":     "",
				"repo/AGENTS.md": "0 @1.md",
				"repo/1.md":      "1 @2.md",
				"repo/2.md":      "2 @3.md",
				"repo/3.md":      "3 @4.md",
				"repo/4.md":      "4 @5.md",
				"repo/5.md":      "5 @6.md",
				"repo/6.md":      "6",
			},
			workDir: "repo",
			root:    "repo",
			want:    []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "0 1 2 3 4 5 [import @6.md skipped: import depth over 5]"}},
			skips:   []gotSkip{{"repo/6.md", "import @6.md in REPO/5.md: import depth over 5"}},
		},
		{
			name: "symlinks: inside allowed, outside refused",
			files: map[string]string{
				"repo/.git/":             "",
				"repo/real.md":           "real\n",
				"repo/AGENTS.md":         "->real.md",
				"repo/sub/AGENTS.md":     "->../../outside.md",
				"repo/sub/CLAUDE.md":     "claude\n",
				"repo/sub/s/AGENTS.md":   "->nowhere.md",
				"repo/linkdir":           "->..",
				"repo/sub/s/x/AGENTS.md": "via @../../../linkdir/outside.md",
				"outside.md":             "secret\n",
			},
			workDir: "repo/sub/s/x",
			cfg:     agentsmd.Config{FallbackNames: []string{"CLAUDE.md"}},
			root:    "repo",
			want: []gotFile{
				{"AGENTS.md", agentsmd.ScopeProject, "real\n"},
				{"sub/CLAUDE.md", agentsmd.ScopeProject, "claude\n"},
				{"sub/s/x/AGENTS.md", agentsmd.ScopeProject, "via [import @../../../linkdir/outside.md skipped: resolves outside the project root through a symlinked directory]"},
			},
			skips: []gotSkip{
				{"repo/sub/AGENTS.md", "symlink resolves outside the project root"},
				{"repo/sub/s/AGENTS.md", "broken symlink"},
				{"repo/linkdir/outside.md", "import @../../../linkdir/outside.md in REPO/sub/s/x/AGENTS.md: resolves outside the project root through a symlinked directory"},
			},
		},
		{
			name: "global file first, its imports confined to its directory",
			files: map[string]string{
				"cfg/adkctx/AGENTS.md": "global @rules.md @../../repo/AGENTS.md",
				"cfg/adkctx/rules.md":  "rules",
				"repo/.git/":           "",
				"repo/AGENTS.md":       "project\n",
			},
			workDir: "repo",
			cfg:     agentsmd.Config{GlobalFile: "GLOBAL"},
			root:    "repo",
			want: []gotFile{
				{"cfg/adkctx/AGENTS.md", agentsmd.ScopeGlobal, "global rules [import @../../repo/AGENTS.md skipped: outside global directory]"},
				{"AGENTS.md", agentsmd.ScopeProject, "project\n"},
			},
			skips: []gotSkip{{"repo/AGENTS.md", "import @../../repo/AGENTS.md in GLOBAL: outside global directory"}},
		},
		{
			name: "global file may be a symlink (dotfiles); imports stay next to it",
			files: map[string]string{
				"cfg/adkctx/AGENTS.md": "->../../dotfiles/AGENTS.md",
				"dotfiles/AGENTS.md":   "dotfiles @style.md @../../repo/AGENTS.md",
				"cfg/adkctx/style.md":  "style",
				"repo/.git/":           "",
				"repo/AGENTS.md":       "project\n",
			},
			workDir: "repo",
			cfg:     agentsmd.Config{GlobalFile: "GLOBAL"},
			root:    "repo",
			want: []gotFile{
				{"cfg/adkctx/AGENTS.md", agentsmd.ScopeGlobal, "dotfiles style [import @../../repo/AGENTS.md skipped: outside global directory]"},
				{"AGENTS.md", agentsmd.ScopeProject, "project\n"},
			},
			skips: []gotSkip{{"repo/AGENTS.md", "import @../../repo/AGENTS.md in GLOBAL: outside global directory"}},
		},
		{
			name: "missing global file is fine",
			files: map[string]string{
				"repo/.git/":     "",
				"repo/AGENTS.md": "project\n",
			},
			workDir: "repo",
			cfg:     agentsmd.Config{GlobalFile: "GLOBAL"},
			root:    "repo",
			want:    []gotFile{{"AGENTS.md", agentsmd.ScopeProject, "project\n"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmp := realTempDir(t)
			writeTree(t, tmp, tc.files)
			cfg := tc.cfg
			global := filepath.Join(tmp, "cfg", "adkctx", "AGENTS.md")
			if cfg.GlobalFile == "GLOBAL" {
				cfg.GlobalFile = global
			} else {
				cfg.NoGlobal = true
			}
			d, err := Discover(filepath.Join(tmp, filepath.FromSlash(tc.workDir)), cfg)
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(tmp, filepath.FromSlash(tc.root))
			if d.Root != root {
				t.Errorf("Root = %q, want %q", d.Root, root)
			}
			repo := filepath.Join(tmp, "repo")
			fix := func(s string) string {
				s = strings.ReplaceAll(s, global, "GLOBAL")
				return strings.ReplaceAll(s, repo, "REPO")
			}
			var got []gotFile
			for _, f := range d.Files {
				r := f.RelPath
				if f.Scope == agentsmd.ScopeGlobal {
					r = rel(tmp, f.Path)
				}
				got = append(got, gotFile{r, f.Scope, fix(f.Content)})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			var skips []gotSkip
			for _, s := range d.Skipped {
				skips = append(skips, gotSkip{rel(tmp, s.Path), fix(s.Reason)})
			}
			if diff := cmp.Diff(tc.skips, skips); diff != "" {
				t.Errorf("skips (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiscoverAbsoluteSymlinks: os.Root refuses absolute symlinks; a file
// that is one and points inside the project root is still read, by its
// target's name below the root.
func TestDiscoverAbsoluteSymlinks(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{
		"repo/.git/":        "",
		"repo/docs/real.md": "real @style.md\n",
		"repo/style.md":     "style",
		"repo/docs/more.md": "more",
		"repo/link.md":      "->" + filepath.Join(tmp, "repo", "docs", "more.md"),
		"repo/sub/inc.md":   "->" + filepath.Join(tmp, "outside.md"),
		"repo/sub/x.md":     "x @../link.md @inc.md",
		"outside.md":        "secret",
	})
	writeTree(t, tmp, map[string]string{
		"repo/AGENTS.md":     "->" + filepath.Join(tmp, "repo", "docs", "real.md"),
		"repo/sub/AGENTS.md": "->" + filepath.Join(tmp, "repo", "sub", "x.md"),
	})
	d, err := Discover(filepath.Join(tmp, "repo", "sub"), agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []gotFile
	for _, f := range d.Files {
		got = append(got, gotFile{f.RelPath, f.Scope, f.Content})
	}
	// Imports are relative to the link's directory: @style.md in
	// docs/real.md, reached as AGENTS.md, is repo/style.md.
	want := []gotFile{
		{"AGENTS.md", agentsmd.ScopeProject, "real style\n"},
		{"sub/AGENTS.md", agentsmd.ScopeProject, "x more [import @inc.md skipped: symlink resolves outside the project root]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestDiscoverNotes(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{
		".git/":     "",
		"AGENTS.md": "x \xff @a.md",
		"a.md":      "a \xfe",
	})
	d, err := Discover(tmp, agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(tmp, "a.md")
	want := File{
		Path: filepath.Join(tmp, "AGENTS.md"), RelPath: "AGENTS.md", Scope: agentsmd.ScopeProject,
		Content: "x \uFFFD a \uFFFD", Size: 9,
		Notes:   []string{"invalid UTF-8 replaced with U+FFFD", "imported " + a, a + ": invalid UTF-8 replaced with U+FFFD"},
		Imports: []string{a},
	}
	if diff := cmp.Diff([]File{want}, d.Files, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ModTime" }, cmp.Ignore())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDiscoverUnreadable(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{".git/": "", "AGENTS.md": "secret\n", "CLAUDE.md": "fallback\n"})
	p := filepath.Join(tmp, "AGENTS.md")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(p); err == nil {
		f.Close()
		t.Skip("running with privileges that ignore file modes (root); TestDiscoverReadFailures covers open and read errors")
	}
	core, logs := observer.New(zapcore.WarnLevel)
	d, err := Discover(tmp, agentsmd.Config{NoGlobal: true, FallbackNames: []string{"CLAUDE.md"}, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agentsmd.Skip{{Path: p, Reason: "unreadable: open: permission denied"}}, d.Skipped); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(d.Files) != 1 || d.Files[0].RelPath != "CLAUDE.md" {
		t.Errorf("files = %+v", d.Files)
	}
	if logs.Len() != 1 {
		t.Errorf("warnings = %d, want 1", logs.Len())
	}
}

func TestDiscoverSkipIsLogged(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{".git/": "", "AGENTS.md": "\x00binary", "sub/AGENTS.md": "@../nope.md"})
	core, logs := observer.New(zapcore.DebugLevel)
	if _, err := Discover(filepath.Join(tmp, "sub"), agentsmd.Config{NoGlobal: true, Logger: zap.New(core)}); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Level  zapcore.Level
		Msg    string
		Fields map[string]any
	}
	var got []entry
	for _, e := range logs.AllUntimed() {
		got = append(got, entry{e.Level, e.Message, e.ContextMap()})
	}
	want := []entry{
		{zapcore.WarnLevel, "agentsmd: skipped instruction file", map[string]any{"path": filepath.Join(tmp, "AGENTS.md"), "reason": "binary file (NUL byte in the first 8 KiB)"}},
		{zapcore.WarnLevel, "agentsmd: skipped instruction file", map[string]any{"path": filepath.Join(tmp, "nope.md"), "reason": "import @../nope.md in " + filepath.Join(tmp, "sub", "AGENTS.md") + ": not found"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

func TestDiscoverHugeSparseFile(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{".git/": ""})
	p := filepath.Join(tmp, "AGENTS.md")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("# Huge\nhead é"); err != nil {
		t.Fatal(err)
	}
	// A sparse 200 MB file: the tail is zeros, which must never be reached.
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Put text over the cap boundary so that the cut lands inside 'é'.
	const limit = 13 // "# Huge\nhead " is 12 bytes; 'é' is bytes 12-13
	d, err := Discover(tmp, agentsmd.Config{NoGlobal: true, MaxFileBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	if d.Stats.BytesRead > limit+1 {
		t.Errorf("read %d bytes, want at most %d", d.Stats.BytesRead, limit+1)
	}
	if len(d.Files) != 1 {
		t.Fatalf("files = %+v, skipped = %+v", d.Files, d.Skipped)
	}
	got := d.Files[0]
	wantContent := "# Huge\nhead \n[agentsmd: file AGENTS.md truncated: kept the first 12 bytes of 209715200 (per-file cap 13 bytes)]\n"
	if diff := cmp.Diff(wantContent, got.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if !got.Truncated || got.Size != 200<<20 {
		t.Errorf("Truncated=%v Size=%d", got.Truncated, got.Size)
	}

	// With the default cap the NUL bytes of the sparse tail are within the
	// first 8 KiB: the file is skipped as binary after reading 64 KiB+1.
	d, err = Discover(tmp, agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.Stats.BytesRead != defaultMaxFileBytes+1 {
		t.Errorf("read %d bytes, want %d", d.Stats.BytesRead, defaultMaxFileBytes+1)
	}
	if diff := cmp.Diff([]agentsmd.Skip{{Path: p, Reason: "binary file (NUL byte in the first 8 KiB)"}}, d.Skipped); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
}

func TestDiscoverErrors(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{"file": "x"})
	_, err := Discover(filepath.Join(tmp, "file"), agentsmd.Config{NoGlobal: true})
	var wde *agentsmd.WorkDirError
	if !errors.As(err, &wde) || !errors.Is(err, errNotDirectory) {
		t.Errorf("file as workDir: err = %v, want *agentsmd.WorkDirError wrapping errNotDirectory", err)
	}
	_, err = Discover(filepath.Join(tmp, "missing"), agentsmd.Config{NoGlobal: true})
	if !errors.As(err, &wde) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing workDir: err = %v", err)
	}
	if _, err = Discover("", agentsmd.Config{}); !errors.As(err, &wde) {
		t.Errorf("empty workDir: err = %v", err)
	}
	for _, cfg := range []agentsmd.Config{
		{MaxFileBytes: -1},
		{MaxImportDepth: -1},
		{RootMarkers: []string{"a/b"}},
		{RootMarkers: []string{""}},
		{FallbackNames: []string{".."}},
	} {
		var ce *config.Error
		if _, err := Discover(tmp, cfg); !errors.As(err, &ce) {
			t.Errorf("Discover(%+v) err = %v, want *ConfigError", cfg, err)
		}
	}
	if err := (agentsmd.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}

func TestDefaultGlobalFile(t *testing.T) {
	tmp := realTempDir(t)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(tmp, "xdg"))
	writeTree(t, tmp, map[string]string{"xdg/adkctx/AGENTS.md": "global\n", "w/AGENTS.md": "w\n"})
	d, err := Discover(filepath.Join(tmp, "w"), agentsmd.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(tmp, "xdg", "adkctx", "AGENTS.md"); d.GlobalFile != want {
		t.Errorf("GlobalFile = %q, want %q", d.GlobalFile, want)
	}
	if len(d.Files) != 2 || d.Files[0].Scope != agentsmd.ScopeGlobal || d.Files[0].Content != "global\n" {
		t.Errorf("files = %+v", d.Files)
	}
	d, err = Discover(filepath.Join(tmp, "w"), agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 1 || d.GlobalFile != "" {
		t.Errorf("NoGlobal: files = %+v, GlobalFile = %q", d.Files, d.GlobalFile)
	}
}

func TestStale(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{".git/": "", "AGENTS.md": "one @inc.md\n", "inc.md": "inc", "sub/": ""})
	work := filepath.Join(tmp, "sub")
	steps := []struct {
		name   string
		change func(t *testing.T)
		stale  bool
	}{
		{"nothing", func(*testing.T) {}, false},
		{"git activity inside the .git marker directory", func(t *testing.T) { writeTree(t, tmp, map[string]string{".git/index.lock": "x"}) }, false},
		{"import edited", func(t *testing.T) {
			writeTree(t, tmp, map[string]string{})
			touch(t, filepath.Join(tmp, "inc.md"), "inc2")
		}, true},
		{"leaf file created", func(t *testing.T) { writeTree(t, tmp, map[string]string{"sub/AGENTS.md": "new"}) }, true},
		{"override created", func(t *testing.T) { writeTree(t, tmp, map[string]string{"AGENTS.override.md": "o"}) }, true},
		{"nearer root marker", func(t *testing.T) { writeTree(t, tmp, map[string]string{"sub/.git": "gitdir: x"}) }, true},
		{"unrelated file", func(t *testing.T) { writeTree(t, tmp, map[string]string{"sub/other.md": "x"}) }, false},
	}
	for _, st := range steps {
		d, err := Discover(work, agentsmd.Config{NoGlobal: true})
		if err != nil {
			t.Fatal(err)
		}
		st.change(t)
		if got := d.Stale(); got != st.stale {
			t.Errorf("%s: Stale() = %v, want %v", st.name, got, st.stale)
		}
	}
}

// touch rewrites a file and moves its mtime forward so that same-second
// edits are always visible.
func touch(t *testing.T, p, content string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	next := fi.ModTime().Add(2 * 1e9)
	if err := os.Chtimes(p, next, next); err != nil {
		t.Fatal(err)
	}
}

type failingFile struct {
	*os.File
	err error
}

func (f failingFile) Read([]byte) (int, error) { return 0, f.err }

// TestDiscoverReadFailures makes open and read fail without relying on file
// modes (the tests may run as root, which ignores them).
func TestDiscoverReadFailures(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{".git/": "", "AGENTS.md": "root @inc.md\n", "inc.md": "inc", "sub/AGENTS.md": "sub\n", "sub/CLAUDE.md": "claude\n"})
	open := func(t *tree, name string) (openedFile, error) {
		switch filepath.ToSlash(name) {
		case "inc.md":
			return nil, &os.PathError{Op: "openat", Path: name, Err: os.ErrPermission}
		case "sub/AGENTS.md":
			f, err := openNoWait(t, name)
			if err != nil {
				return nil, err
			}
			return failingFile{f.(*os.File), &os.PathError{Op: "read", Path: name, Err: errors.New("input/output error")}}, nil
		}
		return openNoWait(t, name)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	cfg := agentsmd.Config{NoGlobal: true, FallbackNames: []string{"CLAUDE.md"}, Logger: zap.New(core)}
	d := discover(filepath.Join(tmp, "sub"), withDefaults(cfg), open)
	var got []gotFile
	for _, f := range d.Files {
		got = append(got, gotFile{f.RelPath, f.Scope, f.Content})
	}
	want := []gotFile{
		{"AGENTS.md", agentsmd.ScopeProject, "root [import @inc.md skipped: unreadable: open: permission denied]\n"},
		{"sub/CLAUDE.md", agentsmd.ScopeProject, "claude\n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	wantSkips := []agentsmd.Skip{
		{Path: filepath.Join(tmp, "inc.md"), Reason: "import @inc.md in " + filepath.Join(tmp, "AGENTS.md") + ": unreadable: open: permission denied"},
		{Path: filepath.Join(tmp, "sub", "AGENTS.md"), Reason: "unreadable: read: input/output error"},
	}
	if diff := cmp.Diff(wantSkips, d.Skipped); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
	if logs.Len() != 2 {
		t.Errorf("warnings = %d, want 2", logs.Len())
	}
}

// TestDiscoverTree is the tree of the former package example: an import
// expanded, an override winning, an e-mail address left alone, a directory
// with no instruction file, and only the files that contribute opened.
func TestDiscoverTree(t *testing.T) {
	tmp := realTempDir(t)
	writeTree(t, tmp, map[string]string{
		"repo/.git/":                      "",
		"repo/AGENTS.md":                  "Use gofmt. @docs/style.md\n",
		"repo/docs/style.md":              "Short names.",
		"repo/svc/AGENTS.md":              "Ignored: the override wins.\n",
		"repo/svc/AGENTS.override.md":     "Service rules.\n",
		"repo/svc/api/AGENTS.md":          "Mail owner@example.com, not an import.\n",
		"repo/svc/api/handlers/README.md": "not an instruction file",
	})
	d, err := Discover(filepath.Join(tmp, "repo/svc/api/handlers"), agentsmd.Config{NoGlobal: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []gotFile
	for _, f := range d.Files {
		got = append(got, gotFile{f.RelPath, f.Scope, f.Content})
	}
	want := []gotFile{
		{"AGENTS.md", agentsmd.ScopeProject, "Use gofmt. Short names.\n"},
		{"svc/AGENTS.override.md", agentsmd.ScopeProject, "Service rules.\n"},
		{"svc/api/AGENTS.md", agentsmd.ScopeProject, "Mail owner@example.com, not an import.\n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if d.RootMarker != ".git" || d.Stats.FilesOpened != 4 {
		t.Errorf("RootMarker = %q, FilesOpened = %d; want .git, 4", d.RootMarker, d.Stats.FilesOpened)
	}
}
