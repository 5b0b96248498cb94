package connector

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

// sourceIdentity names the Postgres source that offsets belong to.
type sourceIdentity struct {
	SystemID string
	Database string
	Timeline int32
	WALEnd   schema.LSN
}

// slotInfo is what pg_replication_slots says of the pipeline's slot.
type slotInfo struct {
	Exists         bool
	Plugin         string
	Type           string
	Database       string
	ConfirmedFlush schema.LSN
	ActivePID      int32
}

// identify runs IDENTIFY_SYSTEM on a replication connection: it needs only
// the REPLICATION attribute, unlike pg_control_system().
func identify(ctx context.Context, conn *pgconn.PgConn) (sourceIdentity, error) {
	res, err := pglogrepl.IdentifySystem(ctx, conn)
	if err != nil {
		return sourceIdentity{}, fmt.Errorf("identify system: %w", err)
	}
	return sourceIdentity{SystemID: res.SystemID, Database: res.DBName, Timeline: res.Timeline, WALEnd: schema.LSN(res.XLogPos)}, nil
}

func lookupSlot(ctx context.Context, db *pgx.Conn, slot string) (slotInfo, error) {
	var s slotInfo
	var confirmed *string
	var pid *int32
	var database *string
	err := db.QueryRow(ctx, `SELECT coalesce(plugin, ''), slot_type, database, confirmed_flush_lsn::text, active_pid
		FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&s.Plugin, &s.Type, &database, &confirmed, &pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("look up replication slot %q: %w", slot, err)
	}
	s.Exists = true
	if database != nil {
		s.Database = *database
	}
	if pid != nil {
		s.ActivePID = *pid
	}
	if confirmed != nil {
		l, err := schema.ParseLSN(*confirmed)
		if err != nil {
			return s, err
		}
		s.ConfirmedFlush = l
	}
	return s, nil
}

// createSlot creates the pipeline's permanent pgoutput slot and returns its
// consistent point: the first LSN it can stream.
func createSlot(ctx context.Context, conn *pgconn.PgConn, slot string) (schema.LSN, error) {
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "NOEXPORT_SNAPSHOT"})
	if err != nil {
		return 0, fmt.Errorf("create replication slot %q: %w", slot, err)
	}
	return schema.ParseLSN(res.ConsistentPoint)
}

// ensurePublication creates the publication FOR TABLE the tables matching
// patterns, unless it exists; an existing publication is left alone.
func ensurePublication(ctx context.Context, db *pgx.Conn, name string, patterns []TablePattern) (created bool, tables []string, err error) {
	var exists bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, name).Scan(&exists); err != nil {
		return false, nil, fmt.Errorf("look up publication %q: %w", name, err)
	}
	if exists {
		return false, nil, nil
	}
	if len(patterns) == 0 {
		return false, nil, &criticalError{fmt.Errorf("publication %q does not exist and postgres.tables is empty: list the tables to capture in postgres.tables, or create the publication (CREATE PUBLICATION %s FOR TABLE …)", name, QuoteIdent(name))}
	}
	rows, err := db.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relpersistence = 'p'
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
		ORDER BY 1, 2`)
	if err != nil {
		return false, nil, fmt.Errorf("list tables: %w", err)
	}
	var quoted []string
	for rows.Next() {
		var s, t string
		if err := rows.Scan(&s, &t); err != nil {
			return false, nil, err
		}
		for _, p := range patterns {
			if p.Match(s, t) {
				quoted = append(quoted, QualifiedName(s, t))
				tables = append(tables, s+"."+t)
				break
			}
		}
	}
	if err := rows.Err(); err != nil {
		return false, nil, fmt.Errorf("list tables: %w", err)
	}
	if len(quoted) == 0 {
		return false, nil, &criticalError{fmt.Errorf("no table matches postgres.tables %v: check the schema and table names (unquoted names are lower-cased, as in SQL)", patternStrings(patterns))}
	}
	if _, err := db.Exec(ctx, "CREATE PUBLICATION "+QuoteIdent(name)+" FOR TABLE "+strings.Join(quoted, ", ")); err != nil {
		return false, nil, fmt.Errorf("create publication %q: %w (mooncdc's role needs CREATE on the database and ownership of the tables, or create the publication yourself)", name, err)
	}
	return true, tables, nil
}

func patternStrings(ps []TablePattern) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// connectSQL opens a normal (non-replication) connection for catalog work.
func connectSQL(ctx context.Context, base *pgconn.Config) (*pgx.Conn, error) {
	return ConnectSQL(ctx, base, "mooncdc")
}

// ConnectSQL opens a normal (non-replication) connection with base's
// settings, the session settings mooncdc decodes with, and application
// name app. It blocks until connected or ctx ends; the error never quotes
// a password.
func ConnectSQL(ctx context.Context, base *pgconn.Config, app string) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cc.Config = *stream.SessionConnConfig(base, app)
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", redactedError{err})
	}
	return conn, nil
}

// connectReplication opens a replication connection for IDENTIFY_SYSTEM and
// slot creation.
func connectReplication(ctx context.Context, base *pgconn.Config) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, stream.ReplicationConnConfig(base))
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres for replication: %w", err)
	}
	return conn, nil
}
