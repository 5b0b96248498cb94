package connector

import (
	"context"
	"errors"
	"fmt"

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
	// WALStatus is pg_replication_slots.wal_status: reserved, extended,
	// unreserved, or lost (Postgres removed WAL the slot needs).
	WALStatus string
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
	var database, walStatus *string
	err := db.QueryRow(ctx, `SELECT coalesce(plugin, ''), slot_type, database, confirmed_flush_lsn::text, active_pid, wal_status
		FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&s.Plugin, &s.Type, &database, &confirmed, &pid, &walStatus)
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
