package emit

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/schema"
)

// A window key is made of the key columns' kind and text, whichever side
// read the row: the stream's tuple and a chunk's COPY row of the same key
// compare equal, rows of other keys do not, and a key column left out as
// unchanged TOAST makes no key (the change is observed as one of unknown
// key).
func TestTupleKeysCompareKeyColumnsOnly(t *testing.T) {
	rel := &schema.Relation{Columns: []schema.Column{{Name: "a"}, {Name: "v"}, {Name: "b"}}, KeyIndexes: []int{0, 2}}
	text := func(s string) schema.Value { return schema.Value{Kind: schema.ValueText, Data: []byte(s)} }
	null := schema.Value{Kind: schema.ValueNull}
	key := func(t schema.Tuple) (string, bool) {
		k, ok := AppendTupleKey(nil, rel, t)
		return string(k), ok
	}
	k1, _ := key(schema.Tuple{text("1"), text("x"), text("2")})
	for _, tc := range []struct {
		name string
		row  schema.Tuple
		same bool
		ok   bool
	}{
		{"the same key, another value", schema.Tuple{text("1"), text("y"), text("2")}, true, true},
		{"another key", schema.Tuple{text("1"), text("x"), text("3")}, false, true},
		{"the columns' texts concatenated alike", schema.Tuple{text("12"), text("x"), text("")}, false, true},
		{"a null key column", schema.Tuple{text("1"), text("x"), null}, false, true},
		{"unchanged TOAST in the key", schema.Tuple{text("1"), text("x"), {Kind: schema.ValueUnchangedToast}}, false, false},
		{"a short tuple", schema.Tuple{text("1")}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := key(tc.row)
			if ok != tc.ok || ok && (k == k1) != tc.same {
				t.Fatalf("key %q ok=%v, want ok=%v same=%v as %q", k, ok, tc.ok, tc.same, k1)
			}
		})
	}
}

// The r records a window or a stale key's tombstone writes at a position
// number −2, −3, …, so that none shares (commit_lsn, tx_seq) with a
// streamed change (0 on) or a BEGIN (−1); a new position starts again.
func TestWindowRowsNumberBelowTheStreamsRecords(t *testing.T) {
	q := NewIncremental()
	for i, want := range []int64{-2, -3, -4} {
		if got := q.nextSeq(100); got != want {
			t.Fatalf("record %d at 100: seq %d, want %d", i, got, want)
		}
	}
	if got := q.nextSeq(200); got != -2 {
		t.Fatalf("first record at 200: seq %d, want -2", got)
	}
}

