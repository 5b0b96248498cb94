package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/offsets"
)

// The snapshot benchmark's objects and names. mooncdc creates its slot.
const (
	snapTable       = "snapbench"
	snapQualified   = "public." + snapTable
	snapPublication = "snapbench_pub"
	snapConnector   = "snapbench"
	snapSlot        = "snapbench_mooncdc"
	snapTopic       = snapConnector + "." + snapQualified
	// The snapshot's goal: ratio >= goal and peak RSS under snapRSSGoal.
	snapRSSGoal = 200 << 20
)

// snapRowsMetric is the sample of the table's copied rows in /metrics.
var snapRowsMetric = `mooncdc_table_copy_rows_total{table="` + snapQualified + `"}`

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

// copyLimitResult is one COPY TO STDOUT run.
type copyLimitResult struct {
	elapsed    time.Duration
	rows       int64
	bytes      int64         // COPY text output
	backendCPU cpuTime       // the backend running the COPY
	clientCPU  cpuTime       // this process (pgx) during the COPY
	hostBusy   time.Duration // all processes on the machine
}

// countWriter counts and discards what it is given.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// runCopyLimit reads the whole table with COPY … TO STDOUT on one
// connection through pgx's CopyTo (the client mooncdc uses), counting the
// bytes and discarding them.
func (s *source) runCopyLimit(ctx context.Context) (copyLimitResult, error) {
	var res copyLimitResult
	conn, err := s.c.Connect(ctx, "")
	if err != nil {
		return res, err
	}
	defer conn.Close(context.Background())
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		return res, err
	}
	bu0, bs0, _ := procCPU(pid)
	cu0, cs0 := selfRusage()
	var w countWriter
	start, busy0 := time.Now(), hostBusy()
	tag, err := conn.PgConn().CopyTo(ctx, &w, "COPY "+snapQualified+" TO STDOUT")
	res.elapsed = time.Since(start)
	res.hostBusy = hostBusy() - busy0
	if err != nil {
		return res, fmt.Errorf("COPY %s TO STDOUT: %w", snapQualified, err)
	}
	cu1, cs1 := selfRusage()
	res.clientCPU = cpuTime{cu1 - cu0, cs1 - cs0}
	if bu1, bs1, err := procCPU(pid); err == nil {
		res.backendCPU = cpuTime{bu1 - bu0, bs1 - bs0}
	}
	res.rows, res.bytes = tag.RowsAffected(), w.n
	return res, nil
}

