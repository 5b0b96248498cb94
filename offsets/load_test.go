package offsets

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

const topic = "offsets"

// setup starts a broker with the offsets topic and returns it with a client
// configured the way the connector passes one to Load.
func setup(t *testing.T) (*kafkatest.Broker, *kgo.Client) {
	t.Helper()
	b := kafkatest.New(t)
	cl := b.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err := EnsureTopic(testCtx(t), kadm.NewClient(cl), topic, -1); err != nil {
		t.Fatal(err)
	}
	return b, cl
}

func save(t *testing.T, cl *kgo.Client, rs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(testCtx(t), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func load(t *testing.T, cl *kgo.Client, name string) State {
	t.Helper()
	st, err := Load(testCtx(t), cl, topic, name)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return st
}

func wantState(t *testing.T, got State, pipe *Pipeline, tables ...Table) {
	t.Helper()
	want := State{Pipeline: pipe, Tables: make(map[string]Table)}
	for _, tb := range tables {
		want.Tables[tb.Table] = tb
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state\n got %+v %+v\nwant %+v %+v", got.Pipeline, got.Tables, want.Pipeline, want.Tables)
	}
}

func pipeline(durable uint64) Pipeline {
	return Pipeline{SystemID: "7301", Database: "shop", Slot: "mooncdc_shop", Publication: "mooncdc", InitialLSN: 100, DurableLSN: durable, UpdatedMs: int64(durable)}
}

func table(name, phase string, lsn uint64) Table {
	return Table{Table: name, OID: 16384, Phase: phase, LSN: lsn, Attempts: 1, UpdatedMs: int64(lsn)}
}

func TestLoadMissingOrEmptyTopicIsAFirstStart(t *testing.T) {
	_, cl := setup(t)
	for _, tp := range []string{"no-such-topic", topic} {
		st, err := Load(testCtx(t), cl, tp, "shop")
		if err != nil {
			t.Fatalf("%s: %v", tp, err)
		}
		if st.Pipeline != nil || st.Tables == nil || len(st.Tables) != 0 {
			t.Errorf("%s: state %+v, want empty with a non-nil Tables map", tp, st)
		}
	}
}

func TestLoadReturnsLastValuePerKey(t *testing.T) {
	_, cl := setup(t)
	save(t, cl,
		PipelineRecord(topic, "shop", pipeline(200)),
		TableRecord(topic, "shop", table("public.orders", PhaseCopying, 0)),
		TableRecord(topic, "shop", table("public.users", PhaseInit, 0)),
	)
	save(t, cl,
		TableRecord(topic, "shop", table("public.orders", PhaseCatchup, 250)),
		PipelineRecord(topic, "shop", pipeline(300)),
	)
	save(t, cl, TableRecord(topic, "shop", table("public.orders", PhaseReady, 250)))

	p := pipeline(300)
	wantState(t, load(t, cl, "shop"), &p, table("public.orders", PhaseReady, 250), table("public.users", PhaseInit, 0))
}

func TestLoadTombstoneDeletesTable(t *testing.T) {
	_, cl := setup(t)
	save(t, cl,
		TableRecord(topic, "shop", table("public.orders", PhaseReady, 1)),
		TableRecord(topic, "shop", table("public.gone", PhaseReady, 1)),
	)
	save(t, cl, DeleteTableRecord(topic, "shop", "public.gone"))
	wantState(t, load(t, cl, "shop"), nil, table("public.orders", PhaseReady, 1))

	// Re-added after the delete: the newest write wins again.
	save(t, cl, TableRecord(topic, "shop", table("public.gone", PhaseInit, 0)))
	wantState(t, load(t, cl, "shop"), nil, table("public.orders", PhaseReady, 1), table("public.gone", PhaseInit, 0))
}

// TestLoadSkipsAbortedTransactions: offsets written in a Kafka transaction
// that aborted never happened. The aborted transaction is the last thing in
// the log, so this also proves Load ends on a tail of aborted records and
// an abort marker.
func TestLoadSkipsAbortedTransactions(t *testing.T) {
	b, cl := setup(t)
	tx := b.Client(t, kgo.TransactionalID("mooncdc-shop"))
	inTxn := func(commit bool, rs ...*kgo.Record) {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		save(t, tx, rs...)
		if err := tx.EndTransaction(testCtx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	inTxn(true, PipelineRecord(topic, "shop", pipeline(200)), TableRecord(topic, "shop", table("public.orders", PhaseReady, 150)))
	inTxn(false, PipelineRecord(topic, "shop", pipeline(900)), TableRecord(topic, "shop", table("public.users", PhaseReady, 900)))
	inTxn(true, PipelineRecord(topic, "shop", pipeline(300)))
	inTxn(false, PipelineRecord(topic, "shop", pipeline(901)), DeleteTableRecord(topic, "shop", "public.orders"))

	start := time.Now()
	p := pipeline(300)
	wantState(t, load(t, cl, "shop"), &p, table("public.orders", PhaseReady, 150))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Load took %v", d)
	}
}

func TestLoadIgnoresOtherConnectors(t *testing.T) {
	_, cl := setup(t)
	save(t, cl,
		PipelineRecord(topic, "shop", pipeline(200)),
		PipelineRecord(topic, "billing", pipeline(999)),
		TableRecord(topic, "billing", table("public.orders", PhaseErrored, 5)),
		TableRecord(topic, "shop", table("public.orders", PhaseReady, 7)),
		DeleteTableRecord(topic, "billing", "public.orders"),
		&kgo.Record{Topic: topic, Key: []byte(`["billing",{"something":"new"}]`), Value: []byte(`not even json`)},
	)
	p := pipeline(200)
	wantState(t, load(t, cl, "shop"), &p, table("public.orders", PhaseReady, 7))
	st, err := Load(testCtx(t), cl, topic, "billing")
	var me *MalformedError
	if !errors.As(err, &me) || me.Offset != 5 || !strings.Contains(err.Error(), "offset 5") {
		t.Errorf("billing's own malformed record: err = %v, want a *MalformedError at offset 5", err)
	}
	if st.Pipeline != nil || st.Tables != nil {
		t.Errorf("state returned with an error: %+v", st)
	}
}

// TestLoadSameStateAfterCompaction: compaction keeps the newest value per
// key and (after delete.retention.ms) drops tombstones, which must not
// change what Load returns.
func TestLoadSameStateAfterCompaction(t *testing.T) {
	b, cl := setup(t)
	for i := range uint64(20) {
		save(t, cl,
			PipelineRecord(topic, "shop", pipeline(100+i)),
			TableRecord(topic, "shop", table("public.orders", PhaseCatchup, i)),
			TableRecord(topic, "shop", table("public.tmp", PhaseCopying, i)),
		)
	}
	save(t, cl, DeleteTableRecord(topic, "shop", "public.tmp"), TableRecord(topic, "shop", table("public.orders", PhaseReady, 50)))
	before := load(t, cl, "shop")
	resps, err := kadm.NewClient(cl).AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Name: "delete.retention.ms", Value: kadm.StringPtr("0")}}, topic)
	if err == nil {
		_, err = resps.On(topic, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	b.Cluster().Compact()
	ends, err := kadm.NewClient(cl).ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(kafkatest.ReadAll(testCtx(t), t, b.Addr(), -1, topic)); got >= 62 || ends[topic][0].Offset != 62 {
		t.Fatalf("compaction did not run: %d records left of %d", got, ends[topic][0].Offset)
	}
	after := load(t, cl, "shop")
	if !reflect.DeepEqual(before, after) {
		t.Errorf("compaction changed the state:\nbefore %+v %+v\nafter  %+v %+v", before.Pipeline, before.Tables, after.Pipeline, after.Tables)
	}
}

// TestLoadDoesNotStopShortOfAnOpenTransaction: a producer that crashed
// mid-transaction pins the last stable offset; offsets committed above it
// must still be loaded. Load waits until the transaction ends.
func TestLoadDoesNotStopShortOfAnOpenTransaction(t *testing.T) {
	b, cl := setup(t)
	save(t, cl, PipelineRecord(topic, "shop", pipeline(200)))
	other := b.Client(t, kgo.TransactionalID("mooncdc-billing"))
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	save(t, other, PipelineRecord(topic, "billing", pipeline(5)))
	save(t, cl, PipelineRecord(topic, "shop", pipeline(300))) // above the open transaction

	// While the transaction stays open, Load says what holds it up.
	short, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, err := Load(short, cl, topic, "shop")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "transaction open since offset 1") {
		t.Fatalf("Load with an open transaction: err = %v", err)
	}

	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = other.EndTransaction(context.Background(), kgo.TryAbort)
	}()
	p := pipeline(300)
	wantState(t, load(t, cl, "shop"), &p)
}

