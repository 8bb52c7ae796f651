// Package longrun marks the tests that play long sessions: the figures (TestFigure…) and the
// long runs of one session (TestLong…: bounded reads over 60 turns, a hard limit held over 200,
// a tool loop of 90 calls). They check what a long session does, not how goroutines meet, and the
// race detector makes them five to ten times slower. make test runs them without it, in its
// figures step (go test -run '^Test(Figure|Long)'); the race suites check the same code through
// the shorter tests and the concurrent ones.
package longrun
