package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery/deliverytest"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// The sinks' unit tests: each delivery mode against a fake producer
// (fakeproducer_test.go), no broker.

var _ TxnClient = (*deliverytest.FakeProducer)(nil)

func testDeliveryConfig(f *deliverytest.FakeProducer) deliveryConfig {
	records := Records{Name: "shop", Topic: "offsets"}
	return deliveryConfig{name: "shop", records: records, transactions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kafka_transactions"}, []string{"outcome"}),
		kafka:  config.KafkaConfig{TransactionMaxBytes: 100, TransactionMaxInterval: time.Hour, TransactionTimeout: time.Minute},
		states: &StateWriter{ctx: context.Background(), cl: f, records: records, log: zap.NewNop()}}
}

// sendOne sends one record of n value bytes to topic in a new unit of
// tracker, committed at end.
func sendOne(s Sink, tracker *Tracker, topic string, n int, end schema.LSN) {
	a := tracker.Begin()
	rec := &kgo.Record{Topic: topic, Value: make([]byte, n), Context: a}
	tracker.Add(a, RecordBytes(rec))
	s.Send(rec, func(r *kgo.Record, err error) { tracker.Ack(r.Context.(*TxAck), RecordBytes(r), err) })
	tracker.Commit(a, end)
}

var testSource = offsets.Pipeline{SystemID: "1", Database: "shop", Slot: "mooncdc_shop", DurableLSN: 100, InitialLSN: 100}

