package main

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/adkctx/adkctx/cmd/adkctx/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite testdata/ from the fixture generators")

// TestExamples: the example sessions in testdata/ (the README's output is theirs) are what the
// fixture generators write; go test -run TestExamples -update rewrites them.
func TestExamples(t *testing.T) {
	for name, data := range map[string][]byte{
		"testdata/shell.traj.json": fixture.Shell(11, 60),
		"testdata/service.json":    fixture.Service(11, 12),
	} {
		if *update {
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from its generator's output: go test -run TestExamples -update", name)
		}
	}
}
