package snapshot

import (
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// TestSnapshotRunMarkersFollowDebeziumsResolver: over a run of three
// tables, one first row says "first" and the others
// "first_in_data_collection"; the table finishing last ends the run with
// "last", the others with "last_in_data_collection", except that a row
// that is the run's first keeps "first" (the resolver puts the
// snapshot's first before a table's last,
// RelationalSnapshotChangeEventSource.java:1274-1291); a failed table
// leaves the run, so the others still end it.
func TestSnapshotRunMarkersFollowDebeziumsResolver(t *testing.T) {
	r := newSnapshotRun([]string{"a", "b", "c", "d"})
	got := []string{r.firstMarker(), r.firstMarker(), r.firstMarker()}
	if got[0] != schema.SnapshotFirst || got[1] != schema.SnapshotFirstInDataCollection || got[2] != schema.SnapshotFirstInDataCollection {
		t.Errorf("first markers %v", got)
	}
	if m := r.finish("a", schema.SnapshotFirst); m != schema.SnapshotFirst {
		t.Errorf("a one-row table holding the run's first, finishing early: %q, want first", m)
	}
	if m := r.finish("b", schema.SnapshotTrue); m != schema.SnapshotLastInDataCollection {
		t.Errorf("b finishing before c: %q", m)
	}
	r.leave("d") // its copy failed
	if m := r.finish("c", schema.SnapshotFirstInDataCollection); m != schema.SnapshotLast {
		t.Errorf("c finishing last: %q, want last", m)
	}

	one := newSnapshotRun([]string{"t"})
	if f, l := one.firstMarker(), one.finish("t", schema.SnapshotFirst); f != schema.SnapshotFirst || l != schema.SnapshotLast {
		t.Errorf("a one-row snapshot: %q then %q, want first then last (RecordsSnapshotProducerIT.java:119)", f, l)
	}
}

// TestIncrementalRunMarksEveryRowIncremental: every row of an incremental
// re-copy says "incremental", its first and last included: Debezium sets
// the marker before it sends a window's rows
// (AbstractIncrementalSnapshotChangeEventSource.java:170-178,
// CommonOffsetContext.java:91-95, v3.6.1.Final) and resolves no first or
// last for them.
func TestIncrementalRunMarksEveryRowIncremental(t *testing.T) {
	r := newIncrementalRun([]string{"a", "b"})
	got := []string{r.firstMarker(), r.marker(), r.firstMarker(), r.finish("a", schema.SnapshotIncremental), r.finish("b", schema.SnapshotIncremental)}
	for i, m := range got {
		if m != schema.SnapshotIncremental {
			t.Errorf("marker %d of an incremental run: %q, want incremental (all: %v)", i, m, got)
		}
	}
	if m := newSnapshotRun([]string{"a"}).marker(); m != schema.SnapshotTrue {
		t.Errorf("a row inside a table of a run: %q, want true", m)
	}
}
