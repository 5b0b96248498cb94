package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
)

// The huge-table benchmark (issue 17.3, -huge-table N; the case is
// 10,000,000 rows, about 1 GB of COPY text): a table of N rows of the
// snapshot benchmark's shape, copied by the mooncdc binary (snapshot.mode
// initial_only, as the snapshot benchmark), reporting
//
//   - rows/s beside the snapshot benchmark's run of the same binary in the
//     same process (-snapshot-rows, 1M): the ratio is the linearity, goal
//     within 10 %;
//   - peak RSS (VmHWM of the child, sampled: childRunner), goal ≤ 150 MiB;
//   - progress and ETA: /status is read every 200 ms, and at 10, 25, 50,
//     75 and 90 % of the rows the ETA `mooncdc status` would print (rows
//     left to the estimate at the rate since the copy started:
//     cmd/mooncdc/status_report.go copyProgress) is set beside the time the
//     last row was actually read.

const (
	hugeTable     = "hugetable"
	hugeQualified = "public." + hugeTable
	hugeName      = "hugetable"
)

// snapshotRates is what the snapshot benchmark measured, for the
// huge-table benchmark's linearity: rows/s start → exit and on the copy
// alone (mooncdc's "took"). Zero when it did not run.
var snapshotRates struct {
	rows           int
	toExit, onCopy float64
	brokerBytes    int64       // the broker's data directory after mooncdc's run
	first          *kgo.Record // mooncdc's first record, the Kafka limit's template
}

// etaSample is the ETA shown at a fraction of the rows.
type etaSample struct {
	at        time.Duration // since mooncdc started
	rows, est int64
	eta       time.Duration // as status computes it
}

