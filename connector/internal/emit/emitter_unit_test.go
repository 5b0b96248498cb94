package emit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/delivery/deliverytest"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// The emitter's and the record writer's unit tests: the stream's handler
// against a fake sink (the at-least-once sink on fakeProducer), with JSON
// records, no broker and no Postgres.

// firstColumnKeyer keys every relation by its first column, as a primary
// key would; a table named "badkey" cannot be keyed as configured.
type firstColumnKeyer struct{}

func (firstColumnKeyer) Keyed(rel *schema.Relation) (*schema.Relation, error) {
	if rel.Table == "badkey" {
		return nil, &record.KeyRuleError{Err: errors.New("format.message_key_columns names column \"nope\", which public.badkey does not have")}
	}
	out := *rel
	out.Columns = slices.Clone(rel.Columns)
	record.SetKey(&out, []string{rel.Columns[0].Name})
	return &out, nil
}
func (firstColumnKeyer) Close() {}

func testRelation(oid uint32, table string) *schema.Relation {
	return &schema.Relation{OID: oid, Schema: "public", Table: table, ReplicaIdentity: 'd', Columns: []schema.Column{
		{Name: "id", TypeOID: 23, TypeMod: -1}, {Name: "v", TypeOID: 25, TypeMod: -1}}}
}

func row(vals ...string) schema.Tuple {
	t := make(schema.Tuple, len(vals))
	for i, v := range vals {
		t[i] = schema.Value{Kind: schema.ValueText, Data: []byte(v)}
	}
	return t
}

// testFormats is JSON keys and values under topic prefix "shop", records
// of at most maxRecord bytes.
func testFormats(t *testing.T, maxRecord int) *record.Formats {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "shop"
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	return record.NewFormats(cfg.Format, record.EncoderConfig(&cfg, "shop", naming, nil, nil), nil, naming, maxRecord, zap.NewNop())
}

type emitterFixture struct {
	f       *deliverytest.FakeProducer
	tracker *delivery.Tracker
	em      *Emitter
	parked  []string
}

// newEmitterFixture is a main worker's emitter whose tables are all
// handed over at LSN 0 (except those in phases), every topic known.
func newEmitterFixture(t *testing.T, maxRecord int, ph map[string]*phases.State) *emitterFixture {
	fx := &emitterFixture{f: &deliverytest.FakeProducer{}, tracker: delivery.NewTracker(0, 1<<20, nil)}
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "shop"
	topics := delivery.NewTopicMaker(nil, 1, 1, 0)
	for _, tbl := range []string{"t", "u", "badkey", "big"} {
		topics.Known["shop.public."+tbl] = true
	}
	phs := map[string]*phases.State{}
	for _, tbl := range []string{"public.t", "public.u", "public.badkey", "public.big"} {
		phs[tbl] = &phases.State{Table: offsets.Table{Table: tbl, Phase: offsets.PhaseReady}}
	}
	for k, v := range ph {
		phs[k] = v
	}
	gate := phases.New(0, phs)
	fm := testFormats(t, maxRecord)
	fx.em = New(Config{Ctx: context.Background(), Sink: testMainSink(t, fx.f, fx.tracker), Tracker: fx.tracker, Topics: topics,
		Enc: fm.Codec(), Counts: testEmitterCounts(), Prefix: "shop", Plans: record.NewPlanner(cfg, fm.Naming, fm.SchemaConfig()),
		Include: func(string, string) bool { return true }, Keys: firstColumnKeyer{}, Opts: record.OptionsOf(&cfg),
		Gate: gate, OnPromote: func([]*phases.State) {},
		OnTableError: func(table string, _ schema.LSN, err error) { fx.parked = append(fx.parked, table) }})
	return fx
}

// tx runs one transaction of changes through the emitter.
func (fx *emitterFixture) tx(t *testing.T, commit schema.LSN, changes ...*schema.Change) {
	t.Helper()
	tx := &schema.Tx{Xid: uint32(commit), CommitLSN: commit, EndLSN: commit + 10, CommitTime: time.Unix(1700000000, 0)}
	if err := fx.em.Begin(tx); err != nil {
		t.Fatal(err)
	}
	for i, ch := range changes {
		ch.Tx, ch.LSN, ch.Seq = tx, commit-schema.LSN(len(changes)-i), i
		if err := fx.em.Change(ch); err != nil {
			t.Fatal(err)
		}
	}
	if err := fx.em.Commit(tx); err != nil {
		t.Fatal(err)
	}
}

