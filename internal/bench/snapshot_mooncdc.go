package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
)

// This file runs and times mooncdc's snapshot of the benchmark's table, and
// reads the copy's milestones from its log.

// snapshotConfig is mooncdc's configuration for the snapshot benchmark:
// copy public.snapbench, then exit.
func snapshotConfig(s *source, brokerAddr, metricsAddr string, conns int) config.Config {
	cfg := config.DefaultConfig()
	cfg.Name = snapConnector
	cfg.Postgres.URL = s.c.URL("")
	cfg.Postgres.Tables = []string{snapQualified}
	cfg.Postgres.Publication = snapPublication
	cfg.Postgres.Slot = snapSlot
	cfg.Snapshot.Mode = config.SnapshotInitialOnly
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

// logLines yields the JSON lines of mooncdc's log in out with their time
// (the ts field), leaving out any other line.
func logLines(out string) iter.Seq2[time.Time, map[string]any] {
	return func(yield func(time.Time, map[string]any) bool) {
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
			if !yield(t, m) {
				return
			}
		}
	}
}

// parseLogFor picks the milestones of table's copy from mooncdc's JSON log.
func parseLogFor(out string, start time.Time, table string, res *snapResult) {
	for t, m := range logLines(out) {
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
