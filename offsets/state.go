package offsets

// Phases a table goes through, as stored in [Table.Phase]. The rules for
// moving between them belong to the connector; this package only refuses
// to load a phase it does not know.
const (
	PhaseInit    = "init"    // in the publication, not copied yet
	PhaseCopying = "copying" // a copy worker holds it
	PhaseCatchup = "catchup" // handed over at LSN, main worker still behind it
	PhaseReady   = "ready"   // fully handed over at LSN
	PhaseErrored = "errored" // the copy failed; see Attempts, LastError, Retry
	PhaseDropped = "dropped" // the table was dropped (DROP TABLE); nothing more to copy or stream
)

func validPhase(p string) bool {
	switch p {
	case PhaseInit, PhaseCopying, PhaseCatchup, PhaseReady, PhaseErrored, PhaseDropped:
		return true
	}
	return false
}

// Pipeline is the value of the {"source":"pipeline"} partition: which
// source the offsets were written for, and how far Kafka has everything.
type Pipeline struct {
	SystemID    string `json:"system_id"`   // pg_control system identifier
	Database    string `json:"database"`    // database name
	Slot        string `json:"slot"`        // replication slot name
	Publication string `json:"publication"` // publication name
	InitialLSN  uint64 `json:"initial_lsn"` // the slot's consistent point when mooncdc created it
	DurableLSN  uint64 `json:"durable_lsn"` // end LSN of the newest transaction fully acked by Kafka
	UpdatedMs   int64  `json:"ts_ms"`       // wall clock of the write, Unix milliseconds
	// DurableMs is the wall clock (Unix milliseconds) when DurableLSN last
	// moved; 0 in records of older versions. Exactly-once mode rewrites the
	// record while idle, so UpdatedMs alone does not say how long the
	// durable LSN has stood still.
	DurableMs int64 `json:"durable_ms,omitempty"`
	// SkipThrough is set by a takeover from a Debezium connector that
	// stopped in the middle of a transaction: that transaction's changes
	// at or below it are in Kafka already. It applies while DurableLSN is
	// still InitialLSN (the transaction is not durable yet); 0: none.
	SkipThrough uint64 `json:"skip_through,omitempty"`
}

// PendingSkip returns SkipThrough while it still applies, else 0.
func (p Pipeline) PendingSkip() uint64 {
	if p.DurableLSN != p.InitialLSN {
		return 0
	}
	return p.SkipThrough
}

// Stamp sets p's write time to nowMs, and DurableMs to nowMs when the
// durable LSN differs from prev's (or prev has no DurableMs); otherwise p
// keeps prev's DurableMs.
func (p *Pipeline) Stamp(prev Pipeline, nowMs int64) {
	p.UpdatedMs = nowMs
	if p.DurableLSN != prev.DurableLSN || prev.DurableMs == 0 {
		p.DurableMs = nowMs
	} else {
		p.DurableMs = prev.DurableMs
	}
}

