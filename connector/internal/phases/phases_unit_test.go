package phases

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// TestParkedTableEmitsOnlyBeforeItsPark: a table the main worker parked at
// P still has its changes below P written on a replay, none from P on; a
// failed copy (no park position) and a table not handed over write none.
func TestParkedTableEmitsOnlyBeforeItsPark(t *testing.T) {
	v := View{
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
	v := View{
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
		if got := v.Emits(tc.table, tc.oid, tc.commit); got != tc.want {
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
	p := New(10, map[string]*State{
		"public.a": {Table: offsets.Table{Table: "public.a", Phase: offsets.PhaseCatchup, LSN: 20, OID: 1}},
		"public.b": {Table: offsets.Table{Table: "public.b", Phase: offsets.PhaseReady, LSN: 5, OID: 2}},
	})
	var stored []offsets.Table
	p.Store = func(ts *State) func(context.Context) error {
		if p.mu.TryLock() {
			p.mu.Unlock()
			t.Errorf("store(%s) called without the mutex held", ts.Table.Table)
		}
		if cur := p.view[ts.Table.Table]; cur != ts {
			t.Errorf("store(%s): %+v, but the view holds %+v", ts.Table.Table, ts.Table, cur.Table)
		}
		stored = append(stored, ts.Table)
		return func(context.Context) error { return nil }
	}
	if _, moved := p.Begin(15); moved != nil || len(stored) != 0 {
		t.Fatalf("begin below the handover: moved %v, stored %v", moved, stored)
	}
	p.SetShape("public.a", 1, "s1")
	p.SetShape("public.a", 1, "s1") // unchanged: nothing to store
	if moved := p.Advance(20); len(moved) != 1 {
		t.Fatalf("advance past the handover moved %v", moved)
	}
	p.SetShape("public.a", 1, "s2")
	p.SetShape("public.renamed", 2, "t1") // by oid: public.b's state
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

// TestHandoverGivesEveryTransactionExactlyOneEmitter: a copy at P hands
// over only when P >= M (the main worker's position), ready(P) when equal,
// catchup(P) when ahead; then a transaction with commit LSN c is the copy
// worker's iff c < P and the main worker's iff c >= P. A catchup table
// becomes ready, and is stored, once M passes P; a failed checkpoint
// changes nothing.
func TestHandoverGivesEveryTransactionExactlyOneEmitter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		m, p      schema.LSN // M before the handover, the copy's P
		want      string     // the phase handed over to, "" for refused
		catchups  int
		promoteAt schema.LSN // an advance of M that promotes it (0: none needed)
	}{
		{"copy behind the main worker", 500, 400, "", 0, 0},
		{"copy at the main worker", 500, 500, offsets.PhaseReady, 0, 0},
		{"copy ahead of the main worker", 500, 700, offsets.PhaseCatchup, 1, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ph := New(100, map[string]*State{
				"public.t": {Table: offsets.Table{Table: "public.t", OID: 9, Phase: offsets.PhaseCopying}},
			})
			var stored []offsets.Table
			ph.Store = func(ts *State) func(context.Context) error {
				stored = append(stored, ts.Table)
				return func(context.Context) error { return nil }
			}
			ph.Begin(tc.m - 1) // the main worker decides the transaction committed at M-1: M moves to M
			if ph.mainPos != tc.m {
				t.Fatalf("M = %s, want %s", ph.mainPos, tc.m)
			}
			cur := ph.Get("public.t")
			// A failed checkpoint leaves everything as it was.
			if next, _, err := ph.Handover(cur, tc.p, func(*State) error { return errors.New("broker gone") }, nil); next != nil || (err == nil) != (tc.want == "") {
				t.Fatalf("failed checkpoint: %v, %v", next, err)
			}
			if ph.Get("public.t") != cur {
				t.Fatal("a failed checkpoint changed the view")
			}
			var checkpointed *State
			var handedOver *State
			next, m, err := ph.Handover(cur, tc.p, func(n *State) error { checkpointed = n; return nil },
				func(n *State, _ schema.LSN) { handedOver = n })
			if err != nil || m != tc.m {
				t.Fatalf("handover: %v (M %s)", err, m)
			}
			if tc.want == "" {
				if next != nil || checkpointed != nil || ph.Get("public.t") != cur {
					t.Fatalf("a copy behind M handed over: %+v", next)
				}
				return
			}
			if next.Phase != tc.want || next.LSN != uint64(tc.p) || checkpointed != next || handedOver != next || ph.Get("public.t") != next {
				t.Fatalf("handed over to %+v, want %s(%s), stored by the checkpoint", next.Table, tc.want, tc.p)
			}
			if ph.catchups != tc.catchups {
				t.Fatalf("catchups %d, want %d", ph.catchups, tc.catchups)
			}
			// Exactly one emitter for every transaction around P.
			for _, c := range []schema.LSN{tc.p - 2, tc.p - 1, tc.p, tc.p + 1, tc.p + 100} {
				main := ph.All().Emits("public.t", 9, c)
				copyWorker := c < tc.p
				if main == copyWorker {
					t.Errorf("commit %s: main worker emits %v, copy worker emitted %v", c, main, copyWorker)
				}
			}
			if tc.promoteAt != 0 {
				if moved := ph.Advance(tc.promoteAt - 1); moved != nil {
					t.Fatalf("promoted before M passed P: %v", moved)
				}
				moved := ph.Advance(tc.promoteAt)
				if len(moved) != 1 || moved[0].Phase != offsets.PhaseReady || ph.catchups != 0 {
					t.Fatalf("advance to P: moved %v, catchups %d", moved, ph.catchups)
				}
				if last := stored[len(stored)-1]; last.Phase != offsets.PhaseReady || last.LSN != uint64(tc.p) {
					t.Fatalf("the promotion was not stored: %+v", stored)
				}
				for _, c := range []schema.LSN{tc.p - 1, tc.p} {
					if got := ph.All().Emits("public.t", 9, c); got != (c >= tc.p) {
						t.Errorf("ready: commit %s emitted by the main worker: %v", c, got)
					}
				}
			}
		})
	}
}

// TestCatchupTablesArePromotedInLSNOrderWithoutAScanPerTransaction: tables
// in catchup at several LSNs each become ready once M passes theirs, and
// not before, whatever order they entered catchup in and whether a table
// left catchup another way (its lower bound then stale); a begin or
// advance below the lowest catchup LSN looks at no table.
func TestCatchupTablesArePromotedInLSNOrderWithoutAScanPerTransaction(t *testing.T) {
	catchup := func(name string, lsn uint64) *State {
		return &State{Table: offsets.Table{Table: name, Phase: offsets.PhaseCatchup, LSN: lsn}}
	}
	p := New(10, map[string]*State{"public.c": catchup("public.c", 300)})
	p.mu.Lock()
	p.setLocked(catchup("public.b", 200))
	p.setLocked(catchup("public.a", 100))
	p.setLocked(catchup("public.gone", 50))
	// public.gone leaves catchup (a recopy): 50 stays as the lower bound.
	p.setLocked(&State{Table: offsets.Table{Table: "public.gone", Phase: offsets.PhaseCopying}})
	p.mu.Unlock()

	phase := func(name string) string { return p.Get(name).Phase }
	for _, step := range []struct {
		at    schema.LSN
		moved int
		ready []string
	}{
		{at: 49}, // below every bound: no scan, nothing moves
		{at: 60}, // past the stale bound only: a scan, nothing moves
		{at: 99}, // below public.a
		{at: 100, moved: 1, ready: []string{"public.a"}},
		{at: 250, moved: 1, ready: []string{"public.a", "public.b"}},
		{at: 299},
		{at: 1000, moved: 1, ready: []string{"public.a", "public.b", "public.c"}},
	} {
		if moved := p.Advance(step.at); len(moved) != step.moved {
			t.Errorf("advance(%d) moved %d tables, want %d", step.at, len(moved), step.moved)
		}
		for _, name := range step.ready {
			if phase(name) != offsets.PhaseReady {
				t.Errorf("after advance(%d): %s is %s, want ready", step.at, name, phase(name))
			}
		}
		if p.nextPromote > step.at+1 && p.catchups > 0 {
			for _, name := range []string{"public.a", "public.b", "public.c"} {
				if ts := p.Get(name); ts.Phase == offsets.PhaseCatchup && schema.LSN(ts.LSN) < p.nextPromote {
					t.Errorf("after advance(%d): lower bound %d above %s's LSN %d", step.at, p.nextPromote, name, ts.LSN)
				}
			}
		}
	}
	if p.catchups != 0 || phase("public.gone") != offsets.PhaseCopying {
		t.Errorf("catchups %d, public.gone %s; want 0 and copying", p.catchups, phase("public.gone"))
	}
}

// TestResnapshotRequestIsNewerThanTheLastAndIncremental: the state
// `mooncdc resnapshot` stores asks for a re-copy (init) of the table with
// its oid, stamped newer than any earlier request even when the clock is
// behind, of type incremental: the type Debezium's execute-snapshot signal
// takes when none is given (AbstractSnapshotSignal.java:38, v3.6.1.Final).
func TestResnapshotRequestIsNewerThanTheLastAndIncremental(t *testing.T) {
	cases := []struct {
		name   string
		old    offsets.Table
		now    int64
		wantMs int64
	}{
		{"first request", offsets.Table{}, 1000, 1000},
		{"after an older request", offsets.Table{OID: 7, ResnapshotMs: 500, Phase: offsets.PhaseReady}, 1000, 1000},
		{"clock behind the last request", offsets.Table{OID: 7, ResnapshotMs: 5000}, 1000, 5001},
		{"same millisecond as the last", offsets.Table{OID: 7, ResnapshotMs: 1000}, 1000, 1001},
	}
	for _, tc := range cases {
		got := ResnapshotRequest("public.t", tc.old, tc.now)
		want := offsets.Table{Table: "public.t", OID: tc.old.OID, Phase: offsets.PhaseInit, UpdatedMs: tc.now,
			ResnapshotMs: tc.wantMs, ResnapshotType: offsets.ResnapshotIncremental}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, want)
		}
	}
}

