package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// newSmallWALEnv is an env whose cluster invalidates a slot that holds
// more than 1 MB of WAL back (max_slot_wal_keep_size).
func newSmallWALEnv(t *testing.T) *ittest.Env {
	t.Helper()
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"max_slot_wal_keep_size": "1MB", "min_wal_size": "32MB", "max_wal_size": "64MB"}
	})
	return ittest.EnvOn(t, pg, kafkatest.New(t).Addr())
}

// wantSlotLost checks that err is the lost-slot unsafe resume: exit 3 and
// a message that says what is gone and names mooncdc reset.
func wantSlotLost(t *testing.T, err error) {
	t.Helper()
	if code := connector.ExitCode(err); code != connector.ExitUnsafeResume {
		t.Fatalf("exit code %d (%v), want %d", code, err, connector.ExitUnsafeResume)
	}
	for _, want := range []string{`replication slot "mooncdc_lost" was invalidated (wal_status lost)`, "max_slot_wal_keep_size",
		"mooncdc reset --config <your config> --drop-slot"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestInvalidatedSlotAtStartIsAnUnsafeResume: a slot that Postgres
// invalidated while mooncdc was stopped ends run with exit 3 and the
// advice, not exit 1 and a bare "cannot read from logical replication
// slot" that a supervisor would restart forever.
func TestInvalidatedSlotAtStartIsAnUnsafeResume(t *testing.T) {
	e := newSmallWALEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE public.filler (n int)`)
	cfg := e.Config("lost", "public.t")
	r := ittest.Start(t, cfg)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	e.Invalidate("mooncdc_lost")

	p, err := connector.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wantSlotLost(t, p.Run(ctx))
}

// TestInvalidatedSlotWhileStreamingIsAnUnsafeResume: Kafka holds every
// record, so nothing is confirmed and the slot keeps its WAL; Postgres
// invalidates it (ending the walsender), and run ends with exit 3 and the
// advice instead of reconnecting forever.
func TestInvalidatedSlotWhileStreamingIsAnUnsafeResume(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"max_slot_wal_keep_size": "1MB", "min_wal_size": "32MB", "max_wal_size": "64MB"}
	})
	broker := kafkatest.New(t)
	e := ittest.EnvOn(t, pg, broker.Addr())
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE public.filler (n int)`)
	cfg := e.Config("lost", "public.t")
	cfg.Heartbeat.Interval = 0
	r := ittest.Start(t, cfg)

	holdProduce(t, broker, "lost.public.t")
	e.Exec(`INSERT INTO t VALUES (1)`) // held by Kafka: the slot is confirmed no further
	time.Sleep(500 * time.Millisecond)
	e.Invalidate("mooncdc_lost")

	var err error
	select {
	case err = <-r.Done:
		r.Done <- err
	case <-time.After(90 * time.Second):
		t.Fatal("run did not stop within 90s of the slot's invalidation")
	}
	wantSlotLost(t, err)
	if errors.Is(err, connector.ErrAborted) {
		t.Fatal("aborted, not stopped")
	}
}

// TestSlotLossResnapshotRepairsTheGap: with on_slot_loss: resnapshot, a
// slot invalidated while mooncdc was stopped (and one invalidated while it
// streams) is replaced: a new slot, every table copied again, the keys
// deleted in the gap tombstoned, a metric and a loud log line. A consumer
// that compacts the topic ends with exactly the table's rows.
func TestSlotLossResnapshotRepairsTheGap(t *testing.T) {
	t.Run("at start", func(t *testing.T) {
		e := newSmallWALEnv(t)
		e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, v text)`)
		e.Exec(`CREATE TABLE public.filler (n int)`)
		e.Exec(`INSERT INTO t SELECT g, 'a' FROM generate_series(1, 10) g`)
		cfg := e.Config("lost", "public.t")
		cfg.OnSlotLoss = config.SlotLossResnapshot
		r := ittest.Start(t, cfg)
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
		e.Invalidate("mooncdc_lost")
		// The gap: changes no slot keeps.
		e.Exec(`DELETE FROM t WHERE id <= 3; UPDATE t SET v = 'b' WHERE id = 4; INSERT INTO t VALUES (11, 'c')`)

		r = ittest.Start(t, cfg)
		if got := ittest.Counter(r.P.Metrics().SlotLossResnapshots); got != 1 {
			t.Errorf("mooncdc_slot_loss_resnapshots_total = %v, want 1", got)
		}
		e.Exec(`INSERT INTO t VALUES (12, 'd')`) // streamed from the new slot
		checkCompacted(t, e, "lost.public.t", map[string]string{"4": "b", "5": "a", "6": "a", "7": "a", "8": "a", "9": "a", "10": "a", "11": "c", "12": "d"})
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("slot dropped while stopped", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, v text)`)
		e.Exec(`INSERT INTO t SELECT g, 'a' FROM generate_series(1, 4) g`)
		cfg := e.Config("lost", "public.t")
		cfg.OnSlotLoss = config.SlotLossResnapshot
		r := ittest.Start(t, cfg)
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
		e.DropSlot("mooncdc_lost")
		e.Exec(`DELETE FROM t WHERE id = 1; UPDATE t SET v = 'b' WHERE id = 2; INSERT INTO t VALUES (5, 'c')`)
		r = ittest.Start(t, cfg)
		if got := ittest.Counter(r.P.Metrics().SlotLossResnapshots); got != 1 {
			t.Errorf("mooncdc_slot_loss_resnapshots_total = %v, want 1", got)
		}
		e.Exec(`INSERT INTO t VALUES (6, 'd')`)
		checkCompacted(t, e, "lost.public.t", map[string]string{"2": "b", "3": "a", "4": "a", "5": "c", "6": "d"})
		if n := e.Count(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'mooncdc_lost'`); n != 1 {
			t.Errorf("%d slots named mooncdc_lost, want the new one", n)
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
	// Where the incremental path cannot repair a streamed table, the repair
	// falls back to the blocking copy, which tombstones the keys the gap
	// deleted:
	//   - format.skipped_operations: [u] leaves an incremental snapshot no
	//     stale-key rule (a moved row's key would have no record);
	//   - a topic holding more keys than an incremental snapshot keeps
	//     (snapshot: staleKeysLimit; 1 byte here) has none tombstoned.
	for _, tc := range []struct {
		name, pipeline string
		set            func(*testing.T, *config.Config)
	}{
		{"skipping updates", "lostskipu", func(_ *testing.T, cfg *config.Config) { cfg.Format.SkippedOperations = []string{"t", "u"} }},
		{"stale keys past the incremental bound", "lostbound", func(t *testing.T, _ *config.Config) {
			ittest.Tune(t, func(tu *connector.Tuning) { tu.StaleKeysLimit = 1 })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, v text)`)
			e.Exec(`INSERT INTO t SELECT g, 'a' FROM generate_series(1, 4) g`)
			cfg := e.Config(tc.pipeline, "public.t")
			cfg.OnSlotLoss = config.SlotLossResnapshot
			tc.set(t, &cfg)
			r := ittest.Start(t, cfg)
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
			e.DropSlot("mooncdc_" + tc.pipeline)
			e.Exec(`DELETE FROM t WHERE id = 1; UPDATE t SET v = 'b' WHERE id = 2; INSERT INTO t VALUES (5, 'c')`)
			r = ittest.Start(t, cfg)
			e.Exec(`INSERT INTO t VALUES (6, 'd')`)
			checkCompacted(t, e, tc.pipeline+".public.t", map[string]string{"2": "b", "3": "a", "4": "a", "5": "c", "6": "d"})
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("while streaming", func(t *testing.T) {
		pg := pgtest.New(t, func(o *pgtest.Options) {
			o.Settings = map[string]string{"max_slot_wal_keep_size": "1MB", "min_wal_size": "32MB", "max_wal_size": "64MB"}
		})
		broker := kafkatest.New(t)
		e := ittest.EnvOn(t, pg, broker.Addr())
		e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, v text)`)
		e.Exec(`CREATE TABLE public.filler (n int)`)
		e.Exec(`INSERT INTO t SELECT g, 'a' FROM generate_series(1, 5) g`)
		cfg := e.Config("lost", "public.t")
		cfg.OnSlotLoss = config.SlotLossResnapshot
		cfg.Heartbeat.Interval = 0
		r := ittest.Start(t, cfg)
		release := holdProduce(t, broker, "lost.public.t")
		e.Exec(`DELETE FROM t WHERE id = 1`) // held by Kafka: the slot is confirmed no further
		time.Sleep(500 * time.Millisecond)
		e.Invalidate("mooncdc_lost")
		e.Exec(`DELETE FROM t WHERE id = 2`)
		release()
		eventually.True(t, 90*time.Second, 100*time.Millisecond, "no repair within 90s of the slot's invalidation", func() bool {
			if ittest.Counter(r.P.Metrics().SlotLossResnapshots) >= 1 {
				return true
			}
			if stopped, err := r.Stopped(); stopped {
				t.Fatalf("run stopped instead of repairing: %v", err)
			}
			return false
		})
		r.WaitHandedOver(t)
		e.Exec(`INSERT INTO t VALUES (6, 'e')`)
		checkCompacted(t, e, "lost.public.t", map[string]string{"3": "a", "4": "a", "5": "a", "6": "e"})
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// checkCompacted reads topic until the last record of each key (a
// tombstone removes it) gives want (id → v), or fails after 90 s.
func checkCompacted(t *testing.T, e *ittest.Env, topic string, want map[string]string) {
	t.Helper()
	eventually.Succeeds(t, 90*time.Second, 200*time.Millisecond, func() error {
		got := map[string]string{}
		for _, ev := range ittest.Consume(t, e.Kafka, -1, topic) {
			id := fmt.Sprint(ev.Key["id"])
			switch {
			case ev.Tombstone || ev.Op == "d":
				delete(got, id)
			default:
				got[id] = fmt.Sprint(ev.After["v"])
			}
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("topic %s compacts to %v, want %v", topic, got, want)
		}
		return nil
	})
}

// TestSlotLossRepairSurvivesACrashAfterTheNewSlot: the re-copy requests of
// a slot-loss repair are in the offsets topic before the new slot exists,
// so a crash right after the slot is created (before any copy stored a
// phase, before the pipeline record moved to the new slot) leaves them in
// place: the next start finds the new slot, its offsets trailing it as
// after any restart, and still repairs the gap. Without the stored
// requests the tables stay ready on the new slot and the gap's insert,
// update and deletes are silently lost. A second crash, during the
// repair's incremental snapshots, finds their mark stored with them.
func TestSlotLossRepairSurvivesACrashAfterTheNewSlot(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE public.u (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO t SELECT g, 'a' FROM generate_series(1, 4) g`)
	e.Exec(`INSERT INTO u SELECT g, 'a' FROM generate_series(1, 3) g`)
	cfg := e.Config("lostcrash", "public.t", "public.u")
	cfg.OnSlotLoss = config.SlotLossResnapshot
	r := ittest.Start(t, cfg)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	e.DropSlot("mooncdc_lostcrash")
	// The gap.
	e.Exec(`DELETE FROM t WHERE id = 1; UPDATE t SET v = 'b' WHERE id = 2; INSERT INTO t VALUES (5, 'c'); DELETE FROM u WHERE id = 3`)

	p, err := connector.New(cfg, nil, ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	p.Hooks().Set(func(point, _ string) {
		if point == connector.HookSlotReplaced {
			p.Abort() // kill -9: nothing after this reaches Kafka or Postgres
			// The hard context ends meanwhile: the pipeline record that
			// would move to the new slot is not written.
			time.Sleep(300 * time.Millisecond)
		}
	})
	crashed := ittest.RunPipeline(t, p)
	select {
	case err := <-crashed.Done:
		crashed.Done <- err
		if !errors.Is(err, connector.ErrAborted) {
			t.Fatalf("run ended with %v, want the abort at the new slot", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not reach the new slot within 60s")
	}
	if n := e.Count(`SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'mooncdc_lostcrash'`); n != 1 {
		t.Fatalf("%d slots named mooncdc_lostcrash after the crash, want the new one", n)
	}

	// Crashed again once the repair's incremental snapshot has written a
	// window: the repair's mark is in the table's stored progress, and the
	// next start resumes it.
	p, err = connector.New(cfg, nil, ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	var windows atomic.Int32
	p.Hooks().Set(func(point, _ string) {
		if point == connector.HookWindowWritten && windows.Add(1) == 1 {
			p.Abort()
			time.Sleep(300 * time.Millisecond)
		}
	})
	crashed = ittest.RunPipeline(t, p)
	eventually.True(t, 60*time.Second, 5*time.Millisecond, "the repair wrote no window", func() bool { return windows.Load() >= 1 })
	crashed.Crash(t)
	for _, table := range []string{"public.t", "public.u"} {
		if st := ittest.LoadOffsets(t, e, cfg).Tables[table]; st.Phase != "ready" || !strings.Contains(string(st.Incremental), `"repair":true`) {
			t.Errorf("%s stored as %s with incremental %s after the crash during the repair, want ready with the repair's mark", table, st.Phase, st.Incremental)
		}
	}

	r = ittest.Start(t, cfg)
	e.Exec(`INSERT INTO t VALUES (6, 'd')`) // streamed from the new slot
	checkCompacted(t, e, "lostcrash.public.t", map[string]string{"2": "b", "3": "a", "4": "a", "5": "c", "6": "d"})
	checkCompacted(t, e, "lostcrash.public.u", map[string]string{"1": "a", "2": "a"})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSlotLossRepairStreamsOnWhileTheTableIsReadAgain: the repair of a lost
// slot reads a table that was streamed again with an incremental snapshot
// (docs/incremental-snapshots.md, "With the phases"), in both delivery
// modes, under a write load of inserts, updates and deletes that runs in
// the gap and throughout the repair:
//   - the table's changes keep flowing: a change written once the snapshot
//     has started is in Kafka while the snapshot is still open (the blocking
//     copy would hold it until its handover);
//   - the repair's rows say source.snapshot "incremental", as any
//     incremental snapshot's (CommonOffsetContext.java:91-95 and
//     SnapshotRecord.java:44 at v3.6.1.Final);
//   - the topic rebuilt (last record per key, deletes and tombstones
//     remove) equals the table: nothing of the gap is lost, and the rows
//     deleted in the gap end as tombstones (the stale-key pass).
func TestSlotLossRepairStreamsOnWhileTheTableIsReadAgain(t *testing.T) {
	for _, delivery := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(delivery), func(t *testing.T) {
			e := ittest.NewEnv(t)
			// Chunks of 2 pages read one at a time, 50 ms apart: a snapshot
			// whose rows interleave with the stream's changes.
			ittest.Tune(t, func(tu *connector.Tuning) {
				tu.IncrementalChunkPages, tu.IncrementalReadDelay = 2, 50*time.Millisecond
			})
			const rows, loadKeys = 1500, 1200 // the load changes ids below 1200; 1200… are the test's
			e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, n bigint NOT NULL, pad text NOT NULL DEFAULT repeat('p', 200))`)
			m := ittest.NewMutator(t, e, loadKeys, "public.t")
			m.Seed("public.t", rows)
			name := map[config.Delivery]string{config.DeliveryAtLeastOnce: "lostinc", config.DeliveryExactlyOnce: "lostincx"}[delivery]
			cfg := e.Config(name, "public.t")
			cfg.OnSlotLoss = config.SlotLossResnapshot
			cfg.Kafka.Delivery = delivery
			cfg.Snapshot.ConnectionsPerTable = 1
			r := ittest.Start(t, cfg)
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
			e.DropSlot("mooncdc_" + name)
			// The gap: the load's changes, and rows only the gap deletes.
			m.Run(context.Background(), 100)
			e.Exec(`DELETE FROM t WHERE id BETWEEN 1400 AND 1409`)

			load, stopLoad := context.WithCancel(context.Background())
			loaded := make(chan struct{})
			go func() { defer close(loaded); m.Run(load, 1<<30) }()
			defer func() { stopLoad(); <-loaded }()
			r = ittest.StartStreaming(t, cfg)
			// A chunk's read waits (after its snapshot) until the change
			// below is in Kafka: the snapshot is open then, however fast the
			// machine reads the rest.
			seen := make(chan struct{})
			var holding atomic.Bool
			holding.Store(true)
			r.P.Hooks().Set(func(point, table string) {
				if point == connector.HookChunkSnapshot && table == "public.t" && holding.CompareAndSwap(true, false) {
					select {
					case <-seen:
					case <-time.After(60 * time.Second):
					}
				}
			})
			if got := ittest.Counter(r.P.Metrics().SlotLossResnapshots); got != 1 {
				t.Errorf("mooncdc_slot_loss_resnapshots_total = %v, want 1", got)
			}
			topic := name + ".public.t"
			// The snapshot has started once its progress is planned (chunk
			// pages set); the table stays ready, streamed, throughout.
			eventually.True(t, 60*time.Second, 10*time.Millisecond, "the repair's incremental snapshot did not start", func() bool {
				tb := r.P.TablePhases()["public.t"]
				if tb.Phase != "ready" {
					t.Fatalf("public.t is %s during the repair, want ready (streamed on)", tb.Phase)
				}
				return strings.Contains(string(tb.Incremental), `"repair":true`) && !strings.Contains(string(tb.Incremental), `"chunk_pages":0`)
			})
			e.Exec(`UPDATE t SET n = -42 WHERE id = 1450`)
			eventually.True(t, 30*time.Second, 20*time.Millisecond, "the change written during the snapshot did not reach Kafka", func() bool {
				for _, ev := range ittest.Consume(t, e.Kafka, -1, topic) {
					if ev.Op == "u" && ev.After["n"] == float64(-42) {
						return true
					}
				}
				return false
			})
			if inc := r.P.TablePhases()["public.t"].Incremental; inc == "" {
				t.Fatal("the snapshot ended before the change written during it reached Kafka: the test shows nothing")
			}
			close(seen)
			eventually.True(t, 90*time.Second, 50*time.Millisecond, "the repair's incremental snapshot did not end", func() bool {
				if stopped, err := r.Stopped(); stopped {
					t.Fatalf("pipeline stopped: %v", err)
				}
				return r.P.TablePhases()["public.t"].Incremental == ""
			})
			stopLoad()
			<-loaded

			v := ittest.Converge(t, e, name, "t")
			for id := 1400; id <= 1409; id++ {
				recs := v.Records[id]
				if len(recs) == 0 || recs[len(recs)-1].Op != "x" {
					t.Errorf("id %d, deleted in the gap: its records end %v, want a stale-key tombstone", id, recs)
				}
			}
			incremental := 0
			for _, ev := range ittest.Consume(t, e.Kafka, -1, topic) {
				if ev.Op == "r" && ev.Source.Snapshot == "incremental" {
					incremental++
				}
			}
			// Every row the load did not change during the snapshot has one;
			// the rows past the load's keys, at least.
			if incremental < rows-loadKeys-10 {
				t.Errorf("%d `r` records say source.snapshot incremental, want at least %d", incremental, rows-loadKeys-10)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
