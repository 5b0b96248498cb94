package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/mooncdc/mooncdc/connector/config"
)

// The huge-transaction benchmark (issue 17.2): one Postgres transaction of
// -huge-tx rows (one INSERT … SELECT), streamed by the mooncdc binary in
// each delivery mode from a slot made before it. It reports the time to
// the slot confirmed past the commit, mooncdc's peak RSS (VmHWM of the
// child, sampled) against the goal of 150 MiB, its CPU per row, and the records a
// consumer counts: every row at least once; in exactly-once, every row
// exactly once to a read_committed consumer, in Kafka transactions that
// committed (none aborted). mooncdc never splits a Postgres transaction
// across Kafka transactions, so the whole transaction commits at once; it
// must do so within kafka.transaction_timeout (15 min), which the report
// sets beside the time it took. Past it, mooncdc stops naming the setting
// (connector/exactly_once_test.go TestTransactionOverTheTimeoutStopsNamingTheSetting).

const (
	hugeTxTable = "hugetx"
	hugeTxPub   = "hugetx_pub"
	hugeTxName  = "hugetx"
	hugeTxTopic = hugeTxName + ".public." + hugeTxTable
	hugeRSSGoal = 150 << 20
)

var hugeTxSlots = map[config.Delivery]string{
	config.DeliveryAtLeastOnce: "hugetx_alo",
	config.DeliveryExactlyOnce: "hugetx_eos",
}

// hugeTxResult is one delivery mode's run.
type hugeTxResult struct {
	res       mooncdcResult
	records   int64
	commits   float64 // Kafka transactions committed (exactly-once)
	aborts    float64
	timeout   time.Duration
	loadTime  time.Duration
	deliverEq bool
}

