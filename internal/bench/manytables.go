package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/offsets"
)

// The thousands-of-tables benchmark (issue 17.4; -tables N, 1,000 by
// default, 5,000 for the large case): N tables of 100 rows in schema
// "many", copied by the mooncdc binary (snapshot.mode initial) while a
// write load updates rows of every table (-tables-load changes/s, spread
// at random). It reports
//
//   - the time from mooncdc's start until every table is handed over
//     (ready or catchup in /status, polled every 200 ms), goal < 60 s for
//     1,000 tables;
//   - the handover rate (tables handed over per second, from mooncdc's
//     log) and the spread of the copies: the pipeline mutex, which every
//     handover takes, must not make them queue;
//   - peak RSS (VmHWM of the child, sampled: childRunner) and CPU;
//   - the topics: created by one CreateTopics request per snapshot run
//     (connector/internal/delivery/topics.go EnsureAll);
//   - a restart: the time from the second start until /readyz (the
//     offsets topic read, the slot taken) and the copies it started (must
//     be 0: nothing is copied again).
//
// It runs with format JSON, then, with -tables-avro, again with key and
// value Avro against the Schema Registry stand-in (internal/srtest), and
// with -registry-latency D a third time with the stand-in delaying every
// request by D, as a registry across a network would (on localhost it
// answers in microseconds). Each run has a broker, a slot and a registry
// of its own over the same tables; an Avro run also reports the registry
// requests made until every table was handed over, the most served at
// once, and the subjects with more than one version (want 0: a version
// the copies did not need is one a user's registry keeps). A closing
// table sets each run's time beside JSON's.

const (
	manySchema = "many"
	manyName   = "many"
	manyPub    = "many_pub"
	manySlot   = "many_mooncdc"
	manyRows   = 100
	manyGoal   = 60 * time.Second
)

func manyTable(i int) string { return fmt.Sprintf("t%05d", i) }

// manyVariant is one run of the benchmark over the same tables: the
// record format and, for Avro, the registry stand-in's delay per request.
type manyVariant struct {
	label   string
	avro    bool
	latency time.Duration
}

// manyVariants are the runs the flags ask for, JSON first: the others'
// figures are read beside its.
func manyVariants(o options) []manyVariant {
	vs := []manyVariant{{label: "json"}}
	if o.tablesAvro {
		vs = append(vs, manyVariant{label: "avro", avro: true})
	}
	if o.registryLatency > 0 {
		vs = append(vs, manyVariant{label: "avro, registry +" + o.registryLatency.String(), avro: true, latency: o.registryLatency})
	}
	return vs
}

// manyResult is what the closing table compares across runs.
type manyResult struct {
	v        manyVariant
	allReady time.Duration
	rate     float64 // handovers/s
	regReqs  int     // registry requests until all handed over (Avro)
	inFlight int     // the most registry requests served at once (Avro)
}

