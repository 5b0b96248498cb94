package snapshot

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the tables that leave the pipeline while they still
// exist (removed from the publication, or no longer selected by
// postgres.tables / postgres.tables_exclude) and come back: none of their
// changes in between is in a record, so their rows are read again when
// they come back.

// markLeft stores that table name left the pipeline (left_ms), once, and
// stops its incremental snapshot if one runs: its rows would be written
// for a table out of the pipeline, and a new one starts when it comes
// back. A copy that runs goes on (it is left to fail, or to hand over: the
// handover keeps the marker). The main worker writes none of the changes
// of a table left out of postgres.tables (connector: Include; the config
// changes only with a restart, whose first discovery stores the marker
// before the stream starts); a table removed from the publication is not
// in the stream.
func (s *Snapshotter) markLeft(ctx context.Context, name, why string) {
	now := time.Now().UnixMilli()
	s.setPhase(ctx, name, func(next *phases.State) {
		next.LeftMs = now
		next.Incremental = ""
	})
	if n := s.stopIncremental(func(n string) bool { return n == name }); n > 0 {
		s.log.Info("the table's incremental snapshot stops: the table left the pipeline", zap.String("table", name))
	}
	s.log.Warn("table left the pipeline ("+why+"): none of its changes is written until it comes back; "+
		"then its rows are read again (an incremental snapshot, or a copy if it was not streaming)", zap.String("table", name))
}

// addedBack gives a table that came back to the pipeline (published or
// selected again, with left_ms) the request phases.AddedBack decides,
// stored with the marker cleared in one record; the incremental request
// of a ready table is started by the loop after this discovery (s.back),
// or by Run with the snapshots to resume at the first discovery. It waits
// (false: the marker stays, the next discovery tries again) while the
// table is being copied or its stopped incremental snapshot has not ended.
func (s *Snapshotter) addedBack(ctx context.Context, name string, oid, pubRel uint32) bool {
	if cur := s.phases.Get(name); cur == nil || cur.Phase == offsets.PhaseCopying {
		return false
	}
	s.incMu.Lock()
	_, running := s.incRunning[name]
	s.incMu.Unlock()
	if running {
		return false
	}
	if s.cfg.snapshot.Mode == config.SnapshotNever {
		// No copy of any kind, as for a new table: it streams on from here,
		// and the log says what its topic misses.
		_, wait := s.phases.Update(name, func(next *phases.State, _ schema.LSN) { next.LeftMs, next.OID, next.PubRel = 0, oid, pubRel })
		_ = wait(ctx)
		s.log.Warn("table came back to the pipeline and streams on; with snapshot.mode never its rows are not read again, so its "+
			"changes made while it was out are not in its topic: ask for an incremental snapshot (mooncdc resnapshot --incremental) to read them",
			zap.String("table", name))
		return true
	}
	now := time.Now().UnixMilli()
	var back offsets.Table
	_, wait := s.phases.Update(name, func(next *phases.State, m schema.LSN) {
		streaming := next.Phase == offsets.PhaseReady || next.Phase == offsets.PhaseCatchup
		next.Table = phases.AddedBack(name, next.Table, now)
		next.OID, next.RetryAt, next.PubRel = oid, 0, pubRel
		if streaming && next.Phase == offsets.PhaseInit {
			next.SettleAt = m // its records up to M may be in flight (phases.Request)
		}
		back = next.Table
	})
	_ = wait(ctx) // a failure is logged; the marker is cleared in memory only, and the request runs
	if back.Incremental != "" {
		s.back = append(s.back, back)
		s.log.Info("table came back to the pipeline: incremental snapshot queued (it streams on meanwhile; "+
			"the keys deleted while it was out are tombstoned at the end)", zap.String("table", name))
		return true
	}
	s.log.Info("table came back to the pipeline: copy queued, as a new table's", zap.String("table", name))
	return true
}

// leftUnseen reports whether table name, published now by the
// publication's row pubRel, was removed from the publication and added
// back since discovery stored its row (a new row has a new oid): between
// two discoveries, or while mooncdc was stopped. A table not seen with a
// row before (0), or whose relation changed, did not.
func (s *Snapshotter) leftUnseen(name string, oid, pubRel uint32) bool {
	cur := s.phases.Get(name)
	return cur != nil && cur.LeftMs == 0 && cur.Phase != offsets.PhaseDropped && cur.OID == oid &&
		cur.PubRel != 0 && pubRel != 0 && cur.PubRel != pubRel
}
