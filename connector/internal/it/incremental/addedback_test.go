package incremental

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestTableAddedBackToThePublicationLosesNoChange: a table that streams
// leaves the pipeline (ALTER PUBLICATION … DROP TABLE on a publication the
// user manages) while it still exists; rows are inserted, updated and
// deleted meanwhile (pgoutput sends none of them); it is added back. The
// table was ready (its topic has readers), so it gets an incremental
// snapshot (docs/incremental-snapshots.md, "With the phases"): its new
// changes stream at once while its rows are re-read in chunks (not held
// until a handover), the rows say source.snapshot "incremental", the keys
// deleted while it was out end as tombstones (the stale-key pass), and the
// rebuilt topic is the table. Before: the table kept its ready phase and
// streamed on from the ADD, every change made while it was out missing
// from its topic.
func TestTableAddedBackToThePublicationLosesNoChange(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	slowChunks(t, 20*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, 0 FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE TABLE other (id bigint PRIMARY KEY)`)
	e.Exec(`CREATE PUBLICATION back_pub FOR TABLE orders, other`)
	cfg := e.Config("back") // no postgres.tables: the publication decides
	cfg.Postgres.Publication = "back_pub"
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)
	topic := "back.public.orders"
	e.Exec(`INSERT INTO orders VALUES (5000, 0)`)
	readAll(t, e.Kafka, topic, rows+1)

	e.Exec(`ALTER PUBLICATION back_pub DROP TABLE orders`)
	waitLeft(t, r, "public.orders", true)
	outOfPipeline(t, e)
	// The main worker is past the changes above once other's row is out.
	e.Exec(`INSERT INTO other VALUES (1)`)
	readAll(t, e.Kafka, "back.public.other", 1)
	// A snapshot asked for while it is out reads nothing: none of its
	// changes would follow the rows.
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	for range 20 {
		if ph := r.P.TablePhases()["public.orders"]; ph.Incremental != "" {
			t.Fatalf("an incremental snapshot of a table out of the pipeline: %+v", ph)
		}
		time.Sleep(50 * time.Millisecond)
	}

	e.Exec(`ALTER PUBLICATION back_pub ADD TABLE orders`)
	checkAddedBack(t, e, r, topic, rows)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestTableRemovedFromMooncdcsPublicationLosesNoChange: the same on the
// publication mooncdc manages (postgres.tables selects the table): someone
// removes the table from it, changes it in the same transaction (pgoutput
// sends none of those changes), and mooncdc's next discovery adds it back,
// as it adds every table postgres.tables selects. The table left and came
// back within one discovery: the mark that it left is stored before it is
// added back, and it gets the incremental snapshot. Before: added back
// silently, those changes missing from its topic.
func TestTableRemovedFromMooncdcsPublicationLosesNoChange(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	slowChunks(t, 20*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, 0 FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("backown", "public.orders")
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)
	topic := "backown.public.orders"
	e.Exec(`INSERT INTO orders VALUES (5000, 0)`)
	readAll(t, e.Kafka, topic, rows+1)

	// One transaction (the simple protocol): no discovery in between.
	e.Exec(`ALTER PUBLICATION mooncdc_backown DROP TABLE orders;
		INSERT INTO orders SELECT g, 7 FROM generate_series(3001, 3100) g;
		UPDATE orders SET v = 8 WHERE id <= 100;
		DELETE FROM orders WHERE id BETWEEN 101 AND 200`)
	checkAddedBack(t, e, r, topic, rows)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestTableRemovedAndAddedBackBetweenTwoDiscoveriesLosesNoChange: the
// same on a publication the user manages, the table removed, changed and
// added back in one transaction, so that no discovery sees it out: its
// publication row (pg_publication_rel) is a new one, which tells
// discovery that it left and came back. Before: no trace, the changes
// made while it was out missing from its topic.
func TestTableRemovedAndAddedBackBetweenTwoDiscoveriesLosesNoChange(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	slowChunks(t, 20*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, 0 FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE PUBLICATION unseen_pub FOR TABLE orders`)
	cfg := e.Config("unseen")
	cfg.Postgres.Publication = "unseen_pub"
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)
	topic := "unseen.public.orders"
	e.Exec(`INSERT INTO orders VALUES (5000, 0)`)
	readAll(t, e.Kafka, topic, rows+1)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "pub_rel not stored", func() bool {
		return r.P.TablePhases()["public.orders"].PubRel != 0
	})

	e.Exec(`ALTER PUBLICATION unseen_pub DROP TABLE orders;
		INSERT INTO orders SELECT g, 7 FROM generate_series(3001, 3100) g;
		UPDATE orders SET v = 8 WHERE id <= 100;
		DELETE FROM orders WHERE id BETWEEN 101 AND 200;
		ALTER PUBLICATION unseen_pub ADD TABLE orders`)
	checkAddedBack(t, e, r, topic, rows)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestTableAddedBackUnderSnapshotModeNeverIsNotReadAgain: with
