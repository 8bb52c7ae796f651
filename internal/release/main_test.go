package release_test

import (
	"go/build"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine one of them started outlives it.
func TestMain(m *testing.M) {
	// A test binary built with -trimpath (as make test builds it) knows no GOROOT of its own:
	// go/build, through which the API tests' importer finds the standard library, asks the go
	// command for it.
	if build.Default.GOROOT == "" {
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			build.Default.GOROOT = strings.TrimSpace(string(out))
		}
	}
	goleak.VerifyTestMain(m)
}
