package incremental

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/connector/internal/snapshot"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// TestIncrementalSnapshotKeepsWithinTheInflightBound: an incremental
// snapshot under a steady write load, with kafka.max_inflight_bytes of 1 MiB and
// a broker that answers every produce request 10 ms late, so that records
// in flight fill the bound. The windows' rows count in the same in-flight
// total as the records (delivery.Tracker.Reserve): it never passes the
// bound by more than the stream's one message over it, the windows' rows
// are in it while held (its reserved part follows the bytes the windows
// hold), and the snapshot still ends with the topic equal to the table.
// Before, the windows held up to half the bound beside it: 1.5 times.
//
// Analyzed, chunks are sized from the table's statistics; not, the
// readers' estimates are short (no rows per page known) and they reserve
// more as they read (delivery.Tracker.ReserveMore).
func TestIncrementalSnapshotKeepsWithinTheInflightBound(t *testing.T) {
	t.Run("analyzed", func(t *testing.T) { testWithinTheInflightBound(t, "incmema", true) })
	t.Run("not analyzed", func(t *testing.T) { testWithinTheInflightBound(t, "incmemn", false) })
}

func testWithinTheInflightBound(t *testing.T, name string, analyze bool) {
	e := ittest.NewSerialEnv(t) // reads snapshot.WindowBytesHeld, the process's
	broker := kafkatest.New(t)
	e.Kafka = broker.Addr()
	c := broker.Cluster()
	var slow atomic.Bool // off once the snapshot ended, for the topic's read
	slow.Store(true)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if slow.Load() {
			time.Sleep(10 * time.Millisecond) // the whole broker: SleepControl races in kfake
		}
		return nil, nil, false
	})
	const rows = 6000
	e.Exec(`CREATE TABLE orders (id bigint PRIMARY KEY, v bigint NOT NULL, pad text)`)
	e.Exec(`INSERT INTO orders SELECT g, 0, repeat('p', 300) FROM generate_series(1, $1::int) g`, rows)
	if analyze {
		e.Exec(`ANALYZE orders`)
	}
	e.Exec(`CREATE TABLE debezium_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	cfg := e.Config(name, "public.orders")
	cfg.Signals.Table = "public.debezium_signal"
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Snapshot.ConnectionsPerTable = 2
	const bound = 1 << 20
	// The stream reads a message while the total is within the bound:
	// its records (a change, under 2 KiB here) may pass it.
	const oneMessage = 8 << 10
	cfg.Kafka.MaxInflightBytes = bound
	r := start(t, cfg)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var next atomic.Int64
	next.Store(1_000_000)
	wg.Add(2)
	go func() { // a steady load the slow broker keeps up with
		defer wg.Done()
		for i := int64(1); ctx.Err() == nil; i++ {
			err := e.PG.Exec(ctx, "postgres", `UPDATE orders SET v = v + 1 WHERE id = $1`, 1+i*7919%rows)
			if err == nil && i%5 == 0 {
				err = e.PG.Exec(ctx, "postgres", `INSERT INTO orders (id, v) VALUES ($1, 1)`, next.Add(1))
			}
			if err != nil && ctx.Err() == nil {
				t.Errorf("load: %v", err)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var over string
	var peak, peakReserved, peakHeld, reservedOverHeld int64
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			held := snapshot.WindowBytesHeld()
			in, res := r.P.Inflight(), r.P.Reserved()
			peak, peakReserved, peakHeld = max(peak, in), max(peakReserved, res), max(peakHeld, held)
			// What is reserved is what windows hold (less the rows the
			// main worker took meanwhile); read after held, so that a
			// window's give back between the two reads only lowers it.
			reservedOverHeld = max(reservedOverHeld, res-held)
			if in > bound+oneMessage && over == "" {
				over = fmt.Sprintf("%d in flight, %d of it reserved, windows holding %d", in, res, held)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	defer func() { stop(); wg.Wait() }()

	e.Exec(`INSERT INTO debezium_signal VALUES ('m1', 'execute-snapshot', '{"data-collections":["public.orders"]}')`)
	waitIncremental(t, r, "public.orders", 90*time.Second)
	stop()
	wg.Wait()
	slow.Store(false)
	t.Logf("in flight at most %d bytes (bound %d), of it reserved for windows at most %d; windows held at most %d", peak, bound, peakReserved, peakHeld)

	if peak > bound+oneMessage {
		t.Fatalf("%d bytes in flight, rows held by windows with them: over the bound of %d (first: %s)", peak, bound, over)
	}
	if peakReserved == 0 || peakHeld == 0 {
		t.Fatalf("windows held %d bytes, %d of them reserved in the in-flight total: the windows' rows were not counted", peakHeld, peakReserved)
	}
	if reservedOverHeld > 0 {
		t.Fatalf("%d bytes reserved beyond what the windows held", reservedOverHeld)
	}
	if peak < bound/2 {
		t.Fatalf("at most %d bytes in flight: the slow broker did not fill the bound, the test shows nothing", peak)
	}

	e.Exec(`INSERT INTO orders (id, v) VALUES (0, -7)`)
	var evs []ittest.Event
	waitLast(t, e, name+".public.orders", &evs)
	sameRows(t, rebuild(t, evs), tableRows(t, e, "orders"))
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// waitLast reads topic until its last record is the change of id 0 to
// v -7 (every change before it is in the topic then), into evs.
func waitLast(t *testing.T, e *ittest.Env, topic string, evs *[]ittest.Event) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs := readAll(t, e.Kafka, topic, -1)
		if len(recs) > 0 {
			last := ittest.Decode(t, recs[len(recs)-1:])
			if last[0].After != nil && last[0].After["v"].(float64) == -7 {
				*evs = ittest.Decode(t, recs)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the last change did not reach the topic")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
