package snapshot

import (
	"sync"

	"github.com/mooncdc/mooncdc/schema"
)

// A snapshotRun is one snapshot in Debezium's sense, for source.snapshot's
// markers: the tables that became due for a copy together. The first run
// is the initial snapshot, the tables known at the first discovery; a
// table added to the publication later, a resnapshot request, or the retry
// of a failed copy starts a run of its own, like a Debezium ad hoc
// (blocking) snapshot of those tables, unless it is an incremental
// re-copy (below).
//
// Debezium marks the snapshot's first row "first", the first row of every
// other table "first_in_data_collection", each table's last row
// "last_in_data_collection" and the snapshot's last row "last", with
// "last" winning over "first" and "first" over the per-table markers
// (RelationalSnapshotChangeEventSource.java:1274-1291). Its parallel
// snapshot orders the tables' records so that those markers come out
// first and last (RelationalSnapshotChangeEventSource.java:677-723). Our
// tables are copied in parallel to different topics, so "first" is the
// first row any of the run's copies encodes, and "last" the last row of
// the run's table whose copy finishes last. When that table is empty, or
// its copy fails, no row of the run says "last" (Debezium re-marks the
// previous table's row instead, EventDispatcher.java:627-639; ours is
// already in Kafka by then).
//
// A re-copy requested as an incremental snapshot (an execute-snapshot
// signal of type incremental, Debezium's default, or `mooncdc
// resnapshot`) is a run whose every row says "incremental": Debezium sends
// an incremental snapshot's rows after incrementalSnapshotEvents() set the
// marker (AbstractIncrementalSnapshotChangeEventSource.java:170-178,
// CommonOffsetContext.java:91-95) and never resolves first or last for
// them. A blocking one is a run like the initial snapshot's: Debezium's
// blocking snapshot runs the same RelationalSnapshotChangeEventSource
// after preSnapshotStart(onDemand) (CommonOffsetContext.java:73-78,
// ChangeEventSourceCoordinator.java:256-270).
//
// Its methods are safe for concurrent use by the copies of the run.
type snapshotRun struct {
	incremental bool // every row says "incremental"
	mu          sync.Mutex
	firstTaken  bool
	open        map[string]bool // tables whose copy has not finished
}

func newSnapshotRun(tables []string) *snapshotRun {
	r := &snapshotRun{open: make(map[string]bool, len(tables))}
	for _, t := range tables {
		r.open[t] = true
	}
	return r
}

// newIncrementalRun returns the run of tables re-copied as an incremental
// snapshot.
func newIncrementalRun(tables []string) *snapshotRun {
	r := newSnapshotRun(tables)
	r.incremental = true
	return r
}

// marker returns the marker of a row that is neither the first nor the
// last of its table.
func (r *snapshotRun) marker() string {
	if r.incremental {
		return schema.SnapshotIncremental
	}
	return schema.SnapshotTrue
}

// firstMarker returns the marker of a table's first row: "first" for the
// first one of the run, "first_in_data_collection" for the others
// ("incremental" in an incremental run).
func (r *snapshotRun) firstMarker() string {
	if r.incremental {
		return schema.SnapshotIncremental
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.firstTaken {
		return schema.SnapshotFirstInDataCollection
	}
	r.firstTaken = true
	return schema.SnapshotFirst
}

// finish records that table's rows are all encoded and returns the marker
// of its last row, which was encoded with marker held: "last" when no
// other table of the run is still being copied; else "first" stays
// (Debezium's resolver puts the snapshot's first before a table's last),
// and any other becomes "last_in_data_collection".
func (r *snapshotRun) finish(table, held string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.open, table)
	switch {
	case r.incremental:
		return held
	case len(r.open) == 0:
		return schema.SnapshotLast
	case held == schema.SnapshotFirst:
		return held
	}
	return schema.SnapshotLastInDataCollection
}

// leave takes a table whose copy failed out of the run, so that the
// others can still end it.
func (r *snapshotRun) leave(table string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.open, table)
}
