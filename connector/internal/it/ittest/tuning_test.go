package ittest

import (
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
)

// A test's Tune calls add up, are its own (a test beside it, or its
// subtest, gets no options), and end with the test.
func TestTuneIsTheTestsOwnAndAddsUp(t *testing.T) {
	var tuned *testing.T
	t.Run("tuned", func(t *testing.T) {
		tuned = t
		Tune(t, func(tu *connector.Tuning) { tu.IncrementalChunkPages = 1 })
		Tune(t, func(tu *connector.Tuning) { tu.IncrementalReadDelay = 25 * time.Millisecond })
		got, _ := tunings.Load(t)
		if want := (connector.Tuning{IncrementalChunkPages: 1, IncrementalReadDelay: 25 * time.Millisecond}); got != want {
			t.Errorf("tuning %+v, want %+v", got, want)
		}
		if n := len(Options(t)); n != 1 {
			t.Errorf("%d options for a tuned test, want 1", n)
		}
		t.Run("subtest", func(t *testing.T) {
			if n := len(Options(t)); n != 0 {
				t.Errorf("%d options for an untuned subtest, want 0", n)
			}
		})
	})
	if n := len(Options(t)); n != 0 {
		t.Errorf("%d options for an untuned test, want 0", n)
	}
	if _, ok := tunings.Load(tuned); ok {
		t.Error("the tuning outlives its test")
	}
}
