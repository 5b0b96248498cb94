package ittest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
)

// Config is the configuration of a pipeline called name on the test's
// database and broker, capturing tables. On the shared cluster it claims
// name (the default slot mooncdc_<name>) for the test: a test of the
// package running at the same time that asks for the same name waits.
func (e *Env) Config(name string, tables ...string) config.Config {
	if e.PG.shared {
		claimName(e.T, name)
	}
	cfg := config.DefaultConfig()
	cfg.Name = name
	cfg.Postgres.URL = e.PG.URL("postgres")
	cfg.Postgres.Tables = tables
	cfg.Kafka.Brokers = []string{e.Kafka}
	cfg.Metrics.Listen = ""
	return cfg
}

// Exec runs sql in the test's database; an error fails the test.
func (e *Env) Exec(sql string, args ...any) {
	e.T.Helper()
	if err := e.PG.Exec(context.Background(), "postgres", sql, args...); err != nil {
		e.T.Fatalf("exec %q: %v", sql, err)
	}
}

// Scan runs a query returning one row into dest.
func (e *Env) Scan(query string, dest ...any) {
	e.T.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), query).Scan(dest...); err != nil {
		e.T.Fatalf("%s: %v", query, err)
	}
}

// ServerVersionNum is the server's server_version_num (150004 for 15.4).
func (e *Env) ServerVersionNum() int {
	e.T.Helper()
	var v int
	e.Scan(`SELECT current_setting('server_version_num')::int`, &v)
	return v
}

// LSN runs a query returning one pg_lsn.
func (e *Env) LSN(query string) uint64 {
	e.T.Helper()
	var s string
	e.Scan("SELECT ("+query+")::text", &s)
	var hi, lo uint64
	if _, err := fmt.Sscanf(s, "%X/%X", &hi, &lo); err != nil {
		e.T.Fatalf("parse LSN %q: %v", s, err)
	}
	return hi<<32 | lo
}

// Running is a pipeline started in the background.
type Running struct {
	P      *connector.Pipeline
	Cancel context.CancelFunc
	Done   chan error
}

// Start runs the pipeline and waits until it streams and every table is
// handed over (copied).
func Start(t *testing.T, cfg config.Config) *Running {
	t.Helper()
	r := StartStreaming(t, cfg)
	r.WaitHandedOver(t)
	return r
}

// WaitHandedOver waits until every table the pipeline knows is ready or
// in catchup.
func (r *Running) WaitHandedOver(t *testing.T) {
	t.Helper()
	eventually.Succeeds(t, 90*time.Second, 20*time.Millisecond, func() error {
		ph := r.P.TablePhases()
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
		if stopped, err := r.Stopped(); stopped {
			t.Fatalf("pipeline stopped before the tables were handed over: %v", err)
		}
		return fmt.Errorf("tables not handed over after 90s: %+v", ph)
	})
}

// Stopped reports whether Run has returned, and its error, without
// waiting; a later stop or crash still sees the error.
func (r *Running) Stopped() (bool, error) {
	select {
	case err := <-r.Done:
		r.Done <- err
		return true, err
	default:
		return false, nil
	}
}

// StartStreaming runs the pipeline (with the test's tuning, Tune) and
// waits until the main worker streams.
func StartStreaming(t *testing.T, cfg config.Config) *Running {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)), Options(t)...)
	if err != nil {
		t.Fatalf("new pipeline: %v", err)
	}
	r := RunPipeline(t, p)
	r.WaitReady(t)
	return r
}

// RunPipeline runs p in the background; the test's cleanup aborts it.
func RunPipeline(t *testing.T, p *connector.Pipeline) *Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{P: p, Cancel: cancel, Done: make(chan error, 1)}
	go func() { r.Done <- p.Run(ctx) }()
	t.Cleanup(func() {
		r.P.Abort()
		cancel()
		<-r.Done
	})
	return r
}

// WaitReady waits until the main worker streams.
func (r *Running) WaitReady(t *testing.T) {
	t.Helper()
	eventually.True(t, 60*time.Second, 20*time.Millisecond, "pipeline not streaming after 60s", func() bool {
		if r.P.Ready() {
			return true
		}
		if stopped, err := r.Stopped(); stopped {
			t.Fatalf("pipeline stopped before streaming: %v", err)
		}
		return false
	})
}

