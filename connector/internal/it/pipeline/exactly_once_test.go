package pipeline

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

func eosConfig(e *ittest.Env, name string, tables ...string) config.Config {
	cfg := e.Config(name, tables...)
	cfg.Kafka.Delivery = config.DeliveryExactlyOnce
	return cfg
}

// countByID counts the create records of each id in a table's events.
func countByID(evs []ittest.Event) map[float64]int {
	n := map[float64]int{}
	for _, ev := range evs {
		if ev.Op == "c" && ev.After != nil {
			n[ev.After["id"].(float64)]++
		}
	}
	return n
}

// TestExactlyOnceCrashRepeatsNothing: in exactly-once mode a crash (no
// flush, no commit, no confirmation) and a restart leave every change in
// Kafka exactly once for a read_committed consumer, where at-least-once
// would repeat what was acknowledged but not confirmed.
func TestExactlyOnceCrashRepeatsNothing(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t SELECT i, 'snap' FROM generate_series(1, 500) i`)
	cfg := eosConfig(e, "eos", "public.t")
	r := ittest.Start(t, cfg)
	const batches, per = 40, 50
	for b := 0; b < batches; b++ {
		e.Exec(`INSERT INTO t SELECT i, 'x' FROM generate_series($1::int, $2::int) i`, 1000+b*per, 1000+b*per+per-1)
		if b == batches/2 {
			r.Crash(t)
			r = ittest.StartStreaming(t, cfg)
		}
	}
	want := batches * per
	eventually.Succeeds(t, 60*time.Second, 200*time.Millisecond, func() error {
		evs := ittest.Consume(t, e.Kafka, -1, "eos.public.t")
		n := countByID(evs)
		total, dup := 0, 0
		for _, c := range n {
			total++
			if c > 1 {
				dup++
			}
		}
		if dup > 0 {
			t.Fatalf("%d ids written more than once in exactly-once mode", dup)
		}
		if total != want {
			return fmt.Errorf("%d of %d changes after the crash and restart", total, want)
		}
		return nil
	})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	// A clean stop committed everything: a restart repeats nothing either.
	r = ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO t VALUES (99999, 'last')`)
	var evs []ittest.Event
	eventually.Within(30*time.Second, 100*time.Millisecond, func() bool {
		evs = ittest.Consume(t, e.Kafka, -1, "eos.public.t")
		return countByID(evs)[99999] != 0
	})
	for id, c := range countByID(evs) {
		if c != 1 {
			t.Fatalf("id %v written %d times", id, c)
		}
	}
	if len(countByID(evs)) != want+1 {
		t.Fatalf("%d ids, want %d", len(countByID(evs)), want+1)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSecondInstanceFencesTheFirst: a second instance with the same name
// takes over the transactional ids: the first stops with a FencedError
// (exit code 4) and writes nothing more, the second resumes where the
// first's last commit ended; every change is in Kafka once.
func TestSecondInstanceFencesTheFirst(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := eosConfig(e, "fence", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	first := ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO t SELECT generate_series(1, 100)`)
	ittest.Consume(t, e.Kafka, 100, "fence.public.t")

	second, err := connector.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2 := ittest.RunPipeline(t, second)
	// The first learns it is fenced at its next commit, a heartbeat
	// transaction when nothing changes.
	select {
	case err := <-first.Done:
		first.Done <- err
		if connector.ExitCode(err) != connector.ExitFenced || !strings.Contains(err.Error(), "fence-main") {
			t.Fatalf("first instance ended with exit %d: %v", connector.ExitCode(err), err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the first instance was not fenced")
	}
	r2.WaitReady(t)
	e.Exec(`INSERT INTO t SELECT generate_series(101, 300)`)
	var n map[float64]int
	eventually.Within(60*time.Second, 200*time.Millisecond, func() bool {
		n = countByID(ittest.Consume(t, e.Kafka, -1, "fence.public.t"))
		return len(n) == 300
	})
	if len(n) != 300 {
		t.Fatalf("%d of 300 ids", len(n))
	}
	for id, c := range n {
		if c != 1 {
			t.Fatalf("id %v written %d times", id, c)
		}
	}
}

// TestTransactionOverTheTimeoutStopsNamingTheSetting: a Kafka transaction
// the broker times out (here: the main worker held between two Postgres
// transactions longer than kafka.transaction_timeout) is never committed
// in part; the pipeline stops with a message naming the setting, and
// nothing of it is visible.
func TestTransactionOverTheTimeoutStopsNamingTheSetting(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := eosConfig(e, "slow", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Kafka.TransactionTimeout = 2 * time.Second
	cfg.Kafka.TransactionMaxInterval = time.Second
	r := ittest.StartStreaming(t, cfg)
	var once sync.Once
	begins := 0
	r.P.Hooks().Set(func(point, _ string) {
		if point != connector.HookMainBegin {
			return
		}
		begins++
		if begins == 1 {
			once.Do(func() { time.Sleep(3 * time.Second) })
		}
	})
	// A non-transactional message opens the Kafka transaction; the hook
	// holds the transaction right after it past the timeout.
	e.Exec(`DO $$ BEGIN PERFORM pg_logical_emit_message(false, 'x', 'y'); END $$`)
	e.Exec(`INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)`)
	select {
	case err := <-r.Done:
		r.Done <- err
		if !strings.Contains(fmt.Sprint(err), "kafka.transaction_timeout") {
			t.Fatalf("pipeline ended with %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the timed-out transaction did not stop the pipeline")
	}
	if evs := ittest.Consume(t, e.Kafka, -1, "slow.public.t"); len(evs) != 0 {
		t.Fatalf("%d records of the timed-out transaction are visible", len(evs))
	}
}

// TestExactlyOnceCopyCrashBeforeHandoverLeavesNothing: a crash after a
// copy's rows are all acknowledged but before its handover leaves none of
// them visible (they were one uncommitted Kafka transaction); the copy
// done again after the restart makes every row appear once.
func TestExactlyOnceCopyCrashBeforeHandoverLeavesNothing(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO t SELECT generate_series(1, 2000)`)
	cfg := eosConfig(e, "copycrash", "public.t")
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	crashed := make(chan struct{})
	p.Hooks().Set(func(point, _ string) {
		if point == connector.HookCopied {
			p.Abort() // the handover that follows fails: the context is done
			close(crashed)
		}
	})
	r := ittest.RunPipeline(t, p)
	select {
	case <-crashed:
	case <-time.After(60 * time.Second):
		t.Fatal("the copy did not finish")
	}
	<-r.Done
	r.Done <- connector.ErrAborted
	if evs := ittest.Consume(t, e.Kafka, -1, "copycrash.public.t"); len(evs) != 0 {
		t.Fatalf("%d records of the unfinished copy are visible", len(evs))
	}
	r = ittest.Start(t, cfg)
	evs := ittest.Consume(t, e.Kafka, 2000, "copycrash.public.t")
	seen := map[float64]int{}
	for _, ev := range evs {
		seen[ev.After["id"].(float64)]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %v copied %d times", id, n)
		}
	}
	if len(seen) != 2000 {
		t.Fatalf("%d rows", len(seen))
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