func runHugeTx(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	n := o.hugeTx
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`CREATE TABLE public.` + hugeTxTable + ` (id bigint PRIMARY KEY, payload text NOT NULL, n int NOT NULL, at timestamptz NOT NULL)`,
		`CREATE PUBLICATION ` + hugeTxPub + ` FOR TABLE public.` + hugeTxTable,
		`SELECT pg_create_logical_replication_slot('` + hugeTxSlots[config.DeliveryAtLeastOnce] + `', 'pgoutput')`,
		`SELECT pg_create_logical_replication_slot('` + hugeTxSlots[config.DeliveryExactlyOnce] + `', 'pgoutput')`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	step(fmt.Sprintf("huge transaction: one INSERT … SELECT of %d rows into public.%s", n, hugeTxTable))
	start := time.Now()
	if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO public.%s SELECT i, md5(i::text) || md5((i + 1)::text), (i %% 1000)::int, now() FROM generate_series(1, %d) AS i`,
		hugeTxTable, n)); err != nil {
		return fmt.Errorf("load public.%s: %w", hugeTxTable, err)
	}
	loadTime := time.Since(start)
	var end pglogrepl.LSN
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(lsnScanner{&end}); err != nil {
		return err
	}
	step(fmt.Sprintf("huge transaction: loaded in %s", round(loadTime)))
	hs := *src
	hs.endLSN = end

	results := map[config.Delivery]hugeTxResult{}
	modes := []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce}
	for _, mode := range modes {
		r, err := hugeTxRun(ctx, o, &hs, kfakeBin, tmp, mode, n)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		r.loadTime = loadTime
		results[mode] = r
	}

	fmt.Println()
	fmt.Printf("mooncdc huge transaction: one transaction of %d rows (INSERT … SELECT, loaded in %s), streamed from a slot made before it\n", n, round(loadTime))
	fmt.Printf("  %-14s %9s %12s %12s %14s %12s  %s\n", "delivery", "time", "rows/s", "peak RSS", "CPU µs/row", "records", "Kafka transactions")
	var failed []string
	for _, mode := range modes {
		r := results[mode]
		txs := "-"
		if mode == config.DeliveryExactlyOnce {
			txs = fmt.Sprintf("%.0f committed, %.0f aborted; the transaction took %s of kafka.transaction_timeout %s", r.commits, r.aborts,
				round(r.res.elapsed), r.timeout)
		}
		fmt.Printf("  %-14s %9s %12s %8.1f MiB %14.2f %12d  %s\n", mode, round(r.res.elapsed), rate(n, r.res.elapsed),
			float64(r.res.maxRSS)/(1<<20), perRow(r.res.cpu, n), r.records, txs)
		if r.res.maxRSS > hugeRSSGoal {
			failed = append(failed, fmt.Sprintf("%s peak RSS %.1f MiB", mode, float64(r.res.maxRSS)/(1<<20)))
		}
		if !r.deliverEq {
			failed = append(failed, fmt.Sprintf("%s delivered %d records of %d", mode, r.records, n))
		}
	}
	verdict := "PASS"
	if len(failed) > 0 {
		verdict = fmt.Sprintf("FAIL (%v)", failed)
	}
	fmt.Printf("goal: peak RSS ≤ %d MiB in both modes, every record delivered (exactly-once: exactly once, read_committed, none aborted)  %s\n", hugeRSSGoal>>20, verdict)
	if len(failed) > 0 && o.requireGoal {
		return fmt.Errorf("huge transaction: %v", failed)
	}
	for _, mode := range modes {
		if !results[mode].deliverEq {
			return fmt.Errorf("delivery: %s: %d records, want %d", mode, results[mode].records, n)
		}
	}
	return nil
}

func hugeTxRun(ctx context.Context, o options, src *source, kfakeBin, tmp string, mode config.Delivery, n int) (hugeTxResult, error) {
	var out hugeTxResult
	slot := hugeTxSlots[mode]
	kdir := filepath.Join(tmp, "kafka-"+slot)
	defer os.RemoveAll(kdir)
	brk, err := startBroker(kfakeBin, kdir)
	if err != nil {
		return out, err
	}
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return out, err
	}
	cfg := config.DefaultConfig()
	cfg.Name = hugeTxName
	cfg.Postgres.URL = src.c.URL("")
	cfg.Postgres.Tables = []string{"public." + hugeTxTable}
	cfg.Postgres.Publication = hugeTxPub
	cfg.Postgres.Slot = slot
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Kafka.Brokers = []string{brk.addr}
	cfg.Kafka.Compression = compression
	cfg.Kafka.Delivery = mode
	cfg.Metrics.Listen = metricsAddr
	cfg.Log.Level, cfg.Log.Format = "warn", "console"
	out.timeout = cfg.Kafka.TransactionTimeout
	path := filepath.Join(tmp, "mooncdc-"+slot+".yaml")
	if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
		return out, err
	}
	r := &childRunner{bin: o.mooncdc, config: path}
	step(fmt.Sprintf("huge transaction, %s: mooncdc run → Kafka (kfake %s)", mode, brk.addr))
	// The metrics are read before the stop, by a wrapper around the run.
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	res, err := runPipelineThen(pctx, src, r, brk, metricsAddr, slot, n, 1, func(m map[string]float64) {
		out.commits = m[`mooncdc_kafka_transactions_total{outcome="commit"}`]
		out.aborts = m[`mooncdc_kafka_transactions_total{outcome="abort"}`]
	})
	if o.verbose || err != nil {
		printLog("mooncdc", res.log)
		printLog("kfakeserver", brk.out.String())
	}
	if err != nil {
		return out, err
	}
	out.res = res
	step(fmt.Sprintf("huge transaction, %s: slot confirmed after %s; counting the records", mode, round(res.elapsed)))
	cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if mode == config.DeliveryExactlyOnce {
		out.records, err = committedCount(cctx, brk.addr, hugeTxTopic, int64(n))
		out.deliverEq = err == nil && out.records == int64(n) && out.aborts == 0
	} else {
		out.records, err = recordCount(cctx, brk.addr, hugeTxTopic)
		out.deliverEq = err == nil && out.records >= int64(n)
	}
	if err != nil {
		return out, fmt.Errorf("count records in Kafka: %w", err)
	}
	return out, nil
}

// perRow is CPU time per row in µs.
func perRow(c cpuTime, rows int) float64 {
	if rows <= 0 {
		return 0
	}
	return float64(c.total().Microseconds()) / float64(rows)
}
