package incremental

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// slowChunks makes every chunk of an incremental snapshot wait d before
// its read until the test ends (a snapshot slow enough to change the
// table while it runs).
func slowChunks(t *testing.T, d time.Duration) {
	ittest.Tune(t, func(tu *connector.Tuning) { tu.IncrementalReadDelay = d })
}

// waitPlanned waits until the table's incremental snapshot is planned (its
// progress has its pages): N is read, no chunk has been read yet while
// each waits its delay.
func waitPlanned(t *testing.T, r *ittest.Running, table string) {
	t.Helper()
	eventually.True(t, 30*time.Second, 2*time.Millisecond, "the incremental snapshot was not planned", func() bool {
		raw := r.P.TablePhases()[table].Incremental
		return raw != "" && parseProgress(t, string(raw)).Pages > 0
	})
}

// TestIncrementalSnapshotSkippingUpdatesTombstonesNoLiveRow: with
// format.skipped_operations holding u (Debezium's skipped.operations,
// CommonConnectorConfig.java, "u" a valid value), an update moves a row
// to a page past the snapshot's plan while the snapshot runs. No window
// reads that row (its old page holds a dead version, its new page is past
// N), and the stream writes no record of it (the update is skipped): the
// key's every record precedes the stale mark. The stale-key rule's premise
// ("a key present at the end was changed, so the stream wrote it past the
// mark") does not hold, and the key must not be tombstoned: the row is in
// the table.
func TestIncrementalSnapshotSkippingUpdatesTombstonesNoLiveRow(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 4)
	slowChunks(t, 300*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL, pad text)`)
	// PLAIN: the wide values below stay in the heap, so the rows grow.
	e.Exec(`ALTER TABLE orders ALTER pad SET STORAGE PLAIN`)
	e.Exec(`INSERT INTO orders SELECT g, g, repeat('p', 40) FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("skipu", "public.orders")
	cfg.Format.SkippedOperations = []string{"u", "t"}
	cfg.Snapshot.ConnectionsPerTable = 1
	topic := "skipu.public.orders"
	// The initial snapshot writes every key before the incremental one's
	// stale mark.
	r := start(t, cfg)
	readAll(t, e.Kafka, topic, rows)

	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitPlanned(t, r, "public.orders")
	// Rows of page 0, made wider than what the last page has free: their
	// new versions go to pages past N (read before this update), before
	// page 0's chunk is read (it waits its delay).
	e.Exec(`UPDATE orders SET pad = repeat('x', 3000) WHERE id <= 5`)
	pages := parseProgress(t, string(r.P.TablePhases()["public.orders"].Incremental)).Pages
	var moved int
	e.Scan(`SELECT count(*) FROM orders WHERE id <= 5 AND (ctid::text::point)[0] >= `+itoa(pages), &moved)
	if moved == 0 {
		t.Fatalf("no updated row moved past the plan's %d pages: the scenario did not happen", pages)
	}
	t.Logf("%d of the 5 updated rows moved past the plan's %d pages", moved, pages)
	waitIncremental(t, r, "public.orders", 60*time.Second)
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	// Skipped updates leave v as it was (it is not changed here): the
	// rebuilt topic must hold every row of the table.
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotPastItsStaleKeysBoundSaysSoAndTombstonesNothing:
// a topic with more keys than an incremental snapshot holds (its bound,
// here 20 keys' worth) is left untombstoned, loudly: the snapshot ends,
// its rows written, the stale key stays (no part of the keys is
// tombstoned), an error log names the table and the topic, and /status
// says why (stale_keys_not_tombstoned) and what to do.
func TestIncrementalSnapshotPastItsStaleKeysBoundSaysSoAndTombstonesNothing(t *testing.T) {
	e := ittest.NewEnv(t)
	ittest.Tune(t, func(tu *connector.Tuning) { tu.StaleKeysLimit = 20 * (14 + 48) })
	const rows = 100
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("bound", "public.orders")
	topic := "bound.public.orders"
	core, logs := observer.New(zapcore.InfoLevel)
	p, err := connector.New(cfg, zap.New(core), ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	readAll(t, e.Kafka, topic, rows) // the initial snapshot's: 100 keys before the mark
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	stale := &kgo.Record{Topic: topic, Key: []byte(`{"id":999999}`), Value: []byte(`{"before":null,"after":{"id":999999,"v":1},"op":"c"}`)}
	if err := cl.ProduceSync(context.Background(), stale).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitIncremental(t, r, "public.orders", 60*time.Second)
	evs := ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
	for _, ev := range evs {
		if ev.Tombstone {
			t.Fatalf("a tombstone for %v: past its bound the snapshot must tombstone nothing", ev.Key)
		}
	}
	if n := countIncremental(t, evs); n != rows {
		t.Fatalf("%d incremental `r` records, want %d", n, rows)
	}
	if n := logs.FilterMessageSnippet("more keys than an incremental snapshot keeps").FilterField(zap.String("table", "public.orders")).
		FilterField(zap.String("topic", topic)).FilterLevelExact(zapcore.ErrorLevel).Len(); n != 1 {
		t.Errorf("%d error logs naming the table and the topic past the bound, want 1", n)
	}
	if why := r.P.Status().StaleKeys["public.orders"]; !strings.Contains(why, topic) || !strings.Contains(why, "blocking resnapshot") {
		t.Errorf("/status stale_keys_not_tombstoned for public.orders is %q, want the topic and the fix", why)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotReadsColumnsAddedWhileItRuns: a column added
// while an incremental snapshot runs (ALTER TABLE … ADD COLUMN with a
// default, no rewrite) is in every `r` record of a chunk read after the
// ALTER committed, with the table's value: docs/incremental-snapshots.md
// ("With the phases": windows whose snapshot sees the DDL read the new
// columns). A reader that keeps the columns it described at the start
// writes those rows without the column, silently: a consumer rebuilding
// the table has no w where the table has 5.
func TestIncrementalSnapshotReadsColumnsAddedWhileItRuns(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 150*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("addcol", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	topic := "addcol.public.orders"
	r := start(t, cfg)

	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitPlanned(t, r, "public.orders")
	time.Sleep(400 * time.Millisecond) // a few chunks read without the column
	e.Exec(`ALTER TABLE orders ADD COLUMN w int NOT NULL DEFAULT 5`)
	var alterMs int64
	e.Scan(`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`, &alterMs)
	waitIncremental(t, r, "public.orders", 60*time.Second)
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var recs []*kgo.Record
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		recs = readAll(t, e.Kafka, topic, -1)
		evs := ittest.Decode(t, recs[len(recs)-1:])
		return evs[0].After != nil && evs[0].After["v"].(float64) == -7
	})
	evs := ittest.Decode(t, recs)
	var before, after int
	for i, ev := range evs {
		if ev.Op != "r" {
			continue
		}
		var v struct {
			Source struct {
				TsMs int64 `json:"ts_ms"`
			} `json:"source"`
		}
		if err := json.Unmarshal(ittest.UnwrapConnect(t, recs[i]).Value, &v); err != nil {
			t.Fatal(err)
		}
		if v.Source.TsMs <= alterMs {
			before++
			continue
		}
		// Its chunk's transaction began after the ALTER committed: its
		// snapshot sees the column.
		after++
		if w, ok := ev.After["w"]; !ok || w != float64(5) {
			t.Fatalf("an `r` record of id %v read %d ms after the ALTER committed has w = %v (present: %v), want 5 as the table has it",
				ev.Key["id"], v.Source.TsMs-alterMs, w, ok)
		}
	}
	t.Logf("%d `r` records read before the ALTER, %d after", before, after)
	if before == 0 || after == 0 {
		t.Fatalf("%d `r` records read before the ALTER, %d after: want both (the scenario did not happen)", before, after)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotThatFailsSaysWhy: an incremental snapshot of a
// table it cannot take (no key: watermark.Eligible) fails with an error
// in the log naming the table, the reason and the fix
// (docs/incremental-snapshots.md, "Refused tables"), not as a
// stop-snapshot, and the table streams on.
func TestIncrementalSnapshotThatFailsSaysWhy(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE nokey (a int, b int)`)
	e.Exec(`ALTER TABLE nokey REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO nokey SELECT g, g FROM generate_series(1, 10) g`)
	cfg := e.Config("fails", "public.nokey")
	cfg.Snapshot.Mode = config.SnapshotNever
	core, logs := observer.New(zap.InfoLevel)
	p, err := connector.New(cfg, zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Core(), core)), ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)

	ittest.RequestIncremental(t, e, cfg, "public.nokey")
	var failed []observer.LoggedEntry
	eventually.True(t, 30*time.Second, 10*time.Millisecond, "no log line ends the incremental snapshot", func() bool {
		failed = logs.FilterMessageSnippet("incremental snapshot").FilterField(zap.String("table", "public.nokey")).
			Filter(func(le observer.LoggedEntry) bool {
				return le.Level == zap.ErrorLevel || strings.Contains(le.Message, "stopped")
			}).All()
		return len(failed) > 0
	})
	le := failed[0]
	msg := fmt.Sprint(le.ContextMap()["error"])
	if le.Level != zap.ErrorLevel || !strings.Contains(msg, "no primary key") || !strings.Contains(msg, "format.message_key_columns") {
		t.Fatalf("the snapshot ended with %s %q %v: want an error naming the reason (no key) and the fix", le.Level, le.Message, le.ContextMap())
	}
	// The table streams on.
	e.Exec(`INSERT INTO nokey VALUES (-7, -7)`)
	eventually.True(t, 30*time.Second, 50*time.Millisecond, "the table's change did not reach the topic", func() bool {
		recs := readAll(t, e.Kafka, "fails.public.nokey", -1)
		if len(recs) == 0 {
			return false
		}
		evs := ittest.Decode(t, recs[len(recs)-1:])
		return evs[0].After != nil && evs[0].After["a"].(float64) == -7
	})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotOutlivesARewrite: a rewrite of the table while
// an incremental snapshot runs (VACUUM FULL: every row moves to a new
// file without a change record) does not end the snapshot: the chunk
// whose file is not the plan's is abandoned and the table planned again
// from page 0 (docs/incremental-snapshots.md, "Rewrites"), so a consumer
// that starts from nothing still ends with the table.
func TestIncrementalSnapshotOutlivesARewrite(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 100*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("rewrite", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	topic := "rewrite.public.orders"
	r := start(t, cfg)

	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitPlanned(t, r, "public.orders")
	time.Sleep(300 * time.Millisecond) // a few chunks read in the first file
	e.Exec(`VACUUM FULL orders`)
	waitIncremental(t, r, "public.orders", 60*time.Second)
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotStopsWithThePipeline: a graceful stop while an
// incremental snapshot's chunks are read ends in bounded time, and keeps
// the snapshot's progress in the offsets topic, so the next start resumes
// it (a stop is not a stop-snapshot).
func TestIncrementalSnapshotStopsWithThePipeline(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 200*time.Millisecond)
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, 3000) g`)
	cfg := e.Config("stops", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 2
	r := start(t, cfg)
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitPlanned(t, r, "public.orders")
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("the stop took %v with an incremental snapshot running", took)
	}
	raw := ittest.LoadOffsets(t, e, cfg).Tables["public.orders"].Incremental
	if raw == "" || parseProgress(t, string(raw)).Pages == 0 {
		t.Fatalf("after a stop the table's incremental progress is %q: want the planned snapshot, to resume at the next start", raw)
	}
}

// TestIncrementalSnapshotEndsEachChunksTransactionOnce: a chunk's
// transaction is committed once, and not rolled back after: Postgres logs
// "WARNING: there is no transaction in progress" for a ROLLBACK outside a
// transaction, a line per chunk in the server's log (thousands for a
// large table).
func TestIncrementalSnapshotEndsEachChunksTransactionOnce(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, 1000) g`)
	cfg := e.Config("once", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	r := start(t, cfg)
	marker := fmt.Sprintf("mooncdc-test-marker-%d", time.Now().UnixNano())
	e.Exec(`DO $$ BEGIN RAISE LOG '` + marker + `'; END $$`)
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitIncremental(t, r, "public.orders", 30*time.Second)
	tail := e.PG.LogTail()
	i := strings.LastIndex(tail, marker)
	if i < 0 {
		t.Fatalf("the marker is not in the server log's tail:\n%s", tail)
	}
	if n := strings.Count(tail[i:], "there is no transaction in progress"); n > 0 {
		t.Fatalf("%d warnings \"there is no transaction in progress\" in the server log during the snapshot:\n%s", n, tail[i:])
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotKeysRowsAsTheTableIsKeyedWhenRead: the primary
// key changed while an incremental snapshot runs (no rewrite): every `r`
// record of a chunk read after the change is keyed by the new key, as the
// stream keys the table's changes from then on. A reader that keeps the
// key it described at the start writes records under the old key, whose
// window keys the stream's changes never match (the drop rule compares
// keys of different columns).
func TestIncrementalSnapshotKeysRowsAsTheTableIsKeyedWhenRead(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 150*time.Millisecond)
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, -g FROM generate_series(1, 2000) g`)
	cfg := e.Config("rekey", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	topic := "rekey.public.orders"
	r := start(t, cfg)

	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitPlanned(t, r, "public.orders")
	time.Sleep(400 * time.Millisecond)
	e.Exec(`ALTER TABLE orders DROP CONSTRAINT orders_pkey, ADD PRIMARY KEY (v)`)
	var alterMs int64
	e.Scan(`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint`, &alterMs)
	waitIncremental(t, r, "public.orders", 60*time.Second)
	recs := readAll(t, e.Kafka, topic, -1)
	var before, after int
	for _, rec := range recs {
		rec = ittest.UnwrapConnect(t, rec)
		var v struct {
			Op     string `json:"op"`
			Source struct {
				TsMs int64 `json:"ts_ms"`
			} `json:"source"`
		}
		if err := json.Unmarshal(rec.Value, &v); err != nil {
			t.Fatal(err)
		}
		if v.Op != "r" {
			continue
		}
		if v.Source.TsMs <= alterMs {
			before++
			continue
		}
		after++
		var key map[string]any
		if err := json.Unmarshal(rec.Key, &key); err != nil {
			t.Fatal(err)
		}
		if _, ok := key["v"]; !ok || len(key) != 1 {
			t.Fatalf("an `r` record read %d ms after the key became (v) has key %s, want {\"v\":…}", v.Source.TsMs-alterMs, rec.Key)
		}
	}
	t.Logf("%d `r` records read before the key changed, %d after", before, after)
	if before == 0 || after == 0 {
		t.Fatalf("%d `r` records read before the key changed, %d after: want both (the scenario did not happen)", before, after)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
