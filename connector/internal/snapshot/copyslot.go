package snapshot

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds a resumable copy's persistent replication slot
// (copy_resume.go): its name, its creation with the first attempt's
// snapshot, its end after the handover, and the sweep of the slots no
// copy needs any more. A table copied in one chunk keeps the temporary
// slot of copy.go, which dies with its connection.

// copySlots is the set of copy slots a running copy uses, so that the
// sweep leaves a slot alone between its creation and the first checkpoint
// that names it. Safe for concurrent use.
type copySlots struct {
	mu    sync.Mutex
	inUse map[string]bool
}

func (s *copySlots) take(name string) {
	s.mu.Lock()
	if s.inUse == nil {
		s.inUse = map[string]bool{}
	}
	s.inUse[name] = true
	s.mu.Unlock()
}

func (s *copySlots) release(name string) {
	s.mu.Lock()
	delete(s.inUse, name)
	s.mu.Unlock()
}

func (s *copySlots) used(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inUse[name]
}

// createCopySlot creates the persistent slot name on repl with an exported
// snapshot: the first attempt of a resumable copy. A slot of that name
// left by an attempt that never checkpointed (nothing names it) is
// dropped first. The snapshot stays importable while repl stays idle.
func (c *copier) createCopySlot(ctx context.Context, repl *pgconn.PgConn, name string) (snapshotPoint, error) {
	create := func() (pglogrepl.CreateReplicationSlotResult, error) {
		return pglogrepl.CreateReplicationSlot(ctx, repl, name, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	}
	res, err := create()
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42710" { // duplicate_object
		c.log.Info("dropping a copy slot left by an attempt that never stored its progress", zap.String("slot", name))
		if err := c.dropCopySlot(ctx, name); err != nil {
			return snapshotPoint{}, err
		}
		res, err = create()
	}
	if err != nil {
		return snapshotPoint{}, fmt.Errorf("create the copy's replication slot %q: %w", name, err)
	}
	lsn, err := schema.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return snapshotPoint{}, err
	}
	return snapshotPoint{slot: name, snapshot: res.SnapshotName, lsn: lsn, persistent: true}, nil
}

// dropCopySlot drops the copy slot name if it exists (DropCopySlot).
func (c *copier) dropCopySlot(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := pgsource.Dial(ctx, c.pgcfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	return pgsource.DropCopySlot(ctx, db, name, c.log)
}

// keepsCopySlot reports whether ts still needs the copy slot its progress
// names: a copy that may resume (init or copying after a crash, errored
// with a retry time).
func keepsCopySlot(ts *phases.State) bool {
	if ts.Copy == nil {
		return false
	}
	switch ts.Phase {
	case offsets.PhaseInit, offsets.PhaseCopying:
		return true
	case offsets.PhaseErrored:
		return ts.Retry != "resnapshot"
	}
	return false
}

// sweepCopySlots drops this pipeline's copy slots that no copy needs: no
// table that may resume names it (keepsCopySlot) and no running copy uses
// it. They are left by a copy that crashed before its first checkpoint,
// that handed over but could not drop its slot, or whose table was
// dropped, left the publication, went errored for good, or was asked for
// a new copy. A copy slot retains WAL, so none may be forgotten. Called
// with each discovery; a failure is logged and tried again at the next.
func (c *copier) sweepCopySlots(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.sweepCopySlotsOnce(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("drop unused copy slots (tried again at the next discovery)", zap.Error(err))
	}
}

func (c *copier) sweepCopySlotsOnce(ctx context.Context) error {
	db, err := pgsource.Dial(ctx, c.pgcfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	prefix := pgsource.CopySlotPrefix(c.cfg.slot)
	rows, err := db.Query(ctx, `SELECT slot_name FROM pg_replication_slots
		WHERE NOT temporary AND slot_type = 'logical' AND database = current_database() AND active_pid IS NULL AND starts_with(slot_name, $1)`, prefix)
	if err != nil {
		return fmt.Errorf("list the copy slots: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list the copy slots: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	keep := map[string]bool{}
	for _, ts := range c.phases.All() {
		if keepsCopySlot(ts) {
			keep[ts.Copy.Slot] = true
		}
	}
	for _, name := range names {
		if !pgsource.IsCopySlot(c.cfg.slot, name) || keep[name] || c.slots.used(name) {
			continue
		}
		if _, err := db.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NULL`, name); err != nil {
			return fmt.Errorf("drop the unused copy slot %q: %w", name, err)
		}
		c.log.Info("dropped a copy slot no copy needs", zap.String("slot", name))
	}
	return nil
}

// capped returns p for a session on pt's slot: on a persistent copy slot
// it confirms to Postgres at most pt.lsn, the session's start, so that the
// slot keeps every change a resume may stream again (copy_resume.go).
func (pt snapshotPoint) capped(p stream.Progress) stream.Progress {
	if !pt.persistent {
		return p
	}
	return confirmAtMost{Progress: p, max: pt.lsn}
}

// confirmAtMost is a stream.Progress whose flush position never passes max.
type confirmAtMost struct {
	stream.Progress
	max schema.LSN
}

func (p confirmAtMost) Durable() schema.LSN { return min(p.Progress.Durable(), p.max) }
