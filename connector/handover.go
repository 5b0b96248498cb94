package connector

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// handover ends a copy (seed: handover). A copy worker whose records up to
// pos are acknowledged may hand over only when pos >= the main worker's
// position D, under the pipeline mutex: it stores ready(pos) if pos == D,
// else catchup(pos), in the offsets topic, and only then does the main
// worker see the new phase. It returns false when the main worker is still
// ahead (keep catching up).
//
// Crash ordering: before the phase record is durable, the table reads back
// as copying, i.e. init, and is copied again from a new snapshot, or
// resumed from its progress (copy_resume.go; snapshot rows may repeat;
// they are upserts); after it, the main worker skips every
// transaction with commit LSN < pos, which the copy worker emitted.
//
// acked, when not nil, waits until the copy's records up to pos are
// acknowledged. It runs under the mutex: the main worker waits meanwhile
// and cannot move past pos, so a copy worker that reaches the main worker
// hands over even under a steady stream of writes (waiting for the acks
// first would let the main worker move on every time).
//
// In exactly-once mode (tx not nil) the phase record is the last record of
// the copy's Kafka transaction, and storing it is committing the
// transaction: all of the copy's records and its handover become visible
// together, or none of them.
func (c *copier) handover(ctx context.Context, ts *tableState, pos schema.LSN, acked func() error, tx *kgo.Client) (bool, error) {
	c.p.hooks.call(HookBeforeHandover, ts.Table.Table)
	c.phases.mu.Lock()
	defer c.phases.mu.Unlock()
	main := c.phases.mainPos
	if pos < main {
		return false, nil
	}
	if acked != nil {
		if err := acked(); err != nil {
			return false, err
		}
	}
	next := &tableState{Table: ts.Table}
	if cur := c.phases.view[ts.Table.Table]; cur != nil {
		next.Shape = cur.Shape // the main worker's, written while the copy ran
	}
	next.Phase = offsets.PhaseCatchup
	if pos == main {
		next.Phase = offsets.PhaseReady
	}
	next.LSN = uint64(pos)
	next.Attempts, next.LastError, next.Retry = 0, "", ""
	// A requested re-copy is done: a later copy of the table (a retry
	// after a crash, a slot-loss repair) copies every row again, and is
	// no re-copy a signal asked for (its markers, snapshotrun.go).
	next.ResnapshotFilter, next.ResnapshotType = "", ""
	next.Copy = nil // the copy's progress ends with it; its slot is dropped (copy_resume.go)
	store := c.p.saveTable
	if tx != nil {
		store = func(ctx context.Context, ts *tableState) error { return c.commitHandover(ctx, tx, ts) }
	}
	if err := store(ctx, next); err != nil {
		// Not visible yet: the table stays copying, this copy fails and is
		// retried from a new snapshot (its records below pos are upserts
		// or changes a new snapshot covers). If the write did land, the
		// errored record written next supersedes it.
		return false, fmt.Errorf("store the handover of %s: %w", ts.Table.Table, err)
	}
	c.phases.setLocked(next)
	c.p.hooks.call(HookHandedOver+next.Phase, ts.Table.Table)
	c.log.Info("handed over", zap.String("table", ts.Table.Table), zap.String("phase", next.Phase),
		zap.Stringer("lsn", pos), zap.Stringer("main_lsn", main))
	return true, nil
}

// saveTable writes a table's phase to the offsets topic and waits for it,
// at most until ctx ends (or 30s). ts is shared with readers of the phase
// view, so it is not modified.
//
// It does not use ProduceSync: the client runs with the pipeline's hard
// context (kgo.WithContext), and once an abort cancels that, a record
// already handed to the client is finished only by Close, which Run calls
// after every goroutine has returned, this one included. ProduceSync
// waited for that promise forever; here an ended ctx returns, and Close
// fails the record later. Nil still means acknowledged.
func (p *Pipeline) saveTable(ctx context.Context, ts *tableState) error {
	return p.sendTable(ctx, ts)()
}

// sendTable enqueues ts's record (enqueueTable) and returns the wait for
// it, as saveTable describes: a writer calls sendTable under the pipeline
// mutex, so its record keeps its place in the order of the states, and
// waits after releasing it.
func (p *Pipeline) sendTable(ctx context.Context, ts *tableState) func() error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	done := make(chan error, 1)
	p.enqueueTable(ctx, ts, func(err error) { done <- err })
	return func() error {
		defer cancel()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("write the phase of %s to the offsets topic: %w", ts.Table.Table, ctx.Err())
		}
	}
}
