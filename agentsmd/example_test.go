package agentsmd_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions"
)

// A global file, an import, an empty override that does not silence
// AGENTS.md, and a fallback name. Each source says its scope; the empty
// file is reported as skipped.
func ExampleConfig() {
	tmp, err := os.MkdirTemp("", "agentsmd-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	if tmp, err = filepath.EvalSymlinks(tmp); err != nil {
		panic(err)
	}
	files := map[string]string{
		"home/rules.md":               "Answer briefly.\n",
		"repo/AGENTS.md":              "Use gofmt. @docs/style.md\n",
		"repo/docs/style.md":          "Short names.",
		"repo/svc/AGENTS.override.md": "",
		"repo/svc/AGENTS.md":          "Service rules.\n",
		"repo/svc/api/CLAUDE.md":      "Mail owner@example.com, not an import.\n",
	}
	for _, p := range []string{"home/", "repo/.git/", "repo/docs/", "repo/svc/api/"} {
		_ = os.MkdirAll(filepath.Join(tmp, p), 0o755)
	}
	for p, c := range files {
		_ = os.WriteFile(filepath.Join(tmp, p), []byte(c), 0o644)
	}

	cfg := agentsmd.Config{
		GlobalFile:    filepath.Join(tmp, "home", "rules.md"),
		FallbackNames: []string{"CLAUDE.md"},
	}
	l, err := instructions.NewLoader(cfg, instructions.Config{}, nil)
	if err != nil {
		panic(err)
	}
	m, err := l.Load(context.Background(), filepath.Join(tmp, "repo/svc/api"))
	if err != nil {
		panic(err)
	}
	for _, s := range m.Sources {
		if s.Scope == agentsmd.ScopeGlobal {
			fmt.Println("global: ", strings.TrimPrefix(s.AbsPath, tmp))
			continue
		}
		fmt.Println("project:", s.Path)
	}
	for _, s := range m.Skipped {
		fmt.Printf("skipped: %s (%s)\n", strings.TrimPrefix(s.Path, tmp), s.Reason)
	}
	fmt.Println(strings.Contains(m.Text, "Use gofmt. Short names."))
	// Output:
	// global:  /home/rules.md
	// project: AGENTS.md
	// project: svc/AGENTS.md
	// project: svc/api/CLAUDE.md
	// skipped: /repo/svc/AGENTS.override.md (empty or whitespace-only file)
	// true
}

func ExampleConfig_Validate() {
	err := agentsmd.Config{RootMarkers: []string{"a/b"}, MaxImportDepth: -1}.Validate()
	fmt.Println(err)
	// Output:
	// adkctx: invalid MaxImportDepth = -1: must be ≥ 0 (0 means default)
	// adkctx: invalid RootMarkers[0] = a/b: "a/b" must be a plain name without path separators
}

// Load reports a working directory that does not exist (or is not a
// directory) as a *WorkDirError; problems with single files are never errors.
func ExampleWorkDirError() {
	l, err := instructions.NewLoader(agentsmd.Config{NoGlobal: true}, instructions.Config{}, nil)
	if err != nil {
		panic(err)
	}
	_, err = l.Load(context.Background(), filepath.Join(os.TempDir(), "no-such-agentsmd-dir"))
	var wde *agentsmd.WorkDirError
	fmt.Println(errors.As(err, &wde), filepath.Base(wde.WorkDir), errors.Is(err, fs.ErrNotExist))
	// Output:
	// true no-such-agentsmd-dir true
}