// TestLoadSeesATopicCreatedMomentsAgo: the client's metadata cache still
// says the topic is missing (it looked before EnsureTopic created it); Load
// must ask the broker, or it would return an empty state and the connector
// would start every table over.
func TestLoadSeesATopicCreatedMomentsAgo(t *testing.T) {
	b := kafkatest.New(t)
	cl := b.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if _, err := kadm.NewClient(cl).ListTopics(testCtx(t), topic); err != nil { // caches "missing"
		t.Fatal(err)
	}
	if err := EnsureTopic(testCtx(t), kadm.NewClient(cl), topic, -1); err != nil {
		t.Fatal(err)
	}
	save(t, b.Client(t), PipelineRecord(topic, "shop", pipeline(7)))
	p := pipeline(7)
	wantState(t, load(t, cl, "shop"), &p)
}

// TestLoadLeavesTheCallersClientAlone: the connector passes its own
// client; Load must not make it consume.
func TestLoadLeavesTheCallersClientAlone(t *testing.T) {
	_, cl := setup(t)
	save(t, cl, PipelineRecord(topic, "shop", pipeline(1)))
	load(t, cl, "shop")
	if topics := cl.GetConsumeTopics(); len(topics) != 0 {
		t.Errorf("client consumes %v after Load", topics)
	}
	save(t, cl, PipelineRecord(topic, "shop", pipeline(2)))
	p := pipeline(2)
	wantState(t, load(t, cl, "shop"), &p)
}

