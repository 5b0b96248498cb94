package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the discovery of the tables to capture: the publication's
// tables matched against postgres.tables, each new one given its phase.

// Discover finds the publication's tables (adding tables that match
// postgres.tables to a publication mooncdc may change) and gives new ones
// a phase: init, or ready at the main worker's position in snapshot.mode
// never.
func (s *Snapshotter) Discover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := pgsource.Dial(ctx, s.c.pgcfg)
	if err != nil {
		return err
	}
	defer db.Close(context.Background())
	pub := s.cfg.postgres.Publication
	if len(s.cfg.tables.Include) > 0 {
		// A table mooncdc adds that has a phase was removed from the
		// publication since (ALTER PUBLICATION … DROP TABLE): it left the
		// pipeline, stored before it is added back so that a crash between
		// never forgets it; it comes back below.
		left := func(ts []config.TableName) {
			for _, tn := range ts {
				if cur := s.phases.Get(tn.String()); cur != nil && cur.Phase != offsets.PhaseDropped && cur.LeftMs == 0 {
					s.markLeft(ctx, tn.String(), "removed from publication "+pub+", which mooncdc adds it back to")
				}
			}
		}
		added, keyless, err := pgsource.AddMatchingTables(ctx, db, pub, s.cfg.tables, left)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// The stream and the published tables go on; the new table is
			// not captured until someone acts (the message says how).
			s.log.Warn("a new table matches postgres.tables but cannot be added to the publication", zap.Error(err))
		}
		if len(added) > 0 {
			names := make([]string, len(added))
			for i, tn := range added {
				names[i] = tn.String()
			}
			s.log.Info("added new tables matching postgres.tables to the publication", zap.Strings("tables", names))
		}
		s.keyless.Report(s.log, keyless)
	}
	// A publication without publish_via_partition_root lists the
	// partitions of a partitioned table, each streamed as a table of its
	// own: postgres.tables selects them by their root's name.
	// pub_rel: the publication's row that publishes the table (its own or
	// its partitioned root's), whose oid changes when the table is removed
	// and added back. The rows are read once and joined (5,000 tables:
	// 20-60 ms, about 10-30 ms more than without them; a subquery per
	// table took 60-100 ms more).
	rows, err := db.Query(ctx, `WITH pr AS MATERIALIZED (SELECT prrelid, max(oid) AS oid FROM pg_publication_rel
			WHERE prpubid = (SELECT oid FROM pg_publication WHERE pubname = $1) GROUP BY prrelid)
		SELECT c.oid, t.schemaname, t.tablename, rn.nspname, r.relname, coalesce(own.oid, root.oid, 0)
		FROM pg_publication_tables t
		JOIN pg_namespace n ON n.nspname = t.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.tablename
		JOIN pg_class r ON r.oid = coalesce(pg_partition_root(c.oid), c.oid) JOIN pg_namespace rn ON rn.oid = r.relnamespace
		LEFT JOIN pr own ON own.prrelid = c.oid LEFT JOIN pr root ON root.prrelid = r.oid
		WHERE t.pubname = $1`, pub)
	if err != nil {
		return fmt.Errorf("list the tables of publication %q: %w", pub, err)
	}
	type found struct {
		oid    uint32
		tn     config.TableName
		name   string
		pubRel uint32
	}
	var tables []found
	for rows.Next() {
		var f found
		var sch, tab, rootSch, rootTab string
		if err := rows.Scan(&f.oid, &sch, &tab, &rootSch, &rootTab, &f.pubRel); err != nil {
			return err
		}
		partition := sch != rootSch || tab != rootTab
		if s.cfg.tables.Captures(sch, tab) || partition && s.cfg.tables.Captures(rootSch, rootTab) {
			if partition && s.cfg.postgres.PublishViaPartitionRoot && !s.warnedPartitions {
				s.warnedPartitions = true
				s.log.Warn("the publication publishes the partitions of a partitioned table as tables of their own (one topic each; a row that moves "+
					"between partitions becomes a delete in one and a create in another): it was created without publish_via_partition_root. "+
					"To capture the table through its root, create the publication anew WITH (publish_via_partition_root = true) with a new "+
					"slot, or ALTER PUBLICATION "+config.QuoteIdent(pub)+" SET (publish_via_partition_root = true) and resnapshot the table",
					zap.String("publication", pub), zap.String("table", rootSch+"."+rootTab), zap.String("partition", sch+"."+tab))
			}
			f.tn = config.TableName{Schema: sch, Table: tab}
			f.name = f.tn.String()
			tables = append(tables, f)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list the tables of publication %q: %w", pub, err)
	}
	slices.SortFunc(tables, func(a, b found) int { return strings.Compare(a.name, b.name) })

	// Two tables must not share a topic. At the first discovery that is a
	// configuration error; later, a new table that would take a captured
	// table's topic is left out, with an error in the log.
	first := !s.discovered
	var keep, add []config.TableName
	for _, f := range tables {
		if !first && s.phases.Get(f.name) != nil {
			keep = append(keep, f.tn)
		} else {
			add = append(add, f.tn)
		}
	}
	clashes := s.cfg.naming.Clashes(keep, add)
	if first && len(clashes) > 0 {
		return config.TopicClashError(clashes)
	}
	s.discovered = true
	refused := map[string]bool{}
	for _, c := range clashes {
		refused[c.Table.String()] = true
		if !s.clashLogged[c.Table] {
			if s.clashLogged == nil {
				s.clashLogged = map[config.TableName]bool{}
			}
			s.clashLogged[c.Table] = true
			s.log.Error("new table not captured: "+c.Error(), zap.Stringer("table", c.Table), zap.String("topic", c.Topic))
		}
	}
	published := make(map[string]bool, len(tables))
	for _, f := range tables {
		published[f.name] = true
	}
	// The new tables' phases go to the offsets topic one after another, in
	// order, and discovery waits for them all at the end: one round trip,
	// not one per table (5.6 ms each, 28 s for 5,000 tables). The copies
	// start after discovery returns, as before.
	var stored []func(context.Context) error
	defer func() {
		for _, wait := range stored {
			_ = wait(ctx) // a failure is logged; the next change of the table writes it again
		}
	}()
	for _, f := range tables {
		if s.names == nil {
			s.names = map[string]config.TableName{}
		}
		s.names[f.name] = f.tn
		if s.leftUnseen(f.name, f.oid, f.pubRel) && !refused[f.name] {
			s.markLeft(ctx, f.name, "removed from the publication and added back since the last discovery") // leave.go
		}
		if cur := s.phases.Get(f.name); cur != nil && cur.LeftMs != 0 && cur.Phase != offsets.PhaseDropped && !refused[f.name] {
			s.addedBack(ctx, f.name, f.oid, f.pubRel)
			continue
		}
		if cur := s.phases.Get(f.name); cur != nil && cur.Phase != offsets.PhaseDropped && cur.OID == f.oid && cur.PubRel != f.pubRel {
			// First seen (a record from before pub_rel, or a rename's new
			// name), or published otherwise now: remembered, with the
			// new tables' records.
			_, wait := s.phases.Update(f.name, func(ts *phases.State, _ schema.LSN) { ts.PubRel = f.pubRel })
			stored = append(stored, wait)
		}
		if cur := s.phases.Get(f.name); cur != nil && (cur.Phase != offsets.PhaseDropped || cur.OID == f.oid) || refused[f.name] {
			continue
		}
		oid := f.oid // a new table, or one created again under a dropped table's name
		if old := s.phases.All().Renamed(oid); old != nil && !published[old.Table.Table] {
			if s.inheritRename(ctx, f.name, old) {
				continue
			}
		}
		if !first {
			s.phases.MarkFresh(f.name)
		}
		if s.cfg.snapshot.Mode == config.SnapshotNever || first && s.adopt {
			// Ready at M, the main worker's position as the view changes.
			ts, wait := s.phases.Update(f.name, func(ts *phases.State, m schema.LSN) {
				ts.OID, ts.Phase, ts.LSN, ts.LeftMs, ts.PubRel = oid, offsets.PhaseReady, uint64(m), 0, f.pubRel
			})
			stored = append(stored, wait)
			why := "snapshot.mode never"
			if s.adopt {
				why = "taken over from Debezium"
			}
			s.log.Info("new table streams without a snapshot ("+why+")", zap.String("table", f.name), zap.Stringer("lsn", schema.LSN(ts.LSN)))
			continue
		}
		_, wait := s.phases.Update(f.name, func(ts *phases.State, _ schema.LSN) {
			ts.OID, ts.Phase, ts.LeftMs, ts.PubRel = oid, offsets.PhaseInit, 0, f.pubRel
		})
		stored = append(stored, wait)
		s.log.Info("new table: copy queued", zap.String("table", f.name))
	}
	if len(tables) == 0 {
		// No table at all: a publication dropped (and not yet created
		// again) is a miss, not every table leaving.
		var exists bool
		if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, pub).Scan(&exists); err != nil {
			return fmt.Errorf("look for publication %q: %w", pub, err)
		}
		if !exists {
			s.log.Warn("publication not found: no table is taken as dropped or as having left the pipeline", zap.String("publication", pub))
			return nil
		}
	}
	publishedOIDs := make(map[uint32]bool, len(tables))
	for _, f := range tables {
		publishedOIDs[f.oid] = true
	}
	return s.markDropped(ctx, db, published, publishedOIDs)
}

