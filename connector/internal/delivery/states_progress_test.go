package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery/deliverytest"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// TestExactlyOnceTableStatesNeverTakeBackCommittedProgress: in exactly-once
// mode a state the ordered writer of table states writes for a table
// whose incremental progress the main worker committed carries that
// progress when it is ahead of the state's own (the state in memory notes
// a commit up to a second later), never one of another plan nor one not
// committed; and a commit that holds a table's progress waits until the
// ordered writer's records made before it are acknowledged, so that none
// lands after it (states_progress.go).
func TestExactlyOnceTableStatesNeverTakeBackCommittedProgress(t *testing.T) {
	t.Parallel() // fakes only
	ctx := context.Background()
	f := &deliverytest.FakeProducer{}               // the main worker's transactional producer
	plain := &deliverytest.FakeProducer{Hold: true} // the ordered writer's client
	cfg := testDeliveryConfig(f)
	states := &StateWriter{ctx: ctx, cl: plain, records: cfg.records, log: zap.NewNop()}
	cfg.states = states
	d := &exactlyOnce{cfg: cfg, log: zap.NewNop()}
	tracker := NewTracker(100, 1<<20, nil)
	m := d.Main(tracker).(*eosMain)
	m.cl = f
	if err := m.Open(ctx, testSource); err != nil {
		t.Fatal(err)
	}
	const plan = `"pages":10,"relfilenode":7,"chunk_pages":1,"started_ms":1`
	state := func(inc, shape string) *phases.State {
		return &phases.State{Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseReady, Shape: shape, Incremental: offsets.RawJSON(inc)}}
	}
	window := func(end uint64, inc string) {
		t.Helper()
		if err := m.Begin(); err != nil {
			t.Fatal(err)
		}
		a := tracker.Begin()
		rec := &kgo.Record{Topic: "t", Value: []byte("row"), Context: a}
		tracker.Add(a, RecordBytes(rec))
		m.Send(rec, func(r *kgo.Record, err error) { tracker.Ack(a, RecordBytes(r), err) })
		if !m.WithUnit(a, func() *phases.State { return state(inc, "s1") }) {
			t.Fatal("WithUnit in an open Kafka transaction: false")
		}
		tracker.Commit(a, 0)
		if err := m.Ended(ctx, schema.LSN(end)); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() offsets.Table {
		t.Helper()
		plain.Release()
		return plain.State(t).Tables["public.t"]
	}

	// Committed: windows [0,3) done. A shape change whose state in memory
	// has only [0,1) writes [0,3), with its shape.
	window(200, `{`+plan+`,"done":[[0,3]],"rows":30}`)
	if err := m.commit(ctx); err != nil {
		t.Fatal(err)
	}
	states.Enqueue(state(`{`+plan+`,"done":[[0,1]],"rows":10}`, "s2"))
	if got := stored(); got.Shape != "s2" || !progressDone(t, got.Incremental, [2]uint32{0, 3}) {
		t.Fatalf("a shape change after a commit stored %+v, want shape s2 with the committed [0,3) done", got)
	}
	// A window taken into the open transaction is not committed: a state
	// written meanwhile carries the committed progress only.
	window(300, `{`+plan+`,"done":[[0,4]],"rows":40}`)
	states.Enqueue(state(`{`+plan+`,"done":[[0,1]],"rows":10}`, "s3"))
	if got := stored(); !progressDone(t, got.Incremental, [2]uint32{0, 3}) {
		t.Fatalf("a state written while a window's transaction is open stored %s, want the committed [0,3) done", got.Incremental)
	}
	// Another plan (the snapshot started again) is its own.
	other := `{"pages":10,"relfilenode":7,"chunk_pages":1,"started_ms":2,"done":[[0,1]],"rows":10}`
	states.Enqueue(state(other, "s3"))
	if got := stored(); string(got.Incremental) != other {
		t.Fatalf("a state of another plan stored %s, want its own", got.Incremental)
	}

	// The commit of [0,4) waits for the ordered writer's record made
	// before it (held, not acknowledged yet) before its state goes in.
	f.TakeEvents()
	states.Enqueue(state(`{`+plan+`,"done":[[0,3]],"rows":30}`, "s4"))
	done := make(chan error, 1)
	go func() { done <- m.commit(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("the commit of a table's progress ended (%v) before the ordered writer's record made before it was acknowledged", err)
	case <-time.After(100 * time.Millisecond):
	}
	if got := f.TakeEvents(); slices.Contains(got, "produce offsets") {
		t.Fatalf("the progress went into the transaction before the ordered writer's record made before it was acknowledged: %v", got)
	}
	plain.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := f.State(t).Tables["public.t"]; !progressDone(t, got.Incremental, [2]uint32{0, 4}) {
		t.Fatalf("committed %s, want [0,4) done", got.Incremental)
	}
	// The snapshot ends: a state without progress is written as it is,
	// and the table's committed progress is forgotten.
	states.Enqueue(state("", "s4"))
	eventually.True(t, 5*time.Second, time.Millisecond, "no record", func() bool { return len(plain.Records()) > 0 })
	if got := stored(); got.Incremental != "" {
		t.Fatalf("the end of the snapshot stored %s", got.Incremental)
	}
	states.Enqueue(state(`{`+plan+`,"done":[[0,1]],"rows":10}`, "s5"))
	if got := stored(); !progressDone(t, got.Incremental, [2]uint32{0, 1}) {
		t.Fatalf("after the end, a state stored %s, want its own", got.Incremental)
	}
}

// progressDone reports whether raw's done ranges are want.
func progressDone(t *testing.T, raw offsets.RawJSON, want ...[2]uint32) bool {
	t.Helper()
	var p struct {
		Done [][2]uint32 `json:"done"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatalf("progress %s: %v", raw, err)
	}
	return slices.Equal(p.Done, want)
}

// TestExactlyOnceWindowStateKeepsTheTablesNewerState: the state a window
// takes into the main worker's transaction is made when it closes and
// written at the commit; a state of the table the ordered writer was
// handed in between (a shape change, a park) is newer: the commit writes
// it, with the window's progress, so that the table's last record is not
// ready again after a park (its changes after the park were skipped) nor
// the old shape. When that newer state has no progress (the snapshot was
// given up), the window's is not written at all.
func TestExactlyOnceWindowStateKeepsTheTablesNewerState(t *testing.T) {
	t.Parallel() // fakes only
	ctx := context.Background()
	f := &deliverytest.FakeProducer{}
	cfg := testDeliveryConfig(f)
	states := &StateWriter{ctx: ctx, cl: &deliverytest.FakeProducer{}, records: cfg.records, log: zap.NewNop()}
	cfg.states = states
	d := &exactlyOnce{cfg: cfg, log: zap.NewNop()}
	tracker := NewTracker(100, 1<<20, nil)
	m := d.Main(tracker).(*eosMain)
	m.cl = f
	if err := m.Open(ctx, testSource); err != nil {
		t.Fatal(err)
	}
	const plan = `"pages":10,"relfilenode":7,"chunk_pages":1,"started_ms":1`
	ready := func(done string) *phases.State {
		return &phases.State{Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseReady, Shape: "s1",
			Incremental: offsets.RawJSON(`{` + plan + `,"done":` + done + `}`)}}
	}
	states.Enqueue(ready(`[]`)) // the snapshot's plan
	end := uint64(200)
	window := func(done string, between func()) offsets.Table {
		t.Helper()
		if err := m.Begin(); err != nil {
			t.Fatal(err)
		}
		a := tracker.Begin()
		if !m.WithUnit(a, func() *phases.State { return ready(done) }) {
			t.Fatal("WithUnit: false")
		}
		tracker.Commit(a, schema.LSN(end))
		between()
		if err := m.Ended(ctx, schema.LSN(end)); err != nil {
			t.Fatal(err)
		}
		end += 100
		if err := m.commit(ctx); err != nil {
			t.Fatal(err)
		}
		return f.State(t).Tables["public.t"]
	}

	got := window(`[[0,1]]`, func() {})
	if got.Phase != offsets.PhaseReady || !progressDone(t, got.Incremental, [2]uint32{0, 1}) {
		t.Fatalf("a window with nothing between: %+v", got)
	}
	got = window(`[[0,2]]`, func() {
		s := ready(`[[0,1]]`)
		s.Shape = "s2"
		states.Enqueue(s)
	})
	if got.Shape != "s2" || !progressDone(t, got.Incremental, [2]uint32{0, 2}) {
		t.Fatalf("a shape stored between the window and its commit: the commit wrote %+v, want shape s2 and [0,2) done", got)
	}
	got = window(`[[0,3]]`, func() {
		s := ready(`[[0,2]]`)
		s.Shape, s.Phase, s.ParkedLSN, s.LastError, s.Retry = "s2", offsets.PhaseErrored, 250, "cannot encode", "resnapshot"
		states.Enqueue(s)
	})
	if got.Phase != offsets.PhaseErrored || got.ParkedLSN != 250 {
		t.Fatalf("a park between the window and its commit: the commit wrote %+v, want the park", got)
	}
	before := len(f.Records())
	window(`[[0,4]]`, func() {
		s := ready(`[[0,3]]`)
		s.Phase, s.Incremental = offsets.PhaseErrored, ""
		states.Enqueue(s)
	})
	for _, r := range f.Records()[before:] {
		var st offsets.State
		if err := offsets.Decode("shop", r.Key, r.Value, &st); err == nil && st.Tables["public.t"].Table != "" {
			t.Fatalf("the snapshot given up between the window and its commit, the commit still wrote %+v", st.Tables["public.t"])
		}
	}
}
