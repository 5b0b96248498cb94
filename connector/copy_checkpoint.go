package connector

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds a resumable copy's checkpoints (copy_resume.go): which
// chunks Kafka holds, and the progress record that says so. The delivery
// mode matters in one place only, the function pair checkpointAtLeastOnce
// and checkpointExactlyOnce.

// copyCheckpointEvery is how often, at most, a resumable copy stores its
// progress: at the end of a chunk once this long has passed since the
// last checkpoint. In exactly-once mode each checkpoint commits the copy's
// Kafka transaction, and the chunk writers pause meanwhile.
var copyCheckpointEvery = 3 * time.Second

// checkpoints is a resumable copy's per-chunk bookkeeping, shared by its
// chunk writers.
type checkpoints struct {
	rs    *resumable
	units map[int]*chunkUnit // by chunk number; built before the writers start, read-only after

	mu   sync.Mutex // held by the one checkpoint running
	last time.Time  // the last checkpoint (guarded by mu)
	// writers are the chunk writers' pause locks (exactly-once mode; guarded
	// by mu): a writer holds its own while it hands a record to the
	// producer, an exactly-once checkpoint holds them all while it ends the
	// Kafka transaction (kgo forbids producing concurrently with
	// EndTransaction). One lock per writer, not one shared by all: a lock
	// taken per record must not be a cache line every writer fights over.
	writers []*sync.Mutex
}

// chunkUnit is one chunk of this attempt: a tracker unit holding the
// chunk's records (their Context), and its row count.
type chunkUnit struct {
	idx  int
	ack  *txAck
	rows int64 // written by the chunk's writer only, read once ended
	// ended: the chunk's COPY is over and every one of its records was
	// handed to the producer (the tracker unit is committed).
	ended atomic.Bool
	// stored: a checkpoint has stored the chunk as done (guarded by
	// checkpoints.mu).
	stored bool
}

// newCheckpoints makes a unit per chunk of parts. The units are opened
// in the copy's tracker after its snapshot unit, before any writer starts.
func (rs *resumable) newCheckpoints(parts []chunk) *checkpoints {
	if rs == nil {
		return nil
	}
	k := &checkpoints{rs: rs, units: make(map[int]*chunkUnit, len(parts)), last: time.Now()}
	for _, ch := range parts {
		i := rs.indexOf(ch)
		k.units[i] = &chunkUnit{idx: i, ack: rs.tracker.Begin()}
	}
	rs.cp = k
	return k
}

// end commits u's tracker unit: every record of the chunk is handed over.
func (k *checkpoints) end(u *chunkUnit) {
	if u == nil {
		return
	}
	k.rs.tracker.Commit(u.ack, k.rs.point.lsn)
	u.ended.Store(true)
}

// beginChunk makes ch's unit the one of the rows that follow, and, in
// exactly-once mode, gives the writer its pause lock before its first
// record.
func (w *chunkWriter) beginChunk(ch chunk) {
	k := w.out.cp
	if k == nil {
		return
	}
	w.unit = k.units[k.rs.indexOf(ch)]
	if k.rs.tx != nil && w.pause == nil {
		w.pause = new(sync.Mutex)
		k.mu.Lock()
		k.writers = append(k.writers, w.pause)
		k.mu.Unlock()
	}
}

// produce hands rec to the producer, under the writer's pause lock.
func (w *chunkWriter) produce(rec *kgo.Record) error {
	if w.pause != nil {
		w.pause.Lock()
		defer w.pause.Unlock()
	}
	return w.out.produce(rec)
}

// tag puts rec, a row of the current chunk, in the chunk's unit.
func (w *chunkWriter) tag(rec *kgo.Record) {
	if w.unit != nil {
		rec.Context = w.unit.ack
		w.unit.rows++
	}
}

// endChunk ends the current chunk's unit once its COPY is over: at once,
// or, when this writer holds back the chunk's last record (row), when that
// record is handed over (heldEnds). Then it checkpoints if one is due.
func (w *chunkWriter) endChunk(ctx context.Context) error {
	u := w.unit
	if u == nil {
		return nil
	}
	w.unit = nil
	w.out.c.p.hooks.call(HookChunkCopied, w.out.table)
	if w.held != nil && w.held.Context == u.ack {
		w.heldEnds = u
	} else {
		w.out.cp.end(u)
	}
	return w.out.cp.maybe(ctx)
}

// maybe checkpoints when the last one is older than copyCheckpointEvery;
// when another writer is checkpointing, it leaves it to that one.
func (k *checkpoints) maybe(ctx context.Context) error {
	if !k.mu.TryLock() {
		return nil
	}
	defer k.mu.Unlock()
	if time.Since(k.last) < copyCheckpointEvery {
		return nil
	}
	return k.checkpointLocked(ctx, 0, false)
}

// checkpoint stores the progress now: with base (not 0) as its new base
// LSN, and even when no chunk is newly done if force.
func (k *checkpoints) checkpoint(ctx context.Context, base schema.LSN, force bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.checkpointLocked(ctx, base, force)
}

