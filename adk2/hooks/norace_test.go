//go:build !race

package hooks_test

const raceEnabled = false
