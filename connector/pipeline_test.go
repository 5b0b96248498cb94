package connector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/connecttest"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// env is one test's Postgres cluster and Kafka broker.
type env struct {
	t     *testing.T
	pg    *pgtest.Cluster
	kafka string
}

// newEnv gives the test a cluster and a broker of its own and runs it in
// parallel with the other tests that do (go test -parallel, GOMAXPROCS by
// default): each such test only waits on its own servers most of the time.
// A test that changes a package-level setting (the export_test.go
// setters) must not run beside others: it uses newSerialEnv.
func newEnv(t *testing.T) *env {
	t.Helper()
	if _, again := parallelTests.LoadOrStore(t, true); !again { // a test may make two envs
		t.Parallel()
	}
	return newSerialEnv(t)
}

var parallelTests sync.Map // *testing.T → true once newEnv made it parallel

// newSerialEnv is newEnv for a test that must run alone: one that changes
// a package-level setting, which every pipeline of the other tests reads.
func newSerialEnv(t *testing.T) *env {
	t.Helper()
	pg := pgtest.New(t)
	b := kafkatest.New(t)
	return &env{t: t, pg: pg, kafka: b.Addr()}
}

func (e *env) config(name string, tables ...string) config.Config {
	cfg := config.DefaultConfig()
	cfg.Name = name
	cfg.Postgres.URL = e.pg.URL("postgres")
	cfg.Postgres.Tables = tables
	cfg.Kafka.Brokers = []string{e.kafka}
	cfg.Metrics.Listen = ""
	return cfg
}

func (e *env) exec(sql string, args ...any) {
	e.t.Helper()
	if err := e.pg.Exec(context.Background(), "postgres", sql, args...); err != nil {
		e.t.Fatalf("exec %q: %v", sql, err)
	}
}

// scan runs a query returning one row into dest.
func (e *env) scan(query string, dest ...any) {
	e.t.Helper()
	conn, err := e.pg.Connect(context.Background(), "postgres")
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), query).Scan(dest...); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
}

// serverVersionNum is the server's server_version_num (150004 for 15.4).
func (e *env) serverVersionNum() int {
	e.t.Helper()
	var v int
	e.scan(`SELECT current_setting('server_version_num')::int`, &v)
	return v
}

// lsn runs a query returning one pg_lsn.
func (e *env) lsn(query string) uint64 {
	e.t.Helper()
	var s string
	e.scan("SELECT ("+query+")::text", &s)
	var hi, lo uint64
	if _, err := fmt.Sscanf(s, "%X/%X", &hi, &lo); err != nil {
		e.t.Fatalf("parse LSN %q: %v", s, err)
	}
	return hi<<32 | lo
}

// running is a pipeline started in the background.
type running struct {
	p      *connector.Pipeline
	cancel context.CancelFunc
	done   chan error
}

// start runs the pipeline and waits until it streams and every table is
// handed over (copied).
func start(t *testing.T, cfg config.Config) *running {
	t.Helper()
	r := startStreaming(t, cfg)
	r.waitHandedOver(t)
	return r
}

// waitHandedOver waits until every table the pipeline knows is ready or
// in catchup.
func (r *running) waitHandedOver(t *testing.T) {
	t.Helper()
	eventually.Succeeds(t, 90*time.Second, 20*time.Millisecond, func() error {
		ph := r.p.TablePhases()
		done := ph != nil
		for _, tb := range ph {
			if tb.Phase != "ready" && tb.Phase != "catchup" {
				done = false
			}
			if tb.Phase == "errored" && tb.Retry == "resnapshot" {
				t.Fatalf("table %s errored for good: %s", tb.Table, tb.LastError)
			}
		}
		if done {
			return nil
		}
		if stopped, err := r.stopped(); stopped {
			t.Fatalf("pipeline stopped before the tables were handed over: %v", err)
		}
		return fmt.Errorf("tables not handed over after 90s: %+v", ph)
	})
}

// stopped reports whether Run has returned, and its error, without
// waiting; a later stop or crash still sees the error.
func (r *running) stopped() (bool, error) {
	select {
	case err := <-r.done:
		r.done <- err
		return true, err
	default:
		return false, nil
	}
}