// TestIncrementalRequestKeepsAReadyTableStreaming: `mooncdc resnapshot
// --incremental` leaves a ready table ready (its stream is never held),
// stamps the request newer than the last one, and marks it unplanned; a
// table that is not ready is set back to init as a plain resnapshot.
func TestIncrementalRequestKeepsAReadyTableStreaming(t *testing.T) {
	ready := offsets.Table{OID: 7, Phase: offsets.PhaseReady, LSN: 99, ResnapshotMs: 5000, Shape: "s"}
	got := IncrementalRequest("public.t", ready, 1000)
	want := ready
	want.Table, want.UpdatedMs, want.ResnapshotMs = "public.t", 1000, 5001
	want.ResnapshotType, want.Incremental = offsets.ResnapshotIncremental, offsets.IncrementalRequested
	if got != want {
		t.Fatalf("IncrementalRequest of a ready table = %+v, want %+v", got, want)
	}
	errored := offsets.Table{OID: 7, Phase: offsets.PhaseErrored}
	if got, want := IncrementalRequest("public.t", errored, 1000), ResnapshotRequest("public.t", errored, 1000); got != want {
		t.Fatalf("IncrementalRequest of an errored table = %+v, want the plain request %+v", got, want)
	}
}

// TestSlotLossRequestKeepsReadyTablesStreaming: the repair of a lost slot
// asks a ready table for an incremental snapshot marked as the repair
// (from page 0: a snapshot under way and its filter are replaced), every
// table in another phase for a blocking copy from scratch (its progress
// dropped, marked as an initial snapshot's copy, as before), and nothing
// of a dropped table; every request is newer than the table's last.
func TestSlotLossRequestKeepsReadyTablesStreaming(t *testing.T) {
	const now = 1000
	ready := offsets.Table{OID: 7, Phase: offsets.PhaseReady, LSN: 99, ResnapshotMs: 5000, Shape: "s",
		ResnapshotFilter: "id > 3", Incremental: `{"pages":9,"chunk_pages":3,"done":[[0,3]]}`}
	copyProgress := &offsets.CopyProgress{}
	cases := []struct {
		name   string
		old    offsets.Table
		want   offsets.Table
		wantOK bool
	}{
		{"ready", ready, offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseReady, LSN: 99, ResnapshotMs: 5001, UpdatedMs: now, Shape: "s",
			ResnapshotType: offsets.ResnapshotIncremental, Incremental: offsets.IncrementalRepair}, true},
		{"copying", offsets.Table{OID: 7, Phase: offsets.PhaseCopying, Attempts: 1, Copy: copyProgress, ResnapshotType: offsets.ResnapshotIncremental, ResnapshotFilter: "x"},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, Attempts: 1, ResnapshotMs: now, UpdatedMs: now}, true},
		{"catchup", offsets.Table{OID: 7, Phase: offsets.PhaseCatchup, LSN: 50},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, ResnapshotMs: now, UpdatedMs: now}, true},
		{"init", offsets.Table{OID: 7, Phase: offsets.PhaseInit, ResnapshotMs: 2000},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, ResnapshotMs: 2001, UpdatedMs: now}, true},
		{"errored", offsets.Table{OID: 7, Phase: offsets.PhaseErrored, LSN: 50, LastError: "boom", Retry: "r"},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, LastError: "boom", Retry: "r", ResnapshotMs: now, UpdatedMs: now}, true},
		{"dropped", offsets.Table{OID: 7, Phase: offsets.PhaseDropped, LSN: 50}, offsets.Table{OID: 7, Phase: offsets.PhaseDropped, LSN: 50}, false},
	}
	for _, tc := range cases {
		got, ok := SlotLossRequest("public.t", tc.old, now)
		if ok != tc.wantOK || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}

