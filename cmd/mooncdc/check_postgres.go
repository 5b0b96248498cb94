package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector"
)

// ---- Postgres ----

// checkTable is a table of the source database, as the checks need it.
type checkTable struct {
	name     string // schema.table, raw, as run logs it
	sql      string // quoted for SQL where needed (quote_ident)
	schema   string
	table    string
	readable bool // SELECT on the table and USAGE on its schema
	owned    bool // the role may ALTER it (a member of its owner)
	identity bool // a replica identity UPDATE and DELETE can publish (connector.IdentitySQL)
}

// checkPG runs the checks that need Postgres, on one connection, and
// collects their lines. What an early check learns (the role, the tables)
// later ones use.
type checkPG struct {
	cfg  connector.Config
	conn *pgx.Conn
	out  checkLines

	version            int // server_version_num
	walLevel           string
	maxSlots, maxSends int64
	database           string
	user, userSQL      string
	pubSQL             string
	super, dbCreate    bool

	loaded  bool // all and pub are known
	pub     checkPubState
	all     []checkTable // every table mooncdc could capture
	capture []checkTable // the configured set; nil when unknown
}

// checkPubState is the configured publication as pg_publication says.
type checkPubState struct {
	exists                       bool
	allTables, owned             bool
	insert, update, del, truncat bool
	viaRoot                      bool            // publish_via_partition_root
	tables                       map[string]bool // published tables by name (partitions as their root)
	splitRoots                   map[string]bool // partitioned tables whose partitions are published as themselves
}

func (c *checkPG) slotWhat() string { return fmt.Sprintf("replication slot %q", c.cfg.Postgres.Slot) }
func (c *checkPG) pubWhat() string  { return fmt.Sprintf("publication %q", c.cfg.Postgres.Publication) }

// checkPostgres connects with cfg.PostgresConnConfig and runs the Postgres
// checks in order; when Postgres is unreachable the others are skipped.
func checkPostgres(ctx context.Context, cfg connector.Config) checkLines {
	c := &checkPG{cfg: cfg}
	checks := []struct {
		what string
		run  func(context.Context) error
	}{
		{"wal_level", c.checkWALLevel},
		{"replication slots and WAL senders", c.checkCapacity},
		{"role", c.checkRole},
		{"tables", c.checkTables},
		{c.pubWhat(), c.checkPublication},
		{"row filters and column lists", c.checkPublicationFilters},
		{c.slotWhat(), c.checkSlot},
	}
	if cfg.Postgres.SlotFailover {
		checks = append(checks, struct {
			what string
			run  func(context.Context) error
		}{"failover slot", c.checkFailover})
	}
	if !c.connect(ctx) {
		for _, ch := range checks {
			c.out.skip(ch.what, "Postgres unreachable")
		}
		return c.out
	}
	defer func() { _ = c.conn.Close(context.Background()) }()
	for _, ch := range checks {
		if c.conn.IsClosed() {
			c.out.skip(ch.what, "the connection to Postgres was lost")
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, checkTimeout)
		err := ch.run(qctx)
		cancel()
		if err != nil {
			c.out.fail(ch.what, "could not look it up: "+connector.RedactURL(err.Error()), "")
		}
	}
	return c.out
}

