package plan_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine one of them started outlives it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
