package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mooncdc/mooncdc/offsets"
)

// This file holds the incremental snapshot's side of a repair: of the gap
// a lost slot left (on_slot_loss: resnapshot, connector/slotloss.go), or
// of a table's time out of the pipeline (a table added back:
// phases.AddedBack). The repair of a ready table is an incremental
// snapshot marked as such (offsets.IncrementalRepair, the progress's
// "repair"), and one that cannot run or finish gives way to the blocking
// copy, so that no repair leaves its gap in a topic.

// errRepairNeedsTombstones refuses the incremental path to a repair that
// could not tombstone the keys deleted in the gap (the
// pipeline skips updates: the stale-key rule needs them): the blocking
// copy repairs it.
var errRepairNeedsTombstones = errors.New("format.skipped_operations skips updates, so an incremental snapshot cannot tell the keys deleted in the gap it repairs: the repair takes the blocking copy")

// repairBlocking asks the loop for the blocking copy of t's table, whose
// repair could not run incrementally (a table the incremental
// path refuses, or a snapshot that failed): the gap must not stay. The
// table's stored record keeps the repair's mark until the copy stores its
// phase, so a crash before that tries the repair again.
func (s *Snapshotter) repairBlocking(ctx context.Context, t offsets.Table) {
	req := offsets.Table{Table: t.Table, Phase: offsets.PhaseInit, ResnapshotMs: max(time.Now().UnixMilli(), t.ResnapshotMs+1)}
	select {
	case s.requests <- req:
	case <-ctx.Done():
	}
}

// repairOf reports whether raw, a table's incremental request or
// progress, is a repair's (offsets.IncrementalRepair).
func repairOf(raw offsets.RawJSON) bool {
	if raw == "" {
		return false
	}
	var p struct {
		Repair bool `json:"repair"`
	}
	return json.Unmarshal([]byte(raw), &p) == nil && p.Repair
}
