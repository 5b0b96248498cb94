package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/internal/progress"
)

// options configure one demo run.
type options struct {
	Binary   string        // the mooncdc binary
	Load     time.Duration // how long to write
	Keep     bool          // keep the temporary directory
	Samples  int           // records printed per op
	Rows     int           // rows of seedTable
	Avro     bool          // Avro keys and values
	Registry string        // with Avro: the Schema Registry; empty starts srtest's
	Out      io.Writer
}

// result is what a demo run measured.
type result struct {
	Load     loadStats
	Counts   map[string]map[string]int // topic → op → records read
	Records  int                       // records read
	Expected int                       // records the load should make
	Seeded   int64                     // records of seedTable's topic, its snapshot
	Live     int                       // changes the live view saw during the load
	ExitCode int                       // mooncdc's
	Replayed bool                      // the records replay into the tables' rows
}

// Timeouts of the demo's waits.
const (
	readyTimeout   = 60 * time.Second // for /readyz
	copyTimeout    = 5 * time.Minute  // for the snapshot of every table
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

// seedTopic is seedTable's topic.
const seedTopic = topicPrefix + "." + seedTable

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
	format := "JSON"
	if o.Avro {
		format = "Avro"
	}
	u.printf("mooncdc demo: Postgres → mooncdc → Kafka (%s records), on this machine. Files in %s (%s).\n\n", format, dir, kept)

	// 1. Postgres, the schema and the rows to copy.
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
	conn, err := pg.Connect(ctx, "postgres")
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	seeded := time.Now()
	if err := seedPageViews(ctx, conn, o.Rows); err != nil {
		return nil, err
	}
	u.detail("created tables %s and %s (empty), and %s with %s rows (%.1fs)",
		demoTables[0], demoTables[1], seedTable, thousands(int64(o.Rows)), time.Since(seeded).Seconds())

	// 2. The Schema Registry, for Avro.
	var avroDec *avroDecoder
	registryURL := ""
	if o.Avro {
		reg, err := startRegistry(o.Registry)
		if err != nil {
			return nil, err
		}
		defer reg.close()
		registryURL = reg.url
		if avroDec, err = newAvroDecoder(reg.url); err != nil {
			return nil, err
		}
		u.step("registry", "%s", reg.about)
	}

	// 3. mooncdc, with the embedded Kafka.
	metricsAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	cfgPath, err := writeConfig(dir, pg.URL("postgres"), metricsAddr, registryURL)
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
	u.detail("streaming after %.1fs; embedded Kafka on %s; metrics on %s/metrics, progress on %s/status",
		time.Since(started).Seconds(), kafkaAddr, mc.metricsURL, mc.metricsURL)

	// 4. The snapshot: every table is copied (snapshot.mode initial) while
	// changes stream; the bars are the ones `mooncdc run` draws on a
	// terminal, fed from /status.
	u.step("snapshot", "copying the rows already in the tables, while streaming the changes made meanwhile …")
	stopBars := showCopies(o.Out, mc.copies())
	err = mc.waitCopied(ctx, copyTimeout, append([]string{seedTable}, demoTables...)...)
	if err == nil {
		// A copy is handed over a moment before it leaves /status; the
		// bars complete when it has.
		waitNoCopies(ctx, mc.copies(), 5*time.Second)
	}
	stopBars()
	if err != nil {
		return nil, err
	}
	copied, took := seedCopy(ctx, mc)
	u.detail("copied %s rows of %s in %.1fs (%s rows/s); %s and %s were empty",
		thousands(int64(copied)), seedTable, took.Seconds(), thousands(int64(float64(copied)/max(took.Seconds(), 1e-3))),
		demoTables[0], demoTables[1])

	// 5. A consumer, and the load, its changes shown as they arrive.
	cons, err := startConsumer(kafkaAddr, demoTopics(), o.Samples, avroDec)
	if err != nil {
		return nil, err
	}
	defer cons.close()
	u.step("load", "writing for %s: inserts, updates and deletes, 1 to 4 rows per transaction; the changes as a Kafka consumer reads them:", o.Load)
	live := newLiveView(u, progress.TerminalWidth(o.Out))
	cons.watch(live.offer)
	liveCtx, stopLive := context.WithCancel(ctx)
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		live.run(liveCtx)
	}()
	stats, err := runLoad(ctx, conn, o.Load)
	// The last changes arrive shortly after the last commit.
	if err == nil {
		cons.waitFor(ctx, stats.ExpectedRecords(), time.Second, mc.exited)
	}
	cons.watch(nil)
	stopLive()
	<-liveDone
	if err != nil {
		return nil, err
	}
	liveTotal, liveShown := live.counts()
	u.detail("%d changes in %d transactions (%.0f changes/s); %d of them shown above, of the %d read back meanwhile",
		stats.Changes(), stats.Transactions, float64(stats.Changes())/stats.End.Sub(stats.Start).Seconds(), liveShown, liveTotal)

	// 6. Wait for every record, show some.
	res := &result{Load: stats, Expected: stats.ExpectedRecords(), Live: liveTotal}
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
	if err := cons.err(); err != nil {
		return nil, err
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
	res.Seeded, err = cons.endOffset(ctx, seedTopic)
	if err != nil {
		return nil, err
	}
	seedMismatch := error(nil)
	if res.Seeded == int64(o.Rows) {
		u.detail("%s holds %s records, one per row of %s", seedTopic, thousands(res.Seeded), seedTable)
	} else {
		seedMismatch = fmt.Errorf("%s holds %d records, but %s has %d rows", seedTopic, res.Seeded, seedTable, o.Rows)
		u.detail("%v", seedMismatch)
	}
	res.Counts[seedTopic] = map[string]int{"r": int(res.Seeded)}
	printSamples(u, samples, o.Samples, o.Avro)
	if o.Avro {
		printSubjects(ctx, u, avroDec)
	}

	written := -1.0
	if m, merr := mc.metrics(ctx, "mooncdc_changes_written_total"); merr == nil {
		if v, ok := m["mooncdc_changes_written_total"]; ok {
			written = v
		}
	}

	// 7. A clean stop.
	cons.close() // before the embedded Kafka goes away with mooncdc
	u.printf("\n")
	u.step("stop", "sending SIGTERM to mooncdc …")
	took, err = mc.stop(stopTimeout)
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
		Load: stats, Counts: res.Counts, Records: total, Complete: complete, LastRead: lastRead, Written: written,
		ExitCode: res.ExitCode, Binary: o.Binary, Format: format,
	})
	switch {
	case res.ExitCode != 0:
		return res, fmt.Errorf("mooncdc exited with code %d, not 0", res.ExitCode)
	case !complete:
		return res, fmt.Errorf("mooncdc delivered %d of the %d records the load made", total, res.Expected)
	case mismatch != nil:
		return res, mismatch
	case seedMismatch != nil:
		return res, seedMismatch
	}
	return res, nil
}

// seedCopy returns how many rows mooncdc copied of seedTable and how long
// the copy took, from its metrics (zero when they cannot be read).
func seedCopy(ctx context.Context, mc *mooncdc) (rows float64, took time.Duration) {
	rowsSeries := `mooncdc_table_copy_rows_total{table="` + seedTable + `"}`
	durSeries := `mooncdc_table_copy_duration_seconds{table="` + seedTable + `"}`
	m, err := mc.metrics(ctx, rowsSeries, durSeries)
	if err != nil {
		return 0, 0
	}
	return m[rowsSeries], time.Duration(m[durSeries] * float64(time.Second))
}

// thousands formats n with commas: 1,500,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