// runCopyPsql times `psql -c 'COPY … TO STDOUT'` writing into /dev/null,
// process start and connection included: a reference for the limit.
func (s *source) runCopyPsql(ctx context.Context) (time.Duration, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer devNull.Close()
	var stderr bytes.Buffer
	cmd := s.c.CommandContext(ctx, "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "COPY "+snapQualified+" TO STDOUT")
	cmd.Stdout, cmd.Stderr = devNull, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return time.Since(start), nil
}

// snapshotConfig is mooncdc's configuration for the snapshot benchmark:
// copy public.snapbench, then exit.
func snapshotConfig(s *source, brokerAddr, metricsAddr string, conns int) connector.Config {
	cfg := connector.DefaultConfig()
	cfg.Name = snapConnector
	cfg.Postgres.URL = s.c.URL("")
	cfg.Postgres.Tables = []string{snapQualified}
	cfg.Postgres.Publication = snapPublication
	cfg.Postgres.Slot = snapSlot
	cfg.Snapshot.Mode = connector.SnapshotInitialOnly
	if conns > 0 {
		cfg.Snapshot.ConnectionsPerTable = conns
	}
	cfg.Kafka.Brokers = []string{brokerAddr}
	cfg.Kafka.Compression = compression
	cfg.Metrics.Listen = metricsAddr
	// Info level: the copy's start, end and handover are read from the log
	// (a handful of lines).
	cfg.Log.Level = "info"
	cfg.Log.Format = "json"
	return cfg
}

// snapResult is mooncdc's snapshot run. Times are from its start.
type snapResult struct {
	stages   *cpuStages    // the child's CPU by stage, from its profile (whole life)
	elapsed  time.Duration // start → exit
	firstRow time.Duration // metrics: copy rows > 0 (100ms polls)
	lastRow  time.Duration // metrics: copy rows ≥ N
	// From mooncdc's log (its clock, millisecond timestamps): the copy's
	// start ("copying table"), its end with every record acked ("table
	// copied"), and the handover.
	copyStart, copied, handedOver time.Duration
	copyTook                      time.Duration // "table copied" took: copyTable start → acked
	chunks                        int
	handoverPhase                 string
	exitErr                       error // nil: exit status 0
	cpu                           cpuTime
	maxRSS                        int64
	copyBackendCPU, otherPGCPU    cpuTime // sampled every 100ms: a slight underestimate
	copyBackends                  int
	brokerCPU                     cpuTime
	hostBusy                      time.Duration
	log                           string
}

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

// runSnapshotPipeline starts mooncdc (snapshot.mode initial_only) and
// times it until it exits by itself. An error means the run could not be
// measured; mooncdc's exit status is in exitErr.
func runSnapshotPipeline(ctx context.Context, s *source, r pipelineRunner, b *broker, metricsAddr string, rows int) (snapResult, error) {
	var res snapResult
	bs, err := s.sampleBackends(ctx)
	if err != nil {
		return res, err
	}
	defer bs.close()
	hc := &http.Client{Timeout: 2 * time.Second}
	var broker0 cpuTime
	if u, sy, err := procCPU(b.pid()); err == nil {
		broker0 = cpuTime{u, sy}
	}

	start, busy0 := time.Now(), hostBusy()
	if err := r.start(); err != nil {
		return res, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-r.exited():
			break wait
		case <-ctx.Done():
			_ = r.stop()
			res.log = r.output()
			return res, fmt.Errorf("mooncdc did not exit after the snapshot (timeout -timeout, or interrupted): %w", ctx.Err())
		case <-tick.C:
		}
		if res.lastRow == 0 {
			if m, err := scrape(hc, metricsAddr); err == nil {
				now := time.Since(start)
				n := m[snapRowsMetric]
				if res.firstRow == 0 && n > 0 {
					res.firstRow = now
				}
				if n >= float64(rows) {
					res.lastRow = now
				}
			}
		}
		_ = bs.sample(ctx) // best effort
	}
	res.elapsed = time.Since(start)
	res.hostBusy = hostBusy() - busy0
	if u, sy, err := procCPU(b.pid()); err == nil {
		res.brokerCPU = cpuTime{u - broker0.user, sy - broker0.sys}
	}
	res.copyBackendCPU, res.otherPGCPU, res.copyBackends = bs.totals()
	// The process has exited (or Run returned): stop only collects the
	// exit status, and ends an in-process CPU profile.
	res.exitErr = r.stop()
	res.cpu.user, res.cpu.sys, res.maxRSS = r.rusage()
	res.log = r.output()
	parseSnapshotLog(res.log, start, &res)
	return res, nil
}

// parseSnapshotLog picks the copy's milestones from mooncdc's JSON log.
func parseSnapshotLog(out string, start time.Time, res *snapResult) {
	parseLogFor(out, start, snapQualified, res)
}

// parseLogFor picks the milestones of table's copy from mooncdc's JSON log.
func parseLogFor(out string, start time.Time, table string, res *snapResult) {
	for line := range strings.SplitSeq(out, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		ts, _ := m["ts"].(string)
		t, err := time.Parse("2006-01-02T15:04:05.000Z0700", ts)
		if err != nil {
			continue
		}
		if tab, _ := m["table"].(string); tab != table {
			continue
		}
		at := t.Sub(start)
		switch m["msg"] {
		case "copying table":
			res.copyStart = at
			if c, ok := m["chunks"].(float64); ok {
				res.chunks = int(c)
			}
		case "table copied":
			res.copied = at
			if took, ok := m["took"].(float64); ok {
				res.copyTook = time.Duration(took * float64(time.Second))
			}
		case "handed over":
			res.handedOver = at
			res.handoverPhase, _ = m["phase"].(string)
		}
	}
}

// tablePhase reads the table's phase from the offsets topic.
func tablePhase(ctx context.Context, addr, name, table string) (offsets.Table, bool, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return offsets.Table{}, false, err
	}
	defer cl.Close()
	st, err := offsets.Load(ctx, cl, connector.DefaultOffsetsTopic, name)
	if err != nil {
		return offsets.Table{}, false, err
	}
	t, ok := st.Tables[table]
	return t, ok, nil
}

// firstRecord returns the topic's first record (to show a record's size).
func firstRecord(ctx context.Context, addr, topic string) (*kgo.Record, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	fs := cl.PollRecords(ctx, 1)
	if errs := fs.Errors(); len(errs) > 0 {
		return nil, errs[0].Err
	}
	recs := fs.Records()
	if len(recs) == 0 {
		return nil, fmt.Errorf("no record in %s", topic)
	}
	return recs[0], nil
}

