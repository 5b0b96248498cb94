package connector

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
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

// copySlotPrefix is what every copy slot of the pipeline slot's name
// starts with; the table's oid and a tag follow (copySlotName). A
// pipeline slot name too long to leave room for them is shortened and a
// hash of it added, so that the name stays within Postgres' 63 bytes and
// still belongs to this pipeline only.
func copySlotPrefix(slot string) string {
	const suffix = "_copy_"
	if len(slot)+len(suffix)+10+7 <= 63 { // 10: the digits of the largest oid; 7: the tag
		return slot + suffix
	}
	h := fnv.New32a()
	h.Write([]byte(slot))
	return fmt.Sprintf("%s_%08x%s", slot[:63-len(suffix)-10-7-9], h.Sum32(), suffix)
}

// copySlotName is the persistent slot of the copy of the table with oid:
// the prefix, the oid and a tag, a hash of both. The sweep drops only
// names it would make, so a slot of another tool or pipeline that merely
// looks like one (another pipeline's slot named <slot>_copy_5) is never
// taken for an unused copy slot.
func copySlotName(slot string, oid uint32) string {
	h := fnv.New32a()
	h.Write([]byte(slot))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatUint(uint64(oid), 10)))
	return fmt.Sprintf("%s%d_%06x", copySlotPrefix(slot), oid, h.Sum32()&0xffffff)
}

// isCopySlot reports whether name is a copy slot of the pipeline slot.
func isCopySlot(slot, name string) bool {
	rest, ok := strings.CutPrefix(name, copySlotPrefix(slot))
	if !ok {
		return false
	}
	digits, _, _ := strings.Cut(rest, "_")
	oid, err := strconv.ParseUint(digits, 10, 32)
	return err == nil && name == copySlotName(slot, uint32(oid))
}

// CopySlotName is the persistent replication slot a resumable copy of the
// table with oid uses, for the pipeline slot slot.
func CopySlotName(slot string, oid uint32) string { return copySlotName(slot, oid) }

// IsCopySlot reports whether name is one of the pipeline slot's copy
// slots: `mooncdc reset` drops them with the offsets that name them.
func IsCopySlot(slot, name string) bool { return isCopySlot(slot, name) }

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

// freeCopySlot makes sure no walsender holds the copy slot: one that
// does is left by an instance that died, or by this copy's own session
// that just ended (a copy slot is used by one copy at a time, and this
// instance holds the pipeline's slot); it is ended. It waits up to 15 s
// for the slot to be released.
func freeCopySlot(ctx context.Context, db *pgx.Conn, name string, log *zap.Logger) (pgsource.SlotInfo, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, err := pgsource.LookupSlot(ctx, db, name)
		if err != nil || !s.Exists || s.ActivePID == 0 {
			return s, err
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("the copy's replication slot %q is still held by process %d", name, s.ActivePID)
		}
		log.Debug("ending the walsender that holds the copy's slot", zap.String("slot", name), zap.Int32("active_pid", s.ActivePID))
		var ended bool
		if err := db.QueryRow(ctx, `SELECT coalesce(pg_terminate_backend(active_pid), false) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid = $2`,
			name, s.ActivePID).Scan(&ended); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return s, fmt.Errorf("end the walsender on the copy's replication slot %q: %w", name, err)
		}
		if !fault.Sleep(ctx, 200*time.Millisecond) {
			return s, ctx.Err()
		}
	}
}

// dropCopySlot drops the copy slot name if it exists (dropCopySlotOn).
func (c *copier) dropCopySlot(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := pgsource.Dial(ctx, c.pgcfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	return dropCopySlotOn(ctx, db, name, c.log)
}

// dropCopySlotOn drops the copy slot name if it exists, after ending a
// walsender that still holds it (freeCopySlot).
func dropCopySlotOn(ctx context.Context, db *pgx.Conn, name string, log *zap.Logger) error {
	if _, err := freeCopySlot(ctx, db, name, log); err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, name); err != nil {
		return fmt.Errorf("drop the copy's replication slot %q: %w", name, err)
	}
	return nil
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
	prefix := copySlotPrefix(c.cfg.slot)
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
		if !isCopySlot(c.cfg.slot, name) || keep[name] || c.slots.used(name) {
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
