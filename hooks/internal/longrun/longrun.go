package longrun

import (
	"strings"
	"testing"
)

// Prefix starts the name of every test that calls Test: make test finds them by it.
const Prefix = "TestLong"

// Test skips t under the race detector. It fails a test whose name does not start with Prefix,
// which the run without the race detector would never find.
func Test(t testing.TB) {
	t.Helper()
	if !strings.HasPrefix(t.Name(), Prefix) {
		t.Fatalf("%s calls longrun.Test: its name must start with %s, or make test never runs it", t.Name(), Prefix)
	}
	if raceEnabled {
		t.Skip("a long run, checked without -race (make test's figures step: go test -run '^Test(Figure|Long)')")
	}
}
