package copyfaults

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// finishRecopied writes more changes to a table that was copied more
// than once, then checks that its topic rebuilds it, that change records
// never repeat, and that after the last snapshot row of each key come
// exactly its later writes; then stops the pipeline cleanly.
func finishRecopied(t *testing.T, e *ittest.Env, r *ittest.Running, m *ittest.Mutator, prefix, table string) {
	t.Helper()
	m.Run(context.Background(), 30)
	v := ittest.Converge(t, e, prefix, table)
	ittest.CheckNoChangeRepeats(t, table, v)
	ittest.CheckAfterLastSnapshot(t, table, v, m.Events[table])
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotCrashes kills the pipeline (no flush, no offsets, no
// confirmation) during COPY, during the private catch-up and right after
// the handover; after a restart the rebuilt table still equals Postgres,
// and change records never repeat.
func TestSnapshotCrashes(t *testing.T) {
	for _, when := range []string{"during COPY", "during catch-up", "after handover"} {
		t.Run(strings.ReplaceAll(when, " ", "_"), func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE crashy (id int PRIMARY KEY, n bigint)`)
			m := ittest.NewMutator(t, e, 60000, "crashy")
			m.Seed("crashy", 50000)
			e.Exec(`ANALYZE crashy`)
			name := "crash" + strings.ReplaceAll(when, " ", "")
			name = strings.ReplaceAll(name, "-", "")
			cfg := e.Config(name, "public.crashy")
			cfg.Snapshot.ChunkRows = 10000
			cfg.Snapshot.ConnectionsPerTable = 2
			p := ittest.NewPipeline(t, cfg)
			release, created := make(chan struct{}), make(chan struct{})
			var crashed atomic.Bool
			var handovers atomic.Int32
			switch when {
			case "during COPY":
				// Crash once some rows are out.
			case "during catch-up":
				// The copy waits after its rows while the main worker moves
				// on, so it must catch up; the crash comes at its first
				// handover attempt inside the catch-up.
				p.Hooks().Set(func(point, table string) {
					switch point {
					case connector.HookSnapshotCreated:
						close(created)
						<-release
					case connector.HookBeforeHandover:
						if handovers.Add(1) == 2 && crashed.CompareAndSwap(false, true) {
							p.Abort()
							// Let the abort reach the copy before it stores a handover.
							time.Sleep(300 * time.Millisecond)
						}
					}
				})
			}
			r := ittest.RunPipeline(t, p)
			r.WaitReady(t)
			switch when {
			case "during COPY":
				eventually.True(t, 60*time.Second, 2*time.Millisecond, "copy made no progress", func() bool {
					return ittest.Counter(p.Metrics().TableCopyRows.WithLabelValues("public.crashy")) >= 5000
				})
				if ph := p.TablePhases()["public.crashy"]; ph.Phase != "copying" {
					t.Fatalf("crash meant during COPY, but the table is %s", ph.Phase)
				}
				r.Crash(t)
			case "during catch-up":
				// Writes after the snapshot, decided by the main worker before
				// the copy goes on: its first handover attempt must fail.
				<-created
				before := ittest.Counter(p.Metrics().TransactionsReceived)
				m.Run(context.Background(), 30)
				for ittest.Counter(p.Metrics().TransactionsReceived) < before+30 {
					time.Sleep(5 * time.Millisecond)
				}
				close(release)
				select {
				case err := <-r.Done:
					r.Done <- err
					if !crashed.Load() {
						t.Fatalf("pipeline stopped without the crash: %v", err)
					}
				case <-time.After(60 * time.Second):
					t.Fatal("no crash during the catch-up")
				}
				if ph := p.TablePhases()["public.crashy"]; ph.Phase != "copying" {
					t.Fatalf("crash meant during the catch-up, but the table is %s", ph.Phase)
				}
			case "after handover":
				r.WaitHandedOver(t)
				r.Crash(t)
			}
			m.Run(context.Background(), 30) // while mooncdc is down
			finishRecopied(t, e, ittest.Start(t, cfg), m, name, "crashy")
		})
	}
}

// TestFailedCopyIsIsolatedAndResnapshotRecovers: a table mooncdc may not
// read goes errored (waiting for resnapshot, the fix named), the other
// table is copied and streams; after GRANT and a resnapshot it is copied.
func TestFailedCopyIsIsolatedAndResnapshotRecovers(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // it makes a role
	e.Exec(`CREATE TABLE open_t (id int PRIMARY KEY, n bigint)`)
	e.Exec(`CREATE TABLE secret_t (id int PRIMARY KEY, n bigint)`)
	e.Exec(`CREATE ROLE cdc LOGIN REPLICATION`)
	e.Exec(`GRANT SELECT ON open_t TO cdc`)
	e.Exec(`CREATE PUBLICATION mooncdc_iso FOR TABLE open_t, secret_t`)
	m := ittest.NewMutator(t, e, 100, "open_t", "secret_t")
	m.Seed("open_t", 20)
	m.Seed("secret_t", 20)
	cfg := e.Config("iso", "public.open_t", "public.secret_t")
	cfg.Postgres.URL = strings.Replace(cfg.Postgres.URL, "postgres@", "cdc@", 1)
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := ittest.StartStreaming(t, cfg)
	eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
		ph := r.P.TablePhases()
		if ph["public.open_t"].Phase != "ready" || ph["public.secret_t"].Phase != "errored" {
			return fmt.Errorf("want open_t ready and secret_t errored: %+v", ph)
		}
		if s := ph["public.secret_t"]; s.Retry != "resnapshot" || !strings.Contains(s.LastError, "permission denied") {
			t.Fatalf("secret_t errored with retry %q, error %q; want a permanent failure naming the privilege", s.Retry, s.LastError)
		}
		return nil
	})
	m.Run(context.Background(), 40) // the stream flows for the readable table
	ittest.Converge(t, e, "iso", "open_t")
	if got := ittest.Counter(r.P.Metrics().WorkerErrors.WithLabelValues("table_sync", "permanent")); got < 1 {
		t.Errorf("mooncdc_worker_errors_total{worker_type=table_sync,error_type=permanent} = %v", got)
	}

	e.Exec(`GRANT SELECT ON secret_t TO cdc`)
	ittest.Resnapshot(t, "iso", e, r, "public.secret_t")
	eventually.Succeeds(t, 60*time.Second, 50*time.Millisecond, func() error {
		if ph := r.P.TablePhases()["public.secret_t"]; ph.Phase != "ready" && ph.Phase != "catchup" {
			return fmt.Errorf("secret_t not copied after GRANT and resnapshot: %+v", ph)
		}
		return nil
	})
	m.Run(context.Background(), 40)
	v := ittest.Converge(t, e, "iso", "secret_t")
	ittest.CheckAfterLastSnapshot(t, "secret_t", v, m.Events["secret_t"])
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestNewTableIsCopiedThenStreamed: a table created while mooncdc streams,
// matching postgres.tables, is added to the publication, copied and
// streamed.
func TestNewTableIsCopiedThenStreamed(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE first_t (id int PRIMARY KEY, n bigint)`)
	cfg := e.Config("grow", "public.*")
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := ittest.Start(t, cfg)
	e.Exec(`CREATE TABLE later_t (id int PRIMARY KEY, n bigint)`)
	m := ittest.NewMutator(t, e, 100, "later_t", "first_t")
	m.Seed("later_t", 30)
	eventually.Succeeds(t, 60*time.Second, 50*time.Millisecond, func() error {
		if r.P.TablePhases()["public.later_t"].Phase != "ready" && r.P.TablePhases()["public.later_t"].Phase != "catchup" {
			return fmt.Errorf("later_t not copied: %+v", r.P.TablePhases())
		}
		return nil
	})
	m.Run(context.Background(), 50)
	v := ittest.Converge(t, e, "grow", "later_t")
	ittest.CheckExactlyOnceAfterSnapshot(t, "later_t", v, m.Events["later_t"])
	if v.Reads == 0 {
		t.Error("later_t's existing rows did not come as snapshot rows")
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotModes(t *testing.T) {
	t.Run("never", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		m := ittest.NewMutator(t, e, 50, "t")
		m.Seed("t", 20)
		cfg := e.Config("never", "public.t")
		cfg.Snapshot.Mode = config.SnapshotNever
		r := ittest.Start(t, cfg)
		m.Run(context.Background(), 10)
		var evs []ittest.Event
		eventually.Within(30*time.Second, 100*time.Millisecond, func() bool {
			evs = ittest.Consume(t, e.Kafka, -1, "never.public.t")
			return len(evs) != 0
		})
		v := ittest.Rebuild(t, evs)
		if v.Reads != 0 {
			t.Fatalf("snapshot.mode never produced %d snapshot rows", v.Reads)
		}
		if len(v.Records) == 0 {
			t.Fatal("no changes streamed")
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("initial_only", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		m := ittest.NewMutator(t, e, 50, "t")
		m.Seed("t", 25)
		cfg := e.Config("only", "public.t")
		cfg.Snapshot.Mode = config.SnapshotInitialOnly
		if err := ittest.RunToEnd(t, cfg); err != nil {
			t.Fatalf("initial_only must copy, then return nil: %v", err)
		}
		v := ittest.Converge(t, e, "only", "t")
		if v.Reads != 25 {
			t.Fatalf("%d snapshot rows, want 25", v.Reads)
		}
	})
	t.Run("initial_only_fails_when_a_copy_fails", func(t *testing.T) {
		e := ittest.NewPrivateEnv(t) // it makes a role
		e.Exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		e.Exec(`CREATE TABLE hidden (id int PRIMARY KEY, n bigint)`)
		e.Exec(`CREATE ROLE cdc LOGIN REPLICATION`)
		e.Exec(`GRANT SELECT ON t TO cdc`)
		e.Exec(`CREATE PUBLICATION mooncdc_onlyfail FOR TABLE t, hidden`)
		cfg := e.Config("onlyfail", "public.t", "public.hidden")
		cfg.Postgres.URL = strings.Replace(cfg.Postgres.URL, "postgres@", "cdc@", 1)
		cfg.Snapshot.Mode = config.SnapshotInitialOnly
		err := ittest.RunToEnd(t, cfg)
		if err == nil || !strings.Contains(err.Error(), "public.hidden") || !strings.Contains(err.Error(), "resnapshot") {
			t.Fatalf("want an error naming the failed table and the fix, got %v", err)
		}
	})
	t.Run("always_recopies_and_tombstones_stale_keys", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		m := ittest.NewMutator(t, e, 50, "t")
		m.Seed("t", 10)
		cfg := e.Config("always", "public.t")
		cfg.Snapshot.Mode = config.SnapshotAlways
		r := ittest.Start(t, cfg)
		ittest.Converge(t, e, "always", "t")
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
		// While mooncdc is down. Under "always" the table is copied again
		// and the stream does not replay these: the delete is known only
		// because the new snapshot lacks the row.
		e.Exec(`DELETE FROM t WHERE id IN (3, 7)`)
		e.Exec(`UPDATE t SET n = 42 WHERE id = 5`)
		r = ittest.Start(t, cfg)
		v := ittest.Converge(t, e, "always", "t")
		if v.Reads != 10+8 {
			t.Fatalf("%d snapshot rows over two runs, want 18 (the table copied twice)", v.Reads)
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// holdFirstCopy makes the first copy wait right after its snapshot is
// taken: created is closed then, and the copy goes on when release is
// closed.
func holdFirstCopy(p *connector.Pipeline) (created, release chan struct{}) {
	created, release = make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	p.Hooks().Set(func(point, table string) {
		if point == connector.HookSnapshotCreated && first.CompareAndSwap(false, true) {
			close(created)
			<-release
		}
	})
	return created, release
}

// waitMainDecided waits until the main worker has decided n more
// transactions than before.
func waitMainDecided(p *connector.Pipeline, before float64, n int) {
	for ittest.Counter(p.Metrics().TransactionsReceived) < before+float64(n) {
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTransientCopyFailureIsRetried: a copy whose replication connection
// is killed (its temporary slot with it) goes errored with a retry time,
// is retried after snapshot.retry_delay, and ends ready with the table
// rebuilt equal.
func TestTransientCopyFailureIsRetried(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE flaky (id int PRIMARY KEY, n bigint)`)
	m := ittest.NewMutator(t, e, 600, "flaky")
	m.Seed("flaky", 500)
	cfg := e.Config("retry", "public.flaky")
	cfg.Snapshot.RetryDelay = 200 * time.Millisecond
	p := ittest.NewPipeline(t, cfg)
	created, release := holdFirstCopy(p)
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	<-created
	// The main worker moves past the snapshot, so the copy needs its
	// private catch-up; then its replication connection dies.
	before := ittest.Counter(p.Metrics().TransactionsReceived)
	m.Run(context.Background(), 3)
	waitMainDecided(p, before, 3)
	e.Exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name LIKE 'mooncdc_retry_copy_%' AND active_pid IS NOT NULL`)
	close(release)
	eventually.Succeeds(t, 60*time.Second, 5*time.Millisecond, func() error {
		ph := p.TablePhases()["public.flaky"]
		if ph.Phase == "errored" && ph.Retry == "resnapshot" {
			t.Fatalf("a lost connection must be retried, not wait for resnapshot: %+v", ph)
		}
		if ph.Phase == "ready" || ph.Phase == "catchup" {
			return nil
		}
		return fmt.Errorf("not copied after a retry: %+v", ph)
	})
	if got := ittest.Counter(p.Metrics().WorkerErrors.WithLabelValues("table_sync", "transient")); got < 1 {
		t.Fatalf("no transient copy failure recorded (worker_errors_total=%v)", got)
	}
	finishRecopied(t, e, r, m, "retry", "flaky")
}

// TestNonTransactionalDDLMessageFailsTheCopy: the seed's safety check — a
// copy worker whose private catch-up meets a DDL logical message sent
// outside a transaction raises a protocol error (here: the table waits,
// with max_retries 0, naming the cause); the stream goes on.
func TestNonTransactionalDDLMessageFailsTheCopy(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE ddl_t (id int PRIMARY KEY, n bigint)`)
	m := ittest.NewMutator(t, e, 100, "ddl_t")
	m.Seed("ddl_t", 10)
	cfg := e.Config("ddl", "public.ddl_t")
	cfg.Snapshot.MaxRetries = 0
	p := ittest.NewPipeline(t, cfg)
	created, release := holdFirstCopy(p)
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	<-created
	// After the snapshot: a non-transactional DDL message, then
	// transactions, all decided by the main worker before the copy goes on,
	// so the copy must catch up through them.
	before := ittest.Counter(p.Metrics().TransactionsReceived)
	e.Exec(`SELECT pg_logical_emit_message(false, '` + config.DDLMessagePrefix + `', 'ALTER TABLE ddl_t ADD COLUMN x int')`)
	m.Run(context.Background(), 3)
	waitMainDecided(p, before, 3)
	close(release)
	eventually.Succeeds(t, 60*time.Second, 10*time.Millisecond, func() error {
		ph := p.TablePhases()["public.ddl_t"]
		if ph.Phase == "errored" {
			if !strings.Contains(ph.LastError, "DDL message must be transactional") {
				t.Fatalf("copy failed for another reason: %s", ph.LastError)
			}
			return nil
		}
		err := fmt.Errorf("want the copy to fail on the non-transactional DDL message, got %+v", ph)
		if ph.Phase == "ready" || ph.Phase == "catchup" {
			t.Fatal(err.Error()) // handed over: it will never fail now
		}
		return err
	})
	if !p.Ready() {
		t.Fatal("the stream stopped")
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestResnapshotRequestSurvivesALaterRecord: a resnapshot request followed
// at once by another record for the table (as the pipeline writes when a
// phase changes) is still acted on: the offsets topic is tailed, not
// polled for its last values.
func TestResnapshotRequestSurvivesALaterRecord(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE req_t (id int PRIMARY KEY, n bigint)`)
	m := ittest.NewMutator(t, e, 100, "req_t")
	m.Seed("req_t", 10)
	cfg := e.Config("req", "public.req_t")
	r := ittest.Start(t, cfg)
	copies := make(chan struct{}, 10)
	r.P.Hooks().Set(func(point, table string) {
		if point == connector.HookSnapshotCreated && table == "public.req_t" {
			copies <- struct{}{}
		}
	})
	ittest.Resnapshot(t, "req", e, r, "public.req_t")
	// The hiding record: the table as it was, without the request.
	client, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cur := r.P.TablePhases()["public.req_t"]
	cur.Table = "public.req_t"
	if err := client.ProduceSync(context.Background(), offsets.TableRecord("mooncdc-offsets", "req", cur)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-copies:
	case <-time.After(30 * time.Second):
		t.Fatal("the resnapshot request was lost behind a later record")
	}
	r.WaitHandedOver(t)
	v := ittest.Converge(t, e, "req", "req_t")
	if v.Reads != 20 {
		t.Fatalf("%d snapshot rows, want 20 (two copies of 10 rows)", v.Reads)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
