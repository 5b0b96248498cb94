package pipeline

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// failoverBinDir is PostgreSQL 17's server binaries (failover slots are
// 17's), or $PGTEST_VERSION's when that is newer.
func failoverBinDir(t *testing.T) string {
	t.Helper()
	if v, _ := strconv.Atoi(os.Getenv("PGTEST_VERSION")); v >= 17 {
		dir, err := pgtest.BinDir()
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir, err := pgtest.MajorBinDir(t.Context(), 17)
	if err != nil {
		t.Fatalf("PostgreSQL 17 server binaries: %v", err)
	}
	return dir
}

// TestFailoverSlotContinuesOnThePromotedStandby: with
// postgres.slot_failover the slot is a failover slot, which a physical
// standby with sync_replication_slots keeps in step (the primary's
// synchronized_standby_slots holds logical decoding back until the standby
// has the WAL). The primary dies under a write load, the standby is
// promoted, and mooncdc, given both hosts and target_session_attrs=
// read-write, continues on the promoted standby's copy of the slot: every
// row the new primary holds reaches Kafka.
func TestFailoverSlotContinuesOnThePromotedStandby(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	bin := failoverBinDir(t)
	primary := pgtest.New(t, func(o *pgtest.Options) { o.BinDir = bin })
	standby := pgtest.NewStandby(t, primary, "standby1", map[string]string{"sync_replication_slots": "on"})
	e := ittest.EnvOn(t, primary, kafkatest.New(t).Addr())
	e.Exec(`ALTER SYSTEM SET synchronized_standby_slots = 'standby1'`)
	e.Exec(`SELECT pg_reload_conf()`)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO orders SELECT g, 'before' FROM generate_series(1, 100) g`)

	cfg := e.Config("fo", "public.orders")
	cfg.Postgres.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.Port(), standby.Port())
	cfg.Postgres.SlotFailover = true
	r := ittest.Start(t, cfg)
	var failover, synced bool
	e.Scan(`SELECT failover FROM pg_replication_slots WHERE slot_name = 'mooncdc_fo'`, &failover)
	if !failover {
		t.Fatal("the slot is not a failover slot")
	}

	// A write load on the primary until it dies.
	var next atomic.Int64
	next.Store(101)
	stopLoad := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		for {
			select {
			case <-stopLoad:
				return
			default:
			}
			id := next.Load()
			if err := primary.Exec(context.Background(), "", `INSERT INTO orders VALUES ($1, 'load')`, id); err != nil {
				return // the primary is gone
			}
			next.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	ittest.Consume(t, e.Kafka, 300, "fo.public.orders") // streaming under the load

	// The standby has the slot, synchronized.
	sb := ittest.EnvOn(t, standby, e.Kafka)
	eventually.True(t, 60*time.Second, 200*time.Millisecond, "the standby has no synchronized copy of the slot after 60s", func() bool {
		sb.Scan(`SELECT coalesce((SELECT synced AND NOT temporary FROM pg_replication_slots WHERE slot_name = 'mooncdc_fo'), false)`, &synced)
		return synced
	})

	// The primary dies mid-load; the standby is promoted.
	if err := primary.Stop("immediate"); err != nil {
		t.Fatal(err)
	}
	close(stopLoad)
	<-loadDone
	sb.Exec(`SELECT pg_promote()`)
	for i := 0; i < 20; i++ {
		sb.Exec(fmt.Sprintf(`INSERT INTO orders VALUES (%d, 'after')`, 1_000_000+i))
	}

	// Every row the new primary holds arrives (changes the standby never
	// received died with the primary, for mooncdc as for every reader).
	var want int
	sb.Scan(`SELECT count(*)::int FROM orders`, &want)
	ids := map[float64]bool{}
	eventually.Succeeds(t, 90*time.Second, 500*time.Millisecond, func() error {
		for _, ev := range ittest.Consume(t, e.Kafka, -1, "fo.public.orders") {
			if ev.After != nil {
				ids[ev.After["id"].(float64)] = true
			}
		}
		missing := 0
		rows, err := func() ([]float64, error) {
			conn, err := standby.Connect(context.Background(), "postgres")
			if err != nil {
				return nil, err
			}
			defer conn.Close(context.Background())
			var out []float64
			rs, err := conn.Query(context.Background(), `SELECT id::float8 FROM orders`)
			if err != nil {
				return nil, err
			}
			defer rs.Close()
			for rs.Next() {
				var id float64
				if err := rs.Scan(&id); err != nil {
					return nil, err
				}
				out = append(out, id)
			}
			return out, rs.Err()
		}()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range rows {
			if !ids[id] {
				missing++
			}
		}
		if missing == 0 {
			t.Logf("%d rows on the promoted standby, all delivered (%d written to the old primary before it died)", want, next.Load()-101)
			return nil
		}
		return fmt.Errorf("%d of the promoted standby's %d rows never reached Kafka", missing, want)
	})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSlotFailoverOnAnExistingSlotAndOnOlderServers: an existing slot is
// made a failover slot (ALTER_REPLICATION_SLOT, PostgreSQL 17) before
// streaming; a server older than 17 refuses the key with the cause.
func TestSlotFailoverOnAnExistingSlotAndOnOlderServers(t *testing.T) {
	bin := failoverBinDir(t)
	e := ittest.EnvOn(t, pgtest.New(t, func(o *pgtest.Options) { o.BinDir = bin }), kafkatest.New(t).Addr())
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY)`)
	e.Exec(`SELECT pg_create_logical_replication_slot('mooncdc_fx', 'pgoutput')`)
	cfg := e.Config("fx", "public.orders")
	cfg.Postgres.SlotFailover = true
	r := ittest.Start(t, cfg)
	var failover bool
	e.Scan(`SELECT failover FROM pg_replication_slots WHERE slot_name = 'mooncdc_fx'`, &failover)
	if !failover {
		t.Error("the existing slot was not made a failover slot")
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	old := ittest.NewEnv(t)
	if old.ServerVersionNum() >= 170000 {
		return // PGTEST_VERSION 17 or 18: no older server here
	}
	cfg = old.Config("fy", "public.orders")
	cfg.Postgres.SlotFailover = true
	if err := ittest.RunToEnd(t, cfg); err == nil || !strings.Contains(err.Error(), "failover slots need PostgreSQL 17 or later") {
		t.Fatalf("slot_failover on PostgreSQL %d: %v, want the version named", old.ServerVersionNum()/10000, err)
	}
}

// TestCaptureFromAPhysicalStandby: PostgreSQL 16+ decodes logically on a
// hot standby. With the publication created on the primary (a standby is
// read-only), mooncdc copies and streams from the standby; the standby
// needs the primary to log running transactions for the slot's first
// consistent point (pg_log_standby_snapshot, which the primary's
// checkpoints and bgwriter also do).
func TestCaptureFromAPhysicalStandby(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	bin := failoverBinDir(t)
	primary := pgtest.New(t, func(o *pgtest.Options) { o.BinDir = bin })
	standby := pgtest.NewStandby(t, primary, "standby1", nil)
	e := ittest.EnvOn(t, primary, kafkatest.New(t).Addr())
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO orders SELECT g, 'before' FROM generate_series(1, 50) g`)
	e.Exec(`CREATE PUBLICATION mooncdc_sb FOR TABLE orders`)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				_ = primary.Exec(context.Background(), "", `SELECT pg_log_standby_snapshot()`)
			}
		}
	}()
	sb := ittest.EnvOn(t, standby, e.Kafka)
	// The standby has the table once it has replayed the publication, made
	// last; under load its replay is not instantaneous.
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the standby did not replay the publication within 30s", func() bool {
		var n int
		sb.Scan(`SELECT count(*) FROM pg_publication WHERE pubname = 'mooncdc_sb'`, &n)
		return n == 1
	})
	cfg := sb.Config("sb", "public.orders")
	cfg.Heartbeat.Interval = 100 * time.Millisecond
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO orders SELECT g, 'after' FROM generate_series(51, 60) g`)
	e.Exec(`UPDATE orders SET v = 'changed' WHERE id = 1`)
	evs := ittest.Consume(t, e.Kafka, 61, "sb.public.orders")
	reads, creates, updates := 0, 0, 0
	for _, ev := range evs {
		switch ev.Op {
		case "r":
			reads++
		case "c":
			creates++
		case "u":
			updates++
		}
	}
	if reads != 50 || creates != 10 || updates != 1 {
		t.Errorf("%d reads, %d creates, %d updates; want 50, 10, 1", reads, creates, updates)
	}
	// Heartbeats cannot be written on the standby: after the first
	// refusal mooncdc asks pg_is_in_recovery() instead of failing again
	// at each interval (each failure is an ERROR in the server's log and
	// a rolled-back transaction).
	rollbacks := func() (n int64) {
		sb.Scan(`SELECT xact_rollback FROM pg_stat_database WHERE datname = 'postgres'`, &n)
		return n
	}
	time.Sleep(500 * time.Millisecond) // the first refusal
	before := rollbacks()
	time.Sleep(2 * time.Second) // 20 intervals
	if n := rollbacks() - before; n > 1 {
		t.Errorf("%d heartbeat attempts failed on the standby in 20 intervals, want at most 1", n)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
