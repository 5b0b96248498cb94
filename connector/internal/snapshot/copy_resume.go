package snapshot

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the copy that resumes by chunk: a table copied in more
// than one chunk keeps its progress in its offsets record
// (offsets.CopyProgress), and a copy that crashed, or failed and is
// retried, goes on from the chunks Kafka already holds instead of from
// zero.
//
// The first attempt creates a persistent copy slot (copyslot.go) with an
// exported snapshot S1 at L1, copies the chunks under S1 and checkpoints
// (copy_checkpoint.go): chunks done, base LSN B = L1. A later attempt,
// when the slot is still there and the table was not rewritten
// (relfilenode) nor changed shape since the first one:
//
//  1. creates a temporary slot with an exported snapshot S2 at L2 and
//     imports S2 on the copy's first connection;
//  2. streams the persistent slot from B and writes every change of the
//     table committed before L2 (op c, u, d, as the catch-up does): the
//     changes in [B, L2); a long stream moves B forward at transaction ends
//     as it goes (the done chunks plus the changes up to a transaction's
//     end are the table as of there);
//  3. checkpoints B = L2 (at-least-once: once those records are
//     acknowledged; exactly-once: they commit with the progress record);
//  4. copies the chunks not done under S2, checkpointing as it goes;
//  5. drops the temporary slot once every chunk connection holds S2,
//     catches up privately on the persistent slot from L2 and hands over
//     (handover.go).
//
// The persistent slot is confirmed only up to B, so it keeps every change
// a resume may need; it is dropped after the handover, and the sweep
// (copyslot.go) drops those no copy needs any more.
//
// Why the table in Kafka is still the table. Take any row, at any time.
//   - Kafka holds each done chunk's rows as they are at B, and every
//     change of the table from B on is written exactly once, in commit
//     order: by the resume's stream [B, L2), by the catch-up from L2, by
//     the main worker after the handover.
//   - A row of a done chunk that an UPDATE moved to another chunk between
//     B and L2 (an UPDATE gives the row a new ctid, on any page) is
//     carried by its update record from [B, L2); if it now lies in a
//     chunk not done, that chunk's snapshot row as of L2 carries it again:
//     the same state, a repeated upsert, never a lost row. A row inserted
//     into (or moved into) a done chunk's pages after B arrives by its
//     change record, as a done chunk is not read again.
//   - Per key, records stay in time order: the changes before L2 are
//     written before any row of S2 (step 2 before step 4, on the same
//     producer), and the catch-up's changes after all of them.
//   - A rewrite (VACUUM FULL, CLUSTER, TRUNCATE, ALTER TABLE … TYPE)
//     gives the table a new relfilenode and moves every row to new pages:
//     the chunks no longer name the rows they named, so the copy starts
//     over. So does a new shape (the done chunks' rows have the old one).
//   - Unchanged TOAST values in the update records of [B, L2) are the
//     placeholders streaming writes (Debezium's
//     __debezium_unavailable_value): the record says the value did not
//     change, and the consumer holds it from the done chunk's row or an
//     earlier change, as in streaming.
//   - In exactly-once mode a change record is never written twice: [B,
//     L2) is committed with the checkpoint that moves B to L2, or not at
//     all. Snapshot rows may repeat (rows of a chunk not done at a
//     checkpoint are committed, and copied again by a resume); they are
//     upserts.
//
// Stale keys (copy_rows.go tombstones the keys the topic holds that the
// snapshot no longer has): a resumed attempt reads the topic's keys after
// step 3 and takes as stale only the keys whose last record lies before
// the mark (the topic's end offsets when the first attempt read them):
// every key the copy wrote, in a done chunk or in the stream, has a record
// after it. The chunks not done strike the keys they see, as in a first
// attempt.
//
// Snapshot markers: each attempt is a snapshot run of its own
// (snapshotrun.go); a resumed attempt's first row says first (or
// first_in_data_collection) again and its last row says last, as a copy
// from zero would. The rows of the chunks done by earlier attempts keep the
// markers they were written with, so a consumer may see first twice and,
// when an attempt died, no last before it: the markers still frame every
// snapshot row, they no longer count a run's rows.

