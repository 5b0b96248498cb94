package main

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// This file samples the CPU time of Postgres' backends during a run.

// backendSampler samples the CPU time of Postgres' client backends and
// walsenders (mooncdc's, in the snapshot run: the only ones), telling the
// ones that ran a COPY from the others.
type backendSampler struct {
	conn    *pgx.Conn
	cpu     map[int]cpuTime
	copying map[int]bool
}

func (s *source) sampleBackends(ctx context.Context) (*backendSampler, error) {
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return nil, err
	}
	return &backendSampler{conn: conn, cpu: map[int]cpuTime{}, copying: map[int]bool{}}, nil
}

func (b *backendSampler) close() { _ = b.conn.Close(context.Background()) }

func (b *backendSampler) sample(ctx context.Context) error {
	rows, err := b.conn.Query(ctx, `SELECT pid, backend_type, coalesce(query, '') FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND backend_type IN ('client backend', 'walsender')`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		var typ, query string
		if err := rows.Scan(&pid, &typ, &query); err != nil {
			return err
		}
		if typ == "client backend" && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(query)), "COPY") {
			b.copying[pid] = true
		}
		if u, sy, err := procCPU(pid); err == nil {
			b.cpu[pid] = cpuTime{u, sy}
		}
	}
	return rows.Err()
}

func (b *backendSampler) totals() (copying, other cpuTime, copyBackends int) {
	for pid, c := range b.cpu {
		if b.copying[pid] {
			copying.user += c.user
			copying.sys += c.sys
			copyBackends++
		} else {
			other.user += c.user
			other.sys += c.sys
		}
	}
	return copying, other, copyBackends
}
