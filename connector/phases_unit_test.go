package connector

import (
	"testing"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// TestParkedTableEmitsOnlyBeforeItsPark: a table the main worker parked at
// P still has its changes below P written on a replay, none from P on; a
// failed copy (no park position) and a table not handed over write none.
func TestParkedTableEmitsOnlyBeforeItsPark(t *testing.T) {
	v := phaseView{
		"public.parked": {Table: offsets.Table{Phase: offsets.PhaseErrored, LSN: 100, ParkedLSN: 500}},
		"public.failed": {Table: offsets.Table{Phase: offsets.PhaseErrored, LSN: 100}},
		"public.ready":  {Table: offsets.Table{Phase: offsets.PhaseReady, LSN: 100}},
	}
	for _, tc := range []struct {
		table       string
		commit, lsn schema.LSN
		want        bool
	}{
		{"public.parked", 600, 499, true},  // before the park, in the DDL's transaction
		{"public.parked", 600, 500, false}, // the change it stopped at
		{"public.parked", 700, 650, false}, // after it
		{"public.parked", 90, 80, false},   // before the handover: the copy wrote it
		{"public.failed", 600, 499, false},
		{"public.ready", 600, 650, true},
		{"public.ready", 90, 80, false},
		{"public.unknown", 600, 499, false},
	} {
		if got := v.emitsChange(tc.table, 0, tc.commit, tc.lsn); got != tc.want {
			t.Errorf("emitsChange(%s, commit %d, lsn %d) = %v, want %v", tc.table, tc.commit, tc.lsn, got, tc.want)
		}
	}
}

// TestRenamedTableFollowsItsOldNamesPhase: a relation whose name has no
// phase follows the phase written for its oid under another name (a
// rename before discovery lists the new name); no oid, or one no phase
// has, emits nothing. A dropped table's changes before the DROP are
// written if it was handed over, and only for its own oid.
func TestRenamedTableFollowsItsOldNamesPhase(t *testing.T) {
	v := phaseView{
		"public.old":     {Table: offsets.Table{OID: 41, Phase: offsets.PhaseReady, LSN: 100}},
		"public.copying": {Table: offsets.Table{OID: 42, Phase: offsets.PhaseCopying}},
		"public.gone":    {Table: offsets.Table{OID: 50, Phase: offsets.PhaseDropped, LSN: 100}},
		"public.never":   {Table: offsets.Table{OID: 51, Phase: offsets.PhaseDropped}},
	}
	for _, tc := range []struct {
		table  string
		oid    uint32
		commit schema.LSN
		want   bool
	}{
		{"public.new", 41, 150, true},    // renamed from old, after its handover
		{"public.new", 41, 90, false},    // before the handover: the copy wrote it
		{"public.new", 42, 150, false},   // renamed during its copy: the copy's catch-up writes it
		{"public.new", 0, 150, false},    // no oid
		{"public.new", 43, 150, false},   // an oid no phase has
		{"public.old", 99, 150, true},    // the name's own phase first
		{"public.gone", 50, 150, true},   // dropped: its changes before the DROP
		{"public.gone", 60, 150, false},  // a table created again under the name: its own copy first
		{"public.never", 51, 150, false}, // dropped before its handover
		{"public.other", 50, 150, false}, // a dropped table's oid under another name: not a rename
	} {
		if got := v.emits(tc.table, tc.oid, tc.commit); got != tc.want {
			t.Errorf("emits(%s, oid %d, commit %d) = %v, want %v", tc.table, tc.oid, tc.commit, got, tc.want)
		}
	}
}

// TestPhasesStoreEveryChangeUnderTheMutexInOrder: the main worker's
// changes of a table state (a promotion from catchup to ready, a new shape
// fingerprint) are handed to store while the mutex is held, one call per
// change, in the order they were made, each with the state the view then
// holds. A write made after the mutex was released could be overtaken by a
// later writer's (a copy worker's phase, the snapshotter's), and the offsets
// topic would end with the older state.
func TestPhasesStoreEveryChangeUnderTheMutexInOrder(t *testing.T) {
	p := newPhases(10, map[string]*tableState{
		"public.a": {Table: offsets.Table{Table: "public.a", Phase: offsets.PhaseCatchup, LSN: 20, OID: 1}},
		"public.b": {Table: offsets.Table{Table: "public.b", Phase: offsets.PhaseReady, LSN: 5, OID: 2}},
	})
	var stored []offsets.Table
	p.store = func(ts *tableState) func() error {
		if p.mu.TryLock() {
			p.mu.Unlock()
			t.Errorf("store(%s) called without the mutex held", ts.Table.Table)
		}
		if cur := p.view[ts.Table.Table]; cur != ts {
			t.Errorf("store(%s): %+v, but the view holds %+v", ts.Table.Table, ts.Table, cur.Table)
		}
		stored = append(stored, ts.Table)
		return nil
	}
	if _, moved := p.begin(15); moved != nil || len(stored) != 0 {
		t.Fatalf("begin below the handover: moved %v, stored %v", moved, stored)
	}
	p.setShape("public.a", 1, "s1")
	p.setShape("public.a", 1, "s1") // unchanged: nothing to store
	if moved := p.advance(20); len(moved) != 1 {
		t.Fatalf("advance past the handover moved %v", moved)
	}
	p.setShape("public.a", 1, "s2")
	p.setShape("public.renamed", 2, "t1") // by oid: public.b's state
	want := []offsets.Table{
		{Table: "public.a", Phase: offsets.PhaseCatchup, LSN: 20, OID: 1, Shape: "s1"},
		{Table: "public.a", Phase: offsets.PhaseReady, LSN: 20, OID: 1, Shape: "s1"},
		{Table: "public.a", Phase: offsets.PhaseReady, LSN: 20, OID: 1, Shape: "s2"},
		{Table: "public.b", Phase: offsets.PhaseReady, LSN: 5, OID: 2, Shape: "t1"},
	}
	if len(stored) != len(want) {
		t.Fatalf("stored %+v, want %+v", stored, want)
	}
	for i := range want {
		if stored[i] != want[i] {
			t.Errorf("store %d: %+v, want %+v", i, stored[i], want[i])
		}
	}
}
