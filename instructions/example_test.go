package instructions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adkctx/adkctx/agentsmd"
	"github.com/adkctx/adkctx/instructions"
)

// A budget smaller than the files: the least specific file is cut, with a
// visible marker, and the sources say how much of each file was kept.
func ExampleConfig() {
	tmp, err := os.MkdirTemp("", "instructions-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	_ = os.MkdirAll(filepath.Join(tmp, ".git"), 0o755)
	_ = os.MkdirAll(filepath.Join(tmp, "svc"), 0o755)
	_ = os.WriteFile(filepath.Join(tmp, "AGENTS.md"), []byte(strings.Repeat("General rule. ", 200)), 0o644)
	_ = os.WriteFile(filepath.Join(tmp, "svc", "AGENTS.md"), []byte("Use {placeholders} freely.\n"), 0o644)

	l, err := instructions.NewLoader(agentsmd.Config{NoGlobal: true}, instructions.Config{MaxBytes: 1500}, nil)
	if err != nil {
		panic(err)
	}
	m, err := l.Load(context.Background(), filepath.Join(tmp, "svc"))
	if err != nil {
		panic(err)
	}
	fmt.Println("bytes within budget:", m.Bytes <= 1500, "truncated:", m.Truncated)
	for _, s := range m.Sources {
		fmt.Printf("%s (%s): %d of %d bytes kept, truncated=%v\n", s.Path, s.Scope, s.KeptBytes, s.Bytes, s.Truncated)
	}
	fmt.Println(strings.Contains(m.Text, `[adkctx: AGENTS.md file "AGENTS.md" was cut to fit the instruction budget`))
	// Output:
	// bytes within budget: true truncated: true
	// AGENTS.md (project): 1027 of 2799 bytes kept, truncated=true
	// svc/AGENTS.md (project): 26 of 26 bytes kept, truncated=false
	// true
}

func ExampleConfig_Validate() {
	err := instructions.Config{MaxBytes: 100}.Validate()
	fmt.Println(err)
	// Output:
	// adkctx: invalid MaxBytes = 100: must be 0 (default 32768) or ≥ 1024
}

func ExampleLoader() {
	tmp, err := os.MkdirTemp("", "instructions-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	_ = os.MkdirAll(filepath.Join(tmp, ".git"), 0o755)
	_ = os.MkdirAll(filepath.Join(tmp, "svc"), 0o755)
	_ = os.WriteFile(filepath.Join(tmp, "AGENTS.md"), []byte("Run go test before committing.\n"), 0o644)
	_ = os.WriteFile(filepath.Join(tmp, "svc", "AGENTS.md"), []byte("This service is Go 1.25.\n"), 0o644)

	l, err := instructions.NewLoader(agentsmd.Config{NoGlobal: true}, instructions.Config{}, nil)
	if err != nil {
		panic(err)
	}
	m, err := l.Load(context.Background(), filepath.Join(tmp, "svc"))
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Text)
	// Output:
	// # Instructions from AGENTS.md files
	//
	// The files below are ordered from the most general to the most specific. When they conflict, follow the more deeply nested (later) file. The user's explicit requests in this conversation override all of them.
	//
	// <agents_md path="AGENTS.md">
	// Run go test before committing.
	// </agents_md>
	//
	// <agents_md path="svc/AGENTS.md">
	// This service is Go 1.25.
	// </agents_md>
}