func runHugeTable(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	n := o.hugeTable
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	step(fmt.Sprintf("huge table: loading %d rows into %s (one INSERT … SELECT), then VACUUM (ANALYZE)", n, hugeQualified))
	start := time.Now()
	for _, q := range []string{
		`CREATE TABLE ` + hugeQualified + ` (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`,
		`CREATE PUBLICATION ` + hugeName + `_pub FOR TABLE ` + hugeQualified,
		fmt.Sprintf(`INSERT INTO %s SELECT i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now() FROM generate_series(1, %d) AS i`, hugeQualified, n),
		`VACUUM (ANALYZE) ` + hugeQualified,
		`CHECKPOINT`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	var heap int64
	if err := conn.QueryRow(ctx, `SELECT pg_relation_size($1::regclass)`, hugeQualified).Scan(&heap); err != nil {
		return err
	}
	step(fmt.Sprintf("huge table: loaded in %s, heap %.0f MiB", round(time.Since(start)), float64(heap)/(1<<20)))

	kdir := filepath.Join(tmp, "kafka-hugetable")
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
	cfg := snapshotConfig(src, brk.addr, metricsAddr, o.snapConns)
	cfg.Name = hugeName
	cfg.Postgres.Tables = []string{hugeQualified}
	cfg.Postgres.Publication = hugeName + "_pub"
	cfg.Postgres.Slot = hugeName + "_mooncdc"
	path := filepath.Join(tmp, "mooncdc-hugetable.yaml")
	if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
		return err
	}
	r := &childRunner{bin: o.mooncdc, config: path}
	step(fmt.Sprintf("huge table: mooncdc run (%s), snapshot.mode initial_only → Kafka (kfake %s)", o.mooncdc, brk.addr))
	rowsMetric := `mooncdc_table_copy_rows_total{table="` + hugeQualified + `"}`
	hc := &http.Client{Timeout: 2 * time.Second}
	t0 := time.Now()
	if err := r.start(); err != nil {
		return err
	}
	marks := []float64{0.10, 0.25, 0.50, 0.75, 0.90}
	var samples []etaSample
	var firstRow, lastRow time.Duration
	var hwm int64
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
wait:
	for {
		select {
		case <-r.exited():
			break wait
		case <-pctx.Done():
			_ = r.stop()
			printLog("mooncdc", r.output())
			return fmt.Errorf("mooncdc did not exit after the copy: %w", pctx.Err())
		case <-tick.C:
		}
		if h, err := vmHWM(r.pid()); err == nil {
			hwm = max(hwm, h)
		}
		now := time.Since(t0)
		if lastRow == 0 {
			if m, err := scrape(hc, metricsAddr); err == nil {
				if firstRow == 0 && m[rowsMetric] > 0 {
					firstRow = now
				}
				if m[rowsMetric] >= float64(n) {
					lastRow = now
				}
			}
		}
		if len(marks) == 0 {
			continue
		}
		var st connector.LiveStatus
		if body := get(hc, metricsAddr, "/status"); body == nil || json.Unmarshal(body, &st) != nil {
			continue
		}
		for _, c := range st.Copies {
			if c.Table != hugeQualified || c.Stage != connector.CopyStageCopying || c.EstimatedRows <= 0 {
				continue
			}
			if float64(c.Rows) < marks[0]*float64(c.EstimatedRows) {
				continue
			}
			for len(marks) > 0 && float64(c.Rows) >= marks[0]*float64(c.EstimatedRows) {
				marks = marks[1:]
			}
			// cmd/mooncdc/status_report.go copyProgress: the rate since
			// the copy started, the rows left to the estimate at it.
			el := st.Time.Sub(c.Started).Seconds()
			s := etaSample{at: now, rows: c.Rows, est: c.EstimatedRows}
			if el > 0 && c.Rows > 0 && c.EstimatedRows > c.Rows {
				s.eta = time.Duration(float64(c.EstimatedRows-c.Rows) / (float64(c.Rows) / el) * float64(time.Second))
			}
			samples = append(samples, s)
		}
	}
	elapsed := time.Since(t0)
	exitErr := r.stop()
	user, sys, maxRSS := r.rusage()
	cpu := cpuTime{user, sys}
	if o.verbose || exitErr != nil {
		printLog("mooncdc", r.output())
	}
	var took time.Duration
	var logRes snapResult
	parseLogFor(r.output(), t0, hugeQualified, &logRes)
	took = logRes.copyTook
	if lastRow == 0 { // the process exited between two polls: its log says when all was acked
		lastRow = logRes.copied
	}
	cctx, cancel2 := context.WithTimeout(ctx, time.Minute)
	defer cancel2()
	records, cntErr := recordCount(cctx, brk.addr, hugeName+"."+hugeQualified)

	fmt.Println()
	fmt.Printf("mooncdc huge table: %s of %d rows (heap %.0f MiB), snapshot.mode initial_only, %d chunks\n", hugeQualified, n, float64(heap)/(1<<20), logRes.chunks)
	rateExit := float64(n) / elapsed.Seconds()
	rateCopy := 0.0
	if took > 0 {
		rateCopy = float64(n) / took.Seconds()
	}
	fmt.Printf("  %-34s %9s %12s %12s\n", "", "time", "rows/s", "copy rows/s")
	if snapshotRates.rows > 0 {
		fmt.Printf("  %-34s %9s %12s %12s\n", fmt.Sprintf("snapshot benchmark, %s rows", commas(int64(snapshotRates.rows))), "",
			commas(int64(snapshotRates.toExit)), commas(int64(snapshotRates.onCopy)))
	}
	fmt.Printf("  %-34s %9s %12s %12s\n", fmt.Sprintf("huge table, %s rows", commas(int64(n))), round(elapsed), commas(int64(rateExit)), commas(int64(rateCopy)))
	lin := math.NaN()
	if snapshotRates.onCopy > 0 && rateCopy > 0 {
		lin = rateCopy / snapshotRates.onCopy
		fmt.Printf("  linearity:               %.2f of the %s-row run's rows/s on the copy alone (%.2f start → exit)\n", lin,
			commas(int64(snapshotRates.rows)), rateExit/snapshotRates.toExit)
	} else {
		fmt.Printf("  linearity:               - (run with -snapshot to measure the 1M-row run beside it)\n")
	}
	fmt.Printf("  peak RSS:                %.1f MiB (VmHWM of the child, sampled every 20ms; at 200ms polls %.1f MiB); mooncdc CPU %s = %.2f µs/row\n",
		float64(maxRSS)/(1<<20), float64(hwm)/(1<<20), cpu, perRow(cpu, n))
	fmt.Printf("  progress (/status, as mooncdc status shows it): first row %s, last row read %s\n", round(firstRow), round(lastRow))
	worst := 0.0
	for _, s := range samples {
		predicted := s.at + s.eta
		errPct := math.NaN()
		if lastRow > s.at {
			errPct = 100 * (predicted - lastRow).Seconds() / (lastRow - s.at).Seconds()
			worst = max(worst, math.Abs(errPct))
		}
		fmt.Printf("    at %7s: %11s of %11s estimated rows (%3.0f %%), ETA %8s → predicted end %8s, actual %8s (error %+.0f %% of the time left)\n",
			round(s.at), commas(s.rows), commas(s.est), 100*float64(s.rows)/float64(s.est), round(s.eta), round(predicted), round(lastRow), errPct)
	}
	fmt.Printf("  Kafka %s: %d records\n", hugeName+"."+hugeQualified, records)
	var failed []string
	if !math.IsNaN(lin) && lin < 0.9 {
		failed = append(failed, fmt.Sprintf("linearity %.2f", lin))
	}
	if maxRSS > hugeRSSGoal {
		failed = append(failed, fmt.Sprintf("peak RSS %.1f MiB", float64(maxRSS)/(1<<20)))
	}
	verdict := "PASS"
	if math.IsNaN(lin) {
		verdict = "PASS on RSS, linearity not measured (add -snapshot)"
	}
	if len(failed) > 0 {
		verdict = fmt.Sprintf("FAIL %v", failed)
	}
	fmt.Printf("goal: rows/s within 10 %% of the 1M-row run, peak RSS ≤ %d MiB  %s; ETA worst error %.0f %% of the time left\n", hugeRSSGoal>>20, verdict, worst)
	switch {
	case exitErr != nil:
		return fmt.Errorf("mooncdc: %w", exitErr)
	case cntErr != nil:
		return cntErr
	case records < int64(n):
		return fmt.Errorf("delivery: %d records, want %d", records, n)
	case o.requireGoal && len(failed) > 0:
		return fmt.Errorf("huge table: %v", failed)
	}
	return nil
}
