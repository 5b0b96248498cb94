package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// schemaSQL is the demo's shop: two tables with a bigint primary key and
// columns of the common types. REPLICA IDENTITY FULL makes Postgres log the
// whole old row, so updates and deletes carry it in the record's "before"
// (with the default identity, "before" holds only the key of a delete).
const schemaSQL = `
CREATE TABLE public.customers (
    id         bigint PRIMARY KEY,
    name       text NOT NULL,
    email      text NOT NULL,
    vip        boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    attrs      jsonb
);
CREATE TABLE public.orders (
    id          bigint PRIMARY KEY,
    customer_id bigint NOT NULL,
    amount      numeric(10,2) NOT NULL,
    status      text NOT NULL,
    paid        boolean NOT NULL DEFAULT false,
    placed_at   timestamptz NOT NULL DEFAULT now(),
    items       jsonb
);
ALTER TABLE public.customers REPLICA IDENTITY FULL;
ALTER TABLE public.orders REPLICA IDENTITY FULL;
CREATE TABLE public.page_views (
    id        bigint PRIMARY KEY,
    customer  bigint NOT NULL,
    path      text NOT NULL,
    viewed_at timestamptz NOT NULL
);
`

// demoTables are the tables of schemaSQL that the load writes to, as
// mooncdc names them.
var demoTables = []string{"public.customers", "public.orders"}

// seedTable is the table of schemaSQL that the demo fills before mooncdc
// starts, so that there is a snapshot to watch; the load leaves it alone.
const seedTable = "public.page_views"

// defaultRows is the size of seedTable: narrow rows that this demo's
// mooncdc copies in a few seconds on a small machine.
const defaultRows = 1_500_000

// seedSQL fills seedTable with $1 rows, and analyzes it so that
// pg_class.reltuples, the estimate the progress bars count towards, is
// right.
const seedSQL = `
INSERT INTO public.page_views
SELECT i, 1 + i % 5000, (ARRAY['/', '/lamps', '/maps', '/telescopes', '/kits'])[1 + i % 5],
       timestamptz '2025-01-01 00:00:00+00' + i * interval '1 second'
FROM generate_series(1, $1::bigint) i`

// seedPageViews writes rows rows into seedTable.
func seedPageViews(ctx context.Context, conn *pgx.Conn, rows int) error {
	if _, err := conn.Exec(ctx, seedSQL, rows); err != nil {
		return fmt.Errorf("fill %s: %w", seedTable, err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE "+seedTable); err != nil {
		return fmt.Errorf("analyze %s: %w", seedTable, err)
	}
	return nil
}

// startPostgres starts a throwaway cluster under dir/postgres (data and
// postgres.log) and creates the demo schema in the database "postgres". It
// returns the cluster and the server version. The caller closes the cluster.
func startPostgres(ctx context.Context, dir string) (*pgtest.Cluster, string, error) {
	pg, err := pgtest.Start(ctx, pgtest.Options{Dir: filepath.Join(dir, "postgres")})
	if err != nil {
		return nil, "", err
	}
	conn, err := pg.Connect(ctx, "postgres")
	if err != nil {
		_ = pg.Close()
		return nil, "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var version string
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		_ = pg.Close()
		return nil, "", fmt.Errorf("ask Postgres for its version: %w", err)
	}
	if _, err := conn.Exec(ctx, schemaSQL); err != nil {
		_ = pg.Close()
		return nil, "", fmt.Errorf("create the demo schema: %w", err)
	}
	return pg, version, nil
}

// stopPostgres closes the cluster. pgtest stops it with pg_ctl, which runs
// in the demo's process group: a Ctrl-C in the terminal at that moment
// kills pg_ctl too and leaves the server running (until it notices its
// directory is gone, a minute later). Then stopPostgres stops the server
// itself, with SIGQUIT (an immediate shutdown) to the postmaster.
func stopPostgres(pg *pgtest.Cluster) error {
	pid := postmasterPID(pg.DataDir()) // before Close: the server removes the file
	err := pg.Close()
	if err == nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		return err
	}
	if kerr := syscall.Kill(pid, syscall.SIGQUIT); kerr != nil {
		return errors.Join(err, fmt.Errorf("stop Postgres (pid %d): %w", pid, kerr))
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if syscall.Kill(pid, 0) != nil {
			return nil // gone
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.Join(err, fmt.Errorf("postgres (pid %d) still runs 10s after SIGQUIT", pid))
}

// postmasterPID returns the server's pid from postmaster.pid, or 0.
func postmasterPID(dataDir string) int {
	data, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0
	}
	return pid
}
