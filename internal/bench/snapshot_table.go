package main

import (
	"context"
	"fmt"
	"time"
)

// This file loads the snapshot benchmark's table.

// snapTableInfo describes the loaded snapshot table.
type snapTableInfo struct {
	loadTime, vacuumTime time.Duration
	relpages, reltuples  int64
	heapBytes            int64   // pg_relation_size
	rowBytes             float64 // average pg_column_size of a row
}

// loadSnapshotTable creates public.snapbench and its publication, fills it
// with n rows of about 100 bytes (in COPY text) with one INSERT … SELECT,
// and vacuums and analyzes it: the statistics give mooncdc reltuples and
// relpages for its ctid ranges, and the vacuum sets the hint bits, so that
// neither reader pays for them.
func (s *source) loadSnapshotTable(ctx context.Context, n int) (snapTableInfo, error) {
	var info snapTableInfo
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return info, err
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`CREATE TABLE ` + snapQualified + ` (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`,
		`CREATE PUBLICATION ` + snapPublication + ` FOR TABLE ` + snapQualified,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return info, fmt.Errorf("%s: %w", q, err)
		}
	}
	// The payload is 64 hex characters, as in the streaming table.
	start := time.Now()
	tag, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (id, payload, n, at)
		SELECT i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now() FROM generate_series(1, %d) AS i`, snapQualified, n))
	if err != nil {
		return info, fmt.Errorf("load %s: %w", snapQualified, err)
	}
	info.loadTime = time.Since(start)
	if tag.RowsAffected() != int64(n) {
		return info, fmt.Errorf("load %s: inserted %d rows, want %d", snapQualified, tag.RowsAffected(), n)
	}
	start = time.Now()
	// Sent alone, without arguments: the simple protocol, outside any
	// transaction block, as VACUUM requires.
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) `+snapQualified); err != nil {
		return info, fmt.Errorf("vacuum %s: %w", snapQualified, err)
	}
	info.vacuumTime = time.Since(start)
	// Now rather than during a measurement (none follows: see
	// serverSettings).
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return info, err
	}
	err = conn.QueryRow(ctx, `SELECT relpages, reltuples::bigint, pg_relation_size(oid) FROM pg_class WHERE oid = $1::regclass`,
		snapQualified).Scan(&info.relpages, &info.reltuples, &info.heapBytes)
	if err != nil {
		return info, err
	}
	var count int64
	if err := conn.QueryRow(ctx, `SELECT count(*), avg(pg_column_size(t.*)) FROM `+snapQualified+` t`).Scan(&count, &info.rowBytes); err != nil {
		return info, err
	}
	if count != int64(n) {
		return info, fmt.Errorf("load: %s holds %d rows, want %d", snapQualified, count, n)
	}
	return info, nil
}
