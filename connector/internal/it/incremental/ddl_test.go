package incremental

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestIncrementalSnapshotReadsOnWhenAColumnIsDropped: an ALTER TABLE …
// DROP COLUMN issued while a chunk's transaction has its snapshot and has
// not yet read (hook HookChunkSnapshot) waits for that chunk, which reads
// its rows with the column, as its snapshot has them; the chunks after it
// see the column gone, are described anew and read without it. Before the
// chunk took the table's share lock ahead of its snapshot, the DROP
// committed at once and the chunk's COPY, parsed against the catalog as it
// was when it ran, failed ("column … does not exist"): the snapshot
// failed, its later chunks never read.
func TestIncrementalSnapshotReadsOnWhenAColumnIsDropped(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	const rows = 1500
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL, gone text)`)
	e.Exec(`INSERT INTO orders SELECT g, g, 'x' || g FROM generate_series(1, $1::int) g`, rows)
	cfg := e.Config("dropcol", "public.orders")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 1
	topic := "dropcol.public.orders"
	r := start(t, cfg)

	var chunks atomic.Int32
	var dropped sync.WaitGroup
	var dropErr error
	dropped.Add(1)
	r.P.Hooks().Set(func(point, table string) {
		if point != connector.HookChunkSnapshot || table != "public.orders" || chunks.Add(1) != 3 {
			return
		}
		// The third chunk has its snapshot: drop the column now, and go on
		// once the DROP waits for the chunk (or has committed: the bug).
		done := make(chan struct{})
		go func() {
			defer dropped.Done()
			defer close(done)
			conn, err := e.PG.Connect(context.Background(), "postgres")
			if err != nil {
				dropErr = err
				return
			}
			defer conn.Close(context.Background())
			_, dropErr = conn.Exec(context.Background(), `ALTER TABLE orders DROP COLUMN gone`)
		}()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				return
			default:
			}
			var waiting int
			e.Scan(`SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'ALTER TABLE orders DROP COLUMN%'`, &waiting)
			if waiting > 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	waitIncremental(t, r, "public.orders", 60*time.Second)
	dropped.Wait()
	if dropErr != nil {
		t.Fatalf("ALTER TABLE orders DROP COLUMN gone: %v", dropErr)
	}
	if n := chunks.Load(); n < 4 {
		t.Fatalf("%d chunk snapshots, want the scenario's chunks after the DROP too", n)
	}
	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		evs = ittest.Decode(t, readAll(t, e.Kafka, topic, -1))
		last := evs[len(evs)-1]
		return last.After != nil && last.After["v"].(float64) == -7
	})
	// Every row's `r` record: with the column while the snapshots had it,
	// without once they did not.
	read := map[int64]bool{}
	var with, without int
	for _, ev := range evs {
		if ev.Op != "r" {
			continue
		}
		read[int64(ev.Key["id"].(float64))] = true
		if g, ok := ev.After["gone"]; ok {
			if g != "x"+itoa(uint32(ev.Key["id"].(float64))) {
				t.Fatalf("`r` record of id %v has gone = %v", ev.Key["id"], g)
			}
			with++
		} else {
			without++
		}
	}
	t.Logf("%d `r` records with the column, %d without", with, without)
	if len(read) != rows {
		t.Fatalf("%d of %d rows have an `r` record: the snapshot did not read on past the DROP COLUMN", len(read), rows)
	}
	if with == 0 || without == 0 {
		t.Fatalf("%d `r` records with the column, %d without: want both (the scenario did not happen)", with, without)
	}
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
