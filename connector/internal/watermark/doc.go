// Package watermark is the pure core of mooncdc's incremental snapshots
// (docs/incremental-snapshots.md; the main worker's side is
// connector/internal/emit's Incremental, the chunk readers
// connector/internal/snapshot's): a
// table's rows are read in chunks of heap pages, each under its own
// transaction snapshot, while the table's changes keep streaming; each
// chunk's rows are written as `r` records inside a watermark window, less
// the keys the stream changed in transactions the chunk's snapshot does
// not see, so that an `r` record never overwrites a newer change of its
// key.
//
// What it holds:
//   - Snapshot: pg_current_snapshot()'s text parsed (ParseSnapshot), and
//     the visibility of a 64-bit xid or of a stream's 32-bit one (FullXid
//     widens it against the snapshot's xmax, across epochs); InRecovery
//     for one read on a hot standby, whose text lists no running id.
//   - Tracker: the windows of the tables being snapshotted, and a log of
//     the streamed transactions not yet proven visible to every later
//     snapshot (Postgres writes a commit record before the transaction
//     becomes visible, so the stream can be ahead of a snapshot); the log
//     is saved with the durable LSN and restored by the next session
//     (Saved), and a floor every window's snapshot must see (SetFloor,
//     RaiseFloor: the union, Snapshot.Union, of the floors the wiring sets
//     and of every snapshot that pruned the log, so that a window on a
//     server that does not yet see what another showed visible is
//     refused).
//   - Plan, Chunk, Progress: the page ranges read in parallel, and the
//     progress kept in the offsets topic so that a snapshot resumes by
//     chunk.
//   - Eligible: which tables an incremental snapshot can take.
//
// Invariants (each shown by a test; the argument is in the doc):
//   - A window's rows are returned only once the stream has passed its
//     high watermark (every transaction the snapshot sees has been
//     streamed) and the chunk is read, and they are to be written there,
//     before the stream's next change.
//   - A row is left out when, before that point, the stream carried a
//     change of its key by a transaction the snapshot does not see; so a
//     written row is the state the stream has given its key at that point.
//   - A change that may touch any key (TRUNCATE, an unknown key) voids the
//     windows that do not see it: their chunks are read again.
//
// Place in the pipeline: it sits beside the main worker, which owns
// a Tracker and is the one emitter of the table (the phases' exactly-one-
// emitter rule is unchanged: chunk readers hand rows to the Tracker, they
// write nothing). It does no I/O, imports only the standard library and
// pglogrepl's LSN, and no package of connector.
package watermark
