package connector_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// checkNoChangeRepeats: change records (c, u, d) carry each write at most
// once; only snapshot rows may repeat.
func checkNoChangeRepeats(t *testing.T, table string, v tableView) {
	t.Helper()
	for key, recs := range v.records {
		seen := map[string]bool{}
		for _, r := range recs {
			if r.op == "r" || r.op == "d" {
				continue
			}
			id := fmt.Sprint(r.n)
			if seen[id] {
				t.Fatalf("%s key %d: change n=%d emitted twice (records %v)", table, key, r.n, recs)
			}
			seen[id] = true
		}
	}
}

// finishRecopied writes more changes to a table that was copied more
// than once, then checks that its topic rebuilds it, that change records
// never repeat, and that after the last snapshot row of each key come
// exactly its later writes; then stops the pipeline cleanly.
func finishRecopied(t *testing.T, e *env, r *running, m *mutator, prefix, table string) {
	t.Helper()
	m.run(context.Background(), 30)
	v := converge(t, e, prefix, table)
	checkNoChangeRepeats(t, table, v)
	checkAfterLastSnapshot(t, table, v, m.events[table])
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func newPipeline(t *testing.T, cfg config.Config) *connector.Pipeline {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSnapshotCrashes kills the pipeline (no flush, no offsets, no
// confirmation) during COPY, during the private catch-up and right after
// the handover; after a restart the rebuilt table still equals Postgres,
// and change records never repeat.
func TestSnapshotCrashes(t *testing.T) {
	for _, when := range []string{"during COPY", "during catch-up", "after handover"} {
		t.Run(strings.ReplaceAll(when, " ", "_"), func(t *testing.T) {
			e := newEnv(t)
			e.exec(`CREATE TABLE crashy (id int PRIMARY KEY, n bigint)`)
			m := newMutator(t, e, 60000, "crashy")
			m.seed("crashy", 50000)
			e.exec(`ANALYZE crashy`)
			name := "crash" + strings.ReplaceAll(when, " ", "")
			name = strings.ReplaceAll(name, "-", "")
			cfg := e.config(name, "public.crashy")
			cfg.Snapshot.ChunkRows = 10000
			cfg.Snapshot.ConnectionsPerTable = 2
			p := newPipeline(t, cfg)
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
			r := runPipeline(t, p)
			r.waitReady(t)
			switch when {
			case "during COPY":
				eventually.True(t, 60*time.Second, 2*time.Millisecond, "copy made no progress", func() bool {
					return testCounter(p.Metrics().TableCopyRows.WithLabelValues("public.crashy")) >= 5000
				})
				if ph := p.TablePhases()["public.crashy"]; ph.Phase != "copying" {
					t.Fatalf("crash meant during COPY, but the table is %s", ph.Phase)
				}
				r.crash(t)
			case "during catch-up":
				// Writes after the snapshot, decided by the main worker before
				// the copy goes on: its first handover attempt must fail.
				<-created
				before := testCounter(p.Metrics().TransactionsReceived)
				m.run(context.Background(), 30)
				for testCounter(p.Metrics().TransactionsReceived) < before+30 {
					time.Sleep(5 * time.Millisecond)
				}
				close(release)
				select {
				case err := <-r.done:
					r.done <- err
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
				r.waitHandedOver(t)
				r.crash(t)
			}
			m.run(context.Background(), 30) // while mooncdc is down
			finishRecopied(t, e, start(t, cfg), m, name, "crashy")
		})
	}
}

// TestFailedCopyIsIsolatedAndResnapshotRecovers: a table mooncdc may not
// read goes errored (waiting for resnapshot, the fix named), the other
// table is copied and streams; after GRANT and a resnapshot it is copied.
func TestFailedCopyIsIsolatedAndResnapshotRecovers(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE open_t (id int PRIMARY KEY, n bigint)`)
	e.exec(`CREATE TABLE secret_t (id int PRIMARY KEY, n bigint)`)
	e.exec(`CREATE ROLE cdc LOGIN REPLICATION`)
	e.exec(`GRANT SELECT ON open_t TO cdc`)
	e.exec(`CREATE PUBLICATION mooncdc_iso FOR TABLE open_t, secret_t`)
	m := newMutator(t, e, 100, "open_t", "secret_t")
	m.seed("open_t", 20)
	m.seed("secret_t", 20)
	cfg := e.config("iso", "public.open_t", "public.secret_t")
	cfg.Postgres.URL = strings.Replace(cfg.Postgres.URL, "postgres@", "cdc@", 1)
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := startStreaming(t, cfg)
	eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
		ph := r.p.TablePhases()
		if ph["public.open_t"].Phase != "ready" || ph["public.secret_t"].Phase != "errored" {
			return fmt.Errorf("want open_t ready and secret_t errored: %+v", ph)
		}
		if s := ph["public.secret_t"]; s.Retry != "resnapshot" || !strings.Contains(s.LastError, "permission denied") {
			t.Fatalf("secret_t errored with retry %q, error %q; want a permanent failure naming the privilege", s.Retry, s.LastError)
		}
		return nil
	})
	m.run(context.Background(), 40) // the stream flows for the readable table
	converge(t, e, "iso", "open_t")
	if got := testCounter(r.p.Metrics().WorkerErrors.WithLabelValues("table_sync", "permanent")); got < 1 {
		t.Errorf("mooncdc_worker_errors_total{worker_type=table_sync,error_type=permanent} = %v", got)
	}

	e.exec(`GRANT SELECT ON secret_t TO cdc`)
	resnapshot(t, "iso", e, r, "public.secret_t")
	eventually.Succeeds(t, 60*time.Second, 50*time.Millisecond, func() error {
		if ph := r.p.TablePhases()["public.secret_t"]; ph.Phase != "ready" && ph.Phase != "catchup" {
			return fmt.Errorf("secret_t not copied after GRANT and resnapshot: %+v", ph)
		}
		return nil
	})
	m.run(context.Background(), 40)
	v := converge(t, e, "iso", "secret_t")
	checkAfterLastSnapshot(t, "secret_t", v, m.events["secret_t"])
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestNewTableIsCopiedThenStreamed: a table created while mooncdc streams,
// matching postgres.tables, is added to the publication, copied and
// streamed.
func TestNewTableIsCopiedThenStreamed(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE first_t (id int PRIMARY KEY, n bigint)`)
	cfg := e.config("grow", "public.*")
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)
	e.exec(`CREATE TABLE later_t (id int PRIMARY KEY, n bigint)`)
	m := newMutator(t, e, 100, "later_t", "first_t")
	m.seed("later_t", 30)
	eventually.Succeeds(t, 60*time.Second, 50*time.Millisecond, func() error {
		if r.p.TablePhases()["public.later_t"].Phase != "ready" && r.p.TablePhases()["public.later_t"].Phase != "catchup" {
			return fmt.Errorf("later_t not copied: %+v", r.p.TablePhases())
		}
		return nil
	})
	m.run(context.Background(), 50)
	v := converge(t, e, "grow", "later_t")
	checkExactlyOnceAfterSnapshot(t, "later_t", v, m.events["later_t"])
	if v.reads == 0 {
		t.Error("later_t's existing rows did not come as snapshot rows")
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotModes(t *testing.T) {
	t.Run("never", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		m := newMutator(t, e, 50, "t")
		m.seed("t", 20)
		cfg := e.config("never", "public.t")
		cfg.Snapshot.Mode = config.SnapshotNever
		r := start(t, cfg)
		m.run(context.Background(), 10)
		var evs []event
		eventually.Within(30*time.Second, 100*time.Millisecond, func() bool {
			evs = consume(t, e.kafka, -1, "never.public.t")
			return len(evs) != 0
		})
		v := rebuild(t, evs)
		if v.reads != 0 {
			t.Fatalf("snapshot.mode never produced %d snapshot rows", v.reads)
		}
		if len(v.records) == 0 {
			t.Fatal("no changes streamed")
		}
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("initial_only", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		m := newMutator(t, e, 50, "t")
		m.seed("t", 25)
		cfg := e.config("only", "public.t")
		cfg.Snapshot.Mode = config.SnapshotInitialOnly
		if err := runToEnd(t, cfg); err != nil {
			t.Fatalf("initial_only must copy, then return nil: %v", err)
		}
		v := converge(t, e, "only", "t")
		if v.reads != 25 {
			t.Fatalf("%d snapshot rows, want 25", v.reads)
		}
	})
	t.Run("initial_only_fails_when_a_copy_fails", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		e.exec(`CREATE TABLE hidden (id int PRIMARY KEY, n bigint)`)
		e.exec(`CREATE ROLE cdc LOGIN REPLICATION`)
		e.exec(`GRANT SELECT ON t TO cdc`)
		e.exec(`CREATE PUBLICATION mooncdc_onlyfail FOR TABLE t, hidden`)
		cfg := e.config("onlyfail", "public.t", "public.hidden")
		cfg.Postgres.URL = strings.Replace(cfg.Postgres.URL, "postgres@", "cdc@", 1)
		cfg.Snapshot.Mode = config.SnapshotInitialOnly
		err := runToEnd(t, cfg)
		if err == nil || !strings.Contains(err.Error(), "public.hidden") || !strings.Contains(err.Error(), "resnapshot") {
			t.Fatalf("want an error naming the failed table and the fix, got %v", err)
		}
	})
	t.Run("always_recopies_and_tombstones_stale_keys", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`CREATE TABLE t (id int PRIMARY KEY, n bigint)`)
		m := newMutator(t, e, 50, "t")
		m.seed("t", 10)
		cfg := e.config("always", "public.t")
		cfg.Snapshot.Mode = config.SnapshotAlways
		r := start(t, cfg)
		converge(t, e, "always", "t")
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		// While mooncdc is down. Under "always" the table is copied again
		// and the stream does not replay these: the delete is known only
		// because the new snapshot lacks the row.
		e.exec(`DELETE FROM t WHERE id IN (3, 7)`)
		e.exec(`UPDATE t SET n = 42 WHERE id = 5`)
		r = start(t, cfg)
		v := converge(t, e, "always", "t")
		if v.reads != 10+8 {
			t.Fatalf("%d snapshot rows over two runs, want 18 (the table copied twice)", v.reads)
		}
		if err := r.stop(t); err != nil {
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
	for testCounter(p.Metrics().TransactionsReceived) < before+float64(n) {
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTransientCopyFailureIsRetried: a copy whose replication connection
// is killed (its temporary slot with it) goes errored with a retry time,
// is retried after snapshot.retry_delay, and ends ready with the table
// rebuilt equal.
func TestTransientCopyFailureIsRetried(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE flaky (id int PRIMARY KEY, n bigint)`)
	m := newMutator(t, e, 600, "flaky")
	m.seed("flaky", 500)
	cfg := e.config("retry", "public.flaky")
	cfg.Snapshot.RetryDelay = 200 * time.Millisecond
	p := newPipeline(t, cfg)
	created, release := holdFirstCopy(p)
	r := runPipeline(t, p)
	r.waitReady(t)
	<-created
	// The main worker moves past the snapshot, so the copy needs its
	// private catch-up; then its replication connection dies.
	before := testCounter(p.Metrics().TransactionsReceived)
	m.run(context.Background(), 3)
	waitMainDecided(p, before, 3)
	e.exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name LIKE 'mooncdc_retry_copy_%' AND active_pid IS NOT NULL`)
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
	if got := testCounter(p.Metrics().WorkerErrors.WithLabelValues("table_sync", "transient")); got < 1 {
		t.Fatalf("no transient copy failure recorded (worker_errors_total=%v)", got)
	}
	finishRecopied(t, e, r, m, "retry", "flaky")
}

// TestNonTransactionalDDLMessageFailsTheCopy: the seed's safety check — a
// copy worker whose private catch-up meets a DDL logical message sent
// outside a transaction raises a protocol error (here: the table waits,
// with max_retries 0, naming the cause); the stream goes on.
func TestNonTransactionalDDLMessageFailsTheCopy(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE ddl_t (id int PRIMARY KEY, n bigint)`)
	m := newMutator(t, e, 100, "ddl_t")
	m.seed("ddl_t", 10)
	cfg := e.config("ddl", "public.ddl_t")
	cfg.Snapshot.MaxRetries = 0
	p := newPipeline(t, cfg)
	created, release := holdFirstCopy(p)
	r := runPipeline(t, p)
	r.waitReady(t)
	<-created
	// After the snapshot: a non-transactional DDL message, then
	// transactions, all decided by the main worker before the copy goes on,
	// so the copy must catch up through them.
	before := testCounter(p.Metrics().TransactionsReceived)
	e.exec(`SELECT pg_logical_emit_message(false, '` + config.DDLMessagePrefix + `', 'ALTER TABLE ddl_t ADD COLUMN x int')`)
	m.run(context.Background(), 3)
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
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestResnapshotRequestSurvivesALaterRecord: a resnapshot request followed
// at once by another record for the table (as the pipeline writes when a
// phase changes) is still acted on: the offsets topic is tailed, not
// polled for its last values.
func TestResnapshotRequestSurvivesALaterRecord(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE req_t (id int PRIMARY KEY, n bigint)`)
	m := newMutator(t, e, 100, "req_t")
	m.seed("req_t", 10)
	cfg := e.config("req", "public.req_t")
	r := start(t, cfg)
	copies := make(chan struct{}, 10)
	r.p.Hooks().Set(func(point, table string) {
		if point == connector.HookSnapshotCreated && table == "public.req_t" {
			copies <- struct{}{}
		}
	})
	resnapshot(t, "req", e, r, "public.req_t")
	// The hiding record: the table as it was, without the request.
	client, err := kgo.NewClient(kgo.SeedBrokers(e.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cur := r.p.TablePhases()["public.req_t"]
	cur.Table = "public.req_t"
	if err := client.ProduceSync(context.Background(), offsets.TableRecord("mooncdc-offsets", "req", cur)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-copies:
	case <-time.After(30 * time.Second):
		t.Fatal("the resnapshot request was lost behind a later record")
	}
	r.waitHandedOver(t)
	v := converge(t, e, "req", "req_t")
	if v.reads != 20 {
		t.Fatalf("%d snapshot rows, want 20 (two copies of 10 rows)", v.reads)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