// summary is each record as "topic key op" ("topic key -" for a tombstone).
func (fx *emitterFixture) summary(t *testing.T) []string {
	var out []string
	for _, r := range fx.f.Records() {
		op := "-"
		if r.Value != nil {
			var v struct {
				Op string `json:"op"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("value of %s: %v", r.Topic, err)
			}
			op = v.Op
		}
		out = append(out, r.Topic+" "+string(r.Key)+" "+op)
	}
	return out
}

// TestEmitterWritesDebeziumsRecordsThroughItsSink: inserts, an update of
// the key (a delete, its tombstone and a create, as Debezium), a delete
// (and its tombstone); the durable LSN moves to each commit's end once
// acknowledged.
func TestEmitterWritesDebeziumsRecordsThroughItsSink(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	rel := testRelation(1, "t")
	fx.tx(t, 100,
		&schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")},
		&schema.Change{Op: schema.OpUpdate, Relation: rel, Before: row("1", "a"), After: row("2", "a")},
		&schema.Change{Op: schema.OpDelete, Relation: rel, Before: row("2", "")},
	)
	want := []string{
		`shop.public.t {"id":1} c`,
		`shop.public.t {"id":1} d`, `shop.public.t {"id":1} -`, `shop.public.t {"id":2} c`,
		`shop.public.t {"id":2} d`, `shop.public.t {"id":2} -`,
	}
	if got := fx.summary(t); !slices.Equal(got, want) {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := fx.tracker.Durable(); d != 110 {
		t.Fatalf("durable %s, want the commit's end 110", d)
	}
}

// TestRecordTimestampIsTheEnvelopesTsMs: the record writer stamps each
// record with the time its envelope's ts_ms holds (the producer would
// otherwise read the clock again), and a tombstone with its delete's.
func TestRecordTimestampIsTheEnvelopesTsMs(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	rel := testRelation(1, "t")
	fx.tx(t, 100,
		&schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")},
		&schema.Change{Op: schema.OpDelete, Relation: rel, Before: row("1", "")},
	)
	recs := fx.f.Records()
	if len(recs) != 3 {
		t.Fatalf("%d records, want a create, a delete and its tombstone", len(recs))
	}
	var last int64
	for i, r := range recs {
		if r.Timestamp.IsZero() {
			t.Fatalf("record %d has no timestamp", i)
		}
		if r.Value == nil {
			if got := r.Timestamp.UnixMilli(); got != last {
				t.Errorf("tombstone timestamp %d ms, want its delete's %d", got, last)
			}
			continue
		}
		var v struct {
			TsMs int64 `json:"ts_ms"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			t.Fatal(err)
		}
		if got := r.Timestamp.UnixMilli(); got != v.TsMs {
			t.Errorf("record %d timestamp %d ms, envelope ts_ms %d", i, got, v.TsMs)
		}
		last = v.TsMs
	}
}

// TestEmitterParksOnlyTheTableItCannotWrite: a record above
// kafka.max_record_bytes and a key rule the table cannot follow park their
// table (errored, through onTableError) and write nothing more of it; the
// other table's records in the same transaction and after it are written.
func TestEmitterParksOnlyTheTableItCannotWrite(t *testing.T) {
	fx := newEmitterFixture(t, 2000, nil)
	big, ok, bad := testRelation(3, "big"), testRelation(1, "t"), testRelation(4, "badkey")
	fx.tx(t, 100,
		&schema.Change{Op: schema.OpCreate, Relation: big, After: row("1", strings.Repeat("x", 5000))},
		&schema.Change{Op: schema.OpCreate, Relation: ok, After: row("1", "a")},
		&schema.Change{Op: schema.OpCreate, Relation: big, After: row("2", "small")}, // parked for the rest of the transaction
		&schema.Change{Op: schema.OpCreate, Relation: bad, After: row("1", "a")},
	)
	fx.tx(t, 200, &schema.Change{Op: schema.OpCreate, Relation: ok, After: row("2", "b")})
	if want := []string{"public.big", "public.badkey"}; !slices.Equal(fx.parked, want) {
		t.Fatalf("parked %v, want %v", fx.parked, want)
	}
	want := []string{`shop.public.t {"id":1} c`, `shop.public.t {"id":2} c`}
	if got := fx.summary(t); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// TestEmitterFollowsTheHandover: under catchup(L) the main worker writes
// only the transactions with commit LSN >= L (the copy worker wrote the
// others); a table not handed over writes nothing.
func TestEmitterFollowsTheHandover(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, map[string]*phases.State{
		"public.t": {Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseCatchup, LSN: 150}},
		"public.u": {Table: offsets.Table{Table: "public.u", Phase: offsets.PhaseCopying}},
	})
	rel, copying := testRelation(1, "t"), testRelation(2, "u")
	for i, commit := range []schema.LSN{100, 150, 200} {
		id := string(rune('1' + i))
		fx.tx(t, commit,
			&schema.Change{Op: schema.OpCreate, Relation: rel, After: row(id, "a")},
			&schema.Change{Op: schema.OpCreate, Relation: copying, After: row(id, "a")})
	}
	want := []string{`shop.public.t {"id":2} c`, `shop.public.t {"id":3} c`}
	if got := fx.summary(t); !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v (the transactions at 150 and 200 of public.t only)", got, want)
	}
}

// ackingProducer acknowledges every record at once and keeps nothing.
type ackingProducer struct{}

func (ackingProducer) Produce(_ context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	promise(r, nil)
}
func (ackingProducer) Flush(context.Context) error { return nil }

