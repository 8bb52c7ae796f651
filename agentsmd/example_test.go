package agentsmd_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/adkctx/adkctx/agentsmd"
)

func ExampleDiscover() {
	tmp, err := os.MkdirTemp("", "agentsmd-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	files := map[string]string{
		"repo/AGENTS.md":                  "Use gofmt. @docs/style.md\n",
		"repo/docs/style.md":              "Short names.",
		"repo/svc/AGENTS.md":              "Ignored: the override wins.\n",
		"repo/svc/AGENTS.override.md":     "Service rules.\n",
		"repo/svc/api/AGENTS.md":          "Mail owner@example.com, not an import.\n",
		"repo/svc/api/handlers/README.md": "not an instruction file",
	}
	for _, p := range []string{"repo/.git/", "repo/docs/", "repo/svc/api/handlers/"} {
		_ = os.MkdirAll(filepath.Join(tmp, p), 0o755)
	}
	for p, c := range files {
		_ = os.WriteFile(filepath.Join(tmp, p), []byte(c), 0o644)
	}

	d, err := agentsmd.Discover(filepath.Join(tmp, "repo/svc/api/handlers"), agentsmd.Config{NoGlobal: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("root marker:", d.RootMarker)
	for _, f := range d.Files {
		fmt.Printf("%s: %q\n", f.RelPath, f.Content)
	}
	fmt.Println("files opened:", d.Stats.FilesOpened)
	// Output:
	// root marker: .git
	// AGENTS.md: "Use gofmt. Short names.\n"
	// svc/AGENTS.override.md: "Service rules.\n"
	// svc/api/AGENTS.md: "Mail owner@example.com, not an import.\n"
	// files opened: 4
}
