package incremental

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// TestIncrementalSnapshotShapeChangeTakesNoChunkBackExactlyOnce: in
// exactly-once mode a window's progress is committed in the main worker's
// Kafka transaction with its rows; another change of the table's state
// while its snapshot runs (here a shape change: ALTER TABLE … ADD COLUMN,
// then a row written, whose relation the main worker stores) is written by
// the ordered writer of table states. That record must carry every chunk
// committed before it, and land before any newer progress: read back from
// the offsets topic (read_committed), the table's progress never takes a
// chunk back. A crash right after the shape change (the main worker held
// before its next transaction, so that nothing commits after the record)
// then a resume: a read_committed consumer sees each row's `r` record
// exactly once. Before, the record carried the progress noted in memory (up
// to a second behind the commits) and could land after a newer commit: the
// resume read those chunks again.
func TestIncrementalSnapshotShapeChangeTakesNoChunkBackExactlyOnce(t *testing.T) {
	e := ittest.NewEnv(t)
	smallChunks(t, 1)
	slowChunks(t, 25*time.Millisecond)
	const rows = 20000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL)`)
	e.Exec(`INSERT INTO orders SELECT g, g FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE TABLE ticks (id int PRIMARY KEY, n bigint)`)
	e.Exec(`INSERT INTO ticks VALUES (1, 0)`)
	cfg := e.Config("shapeeos", "public.orders", "public.ticks")
	cfg.Kafka.Delivery = config.DeliveryExactlyOnce
	cfg.Snapshot.ConnectionsPerTable = 1
	cfg.Snapshot.Mode = config.SnapshotNever
	topic := "shapeeos.public.orders"
	r := start(t, cfg)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		for ctx.Err() == nil {
			_ = e.PG.Exec(ctx, "postgres", `UPDATE ticks SET n = n + 1 WHERE id = 1`)
			time.Sleep(30 * time.Millisecond)
		}
	}()
	e.Exec(`INSERT INTO orders VALUES (-1, -1)`) // the topic exists
	readAll(t, e.Kafka, topic, 1)
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	eventually.True(t, 60*time.Second, 20*time.Millisecond, "no chunk of the incremental snapshot was committed", func() bool {
		raw := ittest.LoadOffsets(t, e, cfg).Tables["public.orders"].Incremental
		return raw != "" && donePages(parseProgress(t, string(raw))) > 5
	})
	shape := r.P.TablePhases()["public.orders"].Shape
	var crashed atomic.Bool
	r.P.Hooks().Set(func(point, _ string) {
		if point != connector.HookMainBegin || r.P.TablePhases()["public.orders"].Shape == shape || !crashed.CompareAndSwap(false, true) {
			return
		}
		// The shape is stored (the ordered writer's record lands
		// meanwhile); the main worker, held here, commits nothing after it.
		time.Sleep(200 * time.Millisecond)
		r.P.Abort()
		time.Sleep(300 * time.Millisecond)
	})
	e.Exec(`ALTER TABLE orders ADD COLUMN w int NOT NULL DEFAULT 5`)
	e.Exec(`INSERT INTO orders (id, v) VALUES ($1, 1)`, rows+1) // its relation: the new shape
	select {
	case err := <-r.Done:
		r.Done <- err
	case <-time.After(60 * time.Second):
		t.Fatal("no crash after the shape change")
	}
	fenceMain(t, e, cfg)

	// Every record of the table's state, in the order a restart reads them.
	var most, last uint32
	var back []string
	for i, rec := range readAll(t, e.Kafka, cfg.Kafka.OffsetsTopic, -1) {
		var st offsets.State
		if err := offsets.Decode(cfg.Name, rec.Key, rec.Value, &st); err != nil {
			t.Fatal(err)
		}
		ts, ok := st.Tables["public.orders"]
		if !ok || ts.Incremental == "" {
			continue
		}
		last = donePages(parseProgress(t, string(ts.Incremental)))
		if last < most {
			back = append(back, fmt.Sprintf("record %d (offset %d, shape %q): %d pages done after %d", i, rec.Offset, ts.Shape, last, most))
		}
		most = max(most, last)
	}
	t.Logf("stored at the crash: %d pages done, %d the most committed", last, most)
	if len(back) > 0 {
		t.Errorf("the table's progress took chunks back: %v", back)
	}

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
	onceEach(t, evs, rows)
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	if err := r2.Stop(t); err != nil {
		t.Fatal(err)
	}
}