// markDropped gives the phase dropped to the tables that no longer exist
// (DROP TABLE; their oid is gone from pg_class), so that none is parked
// or copied again, and status says so. A copy that runs is left to fail
// first. A table only removed from the publication (or no longer
// selected) still exists and keeps its phase, with the mark that it left
// the pipeline (markLeft); a renamed one (its oid published under its new
// name) did not leave it.
func (s *Snapshotter) markDropped(ctx context.Context, db *pgx.Conn, published map[string]bool, publishedOIDs map[uint32]bool) error {
	var gone []*phases.State
	var oids []uint32
	for name, ts := range s.phases.All() {
		if !published[name] && ts.OID != 0 && ts.Phase != offsets.PhaseDropped && (ts.Phase != offsets.PhaseCopying || ts.LeftMs == 0) {
			gone = append(gone, ts)
			oids = append(oids, ts.OID)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	exists := map[uint32]bool{}
	rows, err := db.Query(ctx, `SELECT oid FROM pg_class WHERE oid = ANY($1)`, oids)
	if err != nil {
		return fmt.Errorf("look for dropped tables: %w", err)
	}
	for rows.Next() {
		var oid uint32
		if err := rows.Scan(&oid); err != nil {
			return err
		}
		exists[oid] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look for dropped tables: %w", err)
	}
	for _, ts := range gone {
		name := ts.Table.Table
		if exists[ts.OID] {
			if ts.LeftMs == 0 && !publishedOIDs[ts.OID] {
				s.markLeft(ctx, name, "no longer in the publication, or no longer selected by postgres.tables")
			}
			continue
		}
		if ts.Phase == offsets.PhaseCopying {
			continue // left to fail first
		}
		s.setPhase(ctx, name, func(next *phases.State) {
			if next.Phase != offsets.PhaseReady && next.Phase != offsets.PhaseCatchup {
				next.LSN = 0 // never handed over: the main worker writes none of it
			}
			next.Phase, next.LastError, next.Retry, next.RetryAt, next.LeftMs = offsets.PhaseDropped, "", "", 0, 0
		})
		s.log.Info("table dropped: nothing more to copy or stream (its changes before the DROP are written)", zap.String("table", name))
	}
	return nil
}

// inheritRename gives a table renamed since its phase was written the old
// name's phase, so the table keeps streaming under its new name without a
// new copy (the main worker already emits its changes under the new name
// by its oid, phases.go). While the old name's copy runs, the decision
// waits for the copy's handover (its catch-up follows the rename too); it
// reports false when a copy is queued for the new name instead.
func (s *Snapshotter) inheritRename(ctx context.Context, name string, old *phases.State) bool {
	switch old.Phase {
	case offsets.PhaseReady, offsets.PhaseCatchup:
		ts := s.phases.Inherit(ctx, name, old)
		// The old name no longer exists: dropped, as status shows it. Its
		// changes before the rename, which a main worker behind it has yet
		// to decide, are still written (phases.go).
		s.setPhase(ctx, old.Table.Table, func(ts *phases.State) { ts.Phase = offsets.PhaseDropped })
		s.log.Info("table renamed: captured under its new name without a new copy",
			zap.String("from", old.Table.Table), zap.String("table", name), zap.Stringer("lsn", schema.LSN(ts.LSN)))
		return true
	case offsets.PhaseCopying:
		return true // decided at the next discovery, after the copy
	}
	return false
}