// Table is the value of a {"table":"schema.table"} partition.
type Table struct {
	Table     string `json:"-"`                    // "schema.table", from the key
	OID       uint32 `json:"oid"`                  // relation oid when the phase was written
	Phase     string `json:"phase"`                // one of the Phase constants
	LSN       uint64 `json:"lsn"`                  // handover LSN for catchup and ready
	Attempts  int    `json:"attempts"`             // copy attempts so far
	LastError string `json:"last_error,omitempty"` // why the last copy failed
	Retry     string `json:"retry,omitempty"`      // retry policy / next retry time, free-form
	UpdatedMs int64  `json:"ts_ms"`                // wall clock of the write, Unix milliseconds

	// ResnapshotMs is when `mooncdc resnapshot` last asked for a new copy
	// of the table (Unix milliseconds; 0: never). The command writes the
	// table back to PhaseInit with a newer value; a running pipeline
	// re-copies the table when it sees a value newer than the one it last
	// acted on, and carries that value forward in the records it writes
	// for the table afterwards, so the request is not acted on twice.
	ResnapshotMs int64 `json:"resnapshot_ms,omitempty"`
	// ResnapshotFilter restricts the requested copy to the rows it
	// selects (a SQL condition, an execute-snapshot signal's
	// additional-conditions filter); "" copies the whole table.
	ResnapshotFilter string `json:"resnapshot_filter,omitempty"`
	// ResnapshotType is what the requested copy is to a Debezium
	// consumer, an execute-snapshot signal's type: ResnapshotIncremental
	// (its rows say source.snapshot "incremental") or ResnapshotBlocking
	// (first … last, as an initial snapshot). "" is a copy no one asked
	// for as a re-copy: the initial snapshot, a table added later, a
	// request stored before the field existed. It lives as long as the
	// copy, so that a retry after a crash or a failure keeps it, and is
	// cleared with the filter at the handover.
	ResnapshotType string `json:"resnapshot_type,omitempty"`
	// SignalID is the id of the execute-snapshot signal that asked for
	// the copy, in memory only (never stored here): an incremental
	// snapshot keeps it in its progress, as its notifications' id.
	SignalID string `json:"-"`
	// Shape is the fingerprint of the table's last Relation message the
	// main worker saw (schema.ShapeFingerprint), so that a change made
	// while mooncdc was stopped still gives a derived schema change at the
	// next run; "" before the first.
	Shape string `json:"shape,omitempty"`
	// ParkedLSN is, for a table the main worker parked (PhaseErrored: its
	// records could not be written), the LSN of the change it stopped at:
	// a replay from an older durable LSN still writes the table's changes
	// before it. 0 for a failed copy.
	ParkedLSN uint64 `json:"parked_lsn,omitempty"`
	// Copy is the progress of a resumable copy of the table (phase
	// copying, or errored with a retry), nil for none: a copy that
	// crashed resumes from it (CopyProgress).
	Copy *CopyProgress `json:"copy,omitempty"`
	// Incremental is the progress of an incremental snapshot of the table
	// (docs/incremental-snapshots.md: the chunks' page ranges whose
	// windows are durable), or a request for one not planned yet
	// ({"chunk_pages":0}); nil for none. The table stays ready meanwhile.
	// Kept as raw JSON: its form is the snapshot's (watermark.Progress).
	Incremental RawJSON `json:"incremental,omitempty"`
	// LeftMs is when discovery found that the table, which still exists,
	// left the pipeline (Unix milliseconds; 0: it is in it): removed from
	// the publication, or no longer selected by postgres.tables or
	// postgres.tables_exclude. Its changes since are in no record, so when
	// it comes back its rows are read again (phases.AddedBack): an
	// incremental snapshot if it was ready, else a copy as a new table.
	LeftMs int64 `json:"left_ms,omitempty"`
	// PubRel is the oid of the publication's pg_publication_rel row that
	// publishes the table (its own, or a partitioned ancestor's) when
	// discovery last saw it; 0: unknown, or published otherwise (FOR ALL
	// TABLES, FOR TABLES IN SCHEMA). A table removed from the publication
	// and added back gets a new row: a new PubRel tells discovery that it
	// left and came back unseen (between two discoveries, or while
	// mooncdc was stopped).
	PubRel uint32 `json:"pub_rel,omitempty"`
}

// IncrementalRequested is Table.Incremental of an incremental snapshot
// asked for and not planned yet (`mooncdc resnapshot --incremental`, an
// execute-snapshot signal of type incremental).
const IncrementalRequested RawJSON = `{"chunk_pages":0}`

// IncrementalRepair is Table.Incremental of the incremental snapshot that
// on_slot_loss: resnapshot, or a table added back to the pipeline, asks
// for on a ready table, not planned yet: a repair of the gap (the lost
// slot's, the table's time out of the pipeline), which must end with the table's rows and
// tombstones in its topic, so that one the incremental path cannot take
// is copied with the blocking copy instead. The snapshot's progress keeps
// the mark ("repair") until it ends.
const IncrementalRepair RawJSON = `{"chunk_pages":0,"repair":true}`

// RawJSON is a JSON value kept as its text: a field whose form another
// package owns. Unlike json.RawMessage it is comparable, so Table stays
// comparable; "" is absent (omitted, or null).
type RawJSON string

// MarshalJSON writes the text as it is (null for "").
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// UnmarshalJSON keeps the value's text.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = ""
		return nil
	}
	*r = RawJSON(b)
	return nil
}

// The values of Table.ResnapshotType, as Debezium spells an
// execute-snapshot signal's type (AbstractSnapshotSignal.java:31-34,
// v3.6.1.Final), lower case.
const (
	ResnapshotIncremental = "incremental"
	ResnapshotBlocking    = "blocking"
)

// State is everything stored for one connector name.
type State struct {
	Pipeline *Pipeline        // nil: nothing stored yet (a first start)
	Tables   map[string]Table // by "schema.table"; absent: never stored or deleted
}
