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

// note hands n to the main worker, when notifications are written, with
// id as its id: Debezium's correlation id, the execute-snapshot signal's
// id, or "" for a random UUID per notification, as Debezium without one
// (IncrementalSnapshotNotificationService.java:158).
func (s *Snapshotter) note(id string, n func(notify.Source, int64) notify.Notification) {
	if !s.notifying() {
		return
	}
	s.inc.Notify(n(notify.Source{Connector: s.cfg.prefix, ID: id}, time.Now().UnixMilli()))
}

// requestOf reports whether t asks for a new snapshot (no progress
// planned yet), not one to resume, and its correlation id: the signal's
// for a new one, the one its progress kept for one to resume. Only a new
// one is STARTED, as Debezium notifies STARTED when it adds the
// collections, not when it resumes from its offsets.
func requestOf(t offsets.Table) (fresh bool, id string) {
	if len(t.Incremental) == 0 {
		return true, t.SignalID
	}
	p, err := watermark.ParseProgress([]byte(t.Incremental))
	if err != nil {
		return true, t.SignalID
	}
	return false, p.CorrelationID
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
// waits for resume-snapshot, sorted, and their correlation id when they
// share one ("" otherwise: a random id per notification).
func (s *Snapshotter) runningIncremental() ([]string, string) {
	s.incMu.Lock()
	defer s.incMu.Unlock()
	names := make([]string, 0, len(s.incRunning)+len(s.incHeld))
	ids := map[string]bool{}
	for name, id := range s.incRunning {
		names = append(names, name)
		ids[id] = true
	}
	for _, t := range s.incHeld {
		names = append(names, t.Table)
		_, id := requestOf(t)
		ids[id] = true
	}
	slices.Sort(names)
	shared := ""
	if len(ids) == 1 {
		for id := range ids {
			shared = id
		}
	}
	return slices.Compact(names), shared
}
