package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector/config"
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
	// activeRole is the role activePID runs as; mayEnd says whether the
	// role check connects as (self) may pg_terminate_backend it, as a new
	// active standby instance does at a takeover (connector waitSlotFree).
	activeRole, self string
	mayEnd           bool
	walStatus        string // "" before Postgres 13
	safeWALSize      int64  // bytes; -1: unknown (NULL)
	maxKeep          int64  // max_slot_wal_keep_size in bytes; -1: unlimited; -2: before Postgres 13
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
	// mayEnd follows pg_signal_backend (PostgreSQL 15,
	// src/backend/storage/ipc/signalfuncs.c): only a superuser ends a
	// superuser's backend; otherwise the role needs the privileges of the
	// backend's role or of pg_signal_backend.
	err := c.conn.QueryRow(ctx, `SELECT coalesce(s.plugin, ''), s.slot_type, s.database, s.active_pid, `+cols+`,
			coalesce((SELECT a.application_name FROM pg_stat_activity a WHERE a.pid = s.active_pid), ''),
			coalesce((SELECT r.rolname FROM pg_stat_activity a JOIN pg_roles r ON r.oid = a.usesysid WHERE a.pid = s.active_pid), ''),
			coalesce((SELECT (NOT r.rolsuper OR me.rolsuper) AND (pg_has_role(current_user, r.oid, 'USAGE') OR pg_has_role(current_user, 'pg_signal_backend', 'USAGE'))
				FROM pg_stat_activity a JOIN pg_roles r ON r.oid = a.usesysid JOIN pg_roles me ON me.rolname = current_user WHERE a.pid = s.active_pid), true),
			current_user
		FROM pg_replication_slots s WHERE s.slot_name = $1`, c.cfg.Postgres.Slot).
		Scan(&s.plugin, &s.slotType, &database, &pid, &walStatus, &safe, &s.activeApp, &s.activeRole, &s.mayEnd, &s.self)
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
func checkJudgeSlot(cfg config.Config, database string, s checkSlotState) checkLines {
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
		if cfg.HA.Enabled {
			out = append(out, checkJudgeTakeover(s)...)
		}
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

// checkJudgeTakeover says whether a standby instance (ha.enabled) that
// becomes active can end the walsender now holding the slot, as it does
// at every takeover (connector waitSlotFree): a walsender of another role
// it may not end keeps the slot until Postgres ends it, which is
// wal_sender_timeout after its client went silent, and never while a
// paused client's socket stays open. It is pure.
func checkJudgeTakeover(s checkSlotState) checkLines {
	var out checkLines
	const what = "standby takeover"
	if s.mayEnd {
		out.pass(what, fmt.Sprintf("role %q may end the slot's walsender (role %q), as a new active instance does", s.self, s.activeRole))
		return out
	}
	out.warn(what, fmt.Sprintf("role %q may not end the slot's walsender (PID %d, role %q): a standby that takes over waits until Postgres ends it "+
		"(wal_sender_timeout, or as long as a paused active instance keeps its socket open) before it streams", s.self, s.activePID, s.activeRole),
		fmt.Sprintf("run every instance as the same role, or as a superuser: GRANT pg_signal_backend TO %s;", config.QuoteIdent(s.self)))
	return out
}
