package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
)

// checkFailover checks what postgres.slot_failover needs (PostgreSQL 17's
// failover slots): the primary holds logical decoding back for the
// standbys' physical slots (synchronized_standby_slots), and every standby
// of a multi-host postgres.url it can reach synchronizes slots
// (sync_replication_slots, hot_standby_feedback, primary_slot_name, a
// dbname in primary_conninfo). A standby mooncdc cannot reach is skipped.
func (c *checkPG) checkFailover(ctx context.Context) error {
	what := "failover slot"
	if c.version < 170000 {
		c.out.fail(what, fmt.Sprintf("postgres.slot_failover needs PostgreSQL 17 or later; this server is %d.%d", c.version/10000, c.version%10000),
			"set postgres.slot_failover: false, or upgrade")
		return nil
	}
	var inRecovery bool
	var standbySlots string
	if err := c.conn.QueryRow(ctx, `SELECT pg_is_in_recovery(), current_setting('synchronized_standby_slots')`).Scan(&inRecovery, &standbySlots); err != nil {
		return err
	}
	if inRecovery {
		c.out.fail(what, "the server postgres.url reaches first is a standby: a failover slot is created on the primary",
			"list the primary first in postgres.url, or add target_session_attrs=read-write")
		return nil
	}
	guarded := splitSlots(standbySlots)
	if len(guarded) == 0 {
		c.out.warn("synchronized_standby_slots", "is empty: the slot may send mooncdc changes a standby has not received, which a promotion then loses from the database but not from Kafka",
			"ALTER SYSTEM SET synchronized_standby_slots = '<the standbys'' physical slots>'; SELECT pg_reload_conf();")
	} else {
		c.out.pass("synchronized_standby_slots", fmt.Sprintf("logical decoding waits for %s", strings.Join(guarded, ", ")))
	}
	pgcfg, err := c.cfg.PostgresConnConfig()
	if err != nil {
		return err
	}
	if len(pgcfg.Fallbacks) == 0 {
		c.out.warn(what, "postgres.url names one host: after a promotion mooncdc keeps connecting to it",
			"list the primary and its standbys in postgres.url (postgres://u@primary,standby/db?target_session_attrs=read-write)")
		return nil
	}
	for _, fb := range pgcfg.Fallbacks {
		c.checkStandby(ctx, pgcfg, fb, guarded)
	}
	return nil
}

// checkStandby checks one other host of postgres.url as a standby that
// synchronizes the failover slot.
func (c *checkPG) checkStandby(ctx context.Context, base *pgconn.Config, fb *pgconn.FallbackConfig, guarded []string) {
	what := "standby " + fb.Host + ":" + strconv.Itoa(int(fb.Port))
	one := base.Copy()
	one.Host, one.Port, one.TLSConfig, one.Fallbacks, one.ValidateConnect = fb.Host, fb.Port, fb.TLSConfig, nil, nil
	conn, err := pgsource.ConnectSQL(ctx, one, "mooncdc check")
	if err != nil {
		c.out.skip(what, "unreachable: "+checkOneLine(config.RedactURL(err.Error())))
		return
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var inRecovery bool
	var sync, feedback, slot, conninfo string
	err = conn.QueryRow(ctx, `SELECT pg_is_in_recovery(), current_setting('sync_replication_slots'), current_setting('hot_standby_feedback'),
		current_setting('primary_slot_name'), current_setting('primary_conninfo')`).Scan(&inRecovery, &sync, &feedback, &slot, &conninfo)
	if err != nil {
		c.out.fail(what, "could not read its settings: "+config.RedactURL(err.Error()), "")
		return
	}
	if !inRecovery {
		c.out.warn(what, "is not in recovery: two primaries in postgres.url", "list the primary and its standbys only")
		return
	}
	var missing []string
	if sync != "on" {
		missing = append(missing, "sync_replication_slots = on")
	}
	if feedback != "on" {
		missing = append(missing, "hot_standby_feedback = on")
	}
	if slot == "" {
		missing = append(missing, "primary_slot_name = '<its physical slot on the primary>'")
	}
	if !strings.Contains(conninfo, "dbname=") {
		missing = append(missing, "a dbname in primary_conninfo")
	}
	if len(missing) > 0 {
		c.out.fail(what, "does not synchronize the failover slot: it needs "+strings.Join(missing, ", "),
			"ALTER SYSTEM SET those on the standby, then SELECT pg_reload_conf() there")
		return
	}
	if !slices.Contains(guarded, slot) {
		c.out.warn(what, fmt.Sprintf("its physical slot %q is not in the primary's synchronized_standby_slots", slot),
			fmt.Sprintf("ALTER SYSTEM SET synchronized_standby_slots on the primary to include %s", slot))
		return
	}
	c.out.pass(what, fmt.Sprintf("synchronizes the failover slot (through physical slot %q)", slot))
}

func splitSlots(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