// startStreaming runs the pipeline and waits until the main worker streams.
func startStreaming(t *testing.T, cfg config.Config) *running {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatalf("new pipeline: %v", err)
	}
	r := runPipeline(t, p)
	r.waitReady(t)
	return r
}

// runPipeline runs p in the background; the test's cleanup aborts it.
func runPipeline(t *testing.T, p *connector.Pipeline) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{p: p, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() {
		r.p.Abort()
		cancel()
		<-r.done
	})
	return r
}

// waitReady waits until the main worker streams.
func (r *running) waitReady(t *testing.T) {
	t.Helper()
	eventually.True(t, 60*time.Second, 20*time.Millisecond, "pipeline not streaming after 60s", func() bool {
		if r.p.Ready() {
			return true
		}
		if stopped, err := r.stopped(); stopped {
			t.Fatalf("pipeline stopped before streaming: %v", err)
		}
		return false
	})
}

// stop stops cleanly and returns Run's error.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("pipeline did not stop within 60s")
		return nil
	}
}

// crash aborts without flushing, confirming or writing offsets.
func (r *running) crash(t *testing.T) {
	t.Helper()
	r.p.Abort()
	select {
	case err := <-r.done:
		r.done <- err
		if !errors.Is(err, connector.ErrAborted) {
			t.Fatalf("abort: want ErrAborted, got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pipeline did not abort within 30s")
	}
}

// event is a decoded data record.
type event struct {
	Key    map[string]any
	Before map[string]any `json:"before"`
	After  map[string]any `json:"after"`
	Op     string         `json:"op"`
	Source struct {
		Name     string `json:"name"`
		DB       string `json:"db"`
		Schema   string `json:"schema"`
		Table    string `json:"table"`
		Snapshot string `json:"snapshot"`
		TxID     *int64 `json:"txId"`
		LSN      int64  `json:"lsn"`
		Sequence string `json:"sequence"`
		Conn     string `json:"connector"`
	} `json:"source"`
	Tombstone bool
	Message   *struct {
		Prefix  string `json:"prefix"`
		Content []byte `json:"content"`
	} `json:"message"`
	Transaction *struct {
		ID         string `json:"id"`
		TotalOrder int    `json:"total_order"`
	} `json:"transaction"`
	Offset int64
}

// decode decodes plain JSON records. Records in JsonConverter's enveloped
// form (format.json_schemas) are checked with JsonConverter's rules first,
// so every such record a test reads is one a Connect sink can read, and
// then decoded from their payload.
func decode(t *testing.T, recs []*kgo.Record) []event {
	t.Helper()
	out := make([]event, 0, len(recs))
	for _, r := range recs {
		r = unwrapConnect(t, r)
		var ev event
		if r.Key != nil {
			if err := json.Unmarshal(r.Key, &ev.Key); err != nil {
				t.Fatalf("key %q: %v", r.Key, err)
			}
		}
		if r.Value == nil {
			ev.Tombstone = true
		} else if err := json.Unmarshal(r.Value, &ev); err != nil {
			t.Fatalf("value %q: %v", r.Value, err)
		}
		ev.Offset = r.Offset
		out = append(out, ev)
	}
	return out
}

// unwrapConnect returns r with its key and value replaced by their
// payloads when they are in JsonConverter's enveloped form, after checking
// them with JsonConverter's rules; other records are returned as they are.
func unwrapConnect(t *testing.T, r *kgo.Record) *kgo.Record {
	t.Helper()
	payload := func(b []byte) ([]byte, bool) {
		var env struct {
			Schema  json.RawMessage `json:"schema"`
			Payload json.RawMessage `json:"payload"`
		}
		if len(b) == 0 || json.Unmarshal(b, &env) != nil || env.Schema == nil {
			return b, false
		}
		if err := connecttest.Validate(b); err != nil {
			t.Errorf("%s offset %d: Kafka Connect's JsonConverter would refuse %s: %v", r.Topic, r.Offset, b, err)
		}
		return env.Payload, true
	}
	key, k := payload(r.Key)
	value, v := payload(r.Value)
	if !k && !v {
		return r
	}
	c := *r
	c.Key, c.Value = key, value
	if string(value) == "null" {
		c.Value = nil
	}
	return &c
}

func consume(t *testing.T, addr string, n int, topics ...string) []event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, addr, n, topics...)
	if n >= 0 && len(recs) < n {
		t.Fatalf("consumed %d records of %d expected from %v", len(recs), n, topics)
	}
	return decode(t, recs)
}

