//go:build race

package emit

// raceEnabled: allocation counts are not meaningful under -race (sync.Pool
// drops items at random); make test runs the allocation tests again without it.
const raceEnabled = true
