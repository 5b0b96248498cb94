package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

// The re-snapshot benchmark (issue 29, -resnapshot-rows N, 1,000,000; 0
// skips it): a table of N rows of the snapshot benchmark's shape, streamed
// by the mooncdc binary (JSON, at-least-once, snapshot.mode initial: its
// topic holds its rows first, as a streamed table's does), under a write
// load of -resnapshot-load changes/s (1,000; half updates of random rows,
// half inserts) for the whole measurement.
// In one run, one after the other, it asks for
//
//   - a blocking re-snapshot (`mooncdc resnapshot public.resnap`): the
//     table is copied again and its changes wait until the handover;
//   - an incremental one (`mooncdc resnapshot --incremental
//     public.resnap`): the rows are read again in chunks between
//     watermarks while the changes stream on;
//
// and measures each
//
//   - rows/s: the table's rows when asked (count(*) just before the
//     command) over the time from the command's start until the offsets
//     topic says done (the table record's ts_ms, the write's own clock:
//     blocking, phase ready again; incremental, its progress cleared);
//   - the latency of the table's changes committed meanwhile: commit time
//     in the record (source.ts_us) to the record fetched by a consumer in
//     this process, as the latency benchmark measures it. The blocking
//     copy holds them: its figure is about the copy's length;
//   - the child's peak RSS during it: its VmHWM reset at the start
//     (/proc/PID/clear_refs 5) and read at the end, and its VmRSS sampled
//     every 20 ms as a check;
//
// beside the same latency for the load alone before the first one, with
// the ratio incremental/blocking rows/s (issue goal ≥ 0.8), the records
// the topic held when each was asked (what its stale-key pass reads
// back: the incremental one, second, reads the blocking one's rows too),
// and the incremental one's milestones from mooncdc's log (planned,
// chunks read, stale keys tombstoned, done). Correctness,
// cheaply: every id of 1..N is in an `r` record of the re-snapshot or
// was changed by the stream while it ran (the incremental one leaves out
// the keys the stream changed inside a window), and the run fails if not.

const (
	resnapTable     = "resnap"
	resnapQualified = "public." + resnapTable
	resnapName      = "resnap"
	resnapTopic     = resnapName + "." + resnapQualified
	resnapGoal      = 0.8
	// resnapSettle is the load alone before, between and after the
	// re-snapshots: the baseline latency, and the stream back to normal.
	resnapSettle = 3 * time.Second
)

// resnapPhase is one re-snapshot's figures.
type resnapPhase struct {
	kind       string
	rows       int64         // count(*) when asked
	took       time.Duration // command start → done in the offsets topic
	from, to   time.Time
	reads      int // `r` records of it
	covered    int // ids of 1..N in its `r` records or changed meanwhile
	changes    int
	p50, p99   time.Duration
	max        time.Duration
	hwm, rss   int64 // VmHWM since reset (0: no reset), sampled VmRSS
	cpu        cpuTime
	hostBusy   time.Duration
	polled     time.Duration   // start → the poll that saw done: the span of cpu and hostBusy
	offsetsEnd map[int32]int64 // the topic's end offsets when done
	// offsetsStart is the topic's end offsets when asked: its records
	// then are what the stale-key pass reads back (the incremental one
	// beside its chunks).
	offsetsStart map[int32]int64
}

// topicRecords is the records below the end offsets when asked.
func (ph resnapPhase) topicRecords() int64 {
	var n int64
	for _, o := range ph.offsetsStart {
		n += o
	}
	return n
}

