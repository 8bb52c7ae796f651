//go:build !race

package longrun

const raceEnabled = false
