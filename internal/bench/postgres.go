package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// Names of the Postgres objects the benchmark creates.
const (
	table       = "bench"
	publication = "bench_pub"
	mooncdcSlot = "bench_mooncdc" // adopted by mooncdc
)

// serverSettings are tuned for a write-then-read benchmark on a small
// machine: enough shared buffers for the table, no checkpoint or autovacuum
// in the middle of a measurement (both would write WAL and compete for
// the CPUs with the readers).
var serverSettings = map[string]string{
	"shared_buffers":     "512MB",
	"max_wal_size":       "4GB",
	"min_wal_size":       "1GB",
	"checkpoint_timeout": "1h",
	"autovacuum":         "off",
	"wal_buffers":        "64MB",
}

// source is the throwaway Postgres with the loaded table.
type source struct {
	c        *pgtest.Cluster
	version  string        // server_version
	protoVer int           // pgoutput proto_version mooncdc uses on this server
	startLSN pglogrepl.LSN // before the load
	endLSN   pglogrepl.LSN // after the load
	rowBytes float64       // average on-disk row size (pg_column_size of the row)
	loadTime time.Duration
}

// startSource starts the throwaway Postgres; prepareStream and
// loadSnapshotTable create what each part of the benchmark needs.
func startSource(ctx context.Context) (*source, error) {
	c, err := pgtest.Start(ctx, pgtest.Options{Settings: serverSettings})
	if err != nil {
		return nil, err
	}
	s := &source{c: c}
	conn, err := c.Connect(ctx, "")
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	defer conn.Close(context.Background())
	var num int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('server_version_num')::int").Scan(&s.version, &num); err != nil {
		_ = c.Close()
		return nil, err
	}
	// The same choice as mooncdc's session (connector/stream): 2 from 14 on.
	s.protoVer = 1
	if num >= 140000 {
		s.protoVer = 2
	}
	return s, nil
}

// prepareStream creates the streaming benchmark's table, publication and
// slots (mooncdc's and one per pg_recvlogical run).
func (s *source) prepareStream(ctx context.Context, limitRuns int, extraSlots ...string) error {
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	setup := []string{
		fmt.Sprintf(`CREATE TABLE public.%s (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`, table),
		fmt.Sprintf(`CREATE PUBLICATION %s FOR TABLE public.%s`, publication, table),
		// Both slots exist before the load, so both see exactly the same WAL.
		fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'pgoutput')`, mooncdcSlot),
	}
	for _, slot := range extraSlots {
		setup = append(setup, fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'pgoutput')`, slot))
	}
	for i := range limitRuns {
		setup = append(setup, fmt.Sprintf(`SELECT pg_create_logical_replication_slot('%s', 'pgoutput')`, limitSlotName(i)))
	}
	for _, q := range setup {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// load inserts n rows, one INSERT per row, committing every tx rows, and
// records the WAL range they occupy.
func (s *source) load(ctx context.Context, n, tx int) error {
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// A checkpoint now rather than during a measurement: with
	// max_wal_size and checkpoint_timeout as set, none follows.
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(lsnScanner{&s.startLSN}); err != nil {
		return err
	}
	// Asynchronous commit makes the load quick; the readers start only
	// once the WAL is flushed (see below), so it does not change what they
	// measure.
	if _, err := conn.Exec(ctx, "SET synchronous_commit = off"); err != nil {
		return err
	}
	// A DO block sent alone (simple protocol, no implicit transaction
	// block) may COMMIT. The payload is 64 hex characters; a row is about
	// 110 bytes.
	do := fmt.Sprintf(`DO $$
DECLARE
  total bigint := %d;
  per int := %d;
  i bigint := 0;
BEGIN
  WHILE i < total LOOP
    FOR k IN 1..least(per, total - i) LOOP
      i := i + 1;
      INSERT INTO public.%s (id, payload, n, at)
        VALUES (i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now());
    END LOOP;
    COMMIT;
  END LOOP;
END
$$`, n, tx, table)
	start := time.Now()
	if _, err := conn.Exec(ctx, do); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	s.loadTime = time.Since(start)
	// The end of the load: the end of its last commit record, unless
	// another process wrote WAL since (then the readers' positions reach
	// it by the walsender's keepalives). pg_current_wal_lsn would be the
	// write position, which an asynchronous commit may not have reached.
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(lsnScanner{&s.endLSN}); err != nil {
		return err
	}
	// Walsenders send only flushed WAL; wait for the WAL writer so that the
	// first reader does not wait for it.
	for {
		var flushed pglogrepl.LSN
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(lsnScanner{&flushed}); err != nil {
			return err
		}
		if flushed >= s.endLSN {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	var count int64
	if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*), avg(pg_column_size(b.*)) FROM public.%s b", table)).Scan(&count, &s.rowBytes); err != nil {
		return err
	}
	if count != int64(n) {
		return fmt.Errorf("load: table holds %d rows, want %d", count, n)
	}
	return nil
}

// limitSlotName names the slot of the i-th pg_recvlogical run.
func limitSlotName(i int) string { return fmt.Sprintf("bench_limit_%d", i+1) }

// lsnScanner scans a pg_lsn selected as text.
type lsnScanner struct{ l *pglogrepl.LSN }

// Scan implements sql.Scanner, which pgx honours.
func (s lsnScanner) Scan(src any) error {
	var text string
	switch v := src.(type) {
	case string:
		text = v
	case []byte:
		text = string(v)
	case nil:
		*s.l = 0
		return nil
	default:
		return fmt.Errorf("scan LSN: unexpected %T", src)
	}
	l, err := pglogrepl.ParseLSN(text)
	if err != nil {
		return err
	}
	*s.l = l
	return nil
}

// slotWatcher polls a slot's confirmed position and the CPU time of the
// walsender that serves it.
type slotWatcher struct {
	conn *pgx.Conn
	slot string

	mu  sync.Mutex
	cpu map[int][2]time.Duration // walsender pid → user, sys at the last sample
}

func (s *source) watch(ctx context.Context, slot string) (*slotWatcher, error) {
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return nil, err
	}
	return &slotWatcher{conn: conn, slot: slot, cpu: make(map[int][2]time.Duration)}, nil
}

