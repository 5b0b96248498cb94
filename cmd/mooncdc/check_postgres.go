package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
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
	cfg  config.Config
	conn *pgx.Conn
	out  checkLines

	version         int // server_version_num
	walLevel        string
	database        string
	user, userSQL   string
	pubSQL          string
	super, dbCreate bool

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
func checkPostgres(ctx context.Context, cfg config.Config) checkLines {
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
			c.out.fail(ch.what, "could not look it up: "+config.RedactURL(err.Error()), "")
		}
	}
	return c.out
}

// connect opens the connection and reports the first check: Postgres
// reachable, and its version.
func (c *checkPG) connect(ctx context.Context) bool {
	what := "Postgres " + config.RedactURL(c.cfg.Postgres.URL)
	pgcfg, err := c.cfg.PostgresConnConfig()
	if err != nil {
		c.out.fail(what, config.RedactURL(err.Error()), "fix postgres.url or postgres.password_file")
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	c.conn, err = pgsource.ConnectSQL(ctx, pgcfg, "mooncdc check")
	if err != nil {
		c.out.fail(what, checkOneLine(config.RedactURL(err.Error())), checkPGConnectFix(err))
		return false
	}
	var version string
	err = c.conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('server_version_num')::int,
			current_setting('wal_level'),
			current_database(), current_user, quote_ident(current_user), quote_ident($1)`, c.cfg.Postgres.Publication).
		Scan(&version, &c.version, &c.walLevel, &c.database, &c.user, &c.userSQL, &c.pubSQL)
	if err != nil {
		_ = c.conn.Close(context.Background())
		c.out.fail(what, "connected, but could not read the server settings: "+config.RedactURL(err.Error()), "")
		return false
	}
	version, _, _ = strings.Cut(version, " ")
	if c.version < pgsource.MinServerVersion {
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
// free are enough for the pipeline's slot and one slot per copy worker (a
// temporary one, or a copy slot for a copy in chunks), each on its own WAL
// sender, and for the copy slots that wait to resume (readSlotRoom,
// slotNeed). This connector's own slots do not count as others'.
func (c *checkPG) checkCapacity(ctx context.Context) error {
	room, err := readSlotRoom(ctx, c.conn, []string{c.cfg.Postgres.Slot})
	if err != nil {
		return err
	}
	workers := int64(c.cfg.Snapshot.Workers)
	checkRoom(&c.out, "", room, 1+workers, workers, "mooncdc needs %d",
		fmt.Sprintf("1 + snapshot.workers %d", workers), "or free some, or lower snapshot.workers")
	return nil
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
