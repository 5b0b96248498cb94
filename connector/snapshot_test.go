package connector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// resnapshot asks for a re-copy the way `mooncdc resnapshot` does: a table
// record back to init with a newer resnapshot_ms, an incremental re-copy
// (cmd/mooncdc/resnapshot.go).
func resnapshot(t *testing.T, name string, e *env, r *running, tables ...string) {
	t.Helper()
	client, err := kgo.NewClient(kgo.SeedBrokers(e.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, tb := range tables {
		cur := r.p.TablePhases()[tb]
		rec := offsets.TableRecord("mooncdc-offsets", name, offsets.Table{Table: tb, OID: cur.OID, Phase: offsets.PhaseInit,
			ResnapshotMs: time.Now().UnixMilli(), UpdatedMs: time.Now().UnixMilli(), ResnapshotType: offsets.ResnapshotIncremental})
		if err := client.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// mutator writes random inserts, updates and deletes to tables (id int
// primary key, n bigint), each upsert with a new n, and remembers, per
// table and key, the sequence of events in commit order: n, or -1 for a
// delete. One connection, so commit order is the order written.
type mutator struct {
	t      *testing.T
	e      *env
	tables []string
	keys   int
	mu     sync.Mutex
	events map[string]map[int][]int64
	exists map[string]map[int]bool
	n      int64
	rng    *rand.Rand
}

func newMutator(t *testing.T, e *env, keys int, tables ...string) *mutator {
	m := &mutator{t: t, e: e, tables: tables, keys: keys, events: map[string]map[int][]int64{}, exists: map[string]map[int]bool{},
		rng: rand.New(rand.NewPCG(1, 2))}
	for _, tb := range tables {
		m.events[tb] = map[int][]int64{}
		m.exists[tb] = map[int]bool{}
	}
	return m
}

// seed inserts rows [0,rows) with n = 0 before the pipeline starts.
func (m *mutator) seed(table string, rows int) {
	m.e.exec(fmt.Sprintf(`INSERT INTO %s (id, n) SELECT g, 0 FROM generate_series(0, %d) g`, table, rows-1))
	for i := 0; i < rows; i++ {
		m.events[table][i] = append(m.events[table][i], 0)
		m.exists[table][i] = true
	}
}

// run writes transactions until ctx is done or count transactions.
func (m *mutator) run(ctx context.Context, count int) {
	conn, err := pgx.Connect(context.Background(), m.e.pg.URL("postgres"))
	if err != nil {
		m.t.Error(err)
		return
	}
	defer conn.Close(context.Background())
	for i := 0; i < count && ctx.Err() == nil; i++ {
		type ev struct {
			table string
			key   int
			n     int64
		}
		var evs []ev
		err := pgx.BeginFunc(context.Background(), conn, func(tx pgx.Tx) error {
			evs = evs[:0]
			for j := 0; j < 1+m.rng.IntN(4); j++ {
				tb := m.tables[m.rng.IntN(len(m.tables))]
				k := m.rng.IntN(m.keys)
				if m.exists[tb][k] && m.rng.IntN(5) == 0 {
					if _, err := tx.Exec(context.Background(), "DELETE FROM "+tb+" WHERE id = $1", k); err != nil {
						return err
					}
					evs = append(evs, ev{tb, k, -1})
					continue
				}
				m.n++
				if _, err := tx.Exec(context.Background(), "INSERT INTO "+tb+" (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", k, m.n); err != nil {
					return err
				}
				evs = append(evs, ev{tb, k, m.n})
			}
			return nil
		})
		if err != nil {
			m.t.Errorf("mutator: %v", err)
			return
		}
		m.mu.Lock()
		for _, v := range evs {
			m.events[v.table][v.key] = append(m.events[v.table][v.key], v.n)
			m.exists[v.table][v.key] = v.n >= 0
		}
		m.mu.Unlock()
	}
}

// tableView is a table rebuilt from its topic, and per key the record events.
type tableView struct {
	rows    map[int]int64
	records map[int][]recEvent
	reads   int
}

type recEvent struct {
	op string
	n  int64
}

func rebuild(t *testing.T, evs []event) tableView {
	v := tableView{rows: map[int]int64{}, records: map[int][]recEvent{}}
	for _, ev := range evs {
		if ev.Op == "t" {
			v.rows = map[int]int64{}
			continue
		}
		if ev.Key == nil {
			t.Fatalf("record without key: %+v", ev)
		}
		id := int(ev.Key["id"].(float64))
		switch {
		case ev.Tombstone:
			delete(v.rows, id)
			if recs := v.records[id]; len(recs) == 0 || recs[len(recs)-1].op != "d" {
				// Not after a delete: a re-copy's tombstone for a key its
				// snapshot no longer has.
				v.records[id] = append(v.records[id], recEvent{"x", -1})
			}
		case ev.Op == "d":
			delete(v.rows, id)
			v.records[id] = append(v.records[id], recEvent{"d", -1})
		default:
			n := int64(ev.After["n"].(float64))
			v.rows[id] = n
			v.records[id] = append(v.records[id], recEvent{ev.Op, n})
			if ev.Op == "r" {
				v.reads++
			}
		}
	}
	return v
}

func (e *env) tableRows(table string) map[int]int64 {
	e.t.Helper()
	conn, err := e.pg.Connect(context.Background(), "postgres")
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), "SELECT id, n FROM "+table)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int]int64{}
	for rows.Next() {
		var id int
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			e.t.Fatal(err)
		}
		out[id] = n
	}
	return out
}