// snapshot.mode never (no copy of any kind, only changes from now on) a
// table that comes back streams on without a snapshot, as a new table
// does, and the mark that it left is cleared (the log says what its topic
// misses).
func TestTableAddedBackUnderSnapshotModeNeverIsNotReadAgain(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`CREATE PUBLICATION never_pub FOR TABLE orders`)
	cfg := e.Config("backnever")
	cfg.Postgres.Publication = "never_pub"
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)
	topic := "backnever.public.orders"
	e.Exec(`INSERT INTO orders VALUES (1, 0)`)
	readAll(t, e.Kafka, topic, 1)
	var stamp uint32
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "pub_rel not stored", func() bool {
		stamp = r.P.TablePhases()["public.orders"].PubRel
		return stamp != 0
	})
	e.Exec(`ALTER PUBLICATION never_pub DROP TABLE orders; INSERT INTO orders VALUES (2, 0); ALTER PUBLICATION never_pub ADD TABLE orders`)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the new publication row not seen", func() bool {
		ph := r.P.TablePhases()["public.orders"]
		return ph.PubRel != stamp && ph.PubRel != 0
	})
	if ph := r.P.TablePhases()["public.orders"]; ph.LeftMs != 0 || ph.Incremental != "" || ph.Phase != "ready" {
		t.Fatalf("public.orders back under snapshot.mode never: %+v, want ready, no left_ms, no incremental snapshot", ph)
	}
	e.Exec(`INSERT INTO orders VALUES (3, 0)`)
	evs := ittest.Decode(t, readAll(t, e.Kafka, topic, 2))
	if len(evs) != 2 || evs[1].Op != "c" || evs[1].Key["id"].(float64) != 3 {
		t.Fatalf("records %+v, want the creates of 1 and 3 (2, made while it was out, is not read again)", evs)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestTableLeftOutOfTheConfigAcrossARestartLosesNoChange: the same with a
// table left out of postgres.tables across a restart (the publication,
// which mooncdc created, still has it: mooncdc never removes a table from
// one). While it is out, none of its changes is written (postgres.tables
// says what is captured; before, a table with a stored phase was written
// whatever the configuration said); once it is selected again, at the
// next start, it gets the incremental snapshot and its topic ends as the
// table.
func TestTableLeftOutOfTheConfigAcrossARestartLosesNoChange(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	slowChunks(t, 20*time.Millisecond)
	const rows = 2000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, 0 FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE TABLE other (id bigint PRIMARY KEY)`)
	cfg := e.Config("backcfg", "public.orders", "public.other")
	cfg.Snapshot.DiscoveryInterval = time.Second
	topic := "backcfg.public.orders"
	r := start(t, cfg)
	e.Exec(`INSERT INTO orders VALUES (5000, 0)`)
	readAll(t, e.Kafka, topic, rows+1)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	out := cfg
	out.Postgres.Tables = []string{"public.other"}
	r = start(t, out)
	waitLeft(t, r, "public.orders", true)
	outOfPipeline(t, e)
	e.Exec(`INSERT INTO other VALUES (1)`)
	readAll(t, e.Kafka, "backcfg.public.other", 1)
	if n := len(readAll(t, e.Kafka, topic, -1)); n != rows+1 {
		t.Fatalf("%d records in %s while the table is left out of postgres.tables, want the %d written before", n, topic, rows+1)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	r = start(t, cfg)
	checkAddedBack(t, e, r, topic, rows)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestTableLeftOutOfTheConfigIsNotCopied: a table left out of
// postgres.tables is not copied while it is out, even when its phase asks
// for a copy (snapshot.mode always sets every stored table back to init):
// it is copied when it comes back. Before, its copy wrote its rows to its
// topic although no pattern selected it.
func TestTableLeftOutOfTheConfigIsNotCopied(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, 0 FROM generate_series(1, 100) g`)
	e.Exec(`CREATE TABLE other (id bigint PRIMARY KEY)`)
	e.Exec(`INSERT INTO other VALUES (1)`)
	cfg := e.Config("backcopy", "public.orders", "public.other")
	topic := "backcopy.public.orders"
	r := start(t, cfg)
	readAll(t, e.Kafka, topic, 100)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	out := cfg
	out.Postgres.Tables = []string{"public.other"}
	out.Snapshot.Mode = "always"
	r = ittest.StartStreaming(t, out)
	// other copied again; orders stays init (its copy waits for its return).
	eventually.True(t, 60*time.Second, 20*time.Millisecond, "public.other not copied again", func() bool {
		return r.P.TablePhases()["public.other"].Phase == "ready"
	})
	readAll(t, e.Kafka, "backcopy.public.other", 2)
	if ph := r.P.TablePhases()["public.orders"]; ph.LeftMs == 0 || ph.Phase != "init" {
		t.Fatalf("public.orders, left out of postgres.tables: %+v, want init with left_ms", ph)
	}
	if n := len(readAll(t, e.Kafka, topic, -1)); n != 100 {
		t.Fatalf("%d records in %s after a start that left it out of postgres.tables, want the first copy's 100", n, topic)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// waitLeft waits until the table's record says it left the pipeline
// (left) or that it is in it.
func waitLeft(t *testing.T, r *ittest.Running, table string, left bool) {
	t.Helper()
	eventually.True(t, 30*time.Second, 20*time.Millisecond, fmt.Sprintf("%s: left_ms set %v", table, left), func() bool {
		return (r.P.TablePhases()[table].LeftMs != 0) == left
	})
}

// outOfPipeline changes orders while it is out of the pipeline: inserts
// 3001-3100, updates 1-100, deletes 101-200.
func outOfPipeline(t *testing.T, e *ittest.Env) {
	t.Helper()
	e.Exec(`INSERT INTO orders SELECT g, 7 FROM generate_series(3001, 3100) g`)
	e.Exec(`UPDATE orders SET v = 8 WHERE id <= 100`)
	e.Exec(`DELETE FROM orders WHERE id BETWEEN 101 AND 200`)
}

// checkAddedBack checks a table added back to the pipeline after
// outOfPipeline: an incremental snapshot runs while a write load streams
// (its changes interleave with the `r` records), and the topic ends as
// the table, the keys deleted while it was out tombstoned.
func checkAddedBack(t *testing.T, e *ittest.Env, r *ittest.Running, topic string, rows int64) {
	t.Helper()
	before := len(readAll(t, e.Kafka, topic, -1))
	ctx, stop := context.WithCancel(context.Background())
	var next atomic.Int64
	next.Store(1_000_000)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); load(ctx, t, e, "orders", rows, &next) }()
	defer func() { stop(); wg.Wait() }()
	waitIncremental(t, r, "public.orders", 60*time.Second)
	if r.P.TablePhases()["public.orders"].LeftMs != 0 {
		t.Fatal("left_ms still set after the table came back")
	}
	stop()
	wg.Wait()
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		recs := readAll(t, e.Kafka, topic, -1)
		evs = ittest.Decode(t, recs)
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))

	// After the table came back: `r` records of the incremental snapshot,
	// and streamed changes between its first and last.
	first, last, nR := -1, -1, 0
	for i, ev := range evs[before:] {
		if ev.Op == "r" {
			if ev.Source.Snapshot != "incremental" {
				t.Fatalf("an `r` record of the table added back says source.snapshot %q, want incremental", ev.Source.Snapshot)
			}
			if first < 0 {
				first = before + i
			}
			last = before + i
			nR++
		}
	}
	if nR < int(rows)/2 {
		t.Fatalf("%d `r` records after the table came back, want its rows re-read", nR)
	}
	streamed := 0
	for _, ev := range evs[first:last] {
		if !ev.Tombstone && ev.Op != "r" {
			streamed++
		}
	}
	if streamed == 0 {
		t.Fatal("no change streamed while the table added back was re-read: its stream was held")
	}
	// The keys deleted while the table was out: a tombstone each after it
	// came back (the load may have deleted or re-keyed some of them again:
	// only their last record counts).
	lastOf := map[int64]ittest.Event{}
	for _, ev := range evs[before:] {
		lastOf[int64(ev.Key["id"].(float64))] = ev
	}
	for id := int64(101); id <= 200; id++ {
		if ev, ok := lastOf[id]; !ok || !ev.Tombstone {
			t.Fatalf("key %d, deleted while the table was out of the pipeline, has no tombstone after it came back (last record %+v)", id, ev)
		}
	}
	t.Logf("%d `r` records, %d changes streamed during the incremental snapshot of the table added back", nR, streamed)
}