// resumable is a copy of a table in more than one chunk: its persistent
// slot and progress. A nil *resumable is a copy that does not resume (one
// chunk, on a temporary slot): every method then does what copy.go and
// copy_rows.go do without it.
type resumable struct {
	c    *copier
	name string
	ts   *phases.State
	log  *zap.Logger
	slot string
	// from is the progress resumed from; nil on a first attempt. cur is
	// the progress last stored (nil before a first attempt's first
	// checkpoint).
	from, cur *offsets.CopyProgress

	// What the attempt learns as it goes (bind, check, chunks, keysRead).
	point       snapshotPoint
	repl        *pgconn.PgConn // the connection of a resumed attempt's temporary slot, until imported
	tracker     *delivery.Tracker
	out         delivery.CopySink // where the copy's records go
	relfilenode uint32
	shape       string
	mark        map[int32]int64
	pages       int64 // pages per chunk
	chunkCount  int
	cp          *checkpoints
}

// resumeFor decides how ts's copy runs: it resumes ts's progress when it
// can, starts a new resumable copy for a table of more than one chunk, and
// returns nil for a table of one chunk. Progress that cannot be resumed is
// discarded (its slot dropped), with the reason in the log.
func (c *copier) resumeFor(ctx context.Context, ts *phases.State, log *zap.Logger) (*resumable, error) {
	if ts.OID == 0 {
		return nil, nil
	}
	db, err := pgsource.Dial(ctx, c.pgcfg)
	if err != nil {
		return nil, err
	}
	defer db.Close(context.Background())
	name := ts.Table.Table
	if p := ts.Copy; p != nil {
		why, err := c.whyNotResume(ctx, db, ts, log)
		if err != nil {
			return nil, err
		}
		if why == "" {
			c.slots.take(p.Slot)
			log.Info("resuming copy", zap.Int("chunks_done", p.DoneCount()), zap.Int("chunks", p.Chunks), zap.Int64("rows_done", p.Rows),
				zap.Stringer("base_lsn", schema.LSN(p.BaseLSN)), zap.Stringer("first_lsn", schema.LSN(p.SnapshotLSN)), zap.String("slot", p.Slot))
			return &resumable{c: c, name: name, ts: ts, log: log, slot: p.Slot, from: p, cur: p}, nil
		}
		log.Warn("the copy's progress cannot be resumed: copying the table from the start", zap.String("why", why),
			zap.Int("chunks_done", p.DoneCount()), zap.Int("chunks", p.Chunks), zap.String("slot", p.Slot))
		if err := c.discardProgress(ctx, name); err != nil {
			return nil, err
		}
		if err := pgsource.DropCopySlot(ctx, db, p.Slot, log); err != nil {
			return nil, err
		}
	}
	var info tableInfo
	var nsp, rel string
	err = db.QueryRow(ctx, `SELECT greatest(`+pgsource.EstimatedRowsSQL+`, 0)::bigint, c.relpages, n.nspname, c.relname
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, ts.OID).
		Scan(&info.reltuples, &info.relpages, &nsp, &rel)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil // gone: the copy says so
	}
	if err != nil {
		return nil, fmt.Errorf("estimate the size of %s: %w", name, err)
	}
	if len(chunks(info, c.cfg.snapshot.ChunkRows)) <= 1 {
		return nil, nil
	}
	if ob := c.plans.Outbox; ob != nil && ob.IsTable(nsp, rel) {
		// Its rows are events: a row inserted into a chunk not done while
		// the copy was down would be written twice (its insert, then its
		// snapshot row), a duplicate event rather than a repeated upsert.
		return nil, nil
	}
	slot := pgsource.CopySlotName(c.cfg.slot, ts.OID)
	c.slots.take(slot)
	return &resumable{c: c, name: name, ts: ts, log: log, slot: slot}, nil
}

// whyNotResume returns why ts's progress cannot be resumed, or "". A slot
// still held by an earlier instance's walsender is freed first.
func (c *copier) whyNotResume(ctx context.Context, db *pgx.Conn, ts *phases.State, log *zap.Logger) (string, error) {
	p := ts.Copy
	if err := p.Validate(); err != nil {
		return "invalid progress: " + err.Error(), nil
	}
	if p.ResnapshotMs != ts.ResnapshotMs {
		return "a new copy was requested since (resnapshot)", nil
	}
	s, err := pgsource.FreeCopySlot(ctx, db, p.Slot, log)
	switch {
	case err != nil:
		return "", err
	case !s.Exists:
		return fmt.Sprintf("its replication slot %s is gone", p.Slot), nil
	case s.WALStatus == "lost":
		return fmt.Sprintf("its replication slot %s lost WAL it needs (max_slot_wal_keep_size)", p.Slot), nil
	case s.ConfirmedFlush > schema.LSN(p.BaseLSN):
		return fmt.Sprintf("its replication slot %s was confirmed at %s, past the copy's base %s", p.Slot, s.ConfirmedFlush, schema.LSN(p.BaseLSN)), nil
	}
	info, err := describeTable(ctx, db, ts.Table.Table, ts.OID, c.cfg.publication, c.cfg.keys)
	if err != nil {
		return "", err
	}
	node, err := relFileNode(ctx, db, info.rel.OID)
	if err != nil {
		return "", err
	}
	if why := sameTable(p, node, copyShape(info, ts.ResnapshotFilter)); why != "" {
		return why, nil
	}
	return "", nil
}

// sameTable returns why a table with relfilenode node and shape is not the
// one p was copied from, or "".
func sameTable(p *offsets.CopyProgress, node uint32, shape string) string {
	switch {
	case node != p.RelFileNode:
		return fmt.Sprintf("the table was rewritten since (relfilenode %d, was %d: VACUUM FULL, CLUSTER, TRUNCATE or ALTER TABLE)", node, p.RelFileNode)
	case shape != p.Shape:
		return "the table's columns, key, replica identity or row filter changed since"
	}
	return ""
}

// copyShape fingerprints what a copy's records depend on besides the
// rows: the published columns and key (schema.ShapeFingerprint) and the
// row filters.
func copyShape(info tableInfo, resnapshotFilter string) string {
	h := fnv.New64a()
	h.Write([]byte(info.rowFilter))
	h.Write([]byte{0})
	h.Write([]byte(resnapshotFilter))
	return schema.ShapeFingerprint(info.rel) + "." + strconv.FormatUint(h.Sum64(), 36)
}

func relFileNode(ctx context.Context, conn *pgx.Conn, oid uint32) (uint32, error) {
	var node uint32
	if err := conn.QueryRow(ctx, `SELECT relfilenode FROM pg_class WHERE oid = $1`, oid).Scan(&node); err != nil {
		return 0, fmt.Errorf("read the relfilenode of table %d: %w", oid, err)
	}
	return node, nil
}

// discardProgress stores the table's state without progress, and waits
// for it: a crash after it cannot resume what is discarded.
func (c *copier) discardProgress(ctx context.Context, name string) error {
	if cur := c.phases.Get(name); cur == nil || cur.Copy == nil {
		return nil
	}
	_, wait := c.phases.Update(name, func(next *phases.State, _ schema.LSN) { next.Copy = nil })
	return wait(ctx)
}

// takeSnapshot creates the copy's snapshot: on a temporary slot (one
// chunk, or a resumed copy: S2 at L2), or on the new persistent slot (a
// resumable copy's first attempt).
func (c *copier) takeSnapshot(ctx context.Context, repl *pgconn.PgConn, rs *resumable) (snapshotPoint, error) {
	if rs == nil || rs.from != nil {
		return c.createSnapshot(ctx, repl)
	}
	return c.createCopySlot(ctx, repl, rs.slot)
}

// bind gives rs the attempt's snapshot (and the replication connection
// that made it), tracker and sink.
func (rs *resumable) bind(point snapshotPoint, repl *pgconn.PgConn, tracker *delivery.Tracker, out delivery.CopySink) {
	if rs != nil {
		rs.point, rs.repl, rs.tracker, rs.out = point, repl, tracker, out
	}
}

// imported is called once every chunk connection has imported the
// attempt's snapshot: a resumed attempt closes the connection of its
// temporary slot, which dies with it; its catch-up streams the persistent
// slot from L2 (catchupPoint), so the two slots coexist only while the
// chunk connections import the snapshot.
func (rs *resumable) imported() {
	if rs == nil || rs.from == nil || rs.repl == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = rs.repl.Close(ctx)
	rs.repl = nil
}

// catchupConn and catchupPoint are where the private catch-up streams
// from: the attempt's snapshot on the connection that made it, or, for a
// resumed attempt, the persistent slot from L2 on a connection of its own.
func (rs *resumable) catchupConn(repl *pgconn.PgConn) *pgconn.PgConn {
	if rs == nil || rs.from == nil {
		return repl
	}
	return nil
}

func (rs *resumable) catchupPoint(point snapshotPoint) snapshotPoint {
	if rs == nil || rs.from == nil {
		return point
	}
	return snapshotPoint{slot: rs.slot, lsn: point.lsn, persistent: true}
}

// check reads, under the attempt's snapshot, the table's relfilenode and
// shape: a first attempt records them, a resumed one must find those of
// the first attempt (else the table was rewritten after resumeFor looked:
// the copy fails and its retry starts over).
func (rs *resumable) check(ctx context.Context, conn *pgx.Conn, info tableInfo) error {
	if rs == nil {
		return nil
	}
	node, err := relFileNode(ctx, conn, info.rel.OID)
	if err != nil {
		return err
	}
	shape := copyShape(info, rs.ts.ResnapshotFilter)
	if rs.from == nil {
		rs.relfilenode, rs.shape = node, shape
		return nil
	}
	if why := sameTable(rs.from, node, shape); why != "" {
		return fmt.Errorf("resume the copy of %s: %s", rs.name, why)
	}
	return nil
}

// chunks is the attempt's chunks: the plan of the first attempt, without
// the chunks done.
func (rs *resumable) chunks(info tableInfo, chunkRows int64) []chunk {
	if rs == nil {
		return chunks(info, chunkRows)
	}
	if rs.from == nil {
		parts := chunks(info, chunkRows)
		rs.pages, rs.chunkCount = max(info.relpages, 1), len(parts)
		if len(parts) > 1 {
			rs.pages = parts[0].to - parts[0].from
		}
		return parts
	}
	p := rs.from
	rs.pages, rs.chunkCount = p.ChunkPages, p.Chunks
	var out []chunk
	for i := 0; i < p.Chunks; i++ {
		if p.IsDone(i) {
			continue
		}
		ch := chunk{from: int64(i) * p.ChunkPages, to: int64(i+1) * p.ChunkPages, filter: info.rowFilter}
		if i == p.Chunks-1 {
			ch.to = -1
		}
		out = append(out, ch)
	}
	return out
}

// indexOf is the number of chunk ch in the plan.
func (rs *resumable) indexOf(ch chunk) int { return int(ch.from / rs.pages) }

// progress is the progress after cur with the chunks of done added and,
// when base is not 0, base as the base LSN.
func (rs *resumable) progress(done []*chunkUnit, base schema.LSN) *offsets.CopyProgress {
	cur := rs.cur
	if cur == nil {
		cur = &offsets.CopyProgress{Slot: rs.slot, SnapshotLSN: uint64(rs.point.lsn), BaseLSN: uint64(rs.point.lsn),
			ChunkPages: rs.pages, Chunks: rs.chunkCount, RelFileNode: rs.relfilenode, Shape: rs.shape, StaleMark: rs.mark,
			ResnapshotMs: rs.ts.ResnapshotMs}
	}
	idx := make([]int, len(done))
	var rows int64
	for i, u := range done {
		idx[i], rows = u.idx, rows+u.rows
	}
	next := cur.WithDone(idx, rows)
	if base != 0 {
		next.BaseLSN = uint64(base)
	}
	return next
}

// resumedRows is the number of rows earlier attempts copied in the
// chunks this one skips.
func (rs *resumable) resumedRows() int64 {
	if rs == nil || rs.from == nil {
		return 0
	}
	return rs.from.Rows
}

// estimate is the rows this attempt copies, from the table's estimate
// (progress bars and ETAs count the rows copied by this attempt against
// it), and counts the rows it skips.
func (rs *resumable) estimate(reltuples int64, prog *runningCopy) int64 {
	skipped := rs.resumedRows()
	if skipped == 0 {
		return reltuples
	}
	prog.resumed(skipped)
	return max(reltuples-skipped, 0)
}

// beforeKeys brings a resumed copy's records up to its snapshot before
// the topic's keys are read: the changes in [B, L2), then the checkpoint
// that makes L2 the base.
func (rs *resumable) beforeKeys(ctx context.Context, rel *schema.Relation) error {
	if rs == nil || rs.from == nil {
		return nil
	}
	rs.cp = &checkpoints{rs: rs, last: time.Now()}
	if err := rs.streamToSnapshot(ctx, rel); err != nil {
		return err
	}
	return rs.cp.checkpoint(ctx, rs.point.lsn, true)
}

// staleMark is the mark for the read of the topic's keys: nil on a first
// attempt (every live key counts), the first attempt's end offsets on a
// resumed one.
func (rs *resumable) staleMark() map[int32]int64 {
	if rs == nil || rs.from == nil {
		return nil
	}
	if rs.from.StaleMark == nil {
		return map[int32]int64{} // the topic was empty: every record is this copy's
	}
	return rs.from.StaleMark
}

// keysRead records, on a first attempt, the topic's end offsets the read
// of its keys went to: the mark of later attempts. A resumed attempt
// checks that the topic still holds what the copy wrote: a topic whose
// partitions changed, or whose end went back (deleted and created again),
// may have lost the done chunks' records or moved keys between partitions
// (the mark is per partition): the copy's progress is discarded and the
// copy fails, so that its retry starts over.
func (rs *resumable) keysRead(ctx context.Context, ends map[int32]int64) error {
	switch {
	case rs == nil:
		return nil
	case rs.from == nil:
		rs.mark = ends
		return nil
	}
	if why := topicChanged(rs.from.StaleMark, ends); why != "" {
		if err := rs.c.discardProgress(ctx, rs.name); err != nil {
			return err
		}
		return fmt.Errorf("resume the copy of %s: its topic %s since the first attempt; the retry copies the table from the start", rs.name, why)
	}
	return nil
}

// topicChanged says how a topic whose end offsets are ends is no longer
// the one whose end offsets were mark, or "".
func topicChanged(mark, ends map[int32]int64) string {
	if len(mark) == 0 {
		return "" // no topic, or the outbox table's
	}
	if len(ends) != len(mark) {
		return fmt.Sprintf("has %d partitions, had %d", len(ends), len(mark))
	}
	for p, m := range mark {
		if e, ok := ends[p]; !ok || e < m {
			return fmt.Sprintf("partition %d ends at %d, before %d", p, e, m)
		}
	}
	return ""
}

// finish checkpoints a copy whose chunks are all done, with its stale-key
// tombstones: a crash in the catch-up then resumes with nothing to copy.
func (rs *resumable) finish(ctx context.Context) error {
	if rs == nil {
		return nil
	}
	return rs.cp.checkpoint(ctx, 0, true)
}

// end ends the attempt: once the table is handed over, the copy slot is
// dropped (the sweep drops it later if this fails); otherwise it stays
// for a resume, or for the sweep if no progress names it.
func (rs *resumable) end() {
	if rs == nil {
		return
	}
	defer rs.c.slots.release(rs.slot)
	ts := rs.c.phases.Get(rs.name)
	if ts == nil || ts.Phase != offsets.PhaseReady && ts.Phase != offsets.PhaseCatchup {
		return
	}
	if err := rs.c.dropCopySlot(context.Background(), rs.slot); err != nil {
		rs.log.Warn("drop the copy's replication slot after the handover (dropped at the next discovery instead)", zap.String("slot", rs.slot), zap.Error(err))
	}
}
