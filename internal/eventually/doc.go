// Package eventually is the one polling loop of the test suites: it waits
// for a condition that another goroutine, process or server makes true (a
// table's phase, records in a topic, a line in a log) and fails the test
// when it does not become true in time.
//
// It stands beside the pipeline, not in it: only tests import it (the
// connector's and cmd/mooncdc's integration tests). It replaced some fifty
// hand-written deadline loops, so each test says what it waits for and for
// how long, and the loop itself exists once.
//
// Invariants:
//   - The condition runs on the caller's goroutine, so it may call t.Fatal
//     itself to stop at a state that can never turn good.
//   - Each round tries the condition, then checks the deadline, then
//     sleeps, as the loops it replaced did: a sleep that ends past the
//     deadline is followed by one last try before the test fails.
//   - Every call names its own poll interval: an expensive condition (one
//     that reads a topic back) polls slowly, one that must catch a short
//     window (a copy between two states) polls fast.
package eventually