// TestLoadAfterBrokerCrashMidTransaction: Kafka is SIGKILLed while the
// connector has a transaction open. After the restart Load returns the last
// committed state, and the next transaction of the same transactional ID
// (the restarted connector) is loaded too.
func TestLoadAfterBrokerCrashMidTransaction(t *testing.T) {
	p := kafkatest.StartProcess(t, t.TempDir())
	newClient := func(opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(p.Addr())}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	cl := newClient(kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err := EnsureTopic(testCtx(t), kadm.NewClient(cl), topic, -1); err != nil {
		t.Fatal(err)
	}
	txn := func(tx *kgo.Client, commit bool, rs ...*kgo.Record) {
		t.Helper()
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		save(t, tx, rs...)
		if err := tx.EndTransaction(testCtx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	tx := newClient(kgo.TransactionalID("mooncdc-shop"))
	txn(tx, true, PipelineRecord(topic, "shop", pipeline(200)), TableRecord(topic, "shop", table("public.orders", PhaseReady, 150)))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	save(t, tx, PipelineRecord(topic, "shop", pipeline(900))) // open at the kill

	p.Kill()
	p.Start(t)
	want := pipeline(200)
	wantState(t, load(t, cl, "shop"), &want, table("public.orders", PhaseReady, 150))

	restarted := newClient(kgo.TransactionalID("mooncdc-shop"))
	txn(restarted, true, PipelineRecord(topic, "shop", pipeline(300)))
	want = pipeline(300)
	wantState(t, load(t, cl, "shop"), &want, table("public.orders", PhaseReady, 150))
}

// TestLoadStartsAtTheLogStart: records deleted with DeleteRecords are gone;
// Load reads from the log start instead of failing at offset 0.
func TestLoadStartsAtTheLogStart(t *testing.T) {
	_, cl := setup(t)
	save(t, cl, TableRecord(topic, "shop", table("public.old", PhaseReady, 1)))
	save(t, cl, TableRecord(topic, "shop", table("public.orders", PhaseReady, 2)))
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.AddOffset(topic, 0, 1, -1)
	resp, err := adm.DeleteRecords(testCtx(t), offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, load(t, cl, "shop"), nil, table("public.orders", PhaseReady, 2))
}

func TestStampKeepsWhenTheDurableLSNLastMoved(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		prev                 Pipeline
		durable              uint64
		wantDurableMs, wantT int64
	}{
		{"moved", Pipeline{DurableLSN: 10, DurableMs: 100}, 20, 500, 500},
		{"stood still", Pipeline{DurableLSN: 10, DurableMs: 100}, 10, 100, 500},
		{"record of an older version", Pipeline{DurableLSN: 10}, 10, 500, 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.prev
			p.DurableLSN = tt.durable
			p.Stamp(tt.prev, 500)
			if p.DurableMs != tt.wantDurableMs || p.UpdatedMs != tt.wantT {
				t.Fatalf("durable_ms %d ts_ms %d, want %d %d", p.DurableMs, p.UpdatedMs, tt.wantDurableMs, tt.wantT)
			}
		})
	}
}
