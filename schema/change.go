package schema

import (
	"fmt"
	"time"
)

// LSN is a Postgres write-ahead log position.
type LSN uint64

// String formats the LSN the way Postgres does (for example "0/16B3748").
func (l LSN) String() string { return fmt.Sprintf("%X/%X", uint32(l>>32), uint32(l)) }

// ParseLSN parses Postgres' "X/Y" form.
func ParseLSN(s string) (LSN, error) {
	var hi, lo uint32
	if _, err := fmt.Sscanf(s, "%X/%X", &hi, &lo); err != nil {
		return 0, fmt.Errorf("parse LSN %q: %w", s, err)
	}
	return LSN(uint64(hi)<<32 | uint64(lo)), nil
}

// Op is the kind of a change, with Debezium's letters.
type Op byte

// The operations of the change model.
const (
	OpRead     Op = 'r' // a row of a snapshot
	OpCreate   Op = 'c' // insert
	OpUpdate   Op = 'u' // update
	OpDelete   Op = 'd' // delete
	OpTruncate Op = 't' // truncate of one table
	OpMessage  Op = 'm' // logical decoding message (pg_logical_emit_message)
)

// Column describes one column of a relation as the replication stream sent it.
type Column struct {
	Name    string
	TypeOID uint32
	TypeMod int32 // atttypmod; -1 when the type has none
	Key     bool  // part of the replica identity (primary key, index or FULL)
	// NotNull is the catalog's attnotnull; false when unknown, which makes
	// the column optional in the record schema.
	NotNull bool
	// Type describes a type that is not built in (enum, domain, extension
	// type, array of those), looked up in the catalog; nil for built-in
	// types.
	Type *TypeInfo
	// Default is the column's default expression as pg_get_expr prints
	// it (what pgjdbc reports as COLUMN_DEF), when HasDefault; the record
	// schemas carry the default Debezium derives from it (defaults.go).
	Default    string
	HasDefault bool
}

// Relation describes a table as the replication stream last sent it.
// A Relation is immutable once built: a changed table gets a new *Relation,
// so a Change keeps describing the row it carries.
type Relation struct {
	OID             uint32
	Schema          string
	Table           string
	ReplicaIdentity byte // 'd' default, 'n' nothing, 'f' full, 'i' index
	Columns         []Column
	KeyIndexes      []int // indexes into Columns of the Key columns, in column order
}

// QualifiedName returns "schema.table".
func (r *Relation) QualifiedName() string { return r.Schema + "." + r.Table }

// ValueKind says how a column's value was sent.
type ValueKind uint8

// The kinds of a column value.
const (
	ValueNull           ValueKind = iota // SQL NULL, or a column absent from an old key tuple
	ValueText                            // Data holds the Postgres text form
	ValueUnchangedToast                  // an unchanged TOASTed value that was not sent
)

// Value is one column value in Postgres text form. Data is owned by the
// Change that holds it.
type Value struct {
	Kind ValueKind
	Data []byte
}

// Tuple is a row: one Value per column of the Relation, in column order.
// A nil Tuple means the image is absent (no before image for an insert).
type Tuple []Value

// Tx is the Postgres transaction a change belongs to. All changes of one
// transaction share one *Tx.
type Tx struct {
	Xid        uint32
	CommitLSN  LSN       // LSN of the commit record (pgoutput Begin's final LSN)
	EndLSN     LSN       // end of the commit record; known only at Commit
	CommitTime time.Time // commit timestamp
	// BeginLSN is where the transaction's Begin message was sent (its
	// first LSN), the LSN Debezium's BEGIN transaction record carries.
	BeginLSN LSN
	// PrevCommitLSN is the commit LSN of the transaction before this one in
	// the stream (0 if unknown); Debezium's source.sequence carries it.
	PrevCommitLSN LSN
}

// The values of source.snapshot (Debezium's SnapshotRecord, in its
// declaration order, which is the order of the schema's allowed list).
const (
	SnapshotTrue                  = "true"
	SnapshotFirst                 = "first"
	SnapshotFirstInDataCollection = "first_in_data_collection"
	SnapshotLastInDataCollection  = "last_in_data_collection"
	SnapshotLast                  = "last"
	SnapshotFalse                 = "false"
	SnapshotIncremental           = "incremental"
)

// SnapshotMarkers lists source.snapshot's allowed values in Debezium's
// order.
var SnapshotMarkers = []string{SnapshotTrue, SnapshotFirst, SnapshotFirstInDataCollection,
	SnapshotLastInDataCollection, SnapshotLast, SnapshotFalse, SnapshotIncremental}

// Message is a logical decoding message (pg_logical_emit_message).
type Message struct {
	Transactional bool
	Prefix        string
	Content       []byte
}

// Change is one row change, truncate, snapshot row or logical message, in
// the form every later stage works on.
type Change struct {
	Op       Op
	Relation *Relation // nil for OpMessage
	Before   Tuple     // old image: update with REPLICA IDENTITY FULL or key change, delete
	After    Tuple     // new image: read, insert, update
	Tx       *Tx       // nil for a non-transactional message
	LSN      LSN       // the change's own WAL position
	// Seq is the change's index within its transaction, from 0 (tx_seq).
	Seq int
	// TableSeq is the change's index among its transaction's changes to the
	// same table, from 0 (Debezium's data_collection_order - 1).
	TableSeq int
	// Snapshot is Debezium's source.snapshot (SnapshotMarkers) for OpRead:
	// "first", "first_in_data_collection", "true",
	// "last_in_data_collection" or "last". Empty means "false".
	Snapshot string
	// SourceTime is source.ts_* of a change without a commit time: for a
	// snapshot row, when its table was read (Debezium takes the snapshot
	// transaction's CURRENT_TIMESTAMP). Zero means the processing time.
	SourceTime time.Time
	// TxOrder and TxTableOrder fill Debezium's transaction block
	// (provide.transaction.metadata): total_order and
	// data_collection_order, both from 1, counting the records emitted
	// for the transaction. Zero writes "transaction": null, Debezium's
	// default.
	TxOrder, TxTableOrder int64
	// Truncate options (OpTruncate).
	Cascade, RestartIdentity bool
	Message                  *Message // OpMessage only
}
