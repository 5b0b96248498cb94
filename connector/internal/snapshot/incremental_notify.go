package snapshot

import (
	"errors"
	"slices"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file decides when an incremental snapshot's notifications are due
// (notifications.kafka_topic; Debezium's sink channel) and hands them to
// the main worker, which writes them (emit: Incremental.Notify). mooncdc
// runs one incremental snapshot per table, so each table's run is one of
// Debezium's snapshots with that one data collection: STARTED, an
// IN_PROGRESS per chunk written, TABLE_SCAN_COMPLETED, COMPLETED (or
// ABORTED for a stop-snapshot), in the order Debezium writes them
// (AbstractIncrementalSnapshotChangeEventSource.java:330, 292-341, 467-473,
// 509, 622 at v3.6.1.Final). PAUSED and RESUMED name every table whose
// snapshot runs (one Debezium snapshot pausing all its collections).

// notifying reports whether notifications are written.
func (s *Snapshotter) notifying() bool { return s.inc != nil && s.cfg.notifications }

// note hands n to the main worker, when notifications are written.
func (s *Snapshotter) note(n func(notify.Source, int64) notify.Notification) {
	if !s.notifying() {
		return
	}
	// The id: Debezium's is the execute-snapshot signal's id, or a random
	// UUID per notification without one (IncrementalSnapshotNotificationService.java:158);
	// mooncdc does not carry the signal's id to the run yet: the latter.
	s.inc.Notify(n(notify.Source{Connector: s.cfg.prefix}, time.Now().UnixMilli()))
}

// freshRequest reports whether t asks for a new snapshot (no progress
// planned yet), not one to resume: only a new one is STARTED, as Debezium
// notifies STARTED when it adds the collections, not when it resumes
// from its offsets.
func freshRequest(t offsets.Table) bool {
	if len(t.Incremental) == 0 {
		return true
	}
	_, err := watermark.ParseProgress([]byte(t.Incremental))
	return err != nil
}

// scanStatus is the TABLE_SCAN_COMPLETED status of a run that ended with
// err (not a stop): a refusal for want of a key is NO_PRIMARY_KEY
// (AbstractIncrementalSnapshotChangeEventSource.java:392), another refusal
// SKIPPED, any other failure SQL_EXCEPTION (:292, 340: the chunk or its
// setup failed against the database), none SUCCEEDED or EMPTY (no row
// written, :301).
func scanStatus(err error, rows int64) notify.ScanStatus {
	var inel *watermark.IneligibleError
	switch {
	case errors.As(err, &inel) && inel.NoKey:
		return notify.ScanNoPrimaryKey
	case errors.As(err, &inel):
		return notify.ScanSkipped
	case err != nil:
		return notify.ScanSQLException
	case rows == 0:
		return notify.ScanEmpty
	default:
		return notify.ScanSucceeded
	}
}

// runningIncremental lists the tables whose incremental snapshot runs or
// waits for resume-snapshot, sorted.
func (s *Snapshotter) runningIncremental() []string {
	s.incMu.Lock()
	defer s.incMu.Unlock()
	names := make([]string, 0, len(s.incRunning)+len(s.incHeld))
	for name := range s.incRunning {
		names = append(names, name)
	}
	for _, t := range s.incHeld {
		names = append(names, t.Table)
	}
	slices.Sort(names)
	return slices.Compact(names)
}
