//go:build race

package compaction

// raceDetector is true when tests run with -race: the 200-invocation figure
// (≈1,400 model calls over a growing history) is skipped there; run it
// with `go test -run TestFigure ./compaction/`.
const raceDetector = true