// drive runs f (a reader's call, which blocks until the stream goroutine
// serves it) while the test, as the stream goroutine, ticks the emitter.
func drive(t *testing.T, fx *emitterFixture, f func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		if err := fx.em.Idle(0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWindowRowsAreWrittenAtTheCloseLessTheKeysTheStreamChanged: the main
// worker's side of a window (docs/incremental-snapshots.md, "The
// algorithm"). A window of snapshot 800:800: (it does not see
// transaction 800) with high watermark 850 reads keys 1 and 2; the stream
// then carries transaction 800, which updates key 1. At the next BEGIN
// whose commit LSN is past 850 the window closes: its row of key 2 is
// written there, before that transaction's changes and after 800's, and
// its row of key 1, older than the update the consumer has, is not; the
// unit that holds it is durable once acknowledged.
func TestWindowRowsAreWrittenAtTheCloseLessTheKeysTheStreamChanged(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	q := NewIncremental()
	fx.em.Incremental = q
	rel := testRelation(1, "t")
	keyed, _ := firstColumnKeyer{}.Keyed(rel)
	ctx := context.Background()
	drive(t, fx, func() error { _, err := q.Watch(ctx, 1, nil); return err })
	drive(t, fx, func() error { return q.SetFloor(ctx, 700) })
	snap, err := watermark.ParseSnapshot("800:800:")
	if err != nil {
		t.Fatal(err)
	}
	tk := q.Open(1, watermark.Chunk{First: 0, End: 1}, snap, 850)
	var w *Window
	drive(t, fx, func() error { w, err = tk.Wait(ctx); return err })

	fx.tx(t, 800, &schema.Change{Op: schema.OpUpdate, Relation: rel, After: row("1", "new")})

	var rows []Row
	for _, id := range []string{"1", "2"} {
		k, _ := AppendTupleKey(nil, keyed, row(id, "old"))
		rows = append(rows, Row{Key: watermark.Key(k), Value: &kgo.Record{Topic: "shop.public.t", Key: []byte(`{"id":` + id + `}`), Value: []byte(`{"op":"r"}`)}})
	}
	res := make(chan WindowResult, 1)
	go func() {
		r, err := tk.Complete(ctx, w, rows)
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	for !q.pending.Load() {
		time.Sleep(time.Millisecond)
	}
	if err := fx.em.Idle(0); err != nil { // served; 810 is before the high watermark: nothing closes
		t.Fatal(err)
	}
	fx.tx(t, 900, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("3", "c")})
	got := <-res
	if got.Rows != 1 || got.Dropped != 1 || got.Void != "" || got.Unit == nil {
		t.Fatalf("window result %+v, want 1 row written, 1 dropped, in a unit", got)
	}
	want := []string{`shop.public.t {"id":1} u`, `shop.public.t {"id":2} r`, `shop.public.t {"id":3} c`}
	if s := fx.summary(t); !slices.Equal(s, want) {
		t.Fatalf("records:\n%s\nwant:\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
	if durable, lost := fx.tracker.UnitState(got.Unit); !durable || lost {
		t.Fatalf("the rows' unit: durable %v lost %v, want durable once transaction 900 is acknowledged", durable, lost)
	}
}

// serving runs call (a reader's request) on another goroutine and serves
// the queue as the stream goroutine does between transactions (Idle at
// no new position) until call returns.
func serving(t *testing.T, fx *emitterFixture, call func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	for {
		if err := fx.em.Idle(0); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// TestWindowsWaitForTheNewSessionsStream: a session ends while a window
// waits for its chunk, its high watermark (105) already passed by the
// stream (110). The next session streams again from the durable LSN; until
// it has passed 105 again, no window closes: its rows would otherwise go
// in a unit of durability that ends at the last session's position (110),
// ahead of the transactions the new session has not streamed again, and
// the durable LSN (in exactly-once mode the Kafka transaction's offsets)
// would jump past them: a crash then would skip them for good.
func TestWindowsWaitForTheNewSessionsStream(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	q := NewIncremental()
	fx.em.Incremental = q
	ctx := context.Background()
	serving(t, fx, func() error { _, err := q.Watch(ctx, 1, nil); return err })
	serving(t, fx, func() error { return q.SetFloor(ctx, 1) })
	rel := testRelation(1, "t")
	fx.tx(t, 100, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")}) // ends at 110
	snap, err := watermark.ParseSnapshot("50:50:")
	if err != nil {
		t.Fatal(err)
	}
	tk := q.Open(1, watermark.Chunk{First: 0, End: 1}, snap, 105)
	if err := fx.em.Idle(0); err != nil {
		t.Fatal(err)
	}
	w, err := tk.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	streamed := len(fx.f.Records())

	fx.em.Reset() // the session ends; the next streams again from 100
	rows := []Row{{Key: watermark.Key("k7"), Value: &kgo.Record{Topic: "shop.public.t", Key: []byte(`{"id":7}`), Value: []byte(`{"op":"r"}`)}, Size: 10}}
	res := make(chan WindowResult, 1)
	go func() {
		r, err := tk.Complete(ctx, w, rows)
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	for i := 0; i < 50; i++ { // the new session's loop ticks before its first message
		if err := fx.em.Idle(0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if n := len(fx.f.Records()) - streamed; n != 0 {
		t.Fatalf("%d records written before the new session streamed anything: the window closed at the last session's position", n)
	}
	fx.tx(t, 100, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")}) // streamed again
	select {
	case r := <-res:
		if r.Rows != 1 {
			t.Fatalf("window wrote %d rows, want 1", r.Rows)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the window did not close once the new session passed its high watermark")
	}
}

// Watch returns the stream's position when it took effect: past the end
// of every transaction the stream carried before in this run, a
// keepalive's WAL end included, and not set back by a new session (which
// streams again from the durable LSN). On a hot standby the floor waits
// for the replay to reach it (docs/incremental-snapshots.md, "The floor").
func TestWatchReturnsAPositionPastEveryTransactionTheStreamCarried(t *testing.T) {
	fx := newEmitterFixture(t, 1_000_000, nil)
	q := NewIncremental()
	fx.em.Incremental = q
	rel := testRelation(1, "t")
	ctx := context.Background()
	watch := func(table uint32) schema.LSN {
		var pos schema.LSN
		drive(t, fx, func() error {
			var err error
			pos, err = q.Watch(ctx, table, nil)
			return err
		})
		return pos
	}
	fx.tx(t, 500, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("1", "a")}) // ends at 510
	if got := watch(1); got != 510 {
		t.Fatalf("Watch after a transaction ending at 510 = %s, want 510", got)
	}
	fx.tx(t, 600, &schema.Change{Op: schema.OpCreate, Relation: rel, After: row("2", "a")}) // ends at 610
	if err := fx.em.Idle(700); err != nil {                                                 // a keepalive
		t.Fatal(err)
	}
	q.incReset() // a new session: it streams again from the durable LSN
	if got := watch(2); got != 700 {
		t.Fatalf("Watch after a keepalive at 700 and a new session = %s, want 700", got)
	}
}
