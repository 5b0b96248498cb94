package eventually

import (
	"fmt"
	"testing"
	"time"
)

// recorder is a testing.TB that records a failure instead of stopping the
// test, so the failing paths can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

func TestTrueReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	r := &recorder{TB: t}
	True(r, time.Second, time.Millisecond, "never", func() bool { n++; return n == 3 })
	if r.failed != "" || n != 3 {
		t.Fatalf("failed %q after %d tries, want no failure after 3", r.failed, n)
	}
}

func TestTrueFailsWithWhatAfterTheTimeout(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	True(r, 30*time.Millisecond, 5*time.Millisecond, "table a not errored", func() bool { return false })
	if r.failed != "table a not errored" {
		t.Fatalf("failure %q, want the what", r.failed)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("failed after %v, before the 30ms timeout", d)
	}
}

func TestSucceedsFailsWithTheLastError(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	Succeeds(r, 20*time.Millisecond, time.Millisecond, func() error { n++; return fmt.Errorf("try %d", n) })
	if want := fmt.Sprintf("try %d", n); r.failed != want {
		t.Fatalf("failure %q, want the last error %q", r.failed, want)
	}
	r = &recorder{TB: t}
	Succeeds(r, time.Second, time.Millisecond, func() error { return nil })
	if r.failed != "" {
		t.Fatalf("failed %q on a nil error", r.failed)
	}
}

func TestWithinTriesOnceMoreAfterSleepingPastTheDeadline(t *testing.T) {
	n := 0
	// The first try fails before the deadline; the sleep after it ends
	// past the deadline, and the condition holds on the second try, which
	// must still be made.
	ok := Within(2*time.Millisecond, 10*time.Millisecond, func() bool { n++; return n == 2 })
	if !ok || n != 2 {
		t.Fatalf("Within = %v after %d tries, want true after 2", ok, n)
	}
}
