package main

import (
	"testing"
	"time"
)

func TestKeyIDReadsPlainAndSchemaKeys(t *testing.T) {
	for _, tc := range []struct {
		key  string
		id   int64
		want bool
	}{
		{`{"id":42}`, 42, true},
		{`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}],"optional":false,"name":"resnap.public.resnap.Key"},"payload":{"id":1000000}}`, 1000000, true},
		{`{"other":1}`, 0, false},
		{`{"id":"x"}`, 0, false},
	} {
		id, ok := keyID([]byte(tc.key))
		if ok != tc.want || id != tc.id {
			t.Errorf("keyID(%s) = %d, %v; want %d, %v", tc.key, id, ok, tc.id, tc.want)
		}
	}
}

// A re-snapshot's `r` records are those below its end offsets when done
// and at or above those when asked; its check counts an id re-read or changed
// while it ran, and no other.
func TestAttributeSplitsReadsByEndOffsetsAndCoversChangedIDs(t *testing.T) {
	t0 := time.Unix(1000, 0)
	phases := []resnapPhase{
		{from: t0, to: t0.Add(time.Second), offsetsStart: map[int32]int64{0: 2}, offsetsEnd: map[int32]int64{0: 10}},
		{from: t0.Add(2 * time.Second), to: t0.Add(3 * time.Second), offsetsStart: map[int32]int64{0: 11}, offsetsEnd: map[int32]int64{0: 20}},
	}
	reads := []resnapRead{
		{id: 1, offset: 0}, {id: 2, offset: 1}, // the initial copy's: neither's
		{id: 1, offset: 2}, {id: 2, offset: 3}, {id: 3, offset: 4}, // first: all three
		{id: 1, offset: 12}, {id: 3, offset: 13}, // second: 2 left out by its window
		{id: 2, offset: 25}, // after both: neither's
	}
	changes := []resnapChange{
		{id: 2, commit: t0.Add(2500 * time.Millisecond), latency: 10 * time.Millisecond}, // during the second
		{id: 3, commit: t0.Add(1500 * time.Millisecond), latency: 5 * time.Millisecond},  // between them
	}
	attribute(phases, changes, reads, 3)
	if got := phases[0]; got.reads != 3 || got.covered != 3 || got.changes != 0 {
		t.Errorf("first: reads %d covered %d changes %d, want 3 3 0", got.reads, got.covered, got.changes)
	}
	if got := phases[1]; got.reads != 2 || got.covered != 3 || got.changes != 1 || got.p99 != 10*time.Millisecond {
		t.Errorf("second: reads %d covered %d changes %d p99 %s, want 2 3 1 10ms", got.reads, got.covered, got.changes, got.p99)
	}
	// Without the change of id 2 the second misses it.
	phases[1].reads, phases[1].covered = 0, 0
	attribute(phases, changes[1:], reads, 3)
	if phases[1].covered != 2 {
		t.Errorf("second without id 2's change: covered %d, want 2", phases[1].covered)
	}
}
