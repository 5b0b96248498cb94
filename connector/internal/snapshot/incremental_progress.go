package snapshot

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file keeps an incremental snapshot's progress: which chunks are
// done (their rows durable) and where that is stored. At-least-once
// stores it through the ordered writer of table states once a chunk's
// unit is durable; exactly-once writes it with the chunk's rows, in the
// Kafka transaction that holds them (delivery.MainSink.WithUnit decides),
// and only notes it in memory once they are committed.

// store writes the table's progress into its offsets record and waits
// for it.
func (it *incrementalTable) store(ctx context.Context) error {
	it.mu.Lock()
	raw, err := json.Marshal(it.prog)
	it.mu.Unlock()
	if err != nil {
		return err
	}
	_, wait := it.s.phases.Update(it.name, func(ts *phases.State, _ schema.LSN) {
		ts.Incremental = offsets.RawJSON(raw)
		ts.ResnapshotMs = max(ts.ResnapshotMs, it.reqMs)
	})
	return wait(ctx)
}

// inUnit is the table's emit.ProgressFunc (stream goroutine): the
// table's state whose progress has chunk done, besides the chunks whose
// rows are durable and those written in units not lost (each in a Kafka
// transaction committed already, or in the open one, with chunk's:
// exactly-once commits one at a time, and an abort loses every unit not
// committed, Tracker.Restart). The delivery writes it in unit, after
// the chunk's rows, so that the progress read back after a crash claims
// exactly the chunks whose rows were committed. The chunk is counted as
// closed here, stored.
func (it *incrementalTable) inUnit(chunk watermark.Chunk, rows int, unit *delivery.TxAck) *phases.State {
	it.mu.Lock()
	defer it.mu.Unlock()
	p := it.prog
	p.Done = slices.Clone(it.prog.Done)
	for _, cc := range append(it.closed, closedChunk{chunk: chunk, rows: rows, unit: unit}) {
		if _, lost := it.c.main.UnitState(cc.unit); lost {
			continue
		}
		if err := p.MarkDone(cc.chunk, cc.rows); err != nil {
			it.log.Warn("incremental progress with a window's rows", zap.Error(err))
			return nil
		}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	ts := it.s.phases.Get(it.name)
	if ts == nil || ts.Phase != offsets.PhaseReady {
		return nil
	}
	next := *ts
	next.Incremental = offsets.RawJSON(raw)
	next.ResnapshotMs = max(next.ResnapshotMs, it.reqMs)
	it.closed = append(it.closed, closedChunk{chunk: chunk, rows: rows, unit: unit, stored: true})
	return &next
}

// markDone moves the closed chunks whose rows are durable (their unit:
// delivery.Tracker.UnitState) into the progress; it reports whether any
// moved, whether each that moved had its progress stored with its unit
// already (inUnit), and errWindowLost for a unit that was lost (after
// moving the durable ones: a restart resumes from them).
func (it *incrementalTable) markDone() (moved, stored bool, err error) {
	it.mu.Lock()
	defer it.mu.Unlock()
	kept := it.closed[:0]
	stored = true
	lost := false
	for _, cc := range it.closed {
		durable, gone := it.c.main.UnitState(cc.unit)
		if gone {
			lost = true
			continue
		}
		if !durable {
			kept = append(kept, cc)
			continue
		}
		if err := it.prog.MarkDone(cc.chunk, cc.rows); err != nil {
			return moved, stored, err
		}
		moved = true
		stored = stored && cc.stored
	}
	it.closed = kept
	if lost {
		return moved, stored, errWindowLost
	}
	return moved, stored, nil
}

// note puts the progress in the table's state in memory only: its record
// is in the offsets topic already (inUnit), and a record written now by
// the ordered writer of table states could land after a newer one
// written with a unit, taking chunks back.
func (it *incrementalTable) note() {
	it.mu.Lock()
	raw, err := json.Marshal(it.prog)
	it.mu.Unlock()
	if err != nil {
		return
	}
	it.s.phases.Note(it.name, func(ts *phases.State) {
		ts.Incremental = offsets.RawJSON(raw)
		ts.ResnapshotMs = max(ts.ResnapshotMs, it.reqMs)
	})
}

// keep records the chunks made durable: in memory only when their
// progress was written with their units, else stored and waited for.
func (it *incrementalTable) keep(ctx context.Context, moved, stored bool) error {
	switch {
	case !moved:
		return nil
	case stored:
		it.note()
		return nil
	}
	return it.store(ctx)
}

// checkpoints stores the progress once a second while chunks become
// durable, until ctx ends.
func (it *incrementalTable) checkpoints(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		moved, stored, err := it.markDone()
		if kerr := it.keep(ctx, moved, stored); kerr != nil && ctx.Err() == nil && err == nil {
			err = kerr
		}
		if err != nil {
			return err
		}
	}
}

// settle waits until every window's rows are durable and stores the
// progress.
func (it *incrementalTable) settle(ctx context.Context) error {
	for {
		moved, stored, err := it.markDone()
		if kerr := it.keep(ctx, moved, stored); err == nil {
			err = kerr
		}
		if err != nil {
			return err
		}
		it.mu.Lock()
		left := len(it.closed)
		it.mu.Unlock()
		if left == 0 {
			return it.store(ctx)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// settleUnit waits until unit is durable.
func (it *incrementalTable) settleUnit(ctx context.Context, unit *delivery.TxAck) error {
	for {
		durable, lost := it.c.main.UnitState(unit)
		switch {
		case lost:
			return errWindowLost
		case durable:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
