package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

// The memory-bound benchmark (issue 17.7): the process's peak RSS with the
// broker frozen, against kafka.max_inflight_bytes + 64 MiB, the bound the
// README states.
//
// mooncdc copies public.memcopy (-membound-rows rows) and streams
// public.memstream; once the copy has produced its first rows, the broker
// is frozen (SIGSTOP: its sockets stay open and nothing is answered, as a
// broker in a long GC pause or behind a dead link), and -membound-rows
// rows are inserted into public.memstream. Both the copy and the main
// worker fill their budgets and stop reading; the benchmark waits until
// neither the copied rows nor the decoded changes move for 3 s, reads
// mooncdc's VmHWM and its in-flight bytes, thaws the broker (SIGCONT)
// and waits until every record is in Kafka and the slot is confirmed to
// the end of the load. The goal: peak RSS ≤ max_inflight_bytes + 64 MiB,
// over the whole life of the process (VmHWM, sampled).

const (
	memName      = "membound"
	memCopy      = "memcopy"
	memStream    = "memstream"
	memPub       = "membound_pub"
	memSlot      = "membound_mooncdc"
	memHeadroom  = 64 << 20
	memStillFor  = 3 * time.Second
	memFreezeMax = 90 * time.Second
)

// memResult is the frozen-broker run.
type memResult struct {
	hwmFrozen     int64   // VmHWM once reading stopped, the broker frozen
	rssFrozen     int64   // VmRSS then
	inflight      float64 // mooncdc_inflight_bytes then
	copiedFrozen  float64 // rows copied when reading stopped
	decodedFrozen float64 // changes decoded when reading stopped
	frozenFor     time.Duration
	drain         time.Duration // thaw → all in Kafka, slot confirmed
	maxRSS        int64         // VmHWM, the whole life
	cpu           cpuTime
	copied        int64 // records in the copy's topic
	streamed      int64 // records in the stream's topic
}

func runMemBound(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	n := o.memRows
	step(fmt.Sprintf("memory bound: loading %d rows into public.%s", n, memCopy))
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`CREATE TABLE public.` + memCopy + ` (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`,
		`CREATE TABLE public.` + memStream + ` (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`,
		`CREATE PUBLICATION ` + memPub + ` FOR TABLE public.` + memCopy + `, public.` + memStream,
		fmt.Sprintf(`INSERT INTO public.%s SELECT i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now() FROM generate_series(1, %d) AS i`, memCopy, n),
		`VACUUM (ANALYZE) public.` + memCopy,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}

	kdir := filepath.Join(tmp, "kafka-membound")
	defer os.RemoveAll(kdir)
	brk, err := startBroker(kfakeBin, kdir)
	if err != nil {
		return err
	}
	defer brk.kill()
	thaw := func() { _ = syscall.Kill(brk.pid(), syscall.SIGCONT) }
	defer thaw()
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	cfg := config.DefaultConfig()
	cfg.Name = memName
	cfg.Postgres.URL = src.c.URL("")
	cfg.Postgres.Tables = []string{"public." + memCopy, "public." + memStream}
	cfg.Postgres.Publication = memPub
	cfg.Postgres.Slot = memSlot
	cfg.Kafka.Brokers = []string{brk.addr}
	cfg.Kafka.Compression = compression
	cfg.Metrics.Listen = metricsAddr
	cfg.Log.Level, cfg.Log.Format = "warn", "console"
	path := filepath.Join(tmp, "mooncdc-membound.yaml")
	if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
		return err
	}
	r := &childRunner{bin: o.mooncdc, config: path}
	step(fmt.Sprintf("memory bound: mooncdc run (copy of public.%s, stream of public.%s) → Kafka (kfake %s)", memCopy, memStream, brk.addr))
	var res memResult
	res, err = memBoundRun(ctx, o, src, r, brk, metricsAddr, n)
	if o.verbose || err != nil {
		printLog("mooncdc", r.output())
		printLog("kfakeserver", brk.out.String())
	}
	if err != nil {
		return err
	}

	bound := cfg.Kafka.MaxInflightBytes + memHeadroom
	mib := func(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }
	fmt.Println()
	fmt.Printf("mooncdc memory bound: broker frozen (SIGSTOP) during a copy of %d rows and a stream of %d inserts; kafka.max_inflight_bytes %s\n",
		n, n, mib(float64(cfg.Kafka.MaxInflightBytes)))
	fmt.Printf("  reading stopped after %s frozen: %.0f rows copied, %.0f changes decoded; in flight %s (mooncdc_inflight_bytes, records with their overhead)\n",
		round(res.frozenFor), res.copiedFrozen, res.decodedFrozen, mib(res.inflight))
	fmt.Printf("  RSS while frozen:        VmRSS %s, VmHWM %s\n", mib(float64(res.rssFrozen)), mib(float64(res.hwmFrozen)))
	fmt.Printf("  peak RSS, whole life:    %s (VmHWM of the child, sampled every 20ms; bound max_inflight_bytes + 64 MiB = %s)\n", mib(float64(res.maxRSS)), mib(float64(bound)))
	fmt.Printf("  after the thaw:          all %d + %d records in Kafka and the slot confirmed in %s; mooncdc CPU %s\n",
		res.copied, res.streamed, round(res.drain), res.cpu)
	verdict := "PASS"
	if res.maxRSS > bound || res.hwmFrozen > bound {
		verdict = "FAIL"
	}
	fmt.Printf("goal: peak RSS ≤ max_inflight_bytes + 64 MiB (%s), broker frozen  %s (%s)\n", mib(float64(bound)), verdict, mib(float64(max(res.maxRSS, res.hwmFrozen))))
	if res.copied < int64(n) || res.streamed < int64(n) {
		return fmt.Errorf("delivery: %d records copied and %d streamed, want %d each", res.copied, res.streamed, n)
	}
	if o.requireGoal && verdict == "FAIL" {
		return fmt.Errorf("peak RSS over the bound")
	}
	return nil
}