// converge reads the table's topic until, rebuilt, it equals the table.
func converge(t *testing.T, e *env, prefix, table string) tableView {
	t.Helper()
	want := e.tableRows(table)
	var v tableView
	eventually.Succeeds(t, 90*time.Second, 200*time.Millisecond, func() error {
		v = rebuild(t, consume(t, e.kafka, -1, prefix+".public."+table))
		if diff := diffRows(v.rows, want); diff != "" {
			return fmt.Errorf("table %s rebuilt from Kafka differs from Postgres: %s", table, diff)
		}
		return nil
	})
	return v
}

func diffRows(got, want map[int]int64) string {
	var out []string
	for id, n := range want {
		if g, ok := got[id]; !ok {
			out = append(out, fmt.Sprintf("missing id %d", id))
		} else if g != n {
			out = append(out, fmt.Sprintf("id %d: n=%d, want %d", id, g, n))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			out = append(out, fmt.Sprintf("extra id %d", id))
		}
	}
	if len(out) == 0 {
		return ""
	}
	sort.Strings(out)
	return fmt.Sprintf("%d differences, e.g. %v", len(out), out[:min(5, len(out))])
}

// checkExactlyOnceAfterSnapshot: per key, the change records (c, u, d) are
// exactly the writer's events after the state the snapshot row shows, in
// order: none lost, none doubled, none reordered.
func checkExactlyOnceAfterSnapshot(t *testing.T, table string, v tableView, events map[int][]int64) {
	t.Helper()
	for key, writes := range events {
		recs := v.records[key]
		var changes []int64
		start := 0 // index in writes after the snapshot's state
		snapshotSeen := false
		for _, r := range recs {
			if r.op == "x" {
				// A stale-key tombstone starts the records (see
				// checkAfterLastSnapshot): the key was absent from that snapshot.
				continue
			}
			if r.op == "r" {
				if snapshotSeen {
					t.Fatalf("%s key %d: two snapshot rows %v", table, key, recs)
				}
				snapshotSeen = true
				idx := -1
				for i, w := range writes {
					if w == r.n {
						idx = i
					}
				}
				if idx < 0 {
					t.Fatalf("%s key %d: snapshot row n=%d was never written (writes %v)", table, key, r.n, writes)
				}
				start = idx + 1
				continue
			}
			changes = append(changes, r.n)
		}
		if !snapshotSeen {
			// Absent from the snapshot: the changes start after a delete, or
			// at the first write.
			start = len(writes) - len(changes)
			if start < 0 || (start > 0 && writes[start-1] != -1) {
				t.Fatalf("%s key %d: changes %v are not a suffix after a delete of writes %v", table, key, changes, writes)
			}
		}
		suffix := writes[start:]
		if fmt.Sprint(suffix) != fmt.Sprint(changes) {
			t.Fatalf("%s key %d: change records %v, want the writes after the snapshot %v (all writes %v, records %v)",
				table, key, changes, suffix, writes, recs)
		}
	}
}

