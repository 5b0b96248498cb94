package watermark

import "fmt"

// KeySource is where a table's record key comes from (docs/records.md,
// "Key"), as the window needs to know it: the key of every change must be
// known from what pgoutput sends, before and after the change.
type KeySource int

const (
	// KeyNone: no primary key, no replica identity index and no
	// format.message_key_columns: records have a null key.
	KeyNone KeySource = iota
	// KeyPrimary: the primary key (the default replica identity, or
	// REPLICA IDENTITY FULL on a table with a primary key). An update that
	// changes it sends the old key; one that does not, the key in the new
	// tuple; a delete, the old key.
	KeyPrimary
	// KeyIdentityIndex: REPLICA IDENTITY USING INDEX, keyed by that index.
	KeyIdentityIndex
	// KeyMessageColumns: format.message_key_columns, whose columns the
	// configuration requires to be in the replica identity (or FULL), so
	// an update that changes them sends their old values.
	KeyMessageColumns
)

// Table is what Eligible needs to know of a table.
type Table struct {
	Name      string
	Key       KeySource
	Publishes Operations // what the publication publishes (pg_publication: pubinsert, pubupdate, pubdelete, pubtruncate)
	Outbox    bool       // the table is format.outbox.table
	// PartitionsAlone: the table is a partitioned root, and the
	// publication sends its partitions' changes as theirs
	// (publish_via_partition_root off): the stream never names the root,
	// so no window could give way to a change of its rows.
	PartitionsAlone bool
}

// Operations are the operations a publication publishes.
type Operations struct{ Insert, Update, Delete, Truncate bool }

// IneligibleError says why a table cannot be snapshotted incrementally
// and how to fix it; a blocking re-copy (execute-snapshot with "type":
// "blocking") is always possible.
type IneligibleError struct {
	Table, Reason, Fix string
	// NoKey: refused for want of a key (Debezium's NO_PRIMARY_KEY
	// notification status; the others are SKIPPED).
	NoKey bool
}

func (e *IneligibleError) Error() string {
	return fmt.Sprintf("incremental snapshot of %s: %s; %s, or ask for a blocking one (\"type\": \"blocking\")", e.Table, e.Reason, e.Fix)
}

// Eligible reports whether t can be snapshotted incrementally: its rows
// need a key the window can compare with the stream's changes, and the
// stream must carry every change that can make a chunk's row stale.
func Eligible(t Table) error {
	fail := func(reason, fix string) *IneligibleError {
		return &IneligibleError{Table: t.Name, Reason: reason, Fix: fix}
	}
	switch t.Key {
	case KeyPrimary, KeyIdentityIndex, KeyMessageColumns:
	default:
		// Debezium skips such a table too (TableScanCompletionStatus
		// NO_PRIMARY_KEY, AbstractIncrementalSnapshotChangeEventSource.java:392
		// at v3.6.1.Final): a null-keyed `r` record overwrites nothing, it
		// adds a row, so a window cannot keep it from duplicating one.
		err := fail("the table has no primary key, no replica identity index and no format.message_key_columns (its records have a null key)",
			"add a primary key, or set format.message_key_columns to columns of its replica identity (FULL has them all)")
		err.NoKey = true
		return err
	}
	p := t.Publishes
	if !p.Insert || !p.Update || !p.Delete || !p.Truncate {
		return fail("the publication does not publish every operation, so the stream cannot show every change a chunk's rows must give way to",
			"publish them all (ALTER PUBLICATION … SET (publish = 'insert, update, delete, truncate'))")
	}
	if t.PartitionsAlone {
		return fail("the table is partitioned and the publication sends its partitions' changes as theirs, not as the table's (publish_via_partition_root is off)",
			"ALTER PUBLICATION … SET (publish_via_partition_root = true), or snapshot it with a blocking copy")
	}
	if t.Outbox {
		return fail("the outbox table's rows are events, written once when inserted", "do not re-snapshot the outbox table")
	}
	return nil
}
