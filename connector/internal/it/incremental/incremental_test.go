package incremental

import (
	"context"
	"errors"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// smallChunks makes incremental snapshots read chunks of pages pages
// (many windows) until the test ends.
func smallChunks(t *testing.T, pages uint32) {
	ittest.Tune(t, func(tu *connector.Tuning) { tu.IncrementalChunkPages = pages })
}

// TestIncrementalSnapshotNeverHoldsTheStream: a 50,000-row table under a
// write load of inserts, updates, deletes and key changes (small
// transactions for the whole test) is snapshotted again incrementally
// (an execute-snapshot signal without a type: incremental, Debezium's
// default, AbstractSnapshotSignal.java:36-40 at v3.6.1.Final), on four
// connections with chunks of four pages (hundreds of windows).
//   - The consumer that rebuilds the table from the topic (last record per
//     key; deletes and tombstones remove) ends with the table: no row
//     lost, none with an older value (an `r` record over a newer change:
//     what the drop rule prevents; with it off, MOONCDC_TEST_INCREMENTAL_NO_DROPS=1,
//     this fails).
//   - The table's changes keep flowing while it is read: between the first
//     and the last `r` record, the largest gap between two consecutive
//     streamed changes is a small fraction of a second (the window's
//     scale), not the snapshot's length, and `r` records and streamed
//     changes interleave.
//   - Every `r` record says source.snapshot "incremental"
//     (CommonOffsetContext.java:91-95, SnapshotRecord.java:44 at
//     v3.6.1.Final), without txId or lsn (PostgresSourceInfoStructMaker.java:48-58).
func TestIncrementalSnapshotNeverHoldsTheStream(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 4)
	const rows = 50000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL, pad text)`)
	e.Exec(`INSERT INTO orders SELECT g, 0, repeat('p', 40) FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	cfg := e.Config("inc", "public.orders")
	cfg.Signals.Table = "public.debezium_signal"
	cfg.Snapshot.ConnectionsPerTable = 4
	// No initial snapshot: the topic starts empty, and only the
	// incremental snapshot and the stream can make it the table (Claim 2).
	cfg.Snapshot.Mode = config.SnapshotNever
	r := start(t, cfg)
	topic := "inc.public.orders"

	ctx, stop := context.WithCancel(context.Background())
	var next atomic.Int64
	next.Store(1_000_000)
	var wg sync.WaitGroup
	var txs int
	wg.Add(1)
	go func() { defer wg.Done(); txs = load(ctx, t, e, "orders", rows, &next) }()
	defer func() { stop(); wg.Wait() }()
	time.Sleep(300 * time.Millisecond)

	began := time.Now()
	e.Exec(`INSERT INTO debezium_signal VALUES ('i1', 'execute-snapshot', '{"data-collections":["public.orders"]}')`)
	waitIncremental(t, r, "public.orders", 45*time.Second)
	took := time.Since(began)
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	// A last change: once its record is in the topic, so is every change
	// before it.
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var recs []*kgo.Record
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		recs = readAll(t, e.Kafka, topic, -1)
		evs := ittest.Decode(t, recs[len(recs)-1:])
		return evs[0].After != nil && evs[0].After["v"].(float64) == -7
	})
	evs := ittest.Decode(t, recs)
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))

	// The stream during the snapshot: from the first `r` record of the
	// incremental snapshot to its last (offset order: one partition).
	first, last := -1, -1
	nR := 0
	for i, ev := range evs {
		if ev.Op == "r" && ev.Source.Snapshot == "incremental" {
			if ev.Source.TxID != nil || ev.Source.LSN != 0 {
				t.Fatalf("an incremental `r` record with source.txId %v, lsn %d: Debezium writes neither (PostgresSourceInfoStructMaker.java:48-58)", ev.Source.TxID, ev.Source.LSN)
			}
			if first < 0 {
				first = i
			}
			last = i
			nR++
		} else if ev.Op == "r" {
			t.Fatalf("an `r` record says source.snapshot %q, want incremental", ev.Source.Snapshot)
		}
	}
	if nR < rows*9/10 {
		t.Fatalf("%d incremental `r` records, want about %d (every row not changed during the snapshot)", nR, rows)
	}
	var streamed, runs int
	var maxGap time.Duration
	var prevTs time.Time
	prevR := true
	for i := first; i <= last; i++ {
		isR := evs[i].Op == "r"
		if isR != prevR {
			runs++
			prevR = isR
		}
		if isR || evs[i].Tombstone {
			continue
		}
		ts := recs[i].Timestamp
		if !prevTs.IsZero() && ts.Sub(prevTs) > maxGap {
			maxGap = ts.Sub(prevTs)
		}
		prevTs = ts
		streamed++
	}
	span := recs[last].Timestamp.Sub(recs[first].Timestamp)
	t.Logf("%d load transactions; %d rows re-read in %v (%d `r` records, %.0f rows/s); during it %d streamed changes in %d runs, the largest gap between two %v",
		txs, rows, took, nR, float64(nR)/span.Seconds(), streamed, runs, maxGap)
	if streamed < 20 || runs < 10 {
		t.Fatalf("%d streamed changes in %d alternations with `r` records during the snapshot: the stream was held", streamed, runs)
	}
	// A held stream shows one gap about the snapshot's length; a window's
	// scale is milliseconds (31 ms without -race, up to 0.6 s under -race
	// on a busy machine). The floor of 300 ms keeps a scheduler's stall in
	// a short snapshot from failing it.
	if maxGap > max(span/2, 300*time.Millisecond) || maxGap > 2*time.Second {
		t.Fatalf("the table's stream stopped for %v during a snapshot of %v: it was held", maxGap, span)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotResumesByChunkAfterACrash: an incremental
// snapshot (`mooncdc resnapshot --incremental`'s request record) crashed
// midway (Abort: nothing flushed, nothing confirmed) resumes at the next
// start from the progress in the table's offsets record: only the chunks
// not done are read again (the `r` records of the second run are exactly
// the rows on the pages not done), and the rebuilt topic is the table:
// the keys live in the topic before the snapshot that the first run's
// windows wrote are not tombstoned after the resume, a stale key is.
func TestIncrementalSnapshotResumesByChunkAfterACrash(t *testing.T) {
	testResume(t, config.DeliveryAtLeastOnce)
}

// TestIncrementalSnapshotResumesByChunkAfterACrashExactlyOnce: the same in
// exactly-once mode, where a chunk's progress is written in the Kafka
// transaction that holds its rows. Two crashes: one right after a
// window's rows and progress were handed to Kafka, before their
// transaction commits (HookWindowWritten, at a random window: both are
// aborted, the chunk is read again), one at a random moment (most often
// after a commit, before the next). A read_committed consumer then sees
// each row's `r` record exactly once (the table does not change while it
// is read, so each chunk is written by one window only), every row, and
// no change record twice.
func TestIncrementalSnapshotResumesByChunkAfterACrashExactlyOnce(t *testing.T) {
	testResume(t, config.DeliveryExactlyOnce)
}

func testResume(t *testing.T, mode config.Delivery) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	// 109 chunks of 25 ms at least: the crash finds some done, not all.
	slowChunks(t, 25*time.Millisecond)
	const rows = 20000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	// A published table whose changes move the stream past the windows'
	// high watermarks (the table itself is not written: its pages stay).
	e.Exec(`CREATE TABLE ticks (id int PRIMARY KEY, n bigint)`)
	e.Exec(`INSERT INTO ticks VALUES (1, 0)`)
	cfg := e.Config("res", "public.orders", "public.ticks")
	cfg.Kafka.Delivery = mode
	cfg.Snapshot.ConnectionsPerTable = 1
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Notifications.KafkaTopic = "res.notifications"
	topic := "res.public.orders"
	r := start(t, cfg)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		for ctx.Err() == nil {
			_ = e.PG.Exec(ctx, "postgres", `UPDATE ticks SET n = n + 1 WHERE id = 1`)
			time.Sleep(30 * time.Millisecond)
		}
	}()
	// Keys live in the topic before the snapshot (records of the first
	// 2,000 rows, on the first pages: what an earlier copy left) and a
	// stale one: after the resume, the keys the first run's windows wrote
	// past the mark, and no run writes again, are no stale keys (the
	// resumed read strikes them: else the rebuilt topic loses them); the
	// stale one is tombstoned (else the rebuilt topic has it). A row
	// inserted and deleted first: the topic exists.
	e.Exec(`INSERT INTO orders VALUES (-1, -1)`)
	e.Exec(`DELETE FROM orders WHERE id = -1`)
	readAll(t, e.Kafka, topic, 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	var earlier []*kgo.Record
	for _, id := range append(seq(1, 2000), 999999) {
		n := strconv.Itoa(id)
		earlier = append(earlier, &kgo.Record{Topic: topic, Key: []byte(`{"id":` + n + `}`), Value: []byte(`{"before":null,"after":{"id":` + n + `,"v":` + n + `},"op":"c"}`)})
	}
	if err := cl.ProduceSync(context.Background(), earlier...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	var first uint32 // the pages stored as done before the last crash
	if mode == config.DeliveryExactlyOnce {
		first = crashAtAWindow(t, e, cfg, r)
		r = start(t, cfg)
		// Random, so that repeated runs crash between a commit and the
		// next at different points.
	}
	// Crash once some chunks are done (durable, and stored in the offsets
	// topic).
	eventually.True(t, 60*time.Second, 20*time.Millisecond, "no chunk of the incremental snapshot was stored as done", func() bool {
		raw := ittest.LoadOffsets(t, e, cfg).Tables["public.orders"].Incremental
		return raw != "" && donePages(parseProgress(t, string(raw))) > first
	})
	if mode == config.DeliveryExactlyOnce {
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
	}
	r.Crash(t)
	if mode == config.DeliveryExactlyOnce {
		fenceMain(t, e, cfg)
	}
	st := ittest.LoadOffsets(t, e, cfg)
	raw := st.Tables["public.orders"].Incremental
	if raw == "" {
		t.Fatal("the crash left no incremental progress in the offsets topic")
	}
	p := parseProgress(t, string(raw))
	if p.Pages == 0 || len(p.Done) == 0 || p.Done[0] == [2]uint32{0, p.Pages} {
		t.Fatalf("progress %s: want some chunks done, not all", raw)
	}
	// The rows on the pages not done: what the resumed snapshot reads.
	var cond []string
	for _, d := range p.Done {
		cond = append(cond, "NOT (ctid >= '("+itoa(d[0])+",0)'::tid AND ctid < '("+itoa(d[1])+",0)'::tid)")
	}
	var remaining int
	e.Scan(`SELECT count(*) FROM orders WHERE `+join(cond, " AND "), &remaining)
	before := countIncremental(t, ittest.Decode(t, readAll(t, e.Kafka, topic, -1)))

	r2 := start(t, cfg)
	waitIncremental2(t, r2, "public.orders", 60*time.Second)
	stop()
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	again := countIncremental(t, evs) - before
	t.Logf("progress at the crash %s: %d rows on the pages not done; the resumed snapshot wrote %d `r` records", raw, remaining, again)
	if again != remaining {
		t.Fatalf("the resumed snapshot wrote %d rows, want %d: the rows of the chunks not done, and no others", again, remaining)
	}
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	// The notifications across the crash: STARTED once (the resumed run is
	// no new request), IN_PROGRESS for chunks of both runs, and at the end
	// TABLE_SCAN_COMPLETED with every row of the table counted once (the
	// progress counts a chunk when its rows are durable) and COMPLETED.
	ns := notificationsUntil(t, e.Kafka, cfg.Notifications.KafkaTopic, "COMPLETED", false)
	if got := types(ns); got != "STARTED IN_PROGRESS… TABLE_SCAN_COMPLETED COMPLETED" {
		t.Fatalf("notifications %s", got)
	}
	checkData(t, ns[len(ns)-2], map[string]string{"data_collections": "public.orders", "scanned_collection": "public.orders",
		"total_rows_scanned": strconv.Itoa(rows), "status": "SUCCEEDED"})
	if mode == config.DeliveryExactlyOnce {
		onceEach(t, evs, rows)
		changesOnce(t, ittest.Decode(t, readAll(t, e.Kafka, "res.public.ticks", -1)))
	}
	if err := r2.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// crashAtAWindow crashes r right after the main worker handed a random
// window's rows (the 3rd to the 12th) and its progress to Kafka, before
// the Kafka transaction holding them commits, and returns the pages
// stored as done then.
func crashAtAWindow(t *testing.T, e *ittest.Env, cfg config.Config, r *ittest.Running) uint32 {
	t.Helper()
	k := int32(3 + rand.IntN(10))
	var n atomic.Int32
	r.P.Hooks().Set(func(point, _ string) {
		if point == connector.HookWindowWritten && n.Add(1) == k {
			r.P.Abort()
			// The pipeline's hard context ends meanwhile: the commit
			// that would follow fails.
			time.Sleep(300 * time.Millisecond)
		}
	})
	eventually.True(t, 60*time.Second, 5*time.Millisecond, "no window was written", func() bool { return n.Load() >= k })
	r.Crash(t)
	fenceMain(t, e, cfg)
	var pages uint32
	if raw := ittest.LoadOffsets(t, e, cfg).Tables["public.orders"].Incremental; raw != "" {
		pages = donePages(parseProgress(t, string(raw)))
	}
	t.Logf("crashed after window %d was handed to Kafka, before its commit: %d pages stored as done", k, pages)
	return pages
}

// fenceMain takes over the crashed pipeline's transactional id, as the
// next instance does before it reads the offsets: a Kafka transaction
// the crash left open is aborted (one that reached its commit holds the
// offsets topic's last stable offset until then).
func fenceMain(t *testing.T, e *ittest.Env, cfg config.Config) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka), kgo.TransactionalID(cfg.Name+"-main"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		t.Fatalf("fence %s-main: %v", cfg.Name, err)
	}
}