func runResnapshot(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	n := o.resnapRows
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	step(fmt.Sprintf("re-snapshot: loading %s rows into %s (one INSERT … SELECT), then VACUUM (ANALYZE)", commas(int64(n)), resnapQualified))
	for _, q := range []string{
		`CREATE TABLE ` + resnapQualified + ` (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`,
		`CREATE PUBLICATION ` + resnapName + `_pub FOR TABLE ` + resnapQualified,
		fmt.Sprintf(`INSERT INTO %s SELECT i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now() FROM generate_series(1, %d) AS i`, resnapQualified, n),
		`VACUUM (ANALYZE) ` + resnapQualified,
		`CHECKPOINT`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}

	kdir := filepath.Join(tmp, "kafka-resnap")
	defer os.RemoveAll(kdir)
	brk, err := startBroker(kfakeBin, kdir)
	if err != nil {
		return err
	}
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return err
	}
	cfg := pipelineConfig(src, brk.addr, metricsAddr)
	cfg.Name = resnapName
	cfg.Kafka.TopicPrefix = resnapName
	cfg.Kafka.Delivery = config.DeliveryAtLeastOnce
	cfg.Postgres.Tables = []string{resnapQualified}
	cfg.Postgres.Publication = resnapName + "_pub"
	cfg.Postgres.Slot = resnapName + "_mooncdc"
	// Copied first, as a streamed table is: its topic holds its rows
	// before the re-snapshots, which the stale-key pass of each reads
	// back (snapshot.mode never would leave it empty for the
	// first and full for the second).
	cfg.Snapshot.Mode = config.SnapshotInitial
	if o.snapConns > 0 {
		cfg.Snapshot.ConnectionsPerTable = o.snapConns
	}
	// Info level, JSON: the copy's and the incremental snapshot's own
	// times are read from the log (a few lines each).
	cfg.Log.Level, cfg.Log.Format = "info", "json"
	path := filepath.Join(tmp, "mooncdc-resnap.yaml")
	if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
		return err
	}
	r := &childRunner{bin: o.mooncdc, config: path, cpuprofile: o.resnapCPUProfile}
	step(fmt.Sprintf("re-snapshot: mooncdc run (%s), snapshot.mode initial → Kafka (kfake %s)", o.mooncdc, brk.addr))
	if err := r.start(); err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = r.stop()
		}
	}()
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := waitStreaming(pctx, r, metricsAddr); err != nil {
		return err
	}
	if err := waitReady(pctx, brk.addr, o.timeout); err != nil {
		printLog("mooncdc", r.output())
		return err
	}

	copied, err := endOffsets(pctx, brk.addr, resnapTopic)
	if err != nil {
		return err
	}
	cons, err := newResnapConsumer(brk.addr, resnapTopic, copied)
	if err != nil {
		return err
	}
	defer cons.close()
	cctx, stopCons := context.WithCancel(pctx)
	defer stopCons()
	go cons.run(cctx)
	w, err := newResnapWriter(pctx, src, n, o.resnapLoad)
	if err != nil {
		return err
	}
	defer w.close()
	wctx, stopLoad := context.WithCancel(pctx)
	defer stopLoad()
	loadStart := time.Now()
	go w.run(wctx)
	step(fmt.Sprintf("re-snapshot: write load %s changes/s on %s; %s of it alone first", commas(int64(o.resnapLoad)), resnapQualified, resnapSettle))
	if err := sleepCtx(pctx, resnapSettle); err != nil {
		return err
	}
	baseTo := time.Now()

	var phases []resnapPhase
	for _, incremental := range []bool{false, true} {
		ph, err := resnapOnce(pctx, conn, r, brk.addr, path, o.mooncdc, incremental)
		if err != nil {
			printLog("mooncdc", r.output())
			return err
		}
		if _, werr := w.committed(); werr != nil {
			return werr
		}
		step(fmt.Sprintf("re-snapshot, %s: %s rows in %s (%s rows/s); the load alone for %s", ph.kind, commas(ph.rows), round(ph.took),
			rate(int(ph.rows), ph.took), resnapSettle))
		phases = append(phases, ph)
		if err := sleepCtx(pctx, resnapSettle); err != nil {
			return err
		}
	}
	stopLoad()
	loadTook := time.Since(loadStart)
	committed, werr := w.committed()
	if werr != nil {
		return werr
	}
	streamed, err := cons.waitChanges(pctx, committed, 3*time.Second, time.Minute)
	if err != nil {
		printLog("mooncdc", r.output())
		return err
	}
	stopCons()
	stopped = true
	exitErr := r.stop()
	if o.verbose || exitErr != nil {
		printLog("mooncdc", r.output())
	}

	changes, reads := cons.snapshotCopy()
	base := latencies(changes, loadStart, baseTo)
	attribute(phases, changes, reads, n)
	_, _, bad := cons.counts()

	fmt.Println()
	fmt.Printf("mooncdc re-snapshot under load: %s of %s rows, JSON, at-least-once, write load %s changes/s asked, %s achieved (updates of random rows and inserts, 10 ms transactions)\n",
		resnapQualified, commas(int64(n)), commas(int64(o.resnapLoad)), rate(committed, loadTook))
	fmt.Printf("  %-24s %9s %11s %9s %11s %8s %9s %9s %9s %9s %s\n", "", "time", "rows", "rows/s", "r records", "changes", "p50", "p99", "max", "peak RSS", "machine busy (mooncdc)")
	fmt.Printf("  %-24s %9s %11s %9s %11s %8d %9s %9s %9s\n", "load alone, before", round(resnapSettle), "-", "-", "-", base.n, ms(base.p50), ms(base.p99), ms(base.max))
	cores := float64(runtime.NumCPU())
	for _, ph := range phases {
		rss := ph.hwm
		if rss == 0 {
			rss = ph.rss
		}
		fmt.Printf("  %-24s %9s %11s %9s %11s %8d %9s %9s %9s %7.1fMiB %.2f of %.0f cores (%.2f)\n", ph.kind, round(ph.took), commas(ph.rows),
			rate(int(ph.rows), ph.took), commas(int64(ph.reads)), ph.changes, ms(ph.p50), ms(ph.p99), ms(ph.max), float64(rss)/(1<<20),
			ph.hostBusy.Seconds()/ph.polled.Seconds(), cores, ph.cpu.total().Seconds()/ph.polled.Seconds())
	}
	blk, inc := phases[0], phases[1]
	ratio := (float64(inc.rows) / inc.took.Seconds()) / (float64(blk.rows) / blk.took.Seconds())
	fmt.Printf("  incremental/blocking rows/s: %.2f; p99 of the table's changes %s incremental vs %s blocking (the blocking copy holds them: about its length, %s)\n",
		ratio, ms(inc.p99), ms(blk.p99), round(blk.took))
	split := resnapLogTimes(r.output())
	fmt.Printf("  the topic held %s records when the blocking copy was asked for, %s when the incremental one was (each one's stale-key pass reads them back)\n",
		commas(blk.topicRecords()), commas(inc.topicRecords()))
	fmt.Printf("  from mooncdc's log: the blocking copy took %s (copy start → every row acked); the incremental one, from the request: planned at %s, chunks read in %s (%s rows/s), the topic's keys read back beside them in %s (done at %s), stale keys tombstoned at %s, done at %s\n",
		round(split.copyTook), round(since(inc.from, split.incPlanned)), round(split.incRead), commas(int64(split.incRate)),
		round(split.incKeysTook), round(since(inc.from, split.incKeysRead)), round(since(inc.from, split.incTombstoned)), round(since(inc.from, split.incDone)))
	fmt.Printf("  peak RSS: VmHWM of the child reset at each start (/proc/PID/clear_refs); sampled VmRSS max %.1f MiB blocking, %.1f MiB incremental\n",
		float64(blk.rss)/(1<<20), float64(inc.rss)/(1<<20))
	fmt.Printf("  check: ids 1..%s in an r record or changed meanwhile: %s blocking, %s incremental; unreadable records %d\n",
		commas(int64(n)), commas(int64(blk.covered)), commas(int64(inc.covered)), bad)
	fmt.Printf("  changes streamed %s of %s committed (the blocking copy's snapshot takes in those committed between the request and its start: their rows are r records)\n",
		commas(int64(streamed)), commas(int64(committed)))
	verdict := "PASS"
	if ratio < resnapGoal {
		verdict = "FAIL"
	}
	fmt.Printf("goal: incremental rows/s ≥ %.1f of the blocking copy's  %s (%.2f); the table's changes flow on: p99 %s vs %s\n",
		resnapGoal, verdict, ratio, ms(inc.p99), ms(blk.p99))
	var failed []string
	for _, ph := range phases {
		if ph.covered < n {
			failed = append(failed, fmt.Sprintf("%s: %d of ids 1..%d neither re-read nor changed", ph.kind, n-ph.covered, n))
		}
	}
	if bad > 0 {
		failed = append(failed, fmt.Sprintf("%d records without an op or a key id", bad))
	}
	switch {
	case exitErr != nil:
		return fmt.Errorf("mooncdc: %w", exitErr)
	case len(failed) > 0:
		return fmt.Errorf("re-snapshot check: %s", strings.Join(failed, "; "))
	case o.requireGoal && ratio < resnapGoal:
		return fmt.Errorf("re-snapshot goal missed: incremental/blocking rows/s %.2f", ratio)
	}
	return nil
}

