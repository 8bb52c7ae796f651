package main

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// Every `go run` the documentation shows names a package found from the directory it is run
// in: this module's root (the example is a module of its own; `go run ./example` from the
// repository root fails).
func TestDocumentedCommandsRun(t *testing.T) {
	goRun := regexp.MustCompile(`(?m)^//.*\bgo run (\S+)`)
	for _, file := range []string{"doc.go", "quickstart/main.go"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range goRun.FindAllStringSubmatch(string(src), -1) {
			if seen[m[1]] {
				continue
			}
			seen[m[1]] = true
			if out, err := exec.Command("go", "list", "-find", m[1]).CombinedOutput(); err != nil {
				t.Errorf("%s: `go run %s` from the module's root: %v\n%s", file, m[1], err, out)
			}
		}
		if len(seen) == 0 {
			t.Errorf("%s shows no go run command", file)
		}
	}
}