// connect opens the connection and reports the first check: Postgres
// reachable, and its version.
func (c *checkPG) connect(ctx context.Context) bool {
	what := "Postgres " + connector.RedactURL(c.cfg.Postgres.URL)
	pgcfg, err := c.cfg.PostgresConnConfig()
	if err != nil {
		c.out.fail(what, connector.RedactURL(err.Error()), "fix postgres.url or postgres.password_file")
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	c.conn, err = connector.ConnectSQL(ctx, pgcfg, "mooncdc check")
	if err != nil {
		c.out.fail(what, checkOneLine(connector.RedactURL(err.Error())), checkPGConnectFix(err))
		return false
	}
	var version string
	err = c.conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('server_version_num')::int,
			current_setting('wal_level'), current_setting('max_replication_slots')::bigint, current_setting('max_wal_senders')::bigint,
			current_database(), current_user, quote_ident(current_user), quote_ident($1)`, c.cfg.Postgres.Publication).
		Scan(&version, &c.version, &c.walLevel, &c.maxSlots, &c.maxSends, &c.database, &c.user, &c.userSQL, &c.pubSQL)
	if err != nil {
		_ = c.conn.Close(context.Background())
		c.out.fail(what, "connected, but could not read the server settings: "+connector.RedactURL(err.Error()), "")
		return false
	}
	version, _, _ = strings.Cut(version, " ")
	if c.version < connector.MinServerVersion {
		_ = c.conn.Close(context.Background())
		c.out.fail(what, fmt.Sprintf("PostgreSQL %s is too old: mooncdc streams pgoutput with logical messages, which PostgreSQL 14 brought", version),
			"use PostgreSQL 14 or later")
		return false
	}
	c.out.pass(what, fmt.Sprintf("PostgreSQL %s, database %q, role %q", version, c.database, c.user))
	return true
}

// checkPGConnectFix says what to look at for a failed connection.
func checkPGConnectFix(err error) string {
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "28000"):
		return "check the user and password (postgres.url, postgres.password_file) and that pg_hba.conf lets this host in"
	case errors.As(err, &pe) && pe.Code == "3D000":
		return "check the database name in postgres.url"
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return fmt.Sprintf("no answer within %s: check the host and port in postgres.url, and firewalls", checkTimeout)
	default:
		return "check the host and port in postgres.url and that Postgres accepts connections from here (listen_addresses, pg_hba.conf)"
	}
}

func (c *checkPG) checkWALLevel(context.Context) error {
	if c.walLevel == "logical" {
		c.out.pass("wal_level", "logical")
		return nil
	}
	c.out.fail("wal_level", fmt.Sprintf("is %s; logical decoding needs logical", c.walLevel),
		"ALTER SYSTEM SET wal_level = logical; then restart Postgres (on a managed service, turn on its logical replication parameter, e.g. rds.logical_replication = 1)")
	return nil
}

// checkCapacity checks that the slots and WAL senders that others leave
// free are enough for the pipeline's slot and one temporary slot per copy
// worker, each on its own WAL sender. This connector's own slots (its slot
// and the copy slots of a running instance) do not count as others'.
func (c *checkPG) checkCapacity(ctx context.Context) error {
	var otherSlots, otherSends int64
	err := c.conn.QueryRow(ctx, `WITH ours AS (
			SELECT slot_name, active_pid FROM pg_replication_slots
			WHERE slot_name = $1 OR left(slot_name, length($1) + 6) = $1 || '_copy_')
		SELECT (SELECT count(*) FROM pg_replication_slots WHERE slot_name NOT IN (SELECT slot_name FROM ours)),
		       (SELECT count(*) FROM pg_stat_replication WHERE pid NOT IN (SELECT active_pid FROM ours WHERE active_pid IS NOT NULL))`,
		c.cfg.Postgres.Slot).Scan(&otherSlots, &otherSends)
	if err != nil {
		return err
	}
	workers := c.cfg.Snapshot.Workers
	need := int64(1 + workers)
	checkRoom(&c.out, "", slotRoom{c.maxSlots, c.maxSends, otherSlots, otherSends}, need,
		fmt.Sprintf("mooncdc needs %d (1 + snapshot.workers %d)", need, workers), "or free some, or lower snapshot.workers")
	return nil
}

// slotRoom is a server's replication slots and WAL senders: the settings,
// and how many others use.
type slotRoom struct{ maxSlots, maxSends, otherSlots, otherSends int64 }

// checkRoom checks that room leaves need slots and need WAL senders free,
// one line each (their names followed by where), needs saying who needs
// them and orFix the other fix beside raising the setting.
func checkRoom(out *checkLines, where string, room slotRoom, need int64, needs, orFix string) {
	for _, r := range []struct {
		what, setting string
		max, others   int64
	}{
		{"replication slots", "max_replication_slots", room.maxSlots, room.otherSlots},
		{"WAL senders", "max_wal_senders", room.maxSends, room.otherSends},
	} {
		detail := fmt.Sprintf("%s %d, %d used by others, %s", r.setting, r.max, r.others, needs)
		if r.max-r.others >= need {
			out.pass(r.what+where, detail)
			continue
		}
		out.fail(r.what+where, detail, fmt.Sprintf("ALTER SYSTEM SET %s = %d; then restart Postgres; %s", r.setting, r.others+need, orFix))
	}
}

func (c *checkPG) checkRole(ctx context.Context) error {
	var repl, rds bool
	err := c.conn.QueryRow(ctx, `SELECT r.rolsuper, r.rolreplication,
			EXISTS (SELECT 1 FROM pg_roles g WHERE g.rolname = 'rds_replication' AND pg_has_role(current_user, g.oid, 'MEMBER')),
			has_database_privilege(current_database(), 'CREATE')
		FROM pg_roles r WHERE r.rolname = current_user`).Scan(&c.super, &repl, &rds, &c.dbCreate)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("role %q", c.user)
	switch {
	case c.super:
		c.out.pass(what, "superuser")
	case repl:
		c.out.pass(what, "REPLICATION")
	case rds:
		c.out.pass(what, "member of rds_replication")
	default:
		c.out.fail(what, "has neither REPLICATION nor superuser, so it can neither create nor stream from a replication slot",
			fmt.Sprintf("as a superuser: ALTER ROLE %s REPLICATION; (on Amazon RDS: GRANT rds_replication TO %s;)", c.userSQL, c.userSQL))
	}
	return nil
}

// checkTables resolves the configured set (postgres.tables, or the
// publication's tables when it is empty) and checks that each pattern
// selects a table, that the role may read every table and that each has a
// replica identity.
func (c *checkPG) checkTables(ctx context.Context) error {
	if err := c.loadTables(ctx); err != nil {
		return err
	}
	c.loaded = true
	sel, err := c.cfg.TableSelection() // Validate parsed them already
	if err != nil {
		return err
	}
	patterns := sel.Include
	if len(patterns) > 0 {
		picked := map[string]bool{}
		for _, p := range patterns {
			var names []string
			for _, t := range c.all {
				if p.Match(t.schema, t.table) {
					names = append(names, t.name)
					picked[t.name] = true
				}
			}
			what := "postgres.tables " + p.String()
			if len(names) == 0 {
				c.out.fail(what, "matches no table",
					`check the schema and table names: unquoted names fold to lower case, as in SQL (double-quote others, e.g. public."Orders"); only logged ordinary and partitioned tables are captured`)
				continue
			}
			c.out.pass(what, fmt.Sprintf("%d %s: %s", len(names), checkPlural(len(names), "table", "tables"), checkNames(names)))
		}
		c.capture = []checkTable{}
		for _, t := range c.all {
			if picked[t.name] && sel.Captures(t.schema, t.table) {
				c.capture = append(c.capture, t)
			}
		}
	} else {
		what := fmt.Sprintf("tables of publication %q", c.cfg.Postgres.Publication)
		if !c.pub.exists {
			c.out.skip(what, "postgres.tables is empty and the publication does not exist")
			return nil
		}
		c.capture = []checkTable{}
		var names []string
		for _, t := range c.all {
			if (c.pub.allTables || c.pub.tables[t.name]) && sel.Captures(t.schema, t.table) {
				c.capture = append(c.capture, t)
				names = append(names, t.name)
			}
		}
		if len(names) == 0 {
			c.out.fail(what, "it has none, and postgres.tables is empty",
				fmt.Sprintf("list the tables in postgres.tables, or ALTER PUBLICATION %s ADD TABLE …;", c.pubSQL))
			return nil
		}
		c.out.pass(what, fmt.Sprintf("%d: %s", len(names), checkNames(names)))
	}
	for _, p := range sel.Exclude {
		var names []string
		for _, t := range c.all {
			if p.Match(t.schema, t.table) {
				names = append(names, t.name)
			}
		}
		what := "postgres.tables_exclude " + p.String()
		if len(names) == 0 {
			c.out.warn(what, "matches no table", "check the schema and table names: unquoted names fold to lower case, as in SQL")
			continue
		}
		c.out.pass(what, fmt.Sprintf("leaves out %d %s: %s", len(names), checkPlural(len(names), "table", "tables"), checkNames(names)))
	}
	if len(c.capture) == 0 {
		return nil
	}
	c.checkTopicClashes()

	var unreadable, unkeyed, unreadableSQL, unkeyedSQL []string
	for _, t := range c.capture {
		if !t.readable {
			unreadable, unreadableSQL = append(unreadable, t.name), append(unreadableSQL, t.sql)
		}
		if !t.identity {
			unkeyed, unkeyedSQL = append(unkeyed, t.name), append(unkeyedSQL, t.sql)
		}
	}
	if len(unreadable) == 0 {
		c.out.pass("SELECT on the tables", fmt.Sprintf("role %q may read all %d", c.user, len(c.capture)))
	} else {
		c.out.fail("SELECT on the tables", fmt.Sprintf("role %q may not read %s, so %s snapshot fails", c.user, checkNames(unreadable), checkPlural(len(unreadable), "its", "their")),
			fmt.Sprintf("GRANT SELECT ON %s TO %s; (and USAGE on their schemas)", strings.Join(unreadableSQL, ", "), c.userSQL))
	}
	if len(unkeyed) == 0 {
		c.out.pass("replica identity", "every table has a primary key or REPLICA IDENTITY FULL or USING INDEX")
	} else {
		var fix []string
		for _, t := range unkeyedSQL {
			fix = append(fix, "ALTER TABLE "+t+" REPLICA IDENTITY FULL;")
		}
		n := len(unkeyed)
		c.out.warn("replica identity", fmt.Sprintf("%s %s no primary key and no REPLICA IDENTITY FULL or USING INDEX (for a partitioned table: on every partition): "+
			"once published, Postgres refuses UPDATE and DELETE on %s, so mooncdc run does not add %s to the publication and does not capture %s until %s one",
			checkNames(unkeyed), checkPlural(n, "has", "have"), checkPlural(n, "it", "them"), checkPlural(n, "it", "them"),
			checkPlural(n, "it", "them"), checkPlural(n, "it has", "they have")),
			strings.Join(fix, " ")+" or add a primary key (on a partitioned table, set the identity on each partition: it does not recurse)")
	}
	return nil
}

// checkPublication compares the publication with the configured set, or,
// when it does not exist, checks that run may create it.
func (c *checkPG) checkPublication(context.Context) error {
	what, p := c.pubWhat(), c.pub
	patterns := len(c.cfg.Postgres.Tables) > 0
	if !c.loaded {
		c.out.skip(what, "the tables could not be read")
		return nil
	}
	if c.capture == nil && !p.exists {
		c.out.fail(what, "does not exist and postgres.tables is empty, so there is nothing to capture",
			fmt.Sprintf("list the tables in postgres.tables (mooncdc run then creates the publication), or as an admin: CREATE PUBLICATION %s FOR TABLE …;", c.pubSQL))
		return nil
	}
	if len(c.capture) == 0 {
		c.out.skip(what, "no table to publish")
		return nil
	}
	var captureSQL, notOwned []string
	for _, t := range c.capture {
		captureSQL = append(captureSQL, t.sql)
		if !t.owned {
			notOwned = append(notOwned, t.name)
		}
	}

	if !p.exists {
		if c.super || (c.dbCreate && len(notOwned) == 0) {
			c.out.pass(what, fmt.Sprintf("does not exist; mooncdc run creates it for the %d %s", len(c.capture), checkPlural(len(c.capture), "table", "tables")))
			return nil
		}
		var why []string
		if !c.dbCreate {
			why = append(why, "has no CREATE on the database")
		}
		if len(notOwned) > 0 {
			why = append(why, "does not own "+checkNames(notOwned))
		}
		c.out.fail(what, fmt.Sprintf("does not exist, and mooncdc run cannot create it: role %q is not a superuser and %s", c.user, strings.Join(why, " and ")),
			fmt.Sprintf("as an admin: CREATE PUBLICATION %s FOR TABLE %s;", c.pubSQL, strings.Join(captureSQL, ", ")))
		return nil
	}

	ok := true
	var ops []string
	for _, op := range []struct {
		name string
		on   bool
	}{{"insert", p.insert}, {"update", p.update}, {"delete", p.del}, {"truncate", p.truncat}} {
		if !op.on {
			ops = append(ops, op.name)
		}
	}
	if len(ops) > 0 {
		ok = false
		c.out.fail(what, fmt.Sprintf("does not publish %s, so those changes never reach Kafka", strings.Join(ops, ", ")),
			fmt.Sprintf("ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate');", c.pubSQL))
	}
	if !c.checkPartitionRoot() {
		ok = false
	}
	if p.allTables {
		if ok {
			c.out.pass(what, "FOR ALL TABLES, publishes insert, update, delete, truncate")
		}
		return nil
	}

	var missing, missingSQL, cannotAdd []string
	for _, t := range c.capture {
		if !p.tables[t.name] {
			missing, missingSQL = append(missing, t.name), append(missingSQL, t.sql)
			if !c.super && !(p.owned && t.owned) {
				cannotAdd = append(cannotAdd, t.name)
			}
		}
	}
	added := ""
	switch {
	case len(cannotAdd) > 0:
		ok = false
		c.out.fail(what, fmt.Sprintf("lacks %s, which postgres.tables selects, and role %q may not add %s (it must own the publication and the tables)",
			checkNames(missing), c.user, checkPlural(len(missing), "it", "them")),
			fmt.Sprintf("as an admin: ALTER PUBLICATION %s ADD TABLE %s;", c.pubSQL, strings.Join(missingSQL, ", ")))
	case len(missing) > 0:
		added = fmt.Sprintf("; mooncdc run adds %s, which postgres.tables selects", checkNames(missing))
	}
	if patterns {
		inCapture := map[string]bool{}
		for _, t := range c.capture {
			inCapture[t.name] = true
		}
		var extra, extraSQL []string
		for _, t := range c.all {
			if p.tables[t.name] && !inCapture[t.name] {
				extra, extraSQL = append(extra, t.name), append(extraSQL, t.sql)
			}
		}
		if len(extra) > 0 {
			ok = false
			c.out.warn(what, fmt.Sprintf("also publishes %s, which postgres.tables does not select: mooncdc skips those changes, but Postgres still decodes and sends them", checkNames(extra)),
				fmt.Sprintf("add %s to postgres.tables, or ALTER PUBLICATION %s DROP TABLE %s;", checkPlural(len(extra), "it", "them"), c.pubSQL, strings.Join(extraSQL, ", ")))
		}
	}
	switch n := len(c.capture) - len(missing); {
	case ok:
		c.out.pass(what, fmt.Sprintf("publishes the %d %s (insert, update, delete, truncate)%s", n, checkPlural(n, "table", "tables"), added))
	case added != "":
		c.out.pass(what, strings.TrimPrefix(added, "; "))
	}
	return nil
}

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
