package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// options configure one demo run.
type options struct {
	Binary  string        // the mooncdc binary
	Load    time.Duration // how long to write
	Keep    bool          // keep the temporary directory
	Samples int           // records printed per op
	Out     io.Writer
}

// result is what a demo run measured.
type result struct {
	Load     loadStats
	Counts   map[string]map[string]int // topic → op → records read
	Records  int                       // records read
	Expected int                       // records the load should make
	ExitCode int                       // mooncdc's
	Replayed bool                      // the records replay into the tables' rows
}

// Timeouts of the demo's waits.
const (
	readyTimeout   = 60 * time.Second // for /readyz
	catchUpTimeout = 30 * time.Second // for the last record after the last commit
	stopTimeout    = 30 * time.Second // for mooncdc to exit after SIGTERM
)

// demoTopics returns the data topics of the demo tables.
func demoTopics() []string {
	var topics []string
	for _, t := range demoTables {
		topics = append(topics, topicPrefix+"."+t)
	}
	return topics
}

// run is the whole demo. Whatever happens, including ctx ending (Ctrl-C),
// it stops mooncdc and Postgres and removes its directory (unless o.Keep)
// before returning.
func run(ctx context.Context, o options) (_ *result, err error) {
	u := ui{o.Out}
	bin, err := filepath.Abs(o.Binary)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no mooncdc binary at %s (%v): build it with make build, or pass -mooncdc PATH", o.Binary, err)
	}
	if err := checkKafkaPort(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mooncdc-demo-")
	if err != nil {
		return nil, err
	}
	// When the demo runs as root, Postgres runs as the OS user postgres,
	// which must reach dir/postgres.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	defer func() {
		if o.Keep {
			u.printf("\nFiles kept in %s: mooncdc.yaml, mooncdc.log, postgres/ (stopped), mooncdc-data/ (the embedded Kafka's)\n", dir)
		} else if rerr := os.RemoveAll(dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove %s: %w", dir, rerr))
		}
	}()
	kept := "removed at the end; -keep keeps them"
	if o.Keep {
		kept = "kept"
	}
	u.printf("mooncdc demo: Postgres → mooncdc → Kafka, on this machine. Files in %s (%s).\n\n", dir, kept)

	// 1. Postgres and the schema.
	u.step("postgres", "starting a throwaway Postgres (initdb, pg_ctl) …")
	pg, version, err := startPostgres(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := stopPostgres(pg); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	u.detail("PostgreSQL %s on 127.0.0.1:%d, wal_level=logical", version, pg.Port())
	u.detail("created tables %s and %s", demoTables[0], demoTables[1])

	// 2. mooncdc, with the embedded Kafka.
	metricsAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	cfgPath, err := writeConfig(dir, pg.URL("postgres"), metricsAddr)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	mc, err := startMooncdc(bin, cfgPath, filepath.Join(dir, "mooncdc.log"), metricsAddr)
	if err != nil {
		return nil, err
	}
	defer func() {
		if _, serr := mc.stop(stopTimeout); serr != nil {
			err = errors.Join(err, serr)
		}
	}()
	u.step("mooncdc", "%s run --config %s  (pid %d)", o.Binary, cfgPath, mc.Pid())
	u.detail("log: %s", mc.logPath)
	if err := mc.waitReady(ctx, readyTimeout); err != nil {
		return nil, err
	}
	u.detail("streaming after %.1fs; embedded Kafka on %s; metrics on %s/metrics",
		time.Since(started).Seconds(), kafkaAddr, mc.metricsURL)
	// The tables are empty: their snapshots are done in a moment, and
	// everything the load writes then streams as changes.
	if err := mc.waitCopied(ctx, readyTimeout, demoTables...); err != nil {
		return nil, err
	}
	u.detail("tables copied (empty, snapshot.mode initial) after %.1fs", time.Since(started).Seconds())

	// 3. A consumer, and the load.
	cons, err := startConsumer(kafkaAddr, demoTopics(), o.Samples)
	if err != nil {
		return nil, err
	}
	defer cons.close()
	conn, err := pg.Connect(ctx, "postgres")
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	u.step("load", "writing for %s: inserts, updates and deletes, 1 to 4 rows per transaction …", o.Load)
	stats, err := runLoad(ctx, conn, o.Load)
	if err != nil {
		return nil, err
	}
	u.detail("%d changes in %d transactions (%.0f changes/s)",
		stats.Changes(), stats.Transactions, float64(stats.Changes())/stats.End.Sub(stats.Start).Seconds())

	// 4. Wait for every record, show some.
	res := &result{Load: stats, Expected: stats.ExpectedRecords()}
	u.step("consume", "reading %s from %s (read_committed, from the start) …", strings.Join(demoTopics(), ", "), kafkaAddr)
	complete := cons.waitFor(ctx, res.Expected, catchUpTimeout, mc.exited)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	select {
	case <-mc.exited:
		return nil, mc.diedError("while streaming")
	default:
	}
	counts, total, samples, lastRead := cons.snapshot()
	res.Counts, res.Records = counts, total
	if complete {
		u.detail("read all %d records: one per change, plus a tombstone after each delete", total)
	} else {
		u.detail("read only %d of the %d records expected within %s of the last commit", total, res.Expected, catchUpTimeout)
	}
	match, mismatch := cons.compare(ctx, conn)
	if mismatch == nil {
		u.detail("%s", match)
	} else {
		u.detail("%v", mismatch)
	}
	res.Replayed = mismatch == nil
	printSamples(u, samples, o.Samples)

	written := -1.0
	if m, merr := mc.metrics(ctx, "mooncdc_changes_written_total"); merr == nil {
		if v, ok := m["mooncdc_changes_written_total"]; ok {
			written = v
		}
	}

	// 5. A clean stop.
	cons.close() // before the embedded Kafka goes away with mooncdc
	u.printf("\n")
	u.step("stop", "sending SIGTERM to mooncdc …")
	took, err := mc.stop(stopTimeout)
	if err != nil {
		return res, err
	}
	res.ExitCode = mc.exitCode()
	if res.ExitCode == 0 {
		u.detail("mooncdc stopped cleanly in %.1fs (exit code 0)", took.Seconds())
	} else {
		u.detail("mooncdc exited with code %d after %.1fs; the end of its log:\n%s", res.ExitCode, took.Seconds(), mc.tail(20))
	}

	printSummary(u, summary{
		Load: stats, Counts: counts, Records: total, Complete: complete, LastRead: lastRead, Written: written,
		ExitCode: res.ExitCode, Binary: o.Binary,
	})
	switch {
	case res.ExitCode != 0:
		return res, fmt.Errorf("mooncdc exited with code %d, not 0", res.ExitCode)
	case !complete:
		return res, fmt.Errorf("mooncdc delivered %d of the %d records the load made", total, res.Expected)
	case mismatch != nil:
		return res, mismatch
	}
	return res, nil
}
