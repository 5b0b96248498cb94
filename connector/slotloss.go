package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is on_slot_loss: what happens when the slot the offsets stand
// on is missing or invalidated. With "fail" that is an unsafe resume
// (exit 3, setup.go's slotLost). With "resnapshot" the gap is repaired
// instead: a new slot, a new copy of every table (each copy tombstones the
// keys its topic holds that the table no longer has: snapshot: copy_rows.go), and a
// loud log line and a metric, never silently.

// slotLostError is an unsafe resume caused by the slot
// (pgsource.ErrSlotLost).
func slotLostError(reason string) error {
	return pgsource.SlotLost(reason)
}

// repairsSlotLoss reports whether err is a slot loss that this pipeline
// repairs rather than stops on.
func (p *Pipeline) repairsSlotLoss(err error) bool {
	return p.cfg.OnSlotLoss == config.SlotLossResnapshot && errors.Is(err, pgsource.ErrSlotLost)
}

// replaceLostSlot stores the re-copy request of every table stored
// (phases.SlotLossRequest: a ready table's incremental snapshot, a blocking
// copy for the others) through states, the ordered writer of table states,
// and waits for them; then it drops the lost slot (if it is still there),
// creates a new one, and returns the pipeline's offsets moved to it. The
// requests are kept in p.slotRepairs, for the run to start from.
//
// The order is the crash safety of the repair. The requests are durable
// before the new slot exists, so a crash at any point after (kill -9
// between CreateSlot and the pipeline record, or before a copy stored its
// phase) leaves them in the offsets topic: the next start finds the new
// slot, the stored durable LSN trailing it as after any restart, and the
// tables still asked to be copied again. Stored after, a crash in between
// would leave the tables ready on the new slot, streaming on past a gap
// nothing repairs. A crash before the slot is created repeats all of this.
func (p *Pipeline) replaceLostSlot(ctx context.Context, repl *pgconn.PgConn, db *pgx.Conn, sp offsets.Pipeline, stored map[string]offsets.Table,
	states *delivery.StateWriter, exists bool, why string) (offsets.Pipeline, error) {
	slot := p.cfg.Postgres.Slot
	p.log.Error("REPLICATION SLOT LOST: the changes between the durable LSN and now are gone from Postgres; on_slot_loss is resnapshot, so mooncdc "+
		"creates a new slot and copies every table again (a streamed table incrementally, its changes flowing on), tombstoning the keys that vanished in the gap "+
		"(raise max_slot_wal_keep_size so that it does not happen again)",
		zap.String("slot", slot), zap.String("why", why), zap.Stringer("durable_lsn", schema.LSN(sp.DurableLSN)))
	requests, err := storeSlotLossRequests(ctx, states, stored, time.Now().UnixMilli())
	if err != nil {
		return offsets.Pipeline{}, err
	}
	if exists {
		if _, err := db.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot); err != nil {
			return offsets.Pipeline{}, fmt.Errorf("drop the lost replication slot %q: %w", slot, err)
		}
	}
	if err := p.ensurePublication(ctx, db); err != nil {
		return offsets.Pipeline{}, err
	}
	lsn, err := pgsource.CreateSlot(ctx, repl, slot, p.cfg.Postgres.SlotFailover)
	if err != nil {
		return offsets.Pipeline{}, err
	}
	p.metrics.SlotLossResnapshots.Inc()
	p.hooks.call(HookSlotReplaced, "")
	p.slotRepairs = requests
	out := sp
	out.Publication = p.cfg.Postgres.Publication
	out.InitialLSN, out.DurableLSN = uint64(lsn), uint64(lsn)
	p.log.Warn("created a new replication slot after the loss; every table is copied again", zap.String("slot", slot), zap.Stringer("lsn", lsn),
		zap.Int("incremental", countPhase(requests, offsets.PhaseReady)), zap.Int("blocking", countPhase(requests, offsets.PhaseInit)))
	return out, nil
}

// storeSlotLossRequests writes the slot-loss repair's request of every
// table in stored through states and waits until Kafka has each (the
// writer's bound, 30 s); it returns them by table.
func storeSlotLossRequests(ctx context.Context, states *delivery.StateWriter, stored map[string]offsets.Table, nowMs int64) (map[string]offsets.Table, error) {
	requests := make(map[string]offsets.Table, len(stored))
	waits := make([]func(context.Context) error, 0, len(stored))
	for name, old := range stored {
		t, ok := phases.SlotLossRequest(name, old, nowMs)
		if !ok {
			continue
		}
		requests[name] = t
		waits = append(waits, states.Enqueue(&phases.State{Table: t}))
	}
	for _, wait := range waits {
		if err := wait(ctx); err != nil {
			return nil, fmt.Errorf("store the re-copy requests of the slot-loss repair before creating the new slot: %w", err)
		}
	}
	return requests, nil
}

func countPhase(tables map[string]offsets.Table, phase string) int {
	n := 0
	for _, t := range tables {
		if t.Phase == phase {
			n++
		}
	}
	return n
}

// forgetProducers drops the closed producers of a run that ended, before
// the pipeline runs again on a new slot.
func (p *Pipeline) forgetProducers() {
	p.producersMu.Lock()
	p.producers = nil
	p.producersMu.Unlock()
}