func (k *checkpoints) checkpointLocked(ctx context.Context, base schema.LSN, force bool) error {
	var err error
	if k.rs.tx != nil {
		err = k.checkpointExactlyOnce(ctx, base, force)
	} else {
		err = k.checkpointAtLeastOnce(ctx, base, force)
	}
	k.last = time.Now()
	return err
}

// checkpointAtLeastOnce: a chunk is done once every one of its records is
// acknowledged; the progress record then goes through the pipeline's one
// ordered writer of table states (sendTable), and is waited for.
func (k *checkpoints) checkpointAtLeastOnce(ctx context.Context, base schema.LSN, force bool) error {
	if err := k.rs.tracker.Err(); err != nil {
		return err // a record failed: nothing more is done
	}
	done := k.settled()
	if len(done) == 0 && !force {
		return nil
	}
	next := k.rs.progress(done, base)
	rs := k.rs
	rs.c.phases.mu.Lock()
	cur := rs.c.phases.view[rs.name]
	if cur == nil {
		rs.c.phases.mu.Unlock()
		return fmt.Errorf("internal: %s has no phase during its copy", rs.name)
	}
	ts := *cur
	ts.Copy = next
	rs.c.phases.setLocked(&ts)
	wait := rs.c.p.sendTable(ctx, &ts) // under the mutex: in the order of the states
	rs.c.phases.mu.Unlock()
	if err := wait(); err != nil {
		return fmt.Errorf("store the copy's progress: %w", err)
	}
	k.stored(done, next)
	return nil
}

// checkpointExactlyOnce: the chunk writers pause, every record handed
// over is flushed, and the copy's Kafka transaction is committed with the
// progress record as its last record, then the next one begins. A chunk is
// done when all of its records were in the committed transaction; records
// of the chunks still being copied are committed too, without the chunk
// being done: a resume copies it again (its rows repeat as upserts).
func (k *checkpoints) checkpointExactlyOnce(ctx context.Context, base schema.LSN, force bool) error {
	for _, m := range k.writers {
		m.Lock()
		defer m.Unlock()
	}
	rs := k.rs
	tx := rs.tx
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tx.Flush(ctx); err != nil {
		return err
	}
	if err := rs.tracker.Err(); err != nil {
		return err
	}
	done := k.settled()
	if len(done) == 0 && !force {
		return nil
	}
	next := rs.progress(done, base)
	rs.c.phases.mu.Lock()
	cur := rs.c.phases.view[rs.name]
	rs.c.phases.mu.Unlock()
	if cur == nil {
		return fmt.Errorf("internal: %s has no phase during its copy", rs.name)
	}
	t := cur.Table
	t.Copy = next
	t.UpdatedMs = time.Now().UnixMilli()
	if err := tx.ProduceSync(ctx, offsets.TableRecord(rs.c.p.cfg.Kafka.OffsetsTopic, rs.c.p.cfg.Name, t)).FirstErr(); err != nil {
		return fmt.Errorf("store the copy's progress: %w", err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return txnError(rs.c.p.cfg.Name+"-copy", fmt.Errorf("commit the copy's Kafka transaction at a checkpoint: %w", err))
	}
	rs.c.p.metrics.KafkaTransactions.WithLabelValues("commit").Inc()
	// Committed: only now does the pipeline's view hold the progress (a
	// later state of the table, such as errored, carries it). A state
	// another writer stored since cur was read is stored again with it, so
	// that the table's last record is its newest state.
	rs.c.phases.mu.Lock()
	if now := rs.c.phases.view[rs.name]; now != nil {
		ts := *now
		ts.Copy = next
		rs.c.phases.setLocked(&ts)
		if now != cur {
			rs.c.phases.storeLocked(&ts)
		}
	}
	rs.c.phases.mu.Unlock()
	k.stored(done, next)
	if err := tx.BeginTransaction(); err != nil {
		return txnError(rs.c.p.cfg.Name+"-copy", fmt.Errorf("begin the copy's next Kafka transaction: %w", err))
	}
	return nil
}

// settled returns the chunks not yet stored whose records are all
// acknowledged (at-least-once) or flushed (exactly-once, in the open
// Kafka transaction), with no record failed.
func (k *checkpoints) settled() []*chunkUnit {
	t := k.rs.tracker
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return nil
	}
	var out []*chunkUnit
	for _, u := range k.units {
		if !u.stored && u.ended.Load() && u.ack.closed && u.ack.pending == 0 {
			out = append(out, u)
		}
	}
	return out
}

// stored records that done are stored, in progress p.
func (k *checkpoints) stored(done []*chunkUnit, p *offsets.CopyProgress) {
	for _, u := range done {
		u.stored = true
	}
	k.rs.cur = p
	k.rs.c.p.hooks.call(HookCopyCheckpoint, k.rs.name)
	k.rs.log.Debug("copy checkpoint", zap.Int("chunks_done", p.DoneCount()), zap.Int("chunks", p.Chunks),
		zap.Stringer("base_lsn", schema.LSN(p.BaseLSN)))
}