// TestAtLeastOnceSinkRecordsOnlyWhatKafkaAcknowledged: the durable LSN, and
// the pipeline record that stores it, never run ahead of the
// acknowledgements; a failed record stops the offsets writer for good.
func TestAtLeastOnceSinkRecordsOnlyWhatKafkaAcknowledged(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	ctx := context.Background()
	f := &deliverytest.FakeProducer{}
	d := &atLeastOnce{cfg: testDeliveryConfig(f), cl: f, log: zap.NewNop()}
	tracker := NewTracker(100, 1<<20, nil)
	m := d.Main(tracker)
	if err := m.Open(ctx, testSource); err != nil {
		t.Fatal(err)
	}
	if st := f.State(t); st.Pipeline == nil || st.Pipeline.DurableLSN != 100 {
		t.Fatalf("open stored %+v, want the pipeline at 100", st.Pipeline)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx, runCtx) }()

	f.Mu.Lock()
	f.Hold = true
	f.Mu.Unlock()
	if err := m.Begin(); err != nil {
		t.Fatal(err)
	}
	sendOne(m, tracker, "t", 10, 200)
	if err := m.Ended(ctx, 200); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // past the writer's tick
	if d := tracker.Durable(); d != 100 {
		t.Fatalf("durable %s before the acknowledgement, want 100", d)
	}
	if st := f.State(t); st.Pipeline.DurableLSN != 100 {
		t.Fatalf("stored durable %d before the acknowledgement", st.Pipeline.DurableLSN)
	}
	f.Release()
	eventually.True(t, 3*time.Second, 20*time.Millisecond, "the pipeline record at 200 after the acknowledgement", func() bool {
		return f.State(t).Pipeline.DurableLSN == 200
	})
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f.Mu.Lock()
	f.Hold = false
	f.Mu.Unlock()
	if err := m.Stopped(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.State(t); st.Pipeline.DurableLSN != 200 || st.Pipeline.SystemID != "1" {
		t.Fatalf("after the stop: %+v", st.Pipeline)
	}

	// A failure: the durable LSN stays before it, and the writer stops the
	// pipeline with it.
	f.Mu.Lock()
	f.Fail, f.Hold = errors.New("broker says no"), true
	f.Mu.Unlock()
	sendOne(m, tracker, "t", 10, 300)
	f.Release()
	select {
	case err := <-done:
		var crit *fault.CriticalError
		if !errors.As(err, &crit) || !strings.Contains(err.Error(), "broker says no") {
			t.Fatalf("run: %v, want a critical error with the cause", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the offsets writer did not stop on a failed record")
	}
	stop()
	if d := tracker.Durable(); d != 200 {
		t.Fatalf("durable %s after a failure, want 200", d)
	}
	if err := m.Flush(ctx); err == nil {
		t.Fatal("flush after a failed record: nil")
	}
}

// TestExactlyOnceSinkCommitsWholeTransactionsWithTheOffsetsRecordLast: a
// Kafka transaction ends only at a Postgres commit past
// kafka.transaction_max_bytes, with the pipeline record as its last
// record; the durable LSN moves only at the Kafka commit, whatever was
// acknowledged before it.
func TestExactlyOnceSinkCommitsWholeTransactionsWithTheOffsetsRecordLast(t *testing.T) {
	ctx := context.Background()
	f := &deliverytest.FakeProducer{}
	d := &exactlyOnce{cfg: testDeliveryConfig(f), log: zap.NewNop()}
	tracker := NewTracker(100, 1<<20, nil)
	m := d.Main(tracker).(*eosMain)
	m.cl = f
	if err := m.Open(ctx, testSource); err != nil {
		t.Fatal(err)
	}
	if got, want := f.TakeEvents(), []string{"begin", "produce offsets", "flush", "commit"}; !slices.Equal(got, want) {
		t.Fatalf("open: %v, want %v", got, want)
	}

	for _, step := range []struct {
		bytes  int
		end    schema.LSN
		events []string
		want   schema.LSN
	}{
		{10, 200, []string{"begin", "produce t"}, 100},                               // acknowledged, but not committed
		{10, 300, []string{"produce t"}, 100},                                        // one Kafka transaction, two Postgres ones
		{200, 400, []string{"produce t", "produce offsets", "flush", "commit"}, 400}, // past max bytes: committed at the Postgres commit
	} {
		if err := m.Begin(); err != nil {
			t.Fatal(err)
		}
		sendOne(m, tracker, "t", step.bytes, step.end)
		if err := m.Ended(ctx, step.end); err != nil {
			t.Fatal(err)
		}
		if got := f.TakeEvents(); !slices.Equal(got, step.events) {
			t.Fatalf("transaction ending at %s: %v, want %v", step.end, got, step.events)
		}
		if d := tracker.Durable(); d != step.want {
			t.Fatalf("transaction ending at %s: durable %s, want %s", step.end, d, step.want)
		}
	}
	if st := f.State(t); st.Pipeline.DurableLSN != 400 {
		t.Fatalf("stored durable %d, want 400", st.Pipeline.DurableLSN)
	}
	// An idle keepalive (the session's progress: the tracker, then the
	// sink) moves the durable LSN with no transaction open.
	tracker.AdvanceIdle(500)
	m.Idle(500)
	if d := tracker.Durable(); d != 500 {
		t.Fatalf("idle: durable %s, want 500", d)
	}
}

// TestExactlyOnceSinkAbortsWhatASessionLeftAndReplaysFromTheLastCommit: a
// session that ends mid-transaction leaves nothing visible; the durable LSN
// stays at the last commit, where the next session resumes.
func TestExactlyOnceSinkAbortsWhatASessionLeftAndReplaysFromTheLastCommit(t *testing.T) {
	ctx := context.Background()
	f := &deliverytest.FakeProducer{Hold: true}
	d := &exactlyOnce{cfg: testDeliveryConfig(f), log: zap.NewNop()}
	tracker := NewTracker(100, 1<<20, nil)
	m := d.Main(tracker).(*eosMain)
	m.cl = f
	if err := m.Begin(); err != nil {
		t.Fatal(err)
	}
	sendOne(m, tracker, "t", 10, 200)
	if err := m.Ended(ctx, 200); err != nil {
		t.Fatal(err)
	}
	f.TakeEvents()
	if err := m.SessionEnded(ctx, errors.New("replication connection lost")); err != nil {
		t.Fatal(err)
	}
	if got, want := f.TakeEvents(), []string{"abort-buffered", "abort"}; !slices.Equal(got, want) {
		t.Fatalf("session end: %v, want %v", got, want)
	}
	if d := tracker.Durable(); d != 100 {
		t.Fatalf("durable %s after an abort, want 100", d)
	}
	if err := tracker.Err(); err != nil {
		t.Fatalf("the aborted records' failures are forgotten: %v", err)
	}
	// A graceful end with nothing open does nothing.
	if err := m.SessionEnded(ctx, nil); err != nil || len(f.TakeEvents()) != 0 {
		t.Fatal("a graceful end with no transaction open touched the producer")
	}
}

// TestExactlyOnceSinkCommitFailuresSayWhatToDo: a refused commit is an
// aborted transaction (replayed), unless the transaction was open about as
// long as kafka.transaction_timeout: then replaying would fail again, and
// the error names the setting.
func TestExactlyOnceSinkCommitFailuresSayWhatToDo(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		openFor time.Duration
		want    string
	}{
		{time.Second, "Kafka transaction aborted"},
		{59 * time.Second, "raise kafka.transaction_timeout"},
	} {
		f := &deliverytest.FakeProducer{EndErr: errors.New("coordinator gone")}
		d := &exactlyOnce{cfg: testDeliveryConfig(f), log: zap.NewNop()}
		tracker := NewTracker(100, 1<<20, nil)
		m := d.Main(tracker).(*eosMain)
		m.cl = f
		if err := m.Begin(); err != nil {
			t.Fatal(err)
		}
		m.started = time.Now().Add(-tc.openFor)
		sendOne(m, tracker, "t", 10, 200)
		err := m.Ended(ctx, 200)
		if err != nil {
			t.Fatalf("open %s: ended below the bounds: %v", tc.openFor, err)
		}
		err = m.Flush(ctx)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("open %s: %v, want %q", tc.openFor, err, tc.want)
		}
		if d := tracker.Durable(); d != 100 {
			t.Fatalf("durable %s after a failed commit", d)
		}
	}
}