// consumeDistinct reads topic until its records carry total distinct values
// of n (duplicates allowed) or 90 s pass.
func consumeDistinct(t *testing.T, addr, topic string, total int) []event {
	t.Helper()
	var evs []event
	eventually.Within(90*time.Second, 200*time.Millisecond, func() bool {
		evs = consume(t, addr, -1, topic)
		seen := make(map[float64]bool)
		for _, ev := range evs {
			if ev.After != nil {
				seen[ev.After["n"].(float64)] = true
			}
		}
		return len(seen) >= total
	})
	return evs
}

func TestStreamRoundTripInsertUpdateDeleteTruncate(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE public.orders (id bigint PRIMARY KEY, note text, amount numeric(10,2), paid boolean, at timestamptz, doc jsonb)`)
	e.exec(`CREATE TABLE public.audit (k int PRIMARY KEY, v text)`)
	e.exec(`ALTER TABLE public.audit REPLICA IDENTITY FULL`)
	cfg := e.config("shop", "public.*")
	cfg.Format.DecimalHandlingMode = "string"       // readable amounts; precise is the default, tested in types_test.go
	cfg.Format.SkippedOperations = []string{"none"} // write the truncate (Debezium skips it by default)
	r := start(t, cfg)

	e.exec(`INSERT INTO orders VALUES (1, 'first', 12.50, true, '2024-01-02 03:04:05.123456+00', '{"a": 1}')`)
	e.exec(`UPDATE orders SET note = 'second', amount = 99.99 WHERE id = 1`)
	e.exec(`UPDATE orders SET id = 2 WHERE id = 1`)
	e.exec(`DELETE FROM orders WHERE id = 2`)
	e.exec(`INSERT INTO audit VALUES (7, 'x')`)
	e.exec(`UPDATE audit SET v = 'y' WHERE k = 7`)
	e.exec(`DELETE FROM audit WHERE k = 7`)
	e.exec(`TRUNCATE orders`)
	e.exec(`SELECT pg_logical_emit_message(true, 'app', 'hello')`)

	orders := consume(t, e.kafka, 8, "shop.public.orders")
	// The message is the last transaction: once it is in Kafka, all is.
	msgs := consume(t, e.kafka, 1, "shop.message")
	if err := r.stop(t); err != nil {
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

	audit := consume(t, e.kafka, 4, "shop.public.audit")
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

// writeLoad runs n transactions of perTx updates/inserts over keys [0,keys).
func writeLoad(t *testing.T, e *env, table string, txs, perTx, keys int, startAt int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for i := 0; i < txs; i++ {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < perTx; j++ {
			n := startAt + i*perTx + j
			if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", n%keys, n); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// checkChanges asserts that the change records on topic carry every value
// of n in [0,total) exactly once (or at least once when dups is true) and
// that, per key, n only grows: commit order per key.
func checkChanges(t *testing.T, evs []event, total int, allowDups bool) {
	t.Helper()
	seen := make(map[int64]int)
	last := make(map[int64]int64)
	for _, ev := range evs {
		if ev.Tombstone || ev.After == nil {
			continue
		}
		n := int64(ev.After["n"].(float64))
		id := int64(ev.After["id"].(float64))
		seen[n]++
		if seen[n] > 1 {
			// A repeat after a crash: at-least-once allows it; order is
			// judged on first appearances.
			continue
		}
		if prev, ok := last[id]; ok && n < prev {
			t.Fatalf("key %d: n=%d after n=%d: per-key order broken", id, n, prev)
		}
		if n > last[id] {
			last[id] = n
		}
	}
	var missing, dup []int
	for i := 0; i < total; i++ {
		switch c := seen[int64(i)]; {
		case c == 0:
			missing = append(missing, i)
		case c > 1 && !allowDups:
			dup = append(dup, i)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d changes lost, first %v", len(missing), missing[:min(10, len(missing))])
	}
	if len(dup) > 0 {
		t.Fatalf("%d changes duplicated, first %v", len(dup), dup[:min(10, len(dup))])
	}
	if len(seen) != total {
		t.Fatalf("unexpected values: saw %d distinct, want %d", len(seen), total)
	}
	repeats := 0
	for _, c := range seen {
		repeats += c - 1
	}
	t.Logf("%d change records, %d distinct changes, %d repeats", len(evs), total, repeats)
}

func TestStreamTenThousandChangesOnceEachInKeyOrder(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.config("bulk", "public.load")
	cfg.Kafka.TopicPartitions = 4
	r := start(t, cfg)
	writeLoad(t, e, "load", 200, 50, 500, 0)
	evs := consume(t, e.kafka, 10000, "bulk.public.load")
	if len(evs) != 10000 {
		t.Fatalf("got %d records, want 10000", len(evs))
	}
	checkChanges(t, evs, 10000, false)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestRestartAfterCleanStopLosesAndRepeatsNothing(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.config("restart", "public.load")
	r := start(t, cfg)
	writeLoad(t, e, "load", 20, 50, 100, 0)
	consume(t, e.kafka, 1000, "restart.public.load")
	// Writes continue while the pipeline stops: some land before, some
	// during, some after the stop.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeLoad(t, e, "load", 20, 50, 100, 1000) }()
	if err := r.stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	wg.Wait()
	writeLoad(t, e, "load", 20, 50, 100, 2000)
	r = start(t, cfg)
	writeLoad(t, e, "load", 20, 50, 100, 3000)
	evs := consume(t, e.kafka, 4000, "restart.public.load")
	checkChanges(t, evs, 4000, false)
	// Nothing beyond the 4000: a duplicate would show up as an extra record.
	time.Sleep(500 * time.Millisecond)
	if all := consume(t, e.kafka, -1, "restart.public.load"); len(all) != 4000 {
		t.Fatalf("%d records after a clean restart, want exactly 4000", len(all))
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestCrashMidStreamLosesNothing(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.config("crash", "public.load")
	r := start(t, cfg)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeLoad(t, e, "load", 100, 50, 300, 0) }()
	// Crash while the load is being streamed.
	eventually.True(t, 30*time.Second, 5*time.Millisecond, "no progress before crash", func() bool {
		return r.p.Metrics() != nil && testCounter(r.p.Metrics().ChangesReceived) >= 1000
	})
	r.crash(t)
	wg.Wait()
	r = start(t, cfg)
	evs := consumeDistinct(t, e.kafka, "crash.public.load", 5000)
	checkChanges(t, evs, 5000, true)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// writeLoadRetrying is writeLoad for a database that goes away: a failed
// transaction is retried on a new connection until it commits. A retried
// commit whose first attempt did commit writes the same values again, which
// checkChanges counts as repeats.
func writeLoadRetrying(t *testing.T, e *env, table string, txs, perTx, keys, startAt int) {
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
			c, err := pgx.Connect(ctx, e.pg.URL("postgres"))
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
	e := newEnv(t)
	e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.config("pgrestart", "public.load")
	r := start(t, cfg)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); writeLoadRetrying(t, e, "load", 150, 20, 100, 0) }()
	for _, mode := range []string{"fast", "immediate", "fast"} {
		time.Sleep(300 * time.Millisecond)
		if err := e.pg.Restart(context.Background(), mode); err != nil {
			t.Fatalf("restart postgres (%s): %v", mode, err)
		}
	}
	wg.Wait()
	evs := consumeDistinct(t, e.kafka, "pgrestart.public.load", 3000)
	checkChanges(t, evs, 3000, true)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "not streaming again after Postgres restarts", r.p.Ready)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestKafkaRestartMidStreamRecoversByItself(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	pg := pgtest.New(t)
	broker := kafkatest.StartProcess(t, t.TempDir())
	e := &env{t: t, pg: pg, kafka: broker.Addr()}
	e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
	cfg := e.config("kafkarestart", "public.load")
	cfg.Kafka.MaxInflightBytes = 32 << 10 // small, so the outage fills it
	r := start(t, cfg)
	writeLoad(t, e, "load", 10, 50, 100, 0)
	consume(t, e.kafka, 500, "kafkarestart.public.load")

	// The broker dies; Postgres keeps committing; the broker comes back.
	broker.Kill()
	writeLoad(t, e, "load", 1, 50, 100, 500)
	afterFirst := e.lsn("SELECT pg_current_wal_lsn()")
	writeLoad(t, e, "load", 9, 50, 100, 550)
	time.Sleep(2 * time.Second)
	// Memory is bounded: past the in-flight bound, reading from Postgres
	// waits (one message may overshoot it).
	m := r.p.Metrics()
	if inflight := testCounter(m.InflightBytes); inflight > 32<<10+4096 {
		t.Fatalf("in-flight bytes %v over the 32 KiB bound", inflight)
	}
	if got := testCounter(m.ChangesReceived); got >= 1000 {
		t.Fatalf("decoded %v changes while Kafka was down: reading did not wait", got)
	}
	// Nothing Kafka has not acknowledged may be confirmed to Postgres.
	if c := e.lsn("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_kafkarestart'"); c >= afterFirst {
		t.Fatalf("slot confirmed %X while Kafka was down, past the first unacknowledged transaction (ends before %X)", c, afterFirst)
	}
	broker.Start(t)
	writeLoad(t, e, "load", 10, 50, 100, 1000)
	end := e.lsn("SELECT pg_current_wal_lsn()")

	evs := consumeDistinct(t, e.kafka, "kafkarestart.public.load", 1500)
	checkChanges(t, evs, 1500, true)
	// Once Kafka has everything, the slot follows within a few status updates.
	eventually.True(t, 10*time.Second, 100*time.Millisecond, "slot not confirmed up to the acknowledged writes", func() bool {
		return e.lsn("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_kafkarestart'") >= end
	})
	select {
	case err := <-r.done:
		t.Fatalf("pipeline exited during the Kafka outage: %v", err)
	default:
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestResumeAgainstAnotherDatabaseIsUnsafe(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE t (id int PRIMARY KEY)`)
	cfg := e.config("ident", "public.t")
	r := start(t, cfg)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	// Same connector name and Kafka, another Postgres cluster.
	other := pgtest.New(t)
	if err := other.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	cfg2 := cfg
	cfg2.Postgres.URL = other.URL("postgres")
	err := runToEnd(t, cfg2)
	var ue *connector.UnsafeResumeError
	if !errors.As(err, &ue) || connector.ExitCode(err) != connector.ExitUnsafeResume {
		t.Fatalf("want unsafe resume (exit 3), got %v", err)
	}
	if !strings.Contains(err.Error(), "system") || !strings.Contains(err.Error(), "start over") {
		t.Fatalf("message should say what changed and how to start over: %v", err)
	}

	// The slot dropped while offsets exist.
	e.exec(`SELECT pg_drop_replication_slot('mooncdc_ident')`)
	err = runToEnd(t, cfg)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want unsafe resume for a missing slot, got %v", err)
	}
}

func runToEnd(t *testing.T, cfg config.Config) error {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return p.Run(ctx)
}

func testCounter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

func TestBadSourceSettingsFailFastWithTheCause(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE present (id int PRIMARY KEY)`)
	cases := []struct {
		name string
		mod  func(*config.Config)
		want string
	}{
		{"no table matches", func(c *config.Config) { c.Postgres.Tables = []string{"public.absent"} }, "no table matches postgres.tables"},
		{"missing database", func(c *config.Config) { c.Postgres.URL = e.pg.URL("nosuchdb") }, "nosuchdb"},
		{"no tables and no publication", func(c *config.Config) { c.Postgres.Tables = nil }, "postgres.tables is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.config("bad", "public.present")
			tc.mod(&cfg)
			start := time.Now()
			err := runToEnd(t, cfg)
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
