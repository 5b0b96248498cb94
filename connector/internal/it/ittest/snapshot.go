package ittest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
)

// Resnapshot asks for a re-copy the way `mooncdc resnapshot` does: a table
// record back to init with a newer resnapshot_ms, an incremental re-copy
// (cmd/mooncdc/resnapshot.go).
func Resnapshot(t *testing.T, name string, e *Env, r *Running, tables ...string) {
	t.Helper()
	client, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, tb := range tables {
		cur := r.P.TablePhases()[tb]
		rec := offsets.TableRecord("mooncdc-offsets", name, offsets.Table{Table: tb, OID: cur.OID, Phase: offsets.PhaseInit,
			ResnapshotMs: time.Now().UnixMilli(), UpdatedMs: time.Now().UnixMilli(), ResnapshotType: offsets.ResnapshotIncremental})
		if err := client.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// Mutator writes random inserts, updates and deletes to tables (id int
// primary key, n bigint), each upsert with a new n, and remembers, per
// table and key, the sequence of events in commit order: n, or -1 for a
// delete. One connection, so commit order is the order written.
type Mutator struct {
	T      *testing.T
	E      *Env
	Tables []string
	Keys   int
	Mu     sync.Mutex
	Events map[string]map[int][]int64
	Exists map[string]map[int]bool
	N      int64
	Rng    *rand.Rand
}

// NewMutator writes random changes over keys ids of tables and records
// them (Events, Exists) for the checks.
func NewMutator(t *testing.T, e *Env, keys int, tables ...string) *Mutator {
	m := &Mutator{T: t, E: e, Tables: tables, Keys: keys, Events: map[string]map[int][]int64{}, Exists: map[string]map[int]bool{},
		Rng: rand.New(rand.NewPCG(1, 2))}
	for _, tb := range tables {
		m.Events[tb] = map[int][]int64{}
		m.Exists[tb] = map[int]bool{}
	}
	return m
}

// Seed inserts rows [0,rows) with n = 0 before the pipeline starts.
func (m *Mutator) Seed(table string, rows int) {
	m.E.Exec(fmt.Sprintf(`INSERT INTO %s (id, n) SELECT g, 0 FROM generate_series(0, %d) g`, table, rows-1))
	for i := 0; i < rows; i++ {
		m.Events[table][i] = append(m.Events[table][i], 0)
		m.Exists[table][i] = true
	}
}

// Run writes transactions until ctx is done or count transactions.
func (m *Mutator) Run(ctx context.Context, count int) {
	conn, err := pgx.Connect(context.Background(), m.E.PG.URL("postgres"))
	if err != nil {
		m.T.Error(err)
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
			for j := 0; j < 1+m.Rng.IntN(4); j++ {
				tb := m.Tables[m.Rng.IntN(len(m.Tables))]
				k := m.Rng.IntN(m.Keys)
				if m.Exists[tb][k] && m.Rng.IntN(5) == 0 {
					if _, err := tx.Exec(context.Background(), "DELETE FROM "+tb+" WHERE id = $1", k); err != nil {
						return err
					}
					evs = append(evs, ev{tb, k, -1})
					continue
				}
				m.N++
				if _, err := tx.Exec(context.Background(), "INSERT INTO "+tb+" (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", k, m.N); err != nil {
					return err
				}
				evs = append(evs, ev{tb, k, m.N})
			}
			return nil
		})
		if err != nil {
			m.T.Errorf("mutator: %v", err)
			return
		}
		m.Mu.Lock()
		for _, v := range evs {
			m.Events[v.table][v.key] = append(m.Events[v.table][v.key], v.n)
			m.Exists[v.table][v.key] = v.n >= 0
		}
		m.Mu.Unlock()
	}
}

// TableView is a table rebuilt from its topic, and per key the record events.
type TableView struct {
	Rows    map[int]int64
	Records map[int][]RecEvent
	Reads   int
}

// RecEvent is one record of a key: its op and n, and where it came from
// (Where).
type RecEvent struct {
	Op string
	N  int64
	// LSN and TxID are the record's source.lsn and source.txId (0 for a
	// snapshot row's txId, none for a tombstone); Offset, Partition and
	// Producer (id/epoch) are where it is in the topic and who wrote it.
	LSN       int64
	TxID      int64
	Offset    int64
	Partition int32
	Producer  string
}

// String is the record as the checks print a key's records: op:n.
func (r RecEvent) String() string { return fmt.Sprintf("%s:%d", r.Op, r.N) }

// Where says where r is in the topic and where it came from: partition,
// offset, source.lsn and txId, and the producer id/epoch that wrote it (a
// copy worker's transactional producer and the main worker's differ).
func (r RecEvent) Where() string {
	return fmt.Sprintf("%s n=%d at partition %d offset %d (source.lsn %d, txId %d, producer %s)", r.Op, r.N, r.Partition, r.Offset, r.LSN, r.TxID, r.Producer)
}