// WaitDurable waits until the pipeline's durable LSN (everything before
// it decided by the main worker and acknowledged) is at least lsn: the
// main worker has passed lsn.
func (r *Running) WaitDurable(t *testing.T, lsn uint64) {
	t.Helper()
	eventually.Succeeds(t, 60*time.Second, 10*time.Millisecond, func() error {
		s := r.P.Status().DurableLSN
		var hi, lo uint64
		if _, err := fmt.Sscanf(s, "%X/%X", &hi, &lo); err != nil {
			return fmt.Errorf("durable LSN %q: %w", s, err)
		}
		if hi<<32|lo < lsn {
			return fmt.Errorf("durable LSN %s, want at least %X/%X", s, lsn>>32, uint32(lsn))
		}
		return nil
	})
}

// Stop stops cleanly and returns Run's error.
func (r *Running) Stop(t *testing.T) error {
	t.Helper()
	r.Cancel()
	select {
	case err := <-r.Done:
		r.Done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("pipeline did not stop within 60s")
		return nil
	}
}

// Crash aborts without flushing, confirming or writing offsets.
func (r *Running) Crash(t *testing.T) {
	t.Helper()
	r.P.Abort()
	select {
	case err := <-r.Done:
		r.Done <- err
		if !errors.Is(err, connector.ErrAborted) {
			t.Fatalf("abort: want ErrAborted, got %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("pipeline did not abort within 30s")
	}
}

// Event is a decoded data record.
type Event struct {
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
	// Where the record is: its offset and partition, and the
	// producer (id and epoch) that wrote it, so that a check that finds a
	// record twice can say which writer wrote each.
	Offset        int64
	Partition     int32
	ProducerID    int64
	ProducerEpoch int16
}

// Decode decodes plain JSON records. Records in JsonConverter's enveloped
// form (format.json_schemas) are checked with JsonConverter's rules first,
// so every such record a test reads is one a Connect sink can read, and
// then decoded from their payload.
func Decode(t *testing.T, recs []*kgo.Record) []Event {
	t.Helper()
	out := make([]Event, 0, len(recs))
	for _, r := range recs {
		r = UnwrapConnect(t, r)
		var ev Event
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
		ev.Offset, ev.Partition, ev.ProducerID, ev.ProducerEpoch = r.Offset, r.Partition, r.ProducerID, r.ProducerEpoch
		out = append(out, ev)
	}
	return out
}

// UnwrapConnect returns r with its key and value replaced by their
// payloads when they are in JsonConverter's enveloped form, after checking
// them with JsonConverter's rules; other records are returned as they are.
func UnwrapConnect(t *testing.T, r *kgo.Record) *kgo.Record {
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

// Consume reads and decodes n records of topics within 90 s (n < 0: what
// is there).
func Consume(t *testing.T, addr string, n int, topics ...string) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, addr, n, topics...)
	if n >= 0 && len(recs) < n {
		t.Fatalf("consumed %d records of %d expected from %v", len(recs), n, topics)
	}
	return Decode(t, recs)
}

// ConsumeDistinct reads topic until its records carry total distinct values
// of n (duplicates allowed) or 90 s pass.
func ConsumeDistinct(t *testing.T, addr, topic string, total int) []Event {
	t.Helper()
	var evs []Event
	eventually.Within(90*time.Second, 200*time.Millisecond, func() bool {
		evs = Consume(t, addr, -1, topic)
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

// WriteLoad runs n transactions of perTx updates/inserts over keys [0,keys).
func WriteLoad(t *testing.T, e *Env, table string, txs, perTx, keys int, startAt int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.PG.URL("postgres"))
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

// CheckChanges asserts that the change records on topic carry every value
// of n in [0,total) exactly once (or at least once when dups is true) and
// that, per key, n only grows: commit order per key.
func CheckChanges(t *testing.T, evs []Event, total int, allowDups bool) {
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

// RunToEnd runs a pipeline (with the test's tuning, Tune) until Run
// returns (at most 60 s) and returns its error.
func RunToEnd(t *testing.T, cfg config.Config) error {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t), Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return p.Run(ctx)
}

// Counter is the value of a counter or gauge with one series.
func Counter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }
