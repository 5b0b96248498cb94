package delivery

import (
	"errors"
	"slices"
	"testing"
)

// TestSettledNamesTheClosedUnitsWithNothingPending: a copy's checkpoint
// stores only chunks whose tracker units are closed with every record
// acknowledged, never those it skips, and none once a record failed.
func TestSettledNamesTheClosedUnitsWithNothingPending(t *testing.T) {
	tr := NewTracker(100, 1<<20, nil)
	a, b, c, d := tr.Begin(), tr.Begin(), tr.Begin(), tr.Begin()
	tr.Add(a, 10)
	tr.Ack(a, 10, nil)
	tr.Commit(a, 200) // closed, nothing pending
	tr.Add(b, 10)
	tr.Commit(b, 300) // closed, one pending
	tr.Add(c, 10)
	tr.Ack(c, 10, nil) // nothing pending, still open
	tr.Commit(d, 400)  // closed, nothing pending, but skipped
	acks := []*TxAck{a, b, c, d}
	skip := func(i int) bool { return i == 3 }
	if got := tr.Settled(acks, skip); !slices.Equal(got, []int{0}) {
		t.Errorf("Settled = %v, want [0]", got)
	}
	tr.Ack(b, 10, nil)
	if got := tr.Settled(acks, skip); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("after b's ack: Settled = %v, want [0 1]", got)
	}
	e := tr.Begin()
	tr.Add(e, 10)
	tr.Ack(e, 10, errors.New("refused"))
	if got := tr.Settled(acks, skip); got != nil {
		t.Errorf("after a failed record: Settled = %v, want none", got)
	}
}
