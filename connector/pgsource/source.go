package pgsource

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

// SourceIdentity names the Postgres source that offsets belong to.
type SourceIdentity struct {
	SystemID string
	Database string
	Timeline int32
	WALEnd   schema.LSN
}

// SlotInfo is what pg_replication_slots says of the pipeline's slot.
type SlotInfo struct {
	Exists         bool
	Plugin         string
	Type           string
	Database       string
	ConfirmedFlush schema.LSN
	ActivePID      int32
	// WALStatus is pg_replication_slots.wal_status: reserved, extended,
	// unreserved, or lost (Postgres removed WAL the slot needs).
	WALStatus string
	// Failover: a failover slot, synchronized to standbys (PostgreSQL 17+;
	// false before). Synced: this is a standby's copy of one.
	Failover, Synced bool
}

// Identify runs IDENTIFY_SYSTEM on a replication connection: it needs only
// the REPLICATION attribute, unlike pg_control_system().
func Identify(ctx context.Context, conn *pgconn.PgConn) (SourceIdentity, error) {
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout) // a half-open link (snapshot: link.go)
	defer cancel()
	res, err := pglogrepl.IdentifySystem(ctx, conn)
	if err != nil {
		return SourceIdentity{}, fmt.Errorf("identify system: %w", err)
	}
	return SourceIdentity{SystemID: res.SystemID, Database: res.DBName, Timeline: res.Timeline, WALEnd: schema.LSN(res.XLogPos)}, nil
}

func LookupSlot(ctx context.Context, db *pgx.Conn, slot string) (SlotInfo, error) {
	var s SlotInfo
	var confirmed *string
	var pid *int32
	var database, walStatus *string
	// failover and synced exist from PostgreSQL 17 on: read through jsonb,
	// they are false before.
	err := db.QueryRow(ctx, `SELECT coalesce(plugin, ''), slot_type, database, confirmed_flush_lsn::text, active_pid, wal_status,
			coalesce((to_jsonb(s) ->> 'failover')::bool, false), coalesce((to_jsonb(s) ->> 'synced')::bool, false)
		FROM pg_replication_slots s WHERE slot_name = $1`, slot).Scan(&s.Plugin, &s.Type, &database, &confirmed, &pid, &walStatus, &s.Failover, &s.Synced)
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
	if walStatus != nil {
		s.WALStatus = *walStatus
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

// CreateSlot creates the pipeline's permanent pgoutput slot and returns its
// consistent point: the first LSN it can stream. A failover slot
// (PostgreSQL 17+) is synchronized to standbys that sync_replication_slots.
func CreateSlot(ctx context.Context, conn *pgconn.PgConn, slot string, failover bool) (schema.LSN, error) {
	action := "NOEXPORT_SNAPSHOT"
	if failover {
		action = "(SNAPSHOT 'nothing', FAILOVER true)" // the option list of PostgreSQL 15+
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action})
	if err != nil {
		return 0, fmt.Errorf("create replication slot %q: %w", slot, err)
	}
	return schema.ParseLSN(res.ConsistentPoint)
}

// MakeFailoverSlot turns an existing slot into a failover slot
// (PostgreSQL 17's ALTER_REPLICATION_SLOT; the slot must not be in use).
func MakeFailoverSlot(ctx context.Context, conn *pgconn.PgConn, slot string) error {
	if _, err := conn.Exec(ctx, "ALTER_REPLICATION_SLOT "+config.QuoteIdent(slot)+" (FAILOVER true)").ReadAll(); err != nil {
		return fmt.Errorf("make replication slot %q a failover slot (postgres.slot_failover): %w", slot, err)
	}
	return nil
}

// Dial opens a normal (non-replication) connection for catalog work.
func Dial(ctx context.Context, base *pgconn.Config) (*pgx.Conn, error) {
	return ConnectSQL(ctx, base, "mooncdc")
}

// ConnectSQL opens a normal (non-replication) connection with base's
// settings, the session settings mooncdc decodes with, and application
// name app; each of its queries is bounded by QueryTimeout. It blocks
// until connected or ctx ends; the error never quotes a password.
func ConnectSQL(ctx context.Context, base *pgconn.Config, app string) (*pgx.Conn, error) {
	return ConnectSQLWithin(ctx, base, app, QueryTimeout)
}

// ConnectSQLWithin is ConnectSQL with each query bounded by d instead of
// QueryTimeout: a test finds a half-open link in seconds with it, on its
// own connection, without changing any other test's.
func ConnectSQLWithin(ctx context.Context, base *pgconn.Config, app string, d time.Duration) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cc.Config = *stream.SessionConnConfig(base, app)
	cc.Tracer = queryDeadline{d: d} // a half-open link fails the query (snapshot: link.go)
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", config.RedactedError{Err: err})
	}
	return conn, nil
}

// ConnectReplication opens a replication connection for IDENTIFY_SYSTEM and
// slot creation.
func ConnectReplication(ctx context.Context, base *pgconn.Config) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, stream.ReplicationConnConfig(base))
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres for replication: %w", err)
	}
	return conn, nil
}