// TestCopySinksStoreTheHandoverAfterTheCopysRecords: a copy's handover is
// its checkpoint: its phase is stored only after every record of the copy
// is acknowledged (at-least-once), or as the last record of the copy's
// Kafka transaction, which it commits (exactly-once). A copy that ends
// without a handover leaves nothing visible in exactly-once mode.
func TestCopySinksStoreTheHandoverAfterTheCopysRecords(t *testing.T) {
	ctx := context.Background()
	ts := &phases.State{Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseReady, LSN: 300}}

	t.Run("at-least-once", func(t *testing.T) {
		f := &deliverytest.FakeProducer{Hold: true}
		d := &atLeastOnce{cfg: testDeliveryConfig(f), cl: f, log: zap.NewNop()}
		tracker := NewTracker(200, 1<<20, nil)
		s, err := d.Copy(ctx, 0, tracker)
		if err != nil {
			t.Fatal(err)
		}
		sendOne(s, tracker, "t", 10, 250)
		go func() { time.Sleep(50 * time.Millisecond); f.Release() }()
		f.Mu.Lock()
		f.Hold = false // the phase record itself is acknowledged at once
		f.Mu.Unlock()
		if err := s.Handover(ctx, ts); err != nil {
			t.Fatal(err)
		}
		if got, want := f.TakeEvents(), []string{"produce t", "produce offsets"}; !slices.Equal(got, want) {
			t.Fatalf("handover: %v, want %v", got, want)
		}
		if st := f.State(t); st.Tables["public.t"].Phase != offsets.PhaseReady {
			t.Fatalf("stored %+v", st.Tables)
		}
		s.Close()
	})

	t.Run("exactly-once", func(t *testing.T) {
		f := &deliverytest.FakeProducer{}
		d := &exactlyOnce{cfg: testDeliveryConfig(f), log: zap.NewNop()}
		tracker := NewTracker(200, 1<<20, nil)
		s := &eosCopy{d: d, ctx: ctx, cl: f, tracker: tracker}
		sendOne(s, tracker, "t", 10, 250)
		if err := s.Handover(ctx, ts); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if got, want := f.TakeEvents(), []string{"produce t", "produce offsets", "flush", "commit"}; !slices.Equal(got, want) {
			t.Fatalf("handover: %v, want %v", got, want)
		}

		// Without a handover, close aborts.
		s = &eosCopy{d: d, ctx: ctx, cl: f, tracker: NewTracker(200, 1<<20, nil)}
		sendOne(s, s.tracker, "t", 10, 250)
		s.Close()
		if got, want := f.TakeEvents(), []string{"produce t", "abort-buffered", "abort"}; !slices.Equal(got, want) {
			t.Fatalf("close without a handover: %v, want %v", got, want)
		}
	})
}

// TestExactlyOnceCopyCheckpointWaitsForTheStatesRecord: an exactly-once
// checkpoint commits the progress in the copy's transaction and has the
// ordered writer of table states (another client) store it again; it
// returns, and the copy's next transaction (whose checkpoint commits a
// newer progress) begins, only once that record is acknowledged. Else the
// older record could land after the newer one and, after a crash, be the
// table's last: the next run resumed from the older base and wrote the
// changes in between twice (connector: TestResumeCrashedInItsStreamResumesFromItsNewBase).
// A record the writer failed fails the checkpoint.
func TestExactlyOnceCopyCheckpointWaitsForTheStatesRecord(t *testing.T) {
	t.Parallel() // fakes only
	ctx := context.Background()
	ts := &phases.State{Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseCopying, Copy: &offsets.CopyProgress{BaseLSN: 250}}}
	for _, fail := range []bool{false, true} {
		f := &deliverytest.FakeProducer{}               // the copy's transactional producer
		plain := &deliverytest.FakeProducer{Hold: true} // the ordered writer's client
		cfg := testDeliveryConfig(f)
		states := &StateWriter{ctx: ctx, cl: plain, records: cfg.records, log: zap.NewNop()}
		s := &eosCopy{d: &exactlyOnce{cfg: cfg, log: zap.NewNop()}, ctx: ctx, cl: f, tracker: NewTracker(200, 1<<20, nil)}
		done := make(chan error, 1)
		go func() { done <- s.Checkpoint(ctx, ts, states.Enqueue) }()
		eventually.True(t, 5*time.Second, time.Millisecond, "the ordered writer got no record", func() bool { return len(plain.Records()) == 1 })
		select {
		case err := <-done:
			t.Fatalf("the checkpoint returned (%v) before the ordered writer's record was acknowledged", err)
		case <-time.After(100 * time.Millisecond):
		}
		if got, want := f.TakeEvents(), []string{"produce offsets", "flush", "commit"}; !slices.Equal(got, want) {
			t.Fatalf("before the ordered writer's acknowledgement: %v, want %v (no next transaction)", got, want)
		}
		if fail {
			plain.Mu.Lock()
			plain.Fail = errors.New("broker gone")
			plain.Mu.Unlock()
		}
		plain.Release()
		err := <-done
		if fail {
			if err == nil || !strings.Contains(err.Error(), "broker gone") {
				t.Fatalf("a failed record of the ordered writer: checkpoint returned %v", err)
			}
			if got := f.TakeEvents(); len(got) != 0 {
				t.Fatalf("after a failed record of the ordered writer: %v, want nothing", got)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, want := f.TakeEvents(), []string{"begin"}; !slices.Equal(got, want) {
			t.Fatalf("after the acknowledgement: %v, want %v", got, want)
		}
	}
}

// TestCopySinkHandoverWaitsBoundedForAcknowledgements: under the pipeline
// mutex, a copy's handover waits at most handoverAckWait for its records,
// then says so (the catch-up tries again later), storing nothing.
func TestCopySinkHandoverWaitsBoundedForAcknowledgements(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	ctx := context.Background()
	f := &deliverytest.FakeProducer{Hold: true}
	d := &atLeastOnce{cfg: testDeliveryConfig(f), cl: f, log: zap.NewNop()}
	tracker := NewTracker(200, 1<<20, nil)
	s, _ := d.Copy(ctx, 0, tracker)
	sendOne(s, tracker, "t", 10, 250)
	start := time.Now()
	err := s.Handover(ctx, &phases.State{Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseReady, LSN: 300}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("handover with a record unacknowledged: %v, want a deadline", err)
	}
	if took := time.Since(start); took > handoverAckWait+time.Second {
		t.Fatalf("handover waited %s", took)
	}
	if got := f.TakeEvents(); !slices.Equal(got, []string{"produce t"}) {
		t.Fatalf("stored something before the acknowledgement: %v", got)
	}
}

// TestExactlyOnceSinkTellsAFenceFromABrokerAbort: when the producer's
// epoch moved under an open transaction, the sink reads the offsets. A
// pipeline record other than its own last one means another instance took
// the transactional id: it stops, fenced. Its own last record means the
// broker aborted the transaction itself (a timeout, a coordinator that lost
// its state): it replaces its producer with a new one of the same id and
// replays from the last commit.
func TestExactlyOnceSinkTellsAFenceFromABrokerAbort(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	ctx := context.Background()
	for _, tc := range []struct {
		name         string
		otherWrote   bool
		wantFenced   bool
		wantReplaced bool
	}{
		{"another instance wrote the offsets", true, true, false},
		{"the broker aborted the transaction", false, false, true},
		{"a commit this instance tried may have landed", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := &deliverytest.FakeProducer{EndErr: kerr.InvalidProducerEpoch}
			var made []string
			fresh := &deliverytest.FakeProducer{}
			d := &exactlyOnce{cfg: testDeliveryConfig(old), log: zap.NewNop(), mainCl: old,
				newClient: func(_ context.Context, id string) (TxnClient, error) { made = append(made, id); return fresh, nil }}
			tracker := NewTracker(100, 1<<20, nil)
			m := d.Main(tracker).(*eosMain)
			if err := m.Open(ctx, testSource); err == nil {
				t.Fatal("open with a commit refused: nil")
			}
			// The record of the last commit, as this instance wrote it;
			// and the one of a commit it tried, whose answer it lost.
			m.lastRecord = testSource
			tried := testSource
			tried.DurableLSN, tried.UpdatedMs = 150, 7
			m.tried = tried
			d.loadPipeline = func(context.Context) (*offsets.Pipeline, error) {
				p := testSource
				switch {
				case tc.otherWrote:
					p.UpdatedMs++
				case strings.HasPrefix(tc.name, "a commit"):
					p = tried
				}
				return &p, nil
			}
			if err := m.Begin(); err != nil {
				t.Fatal(err)
			}
			sendOne(m, tracker, "t", 10, 200)
			err := m.SessionEnded(ctx, fmt.Errorf("produce: %w", kerr.InvalidProducerEpoch))
			var fenced *FencedError
			if got := errors.As(err, &fenced); got != tc.wantFenced {
				t.Fatalf("sessionEnded: %v, want fenced %v", err, tc.wantFenced)
			}
			if replaced := len(made) == 1 && made[0] == "shop-main" && m.cl == fresh && d.mainCl == fresh; replaced != tc.wantReplaced {
				t.Fatalf("replaced %v (made %v), want %v", replaced, made, tc.wantReplaced)
			}
			if tc.wantReplaced && !slices.Contains(old.TakeEvents(), "close") {
				t.Fatal("the replaced producer was not closed")
			}
			if d := tracker.Durable(); d != 100 {
				t.Fatalf("durable %s, want the last commit's 100", d)
			}
		})
	}
}

