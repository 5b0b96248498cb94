package eventually

import (
	"testing"
	"time"
)

// True calls cond every poll until it returns true. Once timeout has passed
// and cond is still false, it fails t with what as the message. It blocks
// until then.
func True(t testing.TB, timeout, poll time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Within(timeout, poll, cond) {
		t.Fatal(what)
	}
}

// Succeeds calls try every poll until it returns nil. Once timeout has
// passed and try still returns an error, it fails t with that last error,
// which therefore says what was awaited and what was seen instead. It
// blocks until then.
func Succeeds(t testing.TB, timeout, poll time.Duration, try func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := try()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err.Error())
			return // a testing.TB whose Fatal returns (a test's recorder)
		}
		time.Sleep(poll)
	}
}

// Within calls cond every poll until it returns true or timeout has passed,
// and reports whether cond held. It fails nothing: it is for tests that
// wait a bounded time and then assert on what they have, with their own
// messages.
func Within(timeout, poll time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(poll)
	}
}
