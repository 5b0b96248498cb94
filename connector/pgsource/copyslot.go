package pgsource

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
)

// CopySlotPrefix is what every copy slot of the pipeline slot's name
// starts with; the table's oid and a tag follow (CopySlotName). A
// pipeline slot name too long to leave room for them is shortened and a
// hash of it added, so that the name stays within Postgres' 63 bytes and
// still belongs to this pipeline only.
func CopySlotPrefix(slot string) string {
	const suffix = "_copy_"
	if len(slot)+len(suffix)+10+7 <= 63 { // 10: the digits of the largest oid; 7: the tag
		return slot + suffix
	}
	h := fnv.New32a()
	h.Write([]byte(slot))
	return fmt.Sprintf("%s_%08x%s", slot[:63-len(suffix)-10-7-9], h.Sum32(), suffix)
}

// CopySlotName is the persistent slot of the copy of the table with oid:
// the prefix, the oid and a tag, a hash of both. The sweep drops only
// names it would make, so a slot of another tool or pipeline that merely
// looks like one (another pipeline's slot named <slot>_copy_5) is never
// taken for an unused copy slot.
func CopySlotName(slot string, oid uint32) string {
	h := fnv.New32a()
	h.Write([]byte(slot))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatUint(uint64(oid), 10)))
	return fmt.Sprintf("%s%d_%06x", CopySlotPrefix(slot), oid, h.Sum32()&0xffffff)
}

// IsCopySlot reports whether name is a copy slot of the pipeline slot:
// `mooncdc reset` drops them with the offsets that name them.
func IsCopySlot(slot, name string) bool {
	rest, ok := strings.CutPrefix(name, CopySlotPrefix(slot))
	if !ok {
		return false
	}
	digits, _, _ := strings.Cut(rest, "_")
	oid, err := strconv.ParseUint(digits, 10, 32)
	return err == nil && name == CopySlotName(slot, uint32(oid))
}

// FreeCopySlot makes sure no walsender holds the copy slot: one that
// does is left by an instance that died, or by this copy's own session
// that just ended (a copy slot is used by one copy at a time, and this
// instance holds the pipeline's slot); it is ended. It waits up to 15 s
// for the slot to be released.
func FreeCopySlot(ctx context.Context, db *pgx.Conn, name string, log *zap.Logger) (SlotInfo, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, err := LookupSlot(ctx, db, name)
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

// DropCopySlot drops the copy slot name if it exists, after ending a
// walsender that still holds it (FreeCopySlot).
func DropCopySlot(ctx context.Context, db *pgx.Conn, name string, log *zap.Logger) error {
	if _, err := FreeCopySlot(ctx, db, name, log); err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, name); err != nil {
		return fmt.Errorf("drop the copy's replication slot %q: %w", name, err)
	}
	return nil
}
