package snapshot

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds a resumable copy's checkpoints (copy_resume.go): which
// chunks Kafka holds, and the progress record that says so. How the
// progress is made durable with the records it counts is the copy sink's
// decision (delivery: Settle and Checkpoint).

// checkpoints is a resumable copy's per-chunk bookkeeping, shared by its
// chunk writers.
type checkpoints struct {
	rs    *resumable
	units map[int]*chunkUnit // by chunk number; built before the writers start, read-only after

	mu   sync.Mutex // held by the one checkpoint running
	last time.Time  // the last checkpoint (guarded by mu)
	// writers are the chunk writers' pause locks (guarded by mu): a writer
	// holds its own while it hands a record to the sink, a checkpoint holds
	// them all while it runs (in exactly-once mode it ends the Kafka
	// transaction, and kgo forbids producing concurrently with
	// EndTransaction). One lock per writer, not one shared by all: a lock
	// taken per record must not be a cache line every writer fights over.
	writers []*sync.Mutex
}

// chunkUnit is one chunk of this attempt: a tracker unit holding the
// chunk's records (their Context), and its row count.
type chunkUnit struct {
	idx  int
	ack  *delivery.TxAck
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

// beginChunk makes ch's unit the one of the rows that follow, and gives
// the writer its pause lock before its first record.
func (w *chunkWriter) beginChunk(ch chunk) {
	k := w.out.cp
	if k == nil {
		return
	}
	w.unit = k.units[k.rs.indexOf(ch)]
	if w.pause == nil {
		w.pause = new(sync.Mutex)
		k.mu.Lock()
		k.writers = append(k.writers, w.pause)
		k.mu.Unlock()
	}
}

// produce hands rec to the sink once there is room, under the writer's
// pause lock.
func (w *chunkWriter) produce(rec *kgo.Record) error {
	if w.pause != nil {
		w.pause.Lock()
		defer w.pause.Unlock()
	}
	return w.w.SendWhenRoom(w.out.ctx, rec)
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
	w.out.c.call(HookChunkCopied, w.out.table)
	if w.held != nil && w.held.Context == u.ack {
		w.heldEnds = u
	} else {
		w.out.cp.end(u)
	}
	return w.out.cp.maybe(ctx)
}

// maybe checkpoints when the last one is older than copierConfig.checkpointEvery;
// when another writer is checkpointing, it leaves it to that one.
func (k *checkpoints) maybe(ctx context.Context) error {
	if !k.mu.TryLock() {
		return nil
	}
	defer k.mu.Unlock()
	if time.Since(k.last) < k.rs.c.cfg.checkpointEvery {
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
	defer func() { k.last = time.Now() }()
	for _, m := range k.writers {
		m.Lock()
		defer m.Unlock()
	}
	rs := k.rs
	if err := rs.out.Settle(ctx); err != nil {
		return err
	}
	if err := rs.tracker.Err(); err != nil {
		return err // a record failed: nothing more is done
	}
	done := k.settled()
	if len(done) == 0 && !force {
		return nil
	}
	next := rs.progress(done, base)
	cur := rs.c.phases.Get(rs.name)
	if cur == nil {
		return fmt.Errorf("internal: %s has no phase during its copy", rs.name)
	}
	ts := *cur
	ts.Copy = next
	// The view takes the progress (and the ordered writer of table states
	// stores it) with the table's newest state, whatever another writer
	// changed since cur was read.
	setState := func(ts *phases.State) func(context.Context) error {
		_, wait := rs.c.phases.Update(rs.name, func(n *phases.State, _ schema.LSN) { n.Copy = ts.Copy })
		return wait
	}
	if err := rs.out.Checkpoint(ctx, &ts, setState); err != nil {
		return fmt.Errorf("store the copy's progress: %w", err)
	}
	k.stored(done, next)
	return nil
}

// settled returns the chunks not yet stored whose records are all
// acknowledged (in exactly-once mode, flushed into the open Kafka
// transaction: settle), with no record failed.
func (k *checkpoints) settled() []*chunkUnit {
	units := make([]*chunkUnit, 0, len(k.units))
	acks := make([]*delivery.TxAck, 0, len(k.units))
	for _, u := range k.units {
		units = append(units, u)
		acks = append(acks, u.ack) // set when the unit is made, never changed
	}
	idx := k.rs.tracker.Settled(acks, func(i int) bool { return units[i].stored || !units[i].ended.Load() })
	if len(idx) == 0 {
		return nil
	}
	out := make([]*chunkUnit, len(idx))
	for j, i := range idx {
		out[j] = units[i]
	}
	return out
}

// stored records that done are stored, in progress p.
func (k *checkpoints) stored(done []*chunkUnit, p *offsets.CopyProgress) {
	for _, u := range done {
		u.stored = true
	}
	k.rs.cur = p
	k.rs.c.call(HookCopyCheckpoint, k.rs.name)
	k.rs.log.Debug("copy checkpoint", zap.Int("chunks_done", p.DoneCount()), zap.Int("chunks", p.Chunks),
		zap.Stringer("base_lsn", schema.LSN(p.BaseLSN)))
}