// resnapOnce asks for one re-snapshot with the mooncdc command and waits
// until the offsets topic says it is done.
func resnapOnce(ctx context.Context, conn *pgx.Conn, r *childRunner, addr, configPath, bin string, incremental bool) (resnapPhase, error) {
	ph := resnapPhase{kind: "blocking"}
	args := []string{"resnapshot", "--config", configPath}
	if incremental {
		ph.kind = "incremental"
		args = append(args, "--incremental")
	}
	args = append(args, resnapQualified)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+resnapQualified).Scan(&ph.rows); err != nil {
		return ph, err
	}
	var err error
	resetHWM := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", r.pid()), []byte("5"), 0) == nil
	u0, s0, _ := procCPU(r.pid())
	busy0 := hostBusy()
	stopRSS := make(chan struct{})
	rssDone := make(chan int64)
	go func() {
		var peak int64
		t := time.NewTicker(hwmSampling)
		defer t.Stop()
		for {
			if v, err := vmRSS(r.pid()); err == nil {
				peak = max(peak, v)
			}
			select {
			case <-stopRSS:
				rssDone <- peak
				return
			case <-t.C:
			}
		}
	}()
	defer func() {
		if stopRSS != nil {
			close(stopRSS)
			<-rssDone
		}
	}()

	if ph.offsetsStart, err = endOffsets(ctx, addr, resnapTopic); err != nil {
		return ph, err
	}
	ph.from = time.Now()
	step(fmt.Sprintf("re-snapshot, %s: mooncdc %s", ph.kind, strings.Join(args, " ")))
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return ph, fmt.Errorf("mooncdc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	reqMs := ph.from.UnixMilli()
	for {
		t, ok, err := tablePhase(ctx, addr, resnapName, resnapQualified)
		if err != nil {
			return ph, err
		}
		if ok && t.ResnapshotMs >= reqMs && t.Phase == offsets.PhaseReady && t.Incremental == "" {
			ph.to = time.UnixMilli(t.UpdatedMs)
			if ph.to.Before(ph.from) { // a clock it should share: fall back on ours
				ph.to = time.Now()
			}
			break
		}
		if ok && t.Phase == offsets.PhaseErrored {
			return ph, fmt.Errorf("%s re-snapshot failed: %s", ph.kind, t.LastError)
		}
		select {
		case <-r.exited():
			return ph, fmt.Errorf("mooncdc exited during the %s re-snapshot", ph.kind)
		case <-ctx.Done():
			return ph, fmt.Errorf("%s re-snapshot not done (-timeout): %w", ph.kind, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	ph.took = ph.to.Sub(ph.from)
	// The machine's and mooncdc's CPU are over the time until the poll
	// saw done, a little longer than took.
	ph.polled = time.Since(ph.from)
	ph.hostBusy = hostBusy() - busy0
	if u, s, err := procCPU(r.pid()); err == nil {
		ph.cpu = cpuTime{u - u0, s - s0}
	}
	if resetHWM {
		ph.hwm, _ = vmHWM(r.pid())
	}
	close(stopRSS)
	ph.rss = <-rssDone
	stopRSS = nil
	// Every `r` record of this re-snapshot was acked before the offsets
	// said done: those below these end offsets and at or above the last
	// one's are its.
	ends, err := endOffsets(ctx, addr, resnapTopic)
	if err != nil {
		return ph, err
	}
	ph.offsetsEnd = ends
	return ph, nil
}

// endOffsets returns the topic's end offset per partition.
func endOffsets(ctx context.Context, addr, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}

// latencySummary is the latency of the changes committed in a span.
type latencySummary struct {
	n             int
	p50, p99, max time.Duration
}

func latencies(changes []resnapChange, from, to time.Time) latencySummary {
	var lat []time.Duration
	for _, c := range changes {
		if !c.commit.Before(from) && c.commit.Before(to) {
			lat = append(lat, c.latency)
		}
	}
	slices.Sort(lat)
	s := latencySummary{n: len(lat)}
	if len(lat) > 0 {
		s.p50, s.p99, s.max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	return s
}

// attribute gives each re-snapshot the latency of the changes committed
// while it ran, its `r` records (by offset: below its end offsets when
// done, at or above those when asked), and the ids of 1..n they cover
// together with the changes committed meanwhile.
func attribute(phases []resnapPhase, changes []resnapChange, reads []resnapRead, n int) {
	for i := range phases {
		ph := &phases[i]
		l := latencies(changes, ph.from, ph.to)
		ph.changes, ph.p50, ph.p99, ph.max = l.n, l.p50, l.p99, l.max
		seen := make([]bool, n+1)
		for _, rd := range reads {
			if end, ok := ph.offsetsEnd[rd.partition]; ok && rd.offset < end && rd.offset >= ph.offsetsStart[rd.partition] {
				ph.reads++
				if rd.id >= 1 && rd.id <= int64(n) {
					seen[rd.id] = true
				}
			}
		}
		for _, c := range changes {
			if !c.commit.Before(ph.from) && !c.commit.After(ph.to) && c.id >= 1 && c.id <= int64(n) {
				seen[c.id] = true
			}
		}
		for _, s := range seen[1:] {
			if s {
				ph.covered++
			}
		}
	}
}

// resnapLogSplit is what mooncdc's log says of the two re-snapshots.
type resnapLogSplit struct {
	copyTook, incRead time.Duration
	incRate           float64
	// The incremental snapshot's milestones (mooncdc's clock, ms): planned
	// ("incremental snapshot"), the topic's keys read (beside the chunks;
	// incKeysTook the read's length), stale keys tombstoned, done.
	incPlanned, incKeysRead, incTombstoned, incDone time.Time
	incKeysTook                                     time.Duration
}

// resnapLogTimes reads the blocking copy's "table copied" took and the
// incremental snapshot's milestones and its "incremental snapshot done"
// read and rows_per_s (its chunks, from the first read to the last window
// durable) from mooncdc's JSON log (durations in seconds).
func resnapLogTimes(out string) resnapLogSplit {
	var s resnapLogSplit
	for t, m := range logLines(out) {
		if tab, _ := m["table"].(string); tab != resnapQualified {
			continue
		}
		switch m["msg"] {
		case "table copied":
			if v, ok := m["took"].(float64); ok {
				s.copyTook = time.Duration(v * float64(time.Second))
			}
		case "incremental snapshot":
			s.incPlanned = t
		case "stale keys read":
			s.incKeysRead = t
			if v, ok := m["took"].(float64); ok {
				s.incKeysTook = time.Duration(v * float64(time.Second))
			}
		case "stale keys tombstoned":
			s.incTombstoned = t
		case "incremental snapshot done":
			s.incDone = t
			if v, ok := m["read"].(float64); ok {
				s.incRead = time.Duration(v * float64(time.Second))
			}
			s.incRate, _ = m["rows_per_s"].(float64)
		}
	}
	return s
}

// since is t - from, or 0 when t is unknown.
func since(from, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(from)
}

// waitStreaming waits until the child's /readyz says streaming.
func waitStreaming(ctx context.Context, r *childRunner, metricsAddr string) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for !strings.HasPrefix(string(get(hc, metricsAddr, "/readyz")), "streaming") {
		select {
		case <-r.exited():
			printLog("mooncdc", r.output())
			return fmt.Errorf("mooncdc exited before streaming")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			printLog("mooncdc", r.output())
			return fmt.Errorf("mooncdc not streaming after a minute")
		}
	}
	return nil
}

// waitReady waits until the offsets topic has the table ready (copied
// and handed over), which `mooncdc resnapshot` needs to find it.
func waitReady(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		t, ok, err := tablePhase(ctx, addr, resnapName, resnapQualified)
		if err == nil && ok && t.Phase == offsets.PhaseReady {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready in the offsets topic after %s (last: %+v, %v)", resnapQualified, limit, t, err)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