// TestAddedBackReadsTheRowsAgain: a table that comes back to the pipeline
// after it left it (left_ms) has its rows read again, the marker cleared
// in the same record: a ready table (its topic has readers) gets the
// incremental request marked as a repair and stays ready (it streams on at once); any other
// phase is copied as a new table is (init, no re-copy markers, no copy
// progress: the copy slot's stream missed the changes too).
func TestAddedBackReadsTheRowsAgain(t *testing.T) {
	progress := &offsets.CopyProgress{}
	for _, tc := range []struct {
		name string
		old  offsets.Table
		want offsets.Table
	}{
		{"ready: incremental, streams on",
			offsets.Table{OID: 7, Phase: offsets.PhaseReady, LSN: 99, ResnapshotMs: 5000, Shape: "s", LeftMs: 800, ResnapshotFilter: "id > 3"},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseReady, LSN: 99, Shape: "s", UpdatedMs: 1000, ResnapshotMs: 5001,
				ResnapshotType: offsets.ResnapshotIncremental, Incremental: offsets.IncrementalRepair}},
		{"errored (parked): copied as a new table",
			offsets.Table{OID: 7, Phase: offsets.PhaseErrored, LSN: 99, ParkedLSN: 120, Attempts: 3, LastError: "x", Retry: "r", Shape: "s", LeftMs: 800,
				ResnapshotType: offsets.ResnapshotBlocking, Copy: progress},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, Shape: "s", UpdatedMs: 1000}},
		{"init: still copied",
			offsets.Table{OID: 7, Phase: offsets.PhaseInit, LeftMs: 800},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, UpdatedMs: 1000}},
		{"catchup: copied again (handed over, not ready yet)",
			offsets.Table{OID: 7, Phase: offsets.PhaseCatchup, LSN: 99, LeftMs: 800},
			offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseInit, UpdatedMs: 1000}},
	} {
		if got := AddedBack("public.t", tc.old, 1000); got != tc.want {
			t.Errorf("%s: AddedBack = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestHandoverKeepsTheMarkThatTheTableLeft: a table that left the
// pipeline while it was copied keeps the mark at its handover (which makes
// its state from the copy's), so that discovery reads it again when it
// comes back, and the publication row discovery saw it published by.
func TestHandoverKeepsTheMarkThatTheTableLeft(t *testing.T) {
	p := New(10, map[string]*State{"public.t": {Table: offsets.Table{Table: "public.t", OID: 7, Phase: offsets.PhaseCopying}}})
	copying := p.Get("public.t")
	p.Update("public.t", func(next *State, _ schema.LSN) { next.LeftMs, next.PubRel = 800, 16400 })
	next, _, err := p.Handover(copying, 10, func(*State) error { return nil }, nil)
	if err != nil || next == nil {
		t.Fatalf("handover: %v, %v", next, err)
	}
	if next.Phase != offsets.PhaseReady || next.LeftMs != 800 || next.PubRel != 16400 {
		t.Fatalf("after the handover: phase %s, left_ms %d, pub_rel %d; want ready with left_ms 800 and pub_rel 16400", next.Phase, next.LeftMs, next.PubRel)
	}
}
