package incremental

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// start runs a pipeline on cfg, with the drop rule off when
// MOONCDC_TEST_INCREMENTAL_NO_DROPS=1 (to see the tests fail without it).
func start(t *testing.T, cfg config.Config) *ittest.Running {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)), ittest.Options(t)...)
	if err != nil {
		t.Fatal(err)
	}
	if m := os.Getenv("MOONCDC_TEST_INCREMENTAL_DELIVERY"); m != "" {
		cfg.Kafka.Delivery = config.Delivery(m)
	}
	if os.Getenv("MOONCDC_TEST_INCREMENTAL_NO_DROPS") == "1" {
		p.DisableIncrementalDrops()
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	return r
}

// readAll reads every record of topic (n < 0), or at least n.
func readAll(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, addr, n, topic)
	if n >= 0 && len(recs) < n {
		t.Fatalf("read %d records of %d from %s", len(recs), n, topic)
	}
	return recs
}

// rebuild applies evs in order, as a consumer that keeps the last record
// per key: a create, update or read sets the key's row, a delete or a
// tombstone removes it. It returns id → v.
func rebuild(t *testing.T, evs []ittest.Event) map[int64]int64 {
	t.Helper()
	rows := map[int64]int64{}
	for _, ev := range evs {
		id := int64(ev.Key["id"].(float64))
		switch {
		case ev.Tombstone, ev.Op == "d":
			delete(rows, id)
		case ev.Op == "c", ev.Op == "u", ev.Op == "r":
			rows[id] = int64(ev.After["v"].(float64))
		default:
			t.Fatalf("unexpected record %+v", ev)
		}
	}
	return rows
}

// tableRows is SELECT id, v of table.
func tableRows(t *testing.T, e *ittest.Env, table string) map[int64]int64 {
	t.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rs, err := conn.Query(context.Background(), "SELECT id, v FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]int64{}
	for rs.Next() {
		var id, v int64
		if err := rs.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameRows fails the test with the differences of got (the rebuilt
// topic) from want (the table).
func sameRows(t *testing.T, got, want map[int64]int64) {
	t.Helper()
	var lost, extra, wrong []string
	for id, v := range want {
		g, ok := got[id]
		switch {
		case !ok:
			lost = append(lost, fmt.Sprint(id))
		case g != v:
			wrong = append(wrong, fmt.Sprintf("%d: topic %d, table %d", id, g, v))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			extra = append(extra, fmt.Sprint(id))
		}
	}
	sort.Strings(lost)
	sort.Strings(extra)
	sort.Strings(wrong)
	if len(lost)+len(extra)+len(wrong) > 0 {
		t.Fatalf("the rebuilt topic is not the table (%d rows): %d lost %v, %d extra %v, %d with an older value %v",
			len(want), len(lost), head(lost), len(extra), head(extra), len(wrong), head(wrong))
	}
}

func head(s []string) []string { return s[:min(len(s), 8)] }

// load writes small transactions to table (id bigint key, v int) until ctx
// ends: inserts of new ids, updates, deletes and key changes of random
// ids in [1, maxID]. It returns the number of transactions committed.
func load(ctx context.Context, t *testing.T, e *ittest.Env, table string, maxID int64, next *atomic.Int64) int {
	conn, err := pgx.Connect(ctx, e.PG.URL("postgres"))
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for ctx.Err() == nil {
		id := 1 + rng.Int64N(maxID)
		var sql string
		var args []any
		switch op := rng.IntN(10); {
		case op < 2:
			sql, args = "INSERT INTO "+table+" (id, v) VALUES ($1, 1)", []any{next.Add(1)}
		case op < 8:
			sql, args = "UPDATE "+table+" SET v = v + 1 WHERE id = $1", []any{id}
		case op < 9:
			sql, args = "DELETE FROM "+table+" WHERE id = $1", []any{id}
		default:
			// A key change: a delete of the old key and a create of the
			// new one in the topic.
			sql, args = "UPDATE "+table+" SET id = $2, v = v + 1 WHERE id = $1", []any{id, next.Add(1)}
		}
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			if ctx.Err() != nil {
				break
			}
			t.Errorf("load: %s: %v", sql, err)
			return n
		}
		n++
	}
	return n
}

// waitIncremental waits until the table's record shows an incremental
// snapshot, then until it shows none (done).
func waitIncremental(t *testing.T, r *ittest.Running, table string, within time.Duration) {
	t.Helper()
	eventually.True(t, 30*time.Second, 2*time.Millisecond, "the incremental snapshot did not start", func() bool {
		return r.P.TablePhases()[table].Incremental != ""
	})
	eventually.True(t, within, 20*time.Millisecond, "the incremental snapshot did not end", func() bool {
		if stopped, err := r.Stopped(); stopped {
			t.Fatalf("pipeline stopped: %v", err)
		}
		return r.P.TablePhases()[table].Incremental == ""
	})
}

// progress is the part of the table's incremental progress a test reads.
type progress struct {
	Pages      uint32      `json:"pages"`
	Done       [][2]uint32 `json:"done"`
	ChunkPages uint32      `json:"chunk_pages"`
}

func parseProgress(t *testing.T, raw string) progress {
	t.Helper()
	var p progress
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("incremental progress %q: %v", raw, err)
	}
	return p
}

// hasValue reports whether topic's last record with key holds want in its
// value (false on any error: the caller polls). Safe off the test
// goroutine.
func hasValue(addr, topic, key, want string) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var last []byte
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Key) == key {
				last = r.Value
			}
		})
		if last != nil && strings.Contains(string(last), want) {
			return true
		}
	}
	return false
}