func memBoundRun(ctx context.Context, o options, src *source, r *childRunner, brk *broker, metricsAddr string, n int) (memResult, error) {
	var res memResult
	hc := &http.Client{Timeout: 2 * time.Second}
	copyRows := `mooncdc_table_copy_rows_total{table="public.` + memCopy + `"}`
	if err := r.start(); err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = r.stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	wait := func(what string, ok func(m map[string]float64) bool) (map[string]float64, error) {
		for {
			select {
			case <-r.exited():
				return nil, fmt.Errorf("mooncdc exited while waiting for %s", what)
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
			if m, err := scrape(hc, metricsAddr); err == nil && ok(m) {
				return m, nil
			}
		}
	}
	// The stream's table must be handed over before the freeze (its copy
	// is empty), so that the main worker emits its changes.
	if _, err := wait("the copy's first rows and public."+memStream+" handed over", func(m map[string]float64) bool {
		var st connector.LiveStatus
		if body := get(hc, metricsAddr, "/status"); body == nil || json.Unmarshal(body, &st) != nil {
			return false
		}
		ph := st.Tables["public."+memStream].Phase
		return m[copyRows] > 0 && (ph == offsets.PhaseReady || ph == offsets.PhaseCatchup)
	}); err != nil {
		return res, err
	}
	if err := syscall.Kill(brk.pid(), syscall.SIGSTOP); err != nil {
		return res, fmt.Errorf("freeze the broker: %w", err)
	}
	frozen := time.Now()
	step("memory bound: broker frozen; inserting the stream's rows")
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return res, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, fmt.Sprintf(`DO $$
BEGIN
  FOR b IN 0..%d LOOP
    INSERT INTO public.%s SELECT i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now()
      FROM generate_series(b * 1000 + 1, least((b + 1) * 1000, %d)) AS i;
    COMMIT;
  END LOOP;
END
$$`, (n-1)/1000, memStream, n)); err != nil {
		return res, fmt.Errorf("load public.%s: %w", memStream, err)
	}
	var end pglogrepl.LSN
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(lsnScanner{&end}); err != nil {
		return res, err
	}
	// Reading has stopped when neither count has moved for memStillFor.
	var last [2]float64
	lastMove := time.Now()
	m, err := wait("reading to stop", func(m map[string]float64) bool {
		cur := [2]float64{m[copyRows], m["mooncdc_changes_received_total"]}
		if cur != last {
			last, lastMove = cur, time.Now()
		}
		return time.Since(lastMove) >= memStillFor && cur[1] > 0 || time.Since(frozen) > memFreezeMax
	})
	if err != nil {
		return res, err
	}
	res.frozenFor = time.Since(frozen)
	res.copiedFrozen, res.decodedFrozen, res.inflight = m[copyRows], m["mooncdc_changes_received_total"], m["mooncdc_inflight_bytes"]
	if d, err := time.ParseDuration(os.Getenv("MEMBOUND_HOLD")); err == nil {
		time.Sleep(d) // a moment to look at the frozen process (e.g. its heap profile)
	}
	res.hwmFrozen, _ = vmHWM(r.pid())
	res.rssFrozen, _ = vmRSS(r.pid())
	step(fmt.Sprintf("memory bound: reading stopped (VmHWM %.1f MiB); thawing the broker", float64(res.hwmFrozen)/(1<<20)))
	thawed := time.Now()
	if err := syscall.Kill(brk.pid(), syscall.SIGCONT); err != nil {
		return res, err
	}
	w, err := src.watch(ctx, memSlot)
	if err != nil {
		return res, err
	}
	defer w.close()
	for {
		confirmed, err := w.poll(ctx)
		if err != nil {
			return res, err
		}
		if confirmed >= end {
			c1, err1 := recordCount(ctx, brk.addr, memName+".public."+memCopy)
			c2, err2 := recordCount(ctx, brk.addr, memName+".public."+memStream)
			if err1 == nil && err2 == nil && c1 >= int64(n) && c2 >= int64(n) {
				break
			}
		}
		select {
		case <-r.exited():
			return res, fmt.Errorf("mooncdc exited before the slot reached %s", end)
		case <-ctx.Done():
			return res, fmt.Errorf("after the thaw: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	res.drain = time.Since(thawed)
	stopped = true
	if err := r.stop(); err != nil {
		return res, err
	}
	res.cpu.user, res.cpu.sys, res.maxRSS = r.rusage()
	if res.copied, err = recordCount(ctx, brk.addr, memName+".public."+memCopy); err != nil {
		return res, err
	}
	if res.streamed, err = recordCount(ctx, brk.addr, memName+".public."+memStream); err != nil {
		return res, err
	}
	return res, nil
}
