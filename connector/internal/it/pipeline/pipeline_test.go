package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// *testing.T → true once newEnv made it parallel

func TestStreamRoundTripInsertUpdateDeleteTruncate(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // its records name the database postgres
	e.Exec(`CREATE TABLE public.orders (id bigint PRIMARY KEY, note text, amount numeric(10,2), paid boolean, at timestamptz, doc jsonb)`)
	e.Exec(`CREATE TABLE public.audit (k int PRIMARY KEY, v text)`)
	e.Exec(`ALTER TABLE public.audit REPLICA IDENTITY FULL`)
	cfg := e.Config("shop", "public.*")
	cfg.Format.DecimalHandlingMode = "string"       // readable amounts; precise is the default, tested in types_test.go
	cfg.Format.SkippedOperations = []string{"none"} // write the truncate (Debezium skips it by default)
	r := ittest.Start(t, cfg)

	e.Exec(`INSERT INTO orders VALUES (1, 'first', 12.50, true, '2024-01-02 03:04:05.123456+00', '{"a": 1}')`)
	e.Exec(`UPDATE orders SET note = 'second', amount = 99.99 WHERE id = 1`)
	e.Exec(`UPDATE orders SET id = 2 WHERE id = 1`)
	e.Exec(`DELETE FROM orders WHERE id = 2`)
	e.Exec(`INSERT INTO audit VALUES (7, 'x')`)
	e.Exec(`UPDATE audit SET v = 'y' WHERE k = 7`)
	e.Exec(`DELETE FROM audit WHERE k = 7`)
	e.Exec(`TRUNCATE orders`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'app', 'hello')`)

	orders := ittest.Consume(t, e.Kafka, 8, "shop.public.orders")
	// The message is the last transaction: once it is in Kafka, all is.
	msgs := ittest.Consume(t, e.Kafka, 1, "shop.message")
	if err := r.Stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	type want struct {
		op     string
		key    string
		before string
		after  string
	}
	j := func(v any) string {
		if v == nil {
			return "null"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	wantOrders := []want{
		{"c", `{"id":1}`, `null`, `{"amount":"12.50","at":"2024-01-02T03:04:05.123456Z","doc":"{\"a\": 1}","id":1,"note":"first","paid":true}`},
		{"u", `{"id":1}`, `null`, `{"amount":"99.99","at":"2024-01-02T03:04:05.123456Z","doc":"{\"a\": 1}","id":1,"note":"second","paid":true}`},
		// A key change: delete and tombstone for the old key, create for the new.
		{"d", `{"id":1}`, `{"amount":null,"at":null,"doc":null,"id":1,"note":null,"paid":null}`, `null`},
		{"tombstone", `{"id":1}`, ``, ``},
		{"c", `{"id":2}`, `null`, `{"amount":"99.99","at":"2024-01-02T03:04:05.123456Z","doc":"{\"a\": 1}","id":2,"note":"second","paid":true}`},
		{"d", `{"id":2}`, `{"amount":null,"at":null,"doc":null,"id":2,"note":null,"paid":null}`, `null`},
		{"tombstone", `{"id":2}`, ``, ``},
		{"t", `null`, `null`, `null`},
	}
	for i, w := range wantOrders {
		ev := orders[i]
		if w.op == "tombstone" {
			if !ev.Tombstone || j(ev.Key) != w.key {
				t.Errorf("record %d: want tombstone for %s, got %+v", i, w.key, ev)
			}
			continue
		}
		if ev.Op != w.op || j(ev.Key) != w.key || j(ev.Before) != w.before || j(ev.After) != w.after {
			t.Errorf("record %d:\n got  op=%s key=%s before=%s after=%s\n want op=%s key=%s before=%s after=%s",
				i, ev.Op, j(ev.Key), j(ev.Before), j(ev.After), w.op, w.key, w.before, w.after)
		}
		if ev.Source.Conn != "postgresql" || ev.Source.Name != "shop" || ev.Source.DB != "postgres" ||
			ev.Source.Schema != "public" || ev.Source.Table != "orders" || ev.Source.TxID == nil || ev.Source.LSN == 0 || ev.Source.Snapshot != "false" {
			t.Errorf("record %d: bad source %+v", i, ev.Source)
		}
	}

	audit := ittest.Consume(t, e.Kafka, 4, "shop.public.audit")
	for i, ev := range audit {
		if j(ev.Key) != `{"k":7}` {
			t.Errorf("REPLICA IDENTITY FULL record %d keyed %s, want the primary key {\"k\":7}", i, j(ev.Key))
		}
	}
	if j(audit[1].Before) != `{"k":7,"v":"x"}` || j(audit[1].After) != `{"k":7,"v":"y"}` {
		t.Errorf("REPLICA IDENTITY FULL update: before=%s after=%s", j(audit[1].Before), j(audit[1].After))
	}
	if audit[2].Op != "d" || j(audit[2].Before) != `{"k":7,"v":"y"}` || !audit[3].Tombstone {
		t.Errorf("REPLICA IDENTITY FULL delete: %+v then %+v", audit[2], audit[3])
	}

	if msgs[0].Op != "m" || msgs[0].Message == nil || msgs[0].Message.Prefix != "app" || string(msgs[0].Message.Content) != "hello" ||
		j(msgs[0].Key) != `{"prefix":"app"}` {
		t.Errorf("message record: %+v", msgs[0])
	}
}

func TestStreamTenThousandChangesOnceEachInKeyOrder(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.Config("bulk", "public.load")
	cfg.Kafka.TopicPartitions = 4
	r := ittest.Start(t, cfg)
	ittest.WriteLoad(t, e, "load", 200, 50, 500, 0)
	evs := ittest.Consume(t, e.Kafka, 10000, "bulk.public.load")
	if len(evs) != 10000 {
		t.Fatalf("got %d records, want 10000", len(evs))
	}
	ittest.CheckChanges(t, evs, 10000, false)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestRestartAfterCleanStopLosesAndRepeatsNothing(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.Config("restart", "public.load")
	r := ittest.Start(t, cfg)
	ittest.WriteLoad(t, e, "load", 20, 50, 100, 0)
	ittest.Consume(t, e.Kafka, 1000, "restart.public.load")
	// Writes continue while the pipeline stops: some land before, some
	// during, some after the stop.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ittest.WriteLoad(t, e, "load", 20, 50, 100, 1000) }()
	if err := r.Stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	wg.Wait()
	ittest.WriteLoad(t, e, "load", 20, 50, 100, 2000)
	r = ittest.Start(t, cfg)
	ittest.WriteLoad(t, e, "load", 20, 50, 100, 3000)
	evs := ittest.Consume(t, e.Kafka, 4000, "restart.public.load")
	ittest.CheckChanges(t, evs, 4000, false)
	// Nothing beyond the 4000: a duplicate would show up as an extra record.
	time.Sleep(500 * time.Millisecond)
	if all := ittest.Consume(t, e.Kafka, -1, "restart.public.load"); len(all) != 4000 {
		t.Fatalf("%d records after a clean restart, want exactly 4000", len(all))
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestCrashMidStreamLosesNothing(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.Config("crash", "public.load")
	r := ittest.Start(t, cfg)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ittest.WriteLoad(t, e, "load", 100, 50, 300, 0) }()
	// Crash while the load is being streamed.
	eventually.True(t, 30*time.Second, 5*time.Millisecond, "no progress before crash", func() bool {
		return r.P.Metrics() != nil && ittest.Counter(r.P.Metrics().ChangesReceived) >= 1000
	})
	r.Crash(t)
	wg.Wait()
	r = ittest.Start(t, cfg)
	evs := ittest.ConsumeDistinct(t, e.Kafka, "crash.public.load", 5000)
	ittest.CheckChanges(t, evs, 5000, true)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// writeLoadRetrying is writeLoad for a database that goes away: a failed
// transaction is retried on a new connection until it commits. A retried
// commit whose first attempt did commit writes the same values again, which
// checkChanges counts as repeats.
func writeLoadRetrying(t *testing.T, e *ittest.Env, table string, txs, perTx, keys, startAt int) {
	t.Helper()
	ctx := context.Background()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(ctx)
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; i < txs; {
		if time.Now().After(deadline) {
			t.Errorf("load: transaction %d never committed", i)
			return
		}
		if conn == nil {
			c, err := pgx.Connect(ctx, e.PG.URL("postgres"))
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			conn = c
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for j := 0; j < perTx; j++ {
				n := startAt + i*perTx + j
				if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", n%keys, n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			conn.Close(ctx)
			conn = nil
			time.Sleep(50 * time.Millisecond)
			continue
		}
		i++
	}
}

func TestPostgresRestartMidStreamRecoversByItself(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // it restarts the server
	e.Exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.Config("pgrestart", "public.load")
	r := ittest.Start(t, cfg)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeLoadRetrying(t, e, "load", 150, 20, 100, 0) }()
	for _, mode := range []string{"fast", "immediate", "fast"} {
		time.Sleep(300 * time.Millisecond)
		if err := e.PG.Restart(context.Background(), mode); err != nil {
			t.Fatalf("restart postgres (%s): %v", mode, err)
		}
	}
	wg.Wait()
	evs := ittest.ConsumeDistinct(t, e.Kafka, "pgrestart.public.load", 3000)
	ittest.CheckChanges(t, evs, 3000, true)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "not streaming again after Postgres restarts", r.P.Ready)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestKafkaRestartMidStreamRecoversByItself(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	pg := pgtest.New(t)
	broker := kafkatest.StartProcess(t, t.TempDir())
	e := ittest.EnvOn(t, pg, broker.Addr())
	e.Exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.Config("kafkarestart", "public.load")
	cfg.Kafka.MaxInflightBytes = 32 << 10 // small, so the outage fills it
	r := ittest.Start(t, cfg)
	ittest.WriteLoad(t, e, "load", 10, 50, 100, 0)
	ittest.Consume(t, e.Kafka, 500, "kafkarestart.public.load")

	// The broker dies; Postgres keeps committing; the broker comes back.
	broker.Kill()
	ittest.WriteLoad(t, e, "load", 1, 50, 100, 500)
	afterFirst := e.LSN("SELECT pg_current_wal_lsn()")
	ittest.WriteLoad(t, e, "load", 9, 50, 100, 550)
	time.Sleep(2 * time.Second)
	// Memory is bounded: past the in-flight bound, reading from Postgres
	// waits (one message may overshoot it).
	m := r.P.Metrics()
	if inflight := ittest.Counter(m.InflightBytes); inflight > 32<<10+4096 {
		t.Fatalf("in-flight bytes %v over the 32 KiB bound", inflight)
	}
	if got := ittest.Counter(m.ChangesReceived); got >= 1000 {
		t.Fatalf("decoded %v changes while Kafka was down: reading did not wait", got)
	}
	// Nothing Kafka has not acknowledged may be confirmed to Postgres.
	if c := e.LSN("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_kafkarestart'"); c >= afterFirst {
		t.Fatalf("slot confirmed %X while Kafka was down, past the first unacknowledged transaction (ends before %X)", c, afterFirst)
	}
	broker.Start(t)
	ittest.WriteLoad(t, e, "load", 10, 50, 100, 1000)
	end := e.LSN("SELECT pg_current_wal_lsn()")

	evs := ittest.ConsumeDistinct(t, e.Kafka, "kafkarestart.public.load", 1500)
	ittest.CheckChanges(t, evs, 1500, true)
	// Once Kafka has everything, the slot follows within a few status updates.
	eventually.True(t, 10*time.Second, 100*time.Millisecond, "slot not confirmed up to the acknowledged writes", func() bool {
		return e.LSN("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_kafkarestart'") >= end
	})
	select {
	case err := <-r.Done:
		t.Fatalf("pipeline exited during the Kafka outage: %v", err)
	default:
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestResumeAgainstAnotherDatabaseIsUnsafe(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	cfg := e.Config("ident", "public.t")
	r := ittest.Start(t, cfg)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	// Same connector name and Kafka, another Postgres cluster.
	other := pgtest.New(t)
	if err := other.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	cfg2 := cfg
	cfg2.Postgres.URL = other.URL("postgres")
	err := ittest.RunToEnd(t, cfg2)
	var ue *connector.UnsafeResumeError
	if !errors.As(err, &ue) || connector.ExitCode(err) != connector.ExitUnsafeResume {
		t.Fatalf("want unsafe resume (exit 3), got %v", err)
	}
	if !strings.Contains(err.Error(), "system") || !strings.Contains(err.Error(), "start over") {
		t.Fatalf("message should say what changed and how to start over: %v", err)
	}

	// The slot dropped while offsets exist.
	e.DropSlot("mooncdc_ident")
	err = ittest.RunToEnd(t, cfg)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want unsafe resume for a missing slot, got %v", err)
	}
}

func TestBadSourceSettingsFailFastWithTheCause(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE present (id int PRIMARY KEY)`)
	cases := []struct {
		name string
		mod  func(*config.Config)
		want string
	}{
		{"no table matches", func(c *config.Config) { c.Postgres.Tables = []string{"public.absent"} }, "no table matches postgres.tables"},
		{"missing database", func(c *config.Config) { c.Postgres.URL = e.PG.URL("nosuchdb") }, "nosuchdb"},
		{"no tables and no publication", func(c *config.Config) { c.Postgres.Tables = nil }, "postgres.tables is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.Config("bad", "public.present")
			tc.mod(&cfg)
			start := time.Now()
			err := ittest.RunToEnd(t, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error naming %q, got %v", tc.want, err)
			}
			if connector.ExitCode(err) != connector.ExitRuntime {
				t.Fatalf("exit code %d, want %d", connector.ExitCode(err), connector.ExitRuntime)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("took %v: a permanent error must not be retried", d)
			}
		})
	}
}