// runSnapshot is the snapshot benchmark: COPY TO STDOUT vs mooncdc's
// snapshot of the same table.
func runSnapshot(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	step(fmt.Sprintf("snapshot: loading %d rows into %s (one INSERT … SELECT), then VACUUM (ANALYZE)", o.snapRows, snapQualified))
	tab, err := src.loadSnapshotTable(ctx, o.snapRows)
	if err != nil {
		return err
	}
	step(fmt.Sprintf("loaded in %s, vacuumed and analyzed in %s: %d pages (%.0f MiB), reltuples %d",
		round(tab.loadTime), round(tab.vacuumTime), tab.relpages, float64(tab.heapBytes)/(1<<20), tab.reltuples))

	var lim copyLimitResult
	for i := range o.snapLimitRuns {
		step(fmt.Sprintf("limit %d/%d: COPY %s TO STDOUT → pgx CopyTo → discard", i+1, o.snapLimitRuns, snapQualified))
		lctx, cancel := context.WithTimeout(ctx, o.timeout)
		l, err := src.runCopyLimit(lctx)
		cancel()
		if err != nil {
			return err
		}
		step(fmt.Sprintf("limit done in %s: %d rows, %.1f MiB (backend CPU %s)", round(l.elapsed), l.rows, float64(l.bytes)/(1<<20), l.backendCPU))
		if l.rows != int64(o.snapRows) {
			return fmt.Errorf("COPY TO STDOUT returned %d rows, want %d", l.rows, o.snapRows)
		}
		if i == 0 || l.elapsed < lim.elapsed {
			lim = l
		}
	}
	step("reference: psql -c 'COPY … TO STDOUT' > /dev/null")
	psqlTime, psqlErr := src.runCopyPsql(ctx)
	if psqlErr != nil {
		step(fmt.Sprintf("psql failed (not part of the verdict): %v", psqlErr))
	}

	brk, err := startBroker(kfakeBin, filepath.Join(tmp, "kafka-snapshot"))
	if err != nil {
		return err
	}
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	cfg := snapshotConfig(src, brk.addr, metricsAddr, o.snapConns)
	var runner pipelineRunner
	what := "mooncdc run (" + o.mooncdc + ")"
	if o.inprocess {
		what = "mooncdc in-process (connector.Run)"
		runner = &inprocRunner{cfg: cfg, cpuprofile: o.snapshotCPUProfile, jsonInfo: true}
	} else {
		path := filepath.Join(tmp, "mooncdc-snapshot.yaml")
		if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
			return err
		}
		runner = &childRunner{bin: o.mooncdc, config: path, cpuprofile: o.stagesProfile(tmp, "mooncdc-snapshot")}
	}
	step(what + ", snapshot.mode initial_only → Kafka (kfake " + brk.addr + ")")
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	res, err := runSnapshotPipeline(pctx, src, runner, brk, metricsAddr, o.snapRows)
	cancel()
	if o.verbose || err != nil || res.exitErr != nil {
		printLog("mooncdc", res.log)
		printLog("kfakeserver", brk.out.String())
	}
	if err != nil {
		return err
	}
	exit := "exit status 0"
	if res.exitErr != nil {
		exit = res.exitErr.Error()
	}
	if cr, ok := runner.(*childRunner); ok && cr.cpuprofile != "" {
		if cs, err := readCPUStages(cr.cpuprofile); err != nil {
			fmt.Fprintf(os.Stderr, "bench: CPU by stage: %v\n", err)
		} else {
			res.stages = &cs
		}
	}
	step(fmt.Sprintf("mooncdc exited after %s (%s)", round(res.elapsed), exit))

	// What mooncdc left in Kafka. A failure here is reported after the
	// figures, with mooncdc's exit status.
	var errs []error
	if res.exitErr != nil {
		errs = append(errs, fmt.Errorf("mooncdc did not exit 0: %w", res.exitErr))
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	records, err := recordCount(cctx, brk.addr, snapTopic)
	if err != nil {
		errs = append(errs, fmt.Errorf("count records in Kafka: %w", err))
	} else if records < int64(o.snapRows) {
		errs = append(errs, fmt.Errorf("delivery: topic %s holds %d records, want at least %d", snapTopic, records, o.snapRows))
	}
	phase, phaseFound, phaseErr := tablePhase(cctx, brk.addr, snapConnector, snapQualified)
	if phaseErr != nil {
		errs = append(errs, fmt.Errorf("read the offsets topic: %w", phaseErr))
	}
	sample := "-"
	var firstValue []byte
	if rec, err := firstRecord(cctx, brk.addr, snapTopic); err == nil {
		sample = fmt.Sprintf("key %d B, value %d B", len(rec.Key), len(rec.Value))
		firstValue = rec.Value
	}

	// The Kafka limit: franz-go alone, records of the same shape, into a
	// fresh broker started the same way. mooncdc's broker (and its data)
	// goes first, so that the two do not share the machine.
	brk.kill()
	snapshotRates.brokerBytes = dirSize(filepath.Join(tmp, "kafka-snapshot"))
	snapshotRates.firstValue = firstValue
	_ = os.RemoveAll(filepath.Join(tmp, "kafka-snapshot"))
	klim, klimErr := func() (kafkaLimitResult, error) {
		kdir := filepath.Join(tmp, "kafka-limit")
		defer os.RemoveAll(kdir)
		kbrk, err := startBroker(kfakeBin, kdir)
		if err != nil {
			return kafkaLimitResult{}, err
		}
		defer kbrk.kill()
		step(fmt.Sprintf("limit: franz-go → Kafka (fresh kfake %s), %d records like mooncdc's, compression %s", kbrk.addr, o.snapRows, cfg.Kafka.Compression))
		kctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		r, err := runKafkaLimit(kctx, kbrk, cfg, o.snapRows, firstValue)
		kbrk.kill()
		r.brokerBytes = dirSize(kdir)
		if err != nil && o.verbose {
			printLog("kfakeserver (kafka limit)", kbrk.out.String())
		}
		return r, err
	}()
	if klimErr != nil {
		step(fmt.Sprintf("kafka limit failed: %v", klimErr))
		errs = append(errs, fmt.Errorf("kafka limit: %w", klimErr))
	} else {
		step(fmt.Sprintf("kafka limit done in %s (client CPU %s, broker CPU %s)", round(klim.elapsed), klim.clientCPU, klim.brokerCPU))
	}

	// The report.
	n := o.snapRows
	limitRate := float64(n) / lim.elapsed.Seconds()
	moonRate := float64(n) / res.elapsed.Seconds()
	snapshotRates.rows, snapshotRates.toExit = n, moonRate
	if res.copyTook > 0 {
		snapshotRates.onCopy = float64(n) / res.copyTook.Seconds()
	}
	ratio := moonRate / limitRate
	mb := func(d time.Duration) string {
		if d <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", float64(lim.bytes)/(1<<20)/d.Seconds())
	}
	copyConns := min(max(res.chunks, 1), cfg.Snapshot.ConnectionsPerTable)
	fmt.Println()
	fmt.Printf("mooncdc snapshot bench: N=%d rows of %s (id bigint PK, payload text, n int, at timestamptz); COPY text %.0f B/row (%.0f MiB), row ≈ %.0f B on disk, heap %.0f MiB in %d pages\n",
		n, snapQualified, float64(lim.bytes)/float64(n), float64(lim.bytes)/(1<<20), tab.rowBytes, float64(tab.heapBytes)/(1<<20), tab.relpages)
	fmt.Printf("  Postgres %s, %d CPUs, GOMAXPROCS %d; mooncdc snapshot.mode %s: %d chunks (ctid ranges, chunk_rows %d, reltuples %d) over %d connection(s) (connections_per_table %d)\n",
		src.version, runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.Snapshot.Mode, res.chunks, cfg.Snapshot.ChunkRows, tab.reltuples,
		copyConns, cfg.Snapshot.ConnectionsPerTable)
	fmt.Println()
	fmt.Printf("  %-38s %9s %12s %10s\n", "", "time", "rows/s", "MiB/s")
	fmt.Printf("  %-38s %9s %12s %10s\n", "limit: COPY TO STDOUT (pgx)", round(lim.elapsed), rate(n, lim.elapsed), mb(lim.elapsed))
	if psqlErr == nil {
		fmt.Printf("  %-38s %9s %12s %10s\n", "(psql COPY > /dev/null, reference)", round(psqlTime), rate(n, psqlTime), mb(psqlTime))
	}
	if klimErr == nil {
		fmt.Printf("  %-38s %9s %12s %10s\n", "limit: franz-go → kfake (same records)", round(klim.elapsed), rate(n, klim.elapsed), mb(klim.elapsed))
	} else {
		fmt.Printf("  %-38s %9s %12s %10s\n", "limit: franz-go → kfake (same records)", "failed", "-", "-")
	}
	fmt.Printf("  %-38s %9s %12s %10s\n", "mooncdc: snapshot → Kafka, to exit", round(res.elapsed), rate(n, res.elapsed), mb(res.elapsed))
	if res.firstRow > 0 && res.lastRow > res.firstRow {
		d := res.lastRow - res.firstRow
		fmt.Printf("  %-38s %9s %12s %10s\n", "(mooncdc: first → last row read)", round(d), rate(n, d), mb(d))
	}
	fmt.Println()
	fmt.Printf("  ratio mooncdc / COPY limit:  %.2f (start → exit)", ratio)
	if res.copyTook > 0 {
		fmt.Printf("; on the copy alone (mooncdc's \"took\": snapshot created → all acked) %.2f", lim.elapsed.Seconds()/res.copyTook.Seconds())
	}
	fmt.Println()
	kratio := "-"
	if klimErr == nil {
		kratio = fmt.Sprintf("%.2f", klim.elapsed.Seconds()/res.elapsed.Seconds())
		fmt.Printf("  ratio mooncdc / kafka limit: %s (start → exit)", kratio)
		if res.copyTook > 0 {
			fmt.Printf("; on the copy alone %.2f", klim.elapsed.Seconds()/res.copyTook.Seconds())
		}
		fmt.Println()
		tmpl := "a synthetic envelope (no mooncdc record to copy)"
		if klim.template {
			tmpl = "mooncdc's first record with each row's id, payload and n"
		}
		fmt.Printf("  kafka limit:             topic %s, %d partition(s), compression %s, idempotent, acks all, linger 5ms, ≤ %d MiB unacked; key %.1f B, value %.1f B avg (%s)\n",
			kafkaLimitTopic, cfg.Kafka.TopicPartitions, cfg.Kafka.Compression, klim.window>>20,
			float64(klim.keyBytes)/float64(n), float64(klim.valueBytes)/float64(n), tmpl)
	} else {
		fmt.Printf("  ratio mooncdc / kafka limit: - (the kafka limit failed: see below)\n")
	}
	fmt.Printf("  mooncdc peak RSS:        %.1f MiB (%s)\n",
		float64(res.maxRSS)/(1<<20), map[bool]string{false: "VmHWM of the child, sampled every 20ms", true: "VmHWM of this process, the whole bench"}[o.inprocess])
	fmt.Printf("  mooncdc CPU:             %s over its whole life = %.2f cores\n", res.cpu, res.cpu.total().Seconds()/res.elapsed.Seconds())
	fmt.Printf("  cost per row:            %.2f µs of mooncdc CPU (whole life; limits: COPY backend %.2f µs + pgx %.2f µs", perRow(res.cpu, n),
		perRow(lim.backendCPU, n), perRow(lim.clientCPU, n))
	if klimErr == nil {
		fmt.Printf(", franz-go alone %.2f µs", perRow(klim.clientCPU, n))
	}
	fmt.Println(")")
	if res.stages != nil {
		fmt.Printf("  CPU by stage:            %s (per row, whole life, from run --cpuprofile: %s sampled)\n", res.stages.perRow(n), round(res.stages.total))
	}
	ms := func(d time.Duration) string {
		if d <= 0 {
			return "?"
		}
		return round(d).String()
	}
	fmt.Printf("  mooncdc timeline:        copy started %s, first row read %s, last row read %s (metrics, 100ms), all acked %s (copy took %s), handed over %s (%s), exited %s (%s)\n",
		ms(res.copyStart), ms(res.firstRow), ms(res.lastRow), ms(res.copied), ms(res.copyTook), ms(res.handedOver), res.handoverPhase, ms(res.elapsed), exit)
	fmt.Printf("  other CPU (mooncdc run): COPY backends %s (%d connection(s)), other backends and walsenders %s, kfake broker %s\n",
		res.copyBackendCPU, res.copyBackends, res.otherPGCPU, res.brokerCPU)
	fmt.Printf("  other CPU (limit run):   backend %s, pgx client (this process) %s\n", lim.backendCPU, lim.clientCPU)
	if klimErr == nil {
		fmt.Printf("  other CPU (kafka limit): franz-go client (this process) %s, kfake broker %s\n", klim.clientCPU, klim.brokerCPU)
	}
	limOurs := (lim.backendCPU.total() + lim.clientCPU.total()).Seconds() / lim.elapsed.Seconds()
	limBusy := lim.hostBusy.Seconds() / lim.elapsed.Seconds()
	resOurs := (res.cpu.total() + res.copyBackendCPU.total() + res.otherPGCPU.total() + res.brokerCPU.total()).Seconds() / res.elapsed.Seconds()
	resBusy := res.hostBusy.Seconds() / res.elapsed.Seconds()
	fmt.Printf("  machine CPU busy:        limit run %.2f of %d cores (its processes %.2f); mooncdc run %.2f (mooncdc+backends+broker %.2f)",
		limBusy, runtime.NumCPU(), limOurs, resBusy, resOurs)
	other := max(limBusy-limOurs, resBusy-resOurs)
	if klimErr == nil && klim.elapsed > 0 {
		kOurs := (klim.clientCPU.total() + klim.brokerCPU.total()).Seconds() / klim.elapsed.Seconds()
		kBusy := klim.hostBusy.Seconds() / klim.elapsed.Seconds()
		fmt.Printf("; kafka limit run %.2f (client+broker %.2f)", kBusy, kOurs)
		other = max(other, kBusy-kOurs)
	}
	fmt.Println()
	if other > 0.35 {
		fmt.Printf("  WARNING: other processes used up to %.2f cores during a measurement; the figures are skewed, run again on a quiet machine\n", other)
	}
	phaseDesc := "missing"
	if phaseFound {
		phaseDesc = fmt.Sprintf("%s at LSN %s", phase.Phase, lsnString(phase.LSN))
		if phase.LastError != "" {
			phaseDesc += " (" + phase.LastError + ")"
		}
	}
	fmt.Printf("  Kafka %s: %d records (first: %s); offsets topic: %s %s\n", snapTopic, records, sample, snapQualified, phaseDesc)
	fmt.Println()
	if phaseErr == nil && (!phaseFound || (phase.Phase != offsets.PhaseReady && phase.Phase != offsets.PhaseCatchup)) {
		errs = append(errs, fmt.Errorf("the offsets topic has %s %s, want ready or catchup", snapQualified, phaseDesc))
	}
	verdict, why := "PASS", ""
	if ratio < goal || res.maxRSS >= snapRSSGoal {
		verdict = "FAIL"
	}
	if len(errs) > 0 {
		verdict, why = "FAIL", "; the run failed: see below"
	}
	kafkaBound := ""
	if klimErr == nil {
		kafkaBound = fmt.Sprintf(" (Kafka-bound: mooncdc reaches %s of what franz-go alone gets into this broker)", kratio)
	}
	fmt.Printf("goal: ratio vs COPY >= %.1f and peak RSS < %d MiB  %s (%.2f, %.1f MiB%s)%s\n", goal, snapRSSGoal>>20, verdict, ratio, float64(res.maxRSS)/(1<<20), why, kafkaBound)

	if o.snapshotCPUProfile != "" {
		fmt.Printf("\nCPU profile of the snapshot (start → exit) in %s; top 25:\n", o.snapshotCPUProfile)
		cmd := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", o.snapshotCPUProfile)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go tool pprof: %v\n", err)
		}
	}

	if o.requireGoal && verdict == "FAIL" {
		errs = append(errs, errors.New("the snapshot misses the goal"))
	}
	if o.shapings != "" && ctx.Err() == nil && cfg.Kafka.Compression == "none" {
		if err := runShapings(ctx, o, src, kfakeBin, tmp, shapingResult{name: "none", elapsed: res.elapsed, cpu: res.cpu}); err != nil {
			errs = append(errs, fmt.Errorf("shaping: %w", err))
		}
	}
	if o.compressions != "" && ctx.Err() == nil {
		base := compressionResult{codec: cfg.Kafka.Compression, elapsed: res.elapsed, brokerBytes: snapshotRates.brokerBytes, records: records, cpu: res.cpu}
		if klimErr == nil {
			base.limitElapsed, base.limitBytes = klim.elapsed, klim.brokerBytes
		}
		if err := runCompressions(ctx, o, src, kfakeBin, tmp, base); err != nil {
			errs = append(errs, fmt.Errorf("compression: %w", err))
		}
	}
	return errors.Join(errs...)
}

func lsnString(l uint64) string { return fmt.Sprintf("%X/%X", l>>32, uint32(l)) }