func donePages(p progress) uint32 {
	var n uint32
	for _, d := range p.Done {
		n += d[1] - d[0]
	}
	return n
}

// onceEach fails unless each of the rows ids 1..rows has exactly one
// incremental `r` record.
func onceEach(t *testing.T, evs []ittest.Event, rows int) {
	t.Helper()
	reads := map[int64]int{}
	for _, ev := range evs {
		if ev.Op == "r" && ev.Source.Snapshot == "incremental" {
			reads[int64(ev.Key["id"].(float64))]++
		}
	}
	var twice, never []int64
	for id := int64(1); id <= int64(rows); id++ {
		switch reads[id] {
		case 1:
		case 0:
			never = append(never, id)
		default:
			twice = append(twice, id)
		}
	}
	if len(twice) > 0 || len(never) > 0 {
		t.Fatalf("a read_committed consumer sees %d rows' `r` record more than once (first: %v) and %d rows' never (first: %v): "+
			"a chunk's progress and its rows must commit together", len(twice), twice[:min(5, len(twice))], len(never), never[:min(5, len(never))])
	}
}

// changesOnce fails when a change record of ticks (each update sets a new
// n) is seen twice.
func changesOnce(t *testing.T, evs []ittest.Event) {
	t.Helper()
	seen := map[float64]bool{}
	n := 0
	for _, ev := range evs {
		if ev.Op != "u" {
			continue
		}
		v := ev.After["n"].(float64)
		if seen[v] {
			t.Fatalf("a read_committed consumer sees the change to n = %v twice", v)
		}
		seen[v] = true
		n++
	}
	if n == 0 {
		t.Fatal("no change of ticks in its topic")
	}
}