// TestEmitterAllocatesNothingPerRowOnAWarmPlan: once a relation's plan is
// made and the record pool is warm, a streamed change costs no
// allocation: the plan is looked up by relation pointer, the record and
// its buffers come from the pool, the promise is bound once.
func TestEmitterAllocatesNothingPerRowOnAWarmPlan(t *testing.T) {
	measure := func(inc *Incremental) (one, perRow float64) {
		fx := newEmitterFixture(t, 1_000_000, nil)
		fx.em.Sink = testMainSink(t, ackingProducer{}, fx.tracker)
		fx.em.w.Sink = fx.em.Sink
		fx.em.Incremental = inc
		rel := testRelation(1, "t")
		changes := make([]*schema.Change, 64)
		for i := range changes {
			changes[i] = &schema.Change{Op: schema.OpUpdate, Relation: rel, After: row("1", "some value")}
		}
		tx := &schema.Tx{Xid: 1, CommitLSN: 100, EndLSN: 110, CommitTime: time.Unix(1700000000, 0)}
		run := func(n int) {
			if err := fx.em.Begin(tx); err != nil {
				t.Fatal(err)
			}
			for _, ch := range changes[:n] {
				ch.Tx, ch.LSN = tx, 90
				if err := fx.em.Change(ch); err != nil {
					t.Fatal(err)
				}
			}
			if err := fx.em.Commit(tx); err != nil {
				t.Fatal(err)
			}
			if err := fx.em.Idle(0); err != nil { // the session loop's tick
				t.Fatal(err)
			}
		}
		run(64) // warm: the plan, the pool
		one = testing.AllocsPerRun(50, func() { run(1) })
		many := testing.AllocsPerRun(50, func() { run(64) })
		return one, (many - one) / 63
	}
	one, perRow := measure(nil)
	if perRow > 0.05 {
		t.Fatalf("%.2f allocations per row (%.0f for a transaction of one change)", perRow, one)
	}
	// The main worker's incremental snapshot queue, idle (no table
	// watched): nothing more per transaction, nothing per row.
	oneInc, perRowInc := measure(NewIncremental())
	if perRowInc > 0.05 || oneInc > one {
		t.Fatalf("with an idle incremental snapshot queue: %.2f allocations per row, %.0f per transaction (%.0f without)", perRowInc, oneInc, one)
	}
}

// countingKeyer counts the relations the emitter asks the key of: one per
// plan it makes (a SQL query each in keys.go).
type countingKeyer struct {
	firstColumnKeyer
	n *int
}

func (k countingKeyer) Keyed(rel *schema.Relation) (*schema.Relation, error) {
	*k.n++
	return k.firstColumnKeyer.Keyed(rel)
}

// TestEmitterKeepsOnePlanPerTableAtAnyTableCount: with 5,000 tables the
// plans stay: a table's second change finds its plan, made once, and a new
// Relation message (a new relation for the oid) makes a new one. The cache
// was cleared past 4,096 relations, so at 5,000 tables every change
// re-planned, a key query each (16 s of the main worker at 5,000 tables).
func TestEmitterKeepsOnePlanPerTableAtAnyTableCount(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	var asked int
	fx.em.Keys = countingKeyer{n: &asked}
	const tables = 5000
	rels := make([]*schema.Relation, tables)
	for i := range rels {
		rels[i] = testRelation(uint32(100_000+i), fmt.Sprintf("t%05d", i))
		fx.em.Topics.Known["shop.public."+rels[i].Table] = true
	}
	for pass := range 2 {
		for _, rel := range rels {
			if _, err := fx.em.route(&schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "v")}); err != nil {
				t.Fatal(err)
			}
		}
		if asked != tables {
			t.Fatalf("pass %d: %d plans made for %d tables, want one each", pass+1, asked, tables)
		}
	}
	altered := testRelation(rels[7].OID, rels[7].Table)
	if _, err := fx.em.route(&schema.Change{Op: schema.OpCreate, Relation: altered, After: row("1", "v")}); err != nil {
		t.Fatal(err)
	}
	if asked != tables+1 {
		t.Errorf("a new relation for a table: %d plans, want %d", asked, tables+1)
	}
}

// testEmitterCounts are counters of no registry.
func testEmitterCounts() Counts {
	c := func(name string) prometheus.Counter { return prometheus.NewCounter(prometheus.CounterOpts{Name: name}) }
	return Counts{TransactionsReceived: c("transactions_received"), ChangesReceived: c("changes_received"), ChangesWritten: c("changes_written")}
}

// testMainSink is the at-least-once main sink on cl, counting in tracker.
func testMainSink(t *testing.T, cl delivery.Producer, tracker *delivery.Tracker) delivery.MainSink {
	records := delivery.Records{Name: "shop", Topic: "offsets"}
	d, err := delivery.New(context.Background(), delivery.Config{Name: "shop", Client: cl,
		Kafka:  config.KafkaConfig{TransactionMaxBytes: 100, TransactionMaxInterval: time.Hour, TransactionTimeout: time.Minute},
		States: delivery.NewStateWriter(context.Background(), cl, records, zap.NewNop()), Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	return d.Main(tracker)
}