// recEvent is ev's RecEvent with op and n.
func recEvent(ev Event, op string, n int64) RecEvent {
	r := RecEvent{Op: op, N: n, LSN: ev.Source.LSN, Offset: ev.Offset, Partition: ev.Partition,
		Producer: fmt.Sprintf("%d/%d", ev.ProducerID, ev.ProducerEpoch)}
	if ev.Source.TxID != nil {
		r.TxID = *ev.Source.TxID
	}
	return r
}

// Rebuild replays the records of a table into its rows.
func Rebuild(t *testing.T, evs []Event) TableView {
	v := TableView{Rows: map[int]int64{}, Records: map[int][]RecEvent{}}
	for _, ev := range evs {
		if ev.Op == "t" {
			v.Rows = map[int]int64{}
			continue
		}
		if ev.Key == nil {
			t.Fatalf("record without key: %+v", ev)
		}
		id := int(ev.Key["id"].(float64))
		switch {
		case ev.Tombstone:
			delete(v.Rows, id)
			if recs := v.Records[id]; len(recs) == 0 || recs[len(recs)-1].Op != "d" {
				// Not after a delete: a re-copy's tombstone for a key its
				// snapshot no longer has.
				v.Records[id] = append(v.Records[id], recEvent(ev, "x", -1))
			}
		case ev.Op == "d":
			delete(v.Rows, id)
			v.Records[id] = append(v.Records[id], recEvent(ev, "d", -1))
		default:
			n := int64(ev.After["n"].(float64))
			v.Rows[id] = n
			v.Records[id] = append(v.Records[id], recEvent(ev, ev.Op, n))
			if ev.Op == "r" {
				v.Reads++
			}
		}
	}
	return v
}

// TableRows are the rows of table (id → n) as Postgres has them.
func (e *Env) TableRows(table string) map[int]int64 {
	e.T.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), "SELECT id, n FROM "+table)
	if err != nil {
		e.T.Fatal(err)
	}
	out := map[int]int64{}
	for rows.Next() {
		var id int
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			e.T.Fatal(err)
		}
		out[id] = n
	}
	return out
}

// Converge reads the table's topic until, rebuilt, it equals the table.
func Converge(t *testing.T, e *Env, prefix, table string) TableView {
	t.Helper()
	want := e.TableRows(table)
	var v TableView
	eventually.Succeeds(t, 90*time.Second, 200*time.Millisecond, func() error {
		v = Rebuild(t, Consume(t, e.Kafka, -1, prefix+".public."+table))
		if diff := DiffRows(v.Rows, want); diff != "" {
			return fmt.Errorf("table %s rebuilt from Kafka differs from Postgres: %s", table, diff)
		}
		return nil
	})
	return v
}

// DiffRows says how got differs from want ("" when equal).
func DiffRows(got, want map[int]int64) string {
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

// CheckExactlyOnceAfterSnapshot: per key, the change records (c, u, d) are
// exactly the writer's events after the state the snapshot row shows, in
// order: none lost, none doubled, none reordered.
func CheckExactlyOnceAfterSnapshot(t *testing.T, table string, v TableView, events map[int][]int64) {
	t.Helper()
	for key, writes := range events {
		recs := v.Records[key]
		var changes []int64
		start := 0 // index in writes after the snapshot's state
		snapshotSeen := false
		for _, r := range recs {
			if r.Op == "x" {
				// A stale-key tombstone starts the records (see
				// checkAfterLastSnapshot): the key was absent from that snapshot.
				continue
			}
			if r.Op == "r" {
				if snapshotSeen {
					t.Fatalf("%s key %d: two snapshot rows %v", table, key, recs)
				}
				snapshotSeen = true
				idx := -1
				for i, w := range writes {
					if w == r.N {
						idx = i
					}
				}
				if idx < 0 {
					t.Fatalf("%s key %d: snapshot row n=%d was never written (writes %v)", table, key, r.N, writes)
				}
				start = idx + 1
				continue
			}
			changes = append(changes, r.N)
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

// CheckAfterLastSnapshot is checkExactlyOnceAfterSnapshot for a table copied
// more than once: it judges the records from the last snapshot row of each
// key on (a key absent from the last snapshot is judged on its last run of
// change records after a delete).
func CheckAfterLastSnapshot(t *testing.T, table string, v TableView, events map[int][]int64) {
	t.Helper()
	trimmed := TableView{Rows: v.Rows, Records: map[int][]RecEvent{}}
	for k, recs := range v.Records {
		last := -1
		for i, r := range recs {
			if r.Op == "r" || r.Op == "x" {
				last = i
			}
		}
		if last >= 0 {
			trimmed.Records[k] = recs[last:]
		} else {
			trimmed.Records[k] = recs
		}
	}
	CheckExactlyOnceAfterSnapshot(t, table, trimmed, events)
}
