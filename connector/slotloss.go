package connector

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
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

// replaceLostSlot drops the lost slot (if it is still there), creates a new
// one, and returns the pipeline's offsets moved to it; every table is then
// copied again (p.resnapshotAll).
func (p *Pipeline) replaceLostSlot(ctx context.Context, repl *pgconn.PgConn, db *pgx.Conn, sp offsets.Pipeline, exists bool, why string) (offsets.Pipeline, error) {
	slot := p.cfg.Postgres.Slot
	p.log.Error("REPLICATION SLOT LOST: the changes between the durable LSN and now are gone from Postgres; on_slot_loss is resnapshot, so mooncdc "+
		"creates a new slot and copies every table again, tombstoning the keys that vanished in the gap (raise max_slot_wal_keep_size so that it does not happen again)",
		zap.String("slot", slot), zap.String("why", why), zap.Stringer("durable_lsn", schema.LSN(sp.DurableLSN)))
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
	p.resnapshotAll = true
	out := sp
	out.Publication = p.cfg.Postgres.Publication
	out.InitialLSN, out.DurableLSN = uint64(lsn), uint64(lsn)
	p.log.Warn("created a new replication slot after the loss; every table is copied again", zap.String("slot", slot), zap.Stringer("lsn", lsn))
	return out, nil
}

// forgetProducers drops the closed producers of a run that ended, before
// the pipeline runs again on a new slot.
func (p *Pipeline) forgetProducers() {
	p.producersMu.Lock()
	p.producers = nil
	p.producersMu.Unlock()
}