func runManyTables(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	n := o.tables
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	step(fmt.Sprintf("many tables: creating %d tables of %d rows in schema %s", n, manyRows, manySchema))
	start := time.Now()
	// The DO block is sent alone (simple protocol, no implicit
	// transaction), so that it may COMMIT every 200 tables.
	for _, q := range []string{
		`CREATE SCHEMA ` + manySchema,
		fmt.Sprintf(`DO $$
BEGIN
  FOR i IN 1..%[2]d LOOP
    EXECUTE format('CREATE TABLE %[1]s.t%%s (id int PRIMARY KEY, payload text NOT NULL, n int NOT NULL)', lpad(i::text, 5, '0'));
    EXECUTE format('INSERT INTO %[1]s.t%%s SELECT g, md5(g::text), 0 FROM generate_series(1, %[3]d) g', lpad(i::text, 5, '0'));
    IF i %% 200 = 0 THEN COMMIT; END IF;
  END LOOP;
END
$$`, manySchema, n, manyRows),
		`ANALYZE`,
		`CREATE PUBLICATION ` + manyPub + ` FOR TABLES IN SCHEMA ` + manySchema,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("create the tables: %w", err)
		}
	}
	step(fmt.Sprintf("many tables: created in %s", round(time.Since(start))))

	var results []manyResult
	var errs []error
	for i, v := range manyVariants(o) {
		if ctx.Err() != nil {
			break
		}
		if i > 0 {
			fmt.Println()
		}
		slot := manySlot
		if i > 0 {
			slot = fmt.Sprintf("%s_%d", manySlot, i)
		}
		res, err := manyRun(ctx, o, src, kfakeBin, tmp, v, slot)
		o.tablesCPUProfile = "" // the first run's profile only: the next would overwrite it
		// The next run's slot must not find this one's holding WAL back.
		if _, derr := conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active`, slot); derr != nil {
			errs = append(errs, fmt.Errorf("drop slot %s: %w", slot, derr))
		}
		if err != nil {
			step(fmt.Sprintf("many tables (%s) failed (the error follows at the end)", v.label))
			errs = append(errs, fmt.Errorf("%s: %w", v.label, err))
			continue
		}
		results = append(results, res)
	}
	if len(results) > 1 && results[0].v.label == "json" {
		printManyComparison(results)
	}
	return errors.Join(errs...)
}

// printManyComparison sets each run's time to all copied beside the JSON
// run's.
func printManyComparison(rs []manyResult) {
	base := rs[0].allReady
	fmt.Println()
	fmt.Printf("thousands of tables, by format (same tables, same load; ratio = time / JSON's time):\n")
	for _, r := range rs {
		reg := ""
		if r.v.avro {
			reg = fmt.Sprintf("; %d registry requests, at most %d at once", r.regReqs, r.inFlight)
		}
		fmt.Printf("  %-28s all copied %8s  ×%.2f  %5.0f handovers/s%s\n", r.v.label, round(r.allReady), r.allReady.Seconds()/base.Seconds(), r.rate, reg)
	}
}

// manyRun runs mooncdc over the tables in one format, with a broker of its
// own and slot, then starts it again, and prints the run's report.
func manyRun(ctx context.Context, o options, src *source, kfakeBin, tmp string, v manyVariant, slot string) (manyResult, error) {
	res := manyResult{v: v}
	n := o.tables
	kdir := filepath.Join(tmp, "kafka-"+slot)
	defer os.RemoveAll(kdir)
	brk, err := startBroker(kfakeBin, kdir)
	if err != nil {
		return res, err
	}
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return res, err
	}
	cfg := config.DefaultConfig()
	cfg.Name = manyName
	cfg.Postgres.URL = src.c.URL("")
	cfg.Postgres.Tables = []string{manySchema + ".*"}
	cfg.Postgres.Publication = manyPub
	cfg.Postgres.Slot = slot
	cfg.Kafka.Brokers = []string{brk.addr}
	cfg.Kafka.Compression = compression
	cfg.Metrics.Listen = metricsAddr
	cfg.Log.Level, cfg.Log.Format = "info", "json"
	var reg *srtest.Registry
	if v.avro {
		if reg, err = srtest.Start(srtest.WithLatency(v.latency)); err != nil {
			return res, err
		}
		defer reg.Close()
		cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
		cfg.Format.SchemaRegistry.URL = reg.URL()
	}
	path := filepath.Join(tmp, "mooncdc-"+slot+".yaml")
	if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
		return res, err
	}
	// The write load, on all tables, from before the start to the end.
	lctx, stopLoad := context.WithCancel(ctx)
	var changes atomic.Int64
	var loadErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		loadErr = manyLoad(lctx, src, n, o.tablesLoad, &changes)
	}()
	defer func() { stopLoad(); wg.Wait() }()

	hc := &http.Client{Timeout: 2 * time.Second}
	r := &childRunner{bin: o.mooncdc, config: path, cpuprofile: o.tablesCPUProfile}
	step(fmt.Sprintf("many tables: mooncdc run (%s tables, format %s, snapshot.mode initial, write load %d changes/s) → Kafka (kfake %s)", commas(int64(n)), v.label, o.tablesLoad, brk.addr))
	t0 := time.Now()
	if err := r.start(); err != nil {
		return res, err
	}
	var allReady time.Duration
	var hwm int64
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// /status lists every table: polled every 200 ms per 1,000 tables, so
	// that reading it costs the child the same share at any count (at
	// 5,000 tables every 200 ms it was an eighth of its CPU).
	poll := 200 * time.Millisecond * time.Duration(max(1, n/1000))
	for allReady == 0 {
		select {
		case <-r.exited():
			printLog("mooncdc", r.output())
			return res, fmt.Errorf("mooncdc exited before every table was handed over")
		case <-pctx.Done():
			_ = r.stop()
			printLog("mooncdc", tail(r.output(), 40))
			return res, fmt.Errorf("not every table handed over: %w", pctx.Err())
		case <-time.After(poll):
		}
		if h, err := vmHWM(r.pid()); err == nil {
			hwm = max(hwm, h)
		}
		var st connector.LiveStatus
		if body := get(hc, metricsAddr, "/status"); body == nil || json.Unmarshal(body, &st) != nil {
			continue
		}
		ready := 0
		for _, t := range st.Tables {
			if t.Phase == offsets.PhaseReady || t.Phase == offsets.PhaseCatchup {
				ready++
			}
		}
		if ready >= n {
			allReady = time.Since(t0)
		}
	}
	res.allReady = allReady
	if reg != nil {
		res.regReqs, res.inFlight = reg.TotalRequests(), reg.MaxInFlight()
	}
	registered := 0
	if reg != nil {
		registered = reg.Requests(srtest.EndpointRegister)
	}
	step(fmt.Sprintf("many tables: all %d handed over after %s; stopping, then starting again", n, round(allReady)))
	// Let the load run on a moment in the streaming phase, then stop.
	time.Sleep(2 * time.Second)
	stopStart := time.Now()
	if err := r.stop(); err != nil {
		printLog("mooncdc", tail(r.output(), 40))
		return res, err
	}
	stopTime := time.Since(stopStart)
	user, sys, maxRSS := r.rusage()
	cpu := cpuTime{user, sys}
	firstLog := r.output()
	hs := handoverStats(firstLog, t0)
	res.rate = hs.rate

	// The restart: the offsets topic read, no copy.
	r2 := &childRunner{bin: o.mooncdc, config: path}
	t1 := time.Now()
	if err := r2.start(); err != nil {
		return res, err
	}
	var readyAfter time.Duration
	for readyAfter == 0 {
		select {
		case <-r2.exited():
			printLog("mooncdc (restart)", r2.output())
			return res, fmt.Errorf("mooncdc exited after the restart")
		case <-pctx.Done():
			_ = r2.stop()
			return res, fmt.Errorf("not ready after the restart: %w", pctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if get(hc, metricsAddr, "/readyz") != nil {
			readyAfter = time.Since(t1)
		}
	}
	time.Sleep(3 * time.Second) // time for a copy to start, were one to
	stopLoad()
	wg.Wait()
	if err := r2.stop(); err != nil {
		return res, err
	}
	_, _, maxRSS2 := r2.rusage()
	recopied := strings.Count(r2.output(), `"msg":"copying table"`)

	// Topics and records.
	cctx, cancel2 := context.WithTimeout(ctx, time.Minute)
	defer cancel2()
	topics, records, err := manyTopics(cctx, brk.addr)
	if err != nil {
		return res, err
	}

	fmt.Println()
	fmt.Printf("mooncdc thousands of tables, format %s: %s tables × %d rows in schema %s, a write load of %d changes/s on all of them (%d changes made), snapshot.workers %d\n",
		v.label, commas(int64(n)), manyRows, manySchema, o.tablesLoad, changes.Load(), cfg.Snapshot.Workers)
	fmt.Printf("  all tables handed over:  %s after the start (goal < %s for 1,000 tables)\n", round(allReady), manyGoal)
	fmt.Printf("  copies:                  first copy started %s, last handed over %s; %s handovers/s over that span; copy took p50 %s, p99 %s, max %s\n",
		round(hs.firstCopy), round(hs.lastHandover), fmt.Sprintf("%.0f", hs.rate), round(hs.p50), round(hs.p99), round(hs.max))
	fmt.Printf("  handover (copied → handed over, the pipeline mutex and the offsets write): p50 %s, p99 %s, max %s\n", round(hs.hoP50), round(hs.hoP99), round(hs.hoMax))
	fmt.Printf("  peak RSS:                %.1f MiB (VmHWM of the child; at %s polls %.1f MiB); CPU %s; clean stop %s\n",
		float64(maxRSS)/(1<<20), poll, float64(hwm)/(1<<20), cpu, round(stopTime))
	fmt.Printf("  restart:                 ready (offsets topic read, slot taken, streaming) %s after the start; %d copies started (want 0); peak RSS %.1f MiB\n",
		round(readyAfter), recopied, float64(maxRSS2)/(1<<20))
	fmt.Printf("  Kafka:                   %d data topics (created in one CreateTopics request per snapshot run), %d records (≥ %d rows + the changes)\n",
		topics, records, n*manyRows)
	var failed []string
	if reg != nil {
		multi := 0
		subjects := reg.Subjects()
		for _, s := range subjects {
			if len(reg.Versions(s)) > 1 {
				multi++
			}
		}
		fmt.Printf("  Schema Registry:         %d requests until all handed over (%d registrations), at most %d served at once; %d subjects, %d with more than one version (want 0)\n",
			res.regReqs, registered, res.inFlight, len(subjects), multi)
		if multi > 0 {
			failed = append(failed, fmt.Sprintf("%d subjects with more than one version", multi))
		}
	}
	if n <= 1000 && allReady >= manyGoal {
		failed = append(failed, fmt.Sprintf("all copied after %s", round(allReady)))
	}
	if recopied > 0 {
		failed = append(failed, fmt.Sprintf("%d tables copied again after the restart", recopied))
	}
	if topics < n || records < int64(n*manyRows) {
		failed = append(failed, fmt.Sprintf("%d topics and %d records, want %d and ≥ %d", topics, records, n, n*manyRows))
	}
	verdict := "PASS"
	if len(failed) > 0 {
		verdict = fmt.Sprintf("FAIL %v", failed)
	}
	if n <= 1000 {
		fmt.Printf("goal: all %s tables copied in < %s, no copy after a restart  %s\n", commas(int64(n)), manyGoal, verdict)
	} else {
		fmt.Printf("goal: no copy after a restart (the time goal, < %s, is for 1,000 tables)  %s\n", manyGoal, verdict)
	}
	if loadErr != nil && ctx.Err() == nil {
		return res, fmt.Errorf("write load: %w", loadErr)
	}
	if len(failed) > 0 && (o.requireGoal || recopied > 0 || records < int64(n*manyRows)) {
		return res, fmt.Errorf("many tables: %v", failed)
	}
	return res, nil
}

// manyLoad updates random rows of random tables at rate changes/s, in
// transactions of 10, until ctx ends.
func manyLoad(ctx context.Context, src *source, tables, rate int, changes *atomic.Int64) error {
	if rate <= 0 {
		return nil
	}
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	const perTx = 10
	tick := time.NewTicker(time.Second * perTx / time.Duration(rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var b strings.Builder
		b.WriteString("BEGIN;")
		for range perTx {
			fmt.Fprintf(&b, "UPDATE %s.%s SET n = n + 1 WHERE id = %d;", manySchema, manyTable(1+rand.IntN(tables)), 1+rand.IntN(manyRows))
		}
		b.WriteString("COMMIT;")
		if _, err := conn.Exec(ctx, b.String()); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		changes.Add(perTx)
	}
}

// handovers summarizes the copies in mooncdc's log.
type handovers struct {
	firstCopy, lastHandover time.Duration
	rate                    float64
	p50, p99, max           time.Duration // "table copied" took
	hoP50, hoP99, hoMax     time.Duration // table copied → handed over
}

func handoverStats(out string, start time.Time) handovers {
	var h handovers
	var took, ho []time.Duration
	copied := map[string]time.Time{}
	count := 0
	for t, m := range logLines(out) {
		table, _ := m["table"].(string)
		at := t.Sub(start)
		switch m["msg"] {
		case "copying table":
			if h.firstCopy == 0 || at < h.firstCopy {
				h.firstCopy = at
			}
		case "table copied":
			if s, ok := m["took"].(float64); ok {
				took = append(took, time.Duration(s*float64(time.Second)))
			}
			copied[table] = t
		case "handed over":
			count++
			h.lastHandover = max(h.lastHandover, at)
			if c, ok := copied[table]; ok {
				ho = append(ho, t.Sub(c))
			}
		}
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[min(len(d)-1, int(p*float64(len(d))))]
	}
	h.p50, h.p99, h.max = pct(took, 0.5), pct(took, 0.99), pct(took, 1)
	h.hoP50, h.hoP99, h.hoMax = pct(ho, 0.5), pct(ho, 0.99), pct(ho, 1)
	if span := (h.lastHandover - h.firstCopy).Seconds(); span > 0 {
		h.rate = float64(count) / span
	}
	return h
}

// manyTopics counts the data topics of the many-tables connector and the
// records in them.
func manyTopics(ctx context.Context, addr string) (int, int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	listed, err := adm.ListTopics(ctx)
	if err != nil {
		return 0, 0, err
	}
	var topics []string
	for _, t := range listed.Names() {
		if strings.HasPrefix(t, manyName+"."+manySchema+".") {
			topics = append(topics, t)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return 0, 0, err
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return len(topics), n, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