// waitIncremental2 waits until a resumed snapshot is done: the table's
// record shows no incremental progress.
func waitIncremental2(t *testing.T, r *ittest.Running, table string, within time.Duration) {
	t.Helper()
	eventually.True(t, within, 20*time.Millisecond, "the resumed incremental snapshot did not end", func() bool {
		if stopped, err := r.Stopped(); stopped {
			t.Fatalf("pipeline stopped: %v", err)
		}
		return r.P.TablePhases()[table].Incremental == ""
	})
}

func countIncremental(t *testing.T, evs []ittest.Event) int {
	n := 0
	for _, ev := range evs {
		if ev.Op == "r" && ev.Source.Snapshot == "incremental" {
			n++
		}
	}
	return n
}

// seq is from, from+1, …, to.
func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func join(s []string, sep string) string { return strings.Join(s, sep) }

// TestIncrementalSnapshotOnAnIdleServerTombstonesStaleKeys: on a server
// nothing writes to, the windows still close (the session asks the server
// for its WAL end while a window waits: stream.Positioner), and a key the
// topic holds that the table does not (left by something else than this
// table's stream) is tombstoned at the end, while no key of the table is:
// the rebuilt topic is the table.
//
// The topic's keys are read while the chunks are read, not after them
// (the read begins before the last window is written), and a key the
// stream writes while that read is in flight, after every chunk was read
// (so no window writes it) and before the read meets the key's earlier
// record, is not tombstoned: its strike outlives the read's meeting with
// it (staleKeys).
func TestIncrementalSnapshotOnAnIdleServerTombstonesStaleKeys(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	slowChunks(t, 50*time.Millisecond)
	const rows = 3000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("idle", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	cfg.Notifications.KafkaTopic = "idle.notifications"
	topic := "idle.public.orders"
	r := start(t, cfg)
	// A row inserted and deleted: its topic exists.
	e.Exec(`INSERT INTO orders VALUES (-1, -1)`)
	e.Exec(`DELETE FROM orders WHERE id = -1`)
	readAll(t, e.Kafka, topic, 3)
	// Stale keys: records of rows the table does not have (as a row
	// deleted while nothing streamed would leave). 999999 is inserted
	// into the table while the topic's keys are read.
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"999998", "999999"} {
		stale := &kgo.Record{Topic: topic, Key: []byte(`{"id":` + id + `}`), Value: []byte(`{"before":null,"after":{"id":` + id + `,"v":1},"op":"c"}`)}
		if err := cl.ProduceSync(context.Background(), stale).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	var pages int64
	e.Scan(`SELECT pg_relation_size('orders') / current_setting('block_size')::bigint`, &pages)
	chunks := int32((pages + 1) / 2)

	var windows atomic.Int32
	var first atomic.Bool
	readBegan := make(chan int32, 1) // the windows written when the read of the keys began
	hookErr := make(chan error, 1)
	r.P.Hooks().Set(func(point, _ string) {
		switch point {
		case connector.HookWindowWritten:
			windows.Add(1)
		case connector.HookStaleKeysRead:
			if !first.CompareAndSwap(false, true) {
				return // a run again (a lost window): its read goes on
			}
			readBegan <- windows.Load()
			// Hold the read until every window is written, then have the
			// stream write 999999 (on a page read already) before the
			// read goes on.
			deadline := time.Now().Add(30 * time.Second)
			for windows.Load() < chunks && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if err := e.PG.Exec(context.Background(), "postgres", `INSERT INTO orders VALUES (999999, 5)`); err != nil {
				hookErr <- err
				return
			}
			for !hasValue(e.Kafka, topic, `{"id":999999}`, `"v":5`) {
				if time.Now().After(deadline) {
					hookErr <- errors.New("the stream's insert of 999999 did not reach the topic")
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			hookErr <- nil
		}
	})

	began := time.Now()
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitIncremental(t, r, "public.orders", 30*time.Second)
	took := time.Since(began)
	t.Logf("%d rows in %d-page chunks re-read on an idle server in %v", rows, 2, took)
	if took > 5*time.Second {
		// Nine windows, each waiting for a keepalive past its high
		// watermark: without the session asking for one (and waking for
		// the readers' requests) each waited about a second.
		t.Fatalf("the snapshot took %v on an idle server: its windows waited for the stream", took)
	}
	select {
	case w := <-readBegan:
		if w >= chunks {
			t.Fatalf("the topic's keys were read once all %d windows were written: the read must overlap the chunks", chunks)
		}
		t.Logf("the read of the topic's keys began after %d of %d windows", w, chunks)
	default:
		t.Fatal("the topic's keys were not read")
	}
	if err := <-hookErr; err != nil {
		t.Fatal(err)
	}
	evs := ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
	var tombstones []any
	for _, ev := range evs[3:] { // after the stream's insert, delete and tombstone of -1
		if ev.Tombstone {
			tombstones = append(tombstones, ev.Key["id"])
		}
	}
	if len(tombstones) != 1 || tombstones[0].(float64) != 999998 {
		t.Fatalf("tombstones for %v, want one, for the stale key 999998 (999999 was written by the stream while the keys were read)", tombstones)
	}
	if n := countIncremental(t, evs); n != rows {
		t.Fatalf("%d incremental `r` records, want %d", n, rows)
	}
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))

	// The notifications (notifications.kafka_topic), in the order Debezium
	// writes them (AbstractIncrementalSnapshotChangeEventSource.java:509
	// STARTED, :330 IN_PROGRESS per chunk, :322 TABLE_SCAN_COMPLETED, :471
	// COMPLETED) with its fields (IncrementalSnapshotNotificationService.java:61-149).
	ns := notificationsUntil(t, e.Kafka, cfg.Notifications.KafkaTopic, "COMPLETED", false)
	if got := types(ns); got != "STARTED IN_PROGRESS… TABLE_SCAN_COMPLETED COMPLETED" {
		t.Fatalf("notifications %s", got)
	}
	checkCommon(t, ns, "idle", began)
	checkData(t, ns[0], map[string]string{"data_collections": "public.orders"})
	inProgress := checkInProgress(t, ns, "public.orders", 2)
	checkData(t, ns[len(ns)-2], map[string]string{"data_collections": "public.orders", "scanned_collection": "public.orders",
		"total_rows_scanned": strconv.Itoa(rows), "status": "SUCCEEDED"})
	checkData(t, ns[len(ns)-1], map[string]string{})
	// A request without a signal (the CLI's) has no correlation id: a
	// random UUID per notification (IncrementalSnapshotNotificationService.java:158).
	ids := map[string]bool{}
	for _, x := range ns {
		ids[x.ID] = true
	}
	if len(ids) != len(ns) {
		t.Errorf("%d notifications share %d ids, want one each", len(ns), len(ids))
	}
	t.Logf("notifications: STARTED, %d IN_PROGRESS, TABLE_SCAN_COMPLETED, COMPLETED", inProgress)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotStopsAtStopSnapshot: a stop-snapshot signal ends a
// running incremental snapshot (Debezium's StopSnapshot.java: the
// data-collections named, or all): its progress leaves the table's record,
// no `r` record follows, and the table, never held, streams on.
func TestIncrementalSnapshotStopsAtStopSnapshot(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 150*time.Millisecond)
	const rows = 3000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	cfg := e.Config("stp", "public.orders")
	cfg.Signals.Table = "public.debezium_signal"
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Notifications.KafkaTopic = "stp.notifications"
	topic := "stp.public.orders"
	r := start(t, cfg)
	began := time.Now()
	e.Exec(`INSERT INTO debezium_signal VALUES ('i1', 'execute-snapshot', '{"data-collections":["public.orders"],"type":"incremental"}')`)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the incremental snapshot wrote no row", func() bool {
		return len(readAll(t, e.Kafka, topic, -1)) > 0
	})
	// Paused and resumed on the way (pause-snapshot, resume-snapshot):
	// PAUSED and RESUMED notifications.
	e.Exec(`INSERT INTO debezium_signal VALUES ('p1', 'pause-snapshot', '{}')`)
	notificationsUntil(t, e.Kafka, cfg.Notifications.KafkaTopic, "PAUSED", true)
	e.Exec(`INSERT INTO debezium_signal VALUES ('r1', 'resume-snapshot', '{}')`)
	notificationsUntil(t, e.Kafka, cfg.Notifications.KafkaTopic, "RESUMED", true)
	e.Exec(`INSERT INTO debezium_signal VALUES ('s1', 'stop-snapshot', '{"data-collections":["public\\.orders"],"type":"incremental"}')`)
	eventually.True(t, 30*time.Second, 10*time.Millisecond, "the incremental snapshot did not stop", func() bool {
		return r.P.TablePhases()["public.orders"].Incremental == ""
	})
	time.Sleep(time.Second) // a reader that went on would write by now
	e.Exec(`UPDATE orders SET v = -1 WHERE id = 1`)
	var evs []ittest.Event
	eventually.True(t, 30*time.Second, 50*time.Millisecond, "the table's change after the stop did not arrive", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
		last := evs[len(evs)-1]
		return last.Op == "u" && last.After["v"].(float64) == -1
	})
	n := countIncremental(t, evs)
	if n == 0 || n >= rows {
		t.Fatalf("%d `r` records: want some, not all %d (stopped midway)", n, rows)
	}
	if ph := r.P.TablePhases()["public.orders"]; ph.Phase != "ready" {
		t.Fatalf("after the stop the table is %s, want ready", ph.Phase)
	}
	// The notifications: STARTED, IN_PROGRESS per chunk written, PAUSED
	// and RESUMED (AbstractIncrementalSnapshotChangeEventSource.java:127,
	// 137; windows open at the pause still close and are written), and
	// ABORTED with the stopped collection (:622,
	// IncrementalSnapshotNotificationService.java:99-105): no
	// TABLE_SCAN_COMPLETED, no COMPLETED.
	ns := notificationsUntil(t, e.Kafka, cfg.Notifications.KafkaTopic, "ABORTED", false)
	got := types(ns)
	if !regexp.MustCompile(`^STARTED IN_PROGRESS… PAUSED( IN_PROGRESS…)? RESUMED( IN_PROGRESS…)? ABORTED$`).MatchString(got) {
		t.Fatalf("notifications %s", got)
	}
	checkCommon(t, ns, "stp", began)
	t.Logf("notifications: %s", got)
	for _, x := range ns {
		switch x.Type {
		case "STARTED", "PAUSED", "RESUMED", "ABORTED":
			checkData(t, x, map[string]string{"data_collections": "public.orders"})
		}
		// The id is the execute-snapshot signal's (Debezium's correlation
		// id, AbstractIncrementalSnapshotChangeEventSource.java:483;
		// IncrementalSnapshotNotificationService.java:158).
		if x.ID != "i1" {
			t.Errorf("%s: id %q, want the signal's, i1", x.Type, x.ID)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotRefusesATableWithoutAKey: a table whose records
// have no key (no primary key, REPLICA IDENTITY FULL, no
// format.message_key_columns) cannot be snapshotted incrementally (an `r`
// record adds a row rather than overwriting one: Debezium skips it too,
// NO_PRIMARY_KEY, AbstractIncrementalSnapshotChangeEventSource.java:392 at
// v3.6.1.Final). The request is refused with an error naming the table
// and the fix, no row is read, and the table streams on.
func TestIncrementalSnapshotRefusesATableWithoutAKey(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE nokey (id bigint, v bigint)`)
	e.Exec(`ALTER TABLE nokey REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO nokey SELECT g, g FROM generate_series(1, 10) g`)
	e.Exec(`CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	cfg := e.Config("nok", "public.nokey")
	cfg.Signals.Table = "public.debezium_signal"
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Notifications.KafkaTopic = "nok.notifications"
	core, logs := observer.New(zap.InfoLevel)
	p, err := connector.New(cfg, zap.New(core), ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	e.Exec(`INSERT INTO debezium_signal VALUES ('i1', 'execute-snapshot', '{"data-collections":["public.nokey"]}')`)
	var msg string
	defer func() {
		if t.Failed() {
			for _, en := range logs.All() {
				t.Logf("%s %s %v", en.LoggerName, en.Message, en.ContextMap())
			}
		}
	}()
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "no error for the refused incremental snapshot", func() bool {
		for _, en := range logs.FilterMessageSnippet("incremental snapshot failed").All() {
			for _, f := range en.Context {
				if f.Key == "error" {
					msg = f.Interface.(error).Error()
					return true
				}
			}
		}
		return false
	})
	for _, want := range []string{"public.nokey", "no primary key", "format.message_key_columns", "blocking"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	e.Exec(`INSERT INTO nokey VALUES (11, 11)`)
	evs := ittest.Decode(t, readAll(t, e.Kafka, "nok.public.nokey", 1))
	if len(evs) != 1 || evs[0].Op != "c" {
		t.Fatalf("records %+v, want only the insert streamed after the refusal (no `r` record)", evs)
	}
	if ph := r.P.TablePhases()["public.nokey"]; ph.Phase != "ready" || ph.Incremental != "" {
		t.Fatalf("after the refusal the table is %s with progress %q, want ready and none", ph.Phase, ph.Incremental)
	}
	// STARTED, then TABLE_SCAN_COMPLETED with status NO_PRIMARY_KEY and
	// COMPLETED, as Debezium's warnAndSkip
	// (AbstractIncrementalSnapshotChangeEventSource.java:392, 399-409).
	ns := notificationsUntil(t, e.Kafka, cfg.Notifications.KafkaTopic, "COMPLETED", false)
	if got := types(ns); got != "STARTED TABLE_SCAN_COMPLETED COMPLETED" {
		t.Fatalf("notifications %s", got)
	}
	checkData(t, ns[1], map[string]string{"data_collections": "public.nokey", "scanned_collection": "public.nokey",
		"total_rows_scanned": "0", "status": "NO_PRIMARY_KEY"})
	for _, x := range ns {
		if x.ID != "i1" || x.Key != "i1" {
			t.Errorf("%s: id %q key %q, want the signal's, i1", x.Type, x.ID, x.Key)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
