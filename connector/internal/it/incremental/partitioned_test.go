package incremental

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestIncrementalSnapshotOfAPartitionedTable: a partitioned table streamed
// through its root (postgres.publish_via_partition_root, the default) is
// snapshotted incrementally: each chunk reads its page range of every
// leaf partition (three leaves of different sizes: the largest sets the
// plan), under a write load of inserts, updates, deletes, key changes and
// rows moving between partitions (a delete and a create on the root's
// topic). With no initial snapshot the topic starts empty, so the rebuilt
// topic equals the table only if every leaf's unchanged rows were read,
// and no `r` record overwrote a newer change. Before, such a table was
// refused ("its rows live in its partitions, whose pages are not chunked
// yet").
func TestIncrementalSnapshotOfAPartitionedTable(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 2)
	e.Exec(`CREATE TABLE porders (id bigint, region int NOT NULL DEFAULT 0, v bigint NOT NULL, pad text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE porders_0 PARTITION OF porders FOR VALUES IN (0)`)
	e.Exec(`CREATE TABLE porders_1 PARTITION OF porders FOR VALUES IN (1)`)
	e.Exec(`CREATE TABLE porders_2 PARTITION OF porders FOR VALUES IN (2)`)
	const rows = 3000
	// 60 %, 30 % and 10 % of the rows: leaves of different sizes.
	e.Exec(`INSERT INTO porders SELECT g, CASE WHEN g % 10 < 6 THEN 0 WHEN g % 10 < 9 THEN 1 ELSE 2 END, 0, repeat('p', 60)
		FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`ANALYZE porders`)
	cfg := e.Config("parted", "public.porders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 2
	r := start(t, cfg)
	topic := "parted.public.porders"

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var next atomic.Int64
	next.Store(1_000_000)
	var wg sync.WaitGroup
	var moved atomic.Int64
	wg.Add(2)
	// Disjoint ids: an update of a row a concurrent move took to another
	// partition fails ("tuple to be locked was already moved", 40001).
	go func() { defer wg.Done(); load(ctx, t, e, "porders", rows/2, &next) }()
	go func() { defer wg.Done(); moved.Store(int64(move(ctx, t, e, rows/2+1, rows))) }()
	defer wg.Wait()
	time.Sleep(200 * time.Millisecond)

	ittest.RequestIncremental(t, e, cfg, "public.porders")
	waitIncremental(t, r, "public.porders", 60*time.Second)
	time.Sleep(200 * time.Millisecond)
	stop()
	wg.Wait()
	e.Exec(`INSERT INTO porders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	// Keyed as Kafka keys them, (id, region): a row that moved has a
	// delete and a tombstone of its old key, and a create of its new one.
	got := map[[2]int64]int64{}
	for _, ev := range evs {
		k := [2]int64{int64(ev.Key["id"].(float64)), int64(ev.Key["region"].(float64))}
		if ev.Tombstone || ev.Op == "d" {
			delete(got, k)
		} else {
			got[k] = int64(ev.After["v"].(float64))
		}
	}
	want := map[[2]int64]int64{}
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rs, _ := conn.Query(context.Background(), `SELECT id, region, v FROM porders`)
	var id, region, v int64
	if _, err := pgx.ForEachRow(rs, []any{&id, &region, &v}, func() error {
		want[[2]int64{id, region}] = v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("the rebuilt topic has %d rows, the table %d", len(got), len(want))
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("row %v: topic %v (present %v), table %d", k, g, ok, v)
		}
	}
	reads := map[float64]int{} // `r` records by region
	for _, ev := range evs {
		if ev.Op == "r" {
			reads[ev.Key["region"].(float64)]++
		}
	}
	t.Logf("%d rows moved between partitions during the snapshot; `r` records by region: %v", moved.Load(), reads)
	if moved.Load() == 0 || reads[0] == 0 || reads[1] == 0 || reads[2] == 0 {
		t.Fatalf("%d moves, `r` records by region %v: want moves and rows read from every leaf (the scenario did not happen)", moved.Load(), reads)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// move moves random rows of porders with ids in [minID, maxID] to
// another partition until ctx ends, and returns how many it moved.
func move(ctx context.Context, t *testing.T, e *ittest.Env, minID, maxID int64) int {
	conn, err := pgx.Connect(ctx, e.PG.URL("postgres"))
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	for ctx.Err() == nil {
		tag, err := conn.Exec(ctx, `UPDATE porders SET region = (region + 1) % 3, v = v + 1 WHERE id = $1`, minID+rng.Int64N(maxID-minID+1))
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			t.Errorf("move: %v", err)
			return n
		}
		n += int(tag.RowsAffected())
		time.Sleep(time.Millisecond)
	}
	return n
}

// TestIncrementalSnapshotOfAPartitionedTablePlansAgainOnAttach: a
// partition attached while a partitioned table's incremental snapshot
// runs brings rows without change records (as a rewrite moves them); the
// chunks already read did not read its pages. The plan's identity of the
// files (every leaf's oid and relfilenode) changes, and the snapshot
// plans again from page 0, so the attached rows reach the topic.
func TestIncrementalSnapshotOfAPartitionedTablePlansAgainOnAttach(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 100*time.Millisecond)
	e.Exec(`CREATE TABLE aorders (id bigint, region int NOT NULL, v bigint NOT NULL, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE aorders_0 PARTITION OF aorders FOR VALUES IN (0)`)
	e.Exec(`INSERT INTO aorders SELECT g, 0, g FROM generate_series(1, 2000) g`)
	e.Exec(`CREATE TABLE aorders_1 (LIKE aorders INCLUDING ALL)`)
	e.Exec(`INSERT INTO aorders_1 SELECT g, 1, g FROM generate_series(5001, 7000) g`)
	cfg := e.Config("attach", "public.aorders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	r := start(t, cfg)

	ittest.RequestIncremental(t, e, cfg, "public.aorders")
	waitPlanned(t, r, "public.aorders")
	time.Sleep(400 * time.Millisecond) // a few chunks read before the ATTACH
	e.Exec(`ALTER TABLE aorders ATTACH PARTITION aorders_1 FOR VALUES IN (1)`)
	waitIncremental(t, r, "public.aorders", 60*time.Second)
	e.Exec(`INSERT INTO aorders VALUES (0, 0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, "attach.public.aorders", -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	read := map[int64]bool{}
	for _, ev := range evs {
		if ev.Op == "r" {
			read[int64(ev.Key["id"].(float64))] = true
		}
	}
	var missing []int64
	for id := int64(1); id <= 7000; id++ {
		if (id <= 2000 || id > 5000) && !read[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d rows without an `r` record (the first %v): the attached partition's rows on pages read before the ATTACH", len(missing), missing[:min(8, len(missing))])
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