// TestExactlyOnceSinkWritesATableStateInItsUnitsTransaction: a table state
// handed to WithUnit (an incremental snapshot's progress) is produced in
// the open Kafka transaction that holds the unit's records, at its commit
// beside the pipeline record, the newest state of a table only (durable at
// the commit, lost at an abort); at-least-once writes none and never
// makes it.
func TestExactlyOnceSinkWritesATableStateInItsUnitsTransaction(t *testing.T) {
	ctx := context.Background()
	f := &deliverytest.FakeProducer{}
	d := &exactlyOnce{cfg: testDeliveryConfig(f), log: zap.NewNop()}
	tracker := NewTracker(100, 1<<20, nil)
	m := d.Main(tracker).(*eosMain)
	m.cl = f
	if err := m.Open(ctx, testSource); err != nil {
		t.Fatal(err)
	}
	f.TakeEvents()
	state := func(done string) func() *phases.State {
		return func() *phases.State {
			return &phases.State{Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseReady, Incremental: offsets.RawJSON(done)}}
		}
	}
	if m.WithUnit(tracker.Begin(), state(`{"done":[[0,1]]}`)) {
		t.Fatal("WithUnit with no Kafka transaction open: true")
	}
	tracker.Abandon()

	// Committed: the rows, then the newest state, then the pipeline record.
	if err := m.Begin(); err != nil {
		t.Fatal(err)
	}
	a := tracker.Begin()
	rec := &kgo.Record{Topic: "t", Value: []byte("row"), Context: a}
	tracker.Add(a, RecordBytes(rec))
	m.Send(rec, func(r *kgo.Record, err error) { tracker.Ack(a, RecordBytes(r), err) })
	if !m.WithUnit(a, state(`{"done":[[0,2]]}`)) || !m.WithUnit(a, state(`{"done":[[0,3]]}`)) {
		t.Fatal("WithUnit in an open Kafka transaction: false")
	}
	tracker.Commit(a, 200)
	if err := m.Ended(ctx, 200); err != nil {
		t.Fatal(err)
	}
	if durable, lost := tracker.UnitState(a); durable || lost {
		t.Fatalf("unit before the commit: durable %v lost %v", durable, lost)
	}
	if got, want := f.TakeEvents(), []string{"begin", "produce t"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if err := m.commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := f.TakeEvents(), []string{"produce offsets", "produce offsets", "flush", "commit"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if durable, lost := tracker.UnitState(a); !durable || lost {
		t.Fatalf("unit after the commit: durable %v lost %v", durable, lost)
	}
	if got := string(f.State(t).Tables["public.t"].Incremental); got != `{"done":[[0,3]]}` {
		t.Fatalf("stored progress %s", got)
	}

	// Aborted with its session: the unit is lost, the state never written.
	if err := m.Begin(); err != nil {
		t.Fatal(err)
	}
	b := tracker.Begin()
	if !m.WithUnit(b, state(`{"done":[[0,4]]}`)) {
		t.Fatal("WithUnit: false")
	}
	tracker.Commit(b, 300)
	m.lastEnd = 300
	if err := m.SessionEnded(ctx, errors.New("session lost")); err != nil {
		t.Fatal(err)
	}
	if _, lost := tracker.UnitState(b); !lost {
		t.Fatal("the unit of an aborted transaction is not lost")
	}
	if err := m.Open(ctx, testSource); err != nil { // the next session's first commit
		t.Fatal(err)
	}
	if got := string(f.State(t).Tables["public.t"].Incremental); got != `{"done":[[0,3]]}` {
		t.Fatalf("stored progress after an abort %s, want the committed one", got)
	}

	alo := (&atLeastOnce{cfg: testDeliveryConfig(f), cl: f, log: zap.NewNop()}).Main(NewTracker(100, 1<<20, nil))
	if alo.WithUnit(tracker.Begin(), func() *phases.State { t.Fatal("at-least-once made the state"); return nil }) {
		t.Fatal("at-least-once WithUnit: true")
	}
}
