package sessiondb_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine one of them started outlives it: a
// connection pool left open keeps one.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
