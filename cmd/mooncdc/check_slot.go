package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector"
)

// This file holds check's replication slot check: the configured slot as
// pg_replication_slots has it, and what its state means for run.

// checkSlotState is the configured slot as pg_replication_slots says, and the WAL
// bound that applies to it.
type checkSlotState struct {
	exists                     bool
	plugin, slotType, database string
	activePID                  int32  // 0: not in use
	activeApp                  string // application_name of activePID
	walStatus                  string // "" before Postgres 13
	safeWALSize                int64  // bytes; -1: unknown (NULL)
	maxKeep                    int64  // max_slot_wal_keep_size in bytes; -1: unlimited; -2: before Postgres 13
}

func (c *checkPG) checkSlot(ctx context.Context) error {
	s := checkSlotState{safeWALSize: -1, maxKeep: -2}
	cols := `NULL::text, NULL::bigint`
	if c.version >= 130000 {
		cols = `s.wal_status, s.safe_wal_size`
		if err := c.conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('max_slot_wal_keep_size'))`).Scan(&s.maxKeep); err != nil {
			return err
		}
	}
	var pid *int32
	var walStatus, database *string
	var safe *int64
	err := c.conn.QueryRow(ctx, `SELECT coalesce(s.plugin, ''), s.slot_type, s.database, s.active_pid, `+cols+`,
			coalesce((SELECT a.application_name FROM pg_stat_activity a WHERE a.pid = s.active_pid), '')
		FROM pg_replication_slots s WHERE s.slot_name = $1`, c.cfg.Postgres.Slot).
		Scan(&s.plugin, &s.slotType, &database, &pid, &walStatus, &safe, &s.activeApp)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	default:
		s.exists = true
		if database != nil {
			s.database = *database
		}
		if pid != nil {
			s.activePID = *pid
		}
		if walStatus != nil {
			s.walStatus = *walStatus
		}
		if safe != nil {
			s.safeWALSize = *safe
		}
	}
	c.out = append(c.out, checkJudgeSlot(c.cfg, c.database, s)...)
	return nil
}

// checkJudgeSlot says what the state of the slot means for run: a slot of
// another kind or database cannot be used, a lost one has lost changes,
// one close to being lost or held by another process deserves attention.
// It also judges max_slot_wal_keep_size, which bounds what the slot may
// keep. It is pure.
func checkJudgeSlot(cfg connector.Config, database string, s checkSlotState) checkLines {
	var out checkLines
	name := cfg.Postgres.Slot
	what := fmt.Sprintf("replication slot %q", name)
	drop := fmt.Sprintf("SELECT pg_drop_replication_slot('%s');", name)
	keep := func() {
		switch {
		case s.maxKeep == -1:
			out.warn("max_slot_wal_keep_size", "is -1 (unlimited): while mooncdc is stopped or behind, the slot keeps WAL without bound and can fill the disk",
				"set a bound, e.g. ALTER SYSTEM SET max_slot_wal_keep_size = '50GB'; SELECT pg_reload_conf(); (a slot further behind is then lost and needs a new snapshot)")
		case s.maxKeep >= 0:
			out.pass("max_slot_wal_keep_size", humanBytes(s.maxKeep)+" bounds the WAL the slot keeps")
		}
	}
	if !s.exists {
		out.pass(what, "does not exist; mooncdc run creates it (pgoutput)")
		keep()
		return out
	}
	if s.slotType != "logical" || s.plugin != "pgoutput" || s.database != database {
		out.fail(what, fmt.Sprintf("is a %s slot of plugin %q on database %q; mooncdc needs a logical pgoutput slot on %q", s.slotType, s.plugin, s.database, database),
			"set postgres.slot to another name, or drop this slot if nothing uses it: "+drop)
		keep()
		return out
	}
	ok := true
	switch s.walStatus {
	case "lost":
		ok = false
		out.fail(what, "wal_status is lost: Postgres removed WAL the slot still needed, so changes are gone",
			fmt.Sprintf("start over with a new snapshot: stop mooncdc, run mooncdc reset --config <your config> --drop-slot (it deletes the connector's offsets from topic %q and drops the slot: %s), then mooncdc run",
				cfg.Kafka.OffsetsTopic, drop))
	case "unreserved":
		ok = false
		out.warn(what, "wal_status is unreserved: WAL it needs is past max_slot_wal_keep_size and goes at the next checkpoint",
			"start mooncdc run now so that it catches up, or raise max_slot_wal_keep_size")
	default:
		if s.maxKeep > 0 && s.safeWALSize >= 0 && s.safeWALSize < s.maxKeep/5 {
			ok = false
			out.warn(what, fmt.Sprintf("only %s of WAL left before it is lost (safe_wal_size, of max_slot_wal_keep_size %s)", humanBytes(s.safeWALSize), humanBytes(s.maxKeep)),
				"let mooncdc run catch up, or raise max_slot_wal_keep_size")
		}
	}
	if s.activePID != 0 {
		ok = false
		out.warn(what, fmt.Sprintf("in use by PID %d (application_name %q)", s.activePID, s.activeApp),
			"mooncdc run cannot stream from it while another process holds it: stop that process, unless it is this connector's running mooncdc")
	}
	if ok {
		status := ""
		if s.walStatus != "" {
			status = ", wal_status " + s.walStatus
		}
		out.pass(what, fmt.Sprintf("exists: pgoutput on database %q%s, not in use", s.database, status))
	}
	keep()
	return out
}