func TestSnapshotThreeTablesUnderWritesRebuildEqualAndChangesOnce(t *testing.T) {
	e := newEnv(t)
	for _, tb := range []string{"big", "mid", "empty"} {
		e.exec(`CREATE TABLE ` + tb + ` (id int PRIMARY KEY, n bigint)`)
	}
	m := newMutator(t, e, 120000, "big", "mid", "empty")
	m.seed("big", 100000)
	m.seed("mid", 10000)
	e.exec(`ANALYZE big`) // so the big table is copied in ctid ranges
	cfg := e.config("snap", "public.big", "public.mid", "public.empty")
	cfg.Snapshot.ChunkRows = 20000
	cfg.Snapshot.ConnectionsPerTable = 4 // ranges copied in parallel, whatever the machine's default
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.run(ctx, 1<<30) }()
	r := start(t, cfg) // the writer runs through the copies and the handovers
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	for _, tb := range []string{"big", "mid", "empty"} {
		v := converge(t, e, "snap", tb)
		checkExactlyOnceAfterSnapshot(t, tb, v, m.events[tb])
		t.Logf("%s: %d rows, %d snapshot records", tb, len(v.rows), v.reads)
	}
	if n := testCounter(r.p.Metrics().TableCopyRows.WithLabelValues("public.big")); n < 100000*0.9 {
		t.Errorf("mooncdc_table_copy_rows_total{table=public.big} = %v", n)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverCatchupWhenCopyIsAhead holds the main worker at the Begin of
// a transaction committed before the copy's snapshot, so the copy worker is
// ahead of it when it hands over: catchup(P), and the main worker, once
// released, skips what the snapshot and the copy worker already emitted.
func TestHandoverCatchupWhenCopyIsAhead(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE hot (id int PRIMARY KEY, n bigint)`)
	e.exec(`CREATE TABLE other (id int PRIMARY KEY, n bigint)`)
	m := newMutator(t, e, 50, "hot", "other")
	m.seed("hot", 50)
	cfg := e.config("ahead", "public.hot", "public.other")
	cfg.Snapshot.Mode = config.SnapshotNever // both ready at once; hot is re-copied below
	cfg.Snapshot.DiscoveryInterval = time.Second
	r := start(t, cfg)

	release := make(chan struct{})
	var handedOver sync.Map
	r.p.Hooks().Set(func(point, table string) {
		if strings.HasPrefix(point, connector.HookHandedOver) {
			handedOver.Store(table, strings.TrimPrefix(point, connector.HookHandedOver))
			return
		}
		if point == connector.HookMainBegin {
			select {
			case <-release:
			case <-time.After(60 * time.Second):
			}
		}
	})
	m.run(context.Background(), 10) // the main worker stops at the first of these
	resnapshot(t, "ahead", e, r, "public.hot")
	eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
		ph, ok := handedOver.Load("public.hot")
		if !ok {
			return fmt.Errorf("no handover: %+v", r.p.TablePhases())
		}
		if ph != "catchup" {
			t.Fatalf("hot handed over as %v, want catchup (the copy was ahead of the main worker)", ph)
		}
		return nil
	})
	close(release)
	m.run(context.Background(), 30)
	v := converge(t, e, "ahead", "hot")
	checkAfterLastSnapshot(t, "hot", v, m.events["hot"])
	converge(t, e, "ahead", "other")
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		if ph := r.p.TablePhases()["public.hot"]; ph.Phase != "ready" {
			return fmt.Errorf("hot not promoted to ready once the main worker passed the handover: %+v", ph)
		}
		return nil
	})
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverReadyWhenCopyIsBehind holds the copy worker after its COPY
// while the main worker moves on: the copy catches up to the main worker's
// position and hands over with ready(P), P == the main position.
func TestHandoverReadyWhenCopyIsBehind(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE slow (id int PRIMARY KEY, n bigint)`)
	e.exec(`CREATE TABLE busy (id int PRIMARY KEY, n bigint)`)
	m := newMutator(t, e, 50, "slow", "busy")
	m.seed("slow", 50)
	release := make(chan struct{})
	cfg := e.config("behind", "public.slow", "public.busy")
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	var handedOver sync.Map
	p.Hooks().Set(func(point, table string) {
		if point == connector.HookCopied && table == "public.slow" {
			<-release
		}
		if strings.HasPrefix(point, connector.HookHandedOver) {
			handedOver.Store(table, strings.TrimPrefix(point, connector.HookHandedOver))
		}
	})
	r := runPipeline(t, p)
	r.waitReady(t)
	// The main worker moves on (busy's and slow's changes) while slow's copy waits.
	m.run(context.Background(), 50)
	close(release)
	r.waitHandedOver(t)
	if ph, _ := handedOver.Load("public.slow"); ph != "ready" {
		t.Fatalf("slow handed over as %v, want ready (the copy was behind the main worker)", ph)
	}
	m.run(context.Background(), 20)
	for _, tb := range []string{"slow", "busy"} {
		v := converge(t, e, "behind", tb)
		checkExactlyOnceAfterSnapshot(t, tb, v, m.events[tb])
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// checkAfterLastSnapshot is checkExactlyOnceAfterSnapshot for a table copied
// more than once: it judges the records from the last snapshot row of each
// key on (a key absent from the last snapshot is judged on its last run of
// change records after a delete).
func checkAfterLastSnapshot(t *testing.T, table string, v tableView, events map[int][]int64) {
	t.Helper()
	trimmed := tableView{rows: v.rows, records: map[int][]recEvent{}}
	for k, recs := range v.records {
		last := -1
		for i, r := range recs {
			if r.op == "r" || r.op == "x" {
				last = i
			}
		}
		if last >= 0 {
			trimmed.records[k] = recs[last:]
		} else {
			trimmed.records[k] = recs
		}
	}
	checkExactlyOnceAfterSnapshot(t, table, trimmed, events)
}
