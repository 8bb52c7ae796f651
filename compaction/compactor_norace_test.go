//go:build !race

package compaction

const raceDetector = false
