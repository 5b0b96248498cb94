//go:build !race

package emit

const raceEnabled = false
