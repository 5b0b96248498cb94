package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
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
	// snapKafkaGoal is issue 17.5's: mooncdc's snapshot at this share of
	// the rate franz-go alone gets the same records into the broker.
	snapKafkaGoal = 0.9
)

// snapRowsMetric is the sample of the table's copied rows in /metrics.
var snapRowsMetric = `mooncdc_table_copy_rows_total{table="` + snapQualified + `"}`

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
	first, _ := firstRecord(cctx, brk.addr, snapTopic)
	if first != nil {
		sample = fmt.Sprintf("key %d B, value %d B, %d headers", len(first.Key), len(first.Value), len(first.Headers))
	}

	// The Kafka limit: franz-go alone, records of the same shape, into a
	// fresh broker started the same way. mooncdc's broker (and its data)
	// goes first, so that the two do not share the machine.
	brk.kill()
	snapshotRates.brokerBytes = dirSize(filepath.Join(tmp, "kafka-snapshot"))
	snapshotRates.first = first
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
		r, err := runKafkaLimit(kctx, kbrk, cfg, o.snapRows, first)
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
			tmpl = "mooncdc's first record with each row's id, payload and n; its three headers with the row's number"
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

	kverdict := snapshotPairs(ctx, o, src, kfakeBin, tmp, klimErr, klim.elapsed, res.elapsed)

	if o.snapshotCPUProfile != "" {
		fmt.Printf("\nCPU profile of the snapshot (start → exit) in %s; top 25:\n", o.snapshotCPUProfile)
		cmd := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", o.snapshotCPUProfile)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go tool pprof: %v\n", err)
		}
	}

	if o.requireGoal && (verdict == "FAIL" || kverdict == "FAIL") {
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

// snapshotPairs prints the Kafka-limit goal (snapKafkaGoal) on the median
// of -snapshot-pairs pairs of runs, each a mooncdc snapshot then franz-go
// alone with the same records, back to back on fresh brokers: the first
// pair is the run reported above (limit and mooncdc took those times), the
// others are run here. The machine's load moves a single ratio by ±0.15
// from run to run; a pair keeps the two sides minutes apart at most. It
// returns the verdict.
func snapshotPairs(ctx context.Context, o options, src *source, kfakeBin, tmp string, limitErr error, limit, took time.Duration) string {
	if limitErr != nil {
		fmt.Printf("goal: snapshot ≥ %.1f of the Kafka limit  FAIL (the kafka limit failed: %v)\n", snapKafkaGoal, limitErr)
		return "FAIL"
	}
	ratios := []float64{limit.Seconds() / took.Seconds()}
	for k := 2; k <= o.snapPairs && ctx.Err() == nil; k++ {
		r, err := pairRun(ctx, o, src, kfakeBin, tmp, fmt.Sprintf("snapshot pair %d/%d", k, o.snapPairs), fmt.Sprintf("pair%d", k), func(*config.Config) {})
		if err != nil {
			fmt.Printf("goal: snapshot ≥ %.1f of the Kafka limit  FAIL (pair %d failed: %v)\n", snapKafkaGoal, k, err)
			return "FAIL"
		}
		ratios = append(ratios, r.limitElapsed.Seconds()/r.elapsed.Seconds())
	}
	list := make([]string, len(ratios))
	for i, r := range ratios {
		list[i] = fmt.Sprintf("%.2f", r)
	}
	median := medianOf(ratios)
	verdict := "PASS"
	if median < snapKafkaGoal {
		verdict = "FAIL"
	}
	fmt.Printf("  mooncdc / kafka limit:   %s over %d pair(s) of runs (mooncdc start → exit, then franz-go alone, fresh brokers); median %.2f\n",
		strings.Join(list, ", "), len(ratios), median)
	fmt.Printf("goal: snapshot ≥ %.1f of the Kafka limit (median of %d pairs)  %s (%.2f)\n", snapKafkaGoal, len(ratios), verdict, median)
	return verdict
}

// medianOf is the median of xs (not empty): the middle value, or the mean
// of the two middle ones.
func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
