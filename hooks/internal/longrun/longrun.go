package longrun

import (
	"strings"
	"testing"
)

// Prefixes start the name of every test that calls Test: make test finds them by them.
var Prefixes = []string{"TestFigure", "TestLong"}

// Test skips t under the race detector. It fails a test whose name starts with none of Prefixes,
// which the run without the race detector would never find.
func Test(t testing.TB) {
	t.Helper()
	named := false
	for _, p := range Prefixes {
		named = named || strings.HasPrefix(t.Name(), p)
	}
	if !named {
		t.Fatalf("%s calls longrun.Test: its name must start with one of %v, or make test never runs it", t.Name(), Prefixes)
	}
	if raceEnabled {
		t.Skip("a long run, checked without -race (make test's figures step: go test -run '^Test(Figure|Long)')")
	}
}