func (w *slotWatcher) close() { _ = w.conn.Close(context.Background()) }

// poll returns the slot's confirmed_flush_lsn and samples the CPU time of
// its walsender, if one is active.
func (w *slotWatcher) poll(ctx context.Context) (pglogrepl.LSN, error) {
	var confirmed pglogrepl.LSN
	var pid *int32
	err := w.conn.QueryRow(ctx, "SELECT confirmed_flush_lsn::text, active_pid FROM pg_replication_slots WHERE slot_name = $1",
		w.slot).Scan(lsnScanner{&confirmed}, &pid)
	if err != nil {
		return 0, fmt.Errorf("slot %s: %w", w.slot, err)
	}
	if pid != nil {
		if u, sy, err := procCPU(int(*pid)); err == nil {
			w.mu.Lock()
			w.cpu[int(*pid)] = [2]time.Duration{u, sy}
			w.mu.Unlock()
		}
	}
	return confirmed, nil
}

// walsenderCPU is the CPU time of the slot's walsenders, as last sampled
// (every 100ms: a slight underestimate).
func (w *slotWatcher) walsenderCPU() cpuTime {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum cpuTime
	for _, d := range w.cpu {
		sum.user += d[0]
		sum.sys += d[1]
	}
	return sum
}

// limitResult is the pg_recvlogical run.
type limitResult struct {
	elapsed      time.Duration
	clientCPU    cpuTime       // pg_recvlogical
	walsenderCPU cpuTime       // sampled every 100ms: a slight underestimate
	hostBusy     time.Duration // all processes on the machine
}

// runLimit streams the load through pg_recvlogical into /dev/null with the
// plugin options mooncdc uses, until the end LSN.
func (s *source) runLimit(ctx context.Context, slot string) (limitResult, error) {
	var res limitResult
	w, err := s.watch(ctx, slot)
	if err != nil {
		return res, err
	}
	defer w.close()

	args := []string{
		"-d", "postgres",
		"--slot", slot,
		"--start",
		// pgoutput options, as mooncdc passes them in START_REPLICATION.
		"-o", "proto_version=" + strconv.Itoa(s.protoVer),
		"-o", "publication_names=" + publication,
		"-o", "messages=true",
		"-f", "/dev/null",
		"--endpos", s.endLSN.String(),
		"--no-loop",
		// Answer the server at least every second, as mooncdc does.
		"--status-interval", "1",
	}
	var out bytes.Buffer
	cmd := s.c.CommandContext(ctx, "pg_recvlogical", args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	start, busy0 := time.Now(), hostBusy()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start pg_recvlogical: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			res.elapsed = time.Since(start)
			res.hostBusy = hostBusy() - busy0
			u, sy, _ := childRusage(cmd.ProcessState)
			res.clientCPU = cpuTime{u, sy}
			res.walsenderCPU = w.walsenderCPU()
			if err != nil {
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					return res, fmt.Errorf("pg_recvlogical %s: %v\n%s", strings.Join(args, " "), err, out.String())
				}
				return res, err
			}
			// It must have read everything: its slot is confirmed up to
			// the end position (it confirms what it wrote on exit).
			confirmed, err := w.poll(ctx)
			if err != nil {
				return res, err
			}
			if confirmed < s.endLSN {
				return res, fmt.Errorf("pg_recvlogical exited, but its slot is confirmed only to %s, before the end of the load %s\n%s", confirmed, s.endLSN, out.String())
			}
			return res, nil
		case <-tick.C:
			if _, err := w.poll(ctx); err != nil && ctx.Err() == nil {
				return res, err
			}
		case <-ctx.Done():
			<-done
			return res, fmt.Errorf("pg_recvlogical did not reach %s (timeout -timeout, or interrupted): %w", s.endLSN, ctx.Err())
		}
	}
}
