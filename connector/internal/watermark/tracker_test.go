package watermark

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"
)

// h drives a Tracker the way the stream goroutine will, and logs what
// would reach the table's topic, in order: "T<xid> <keys>" for a streamed
// transaction's changes, "r <key>=<value>" for a window's row,
// "void <chunk>" for a window to read again.
type h struct {
	t   *testing.T
	tr  *Tracker[string]
	log []string
}

const tbl = 16384

func newH(t *testing.T, limit int) *h {
	x := &h{t: t, tr: NewTracker[string](limit)}
	x.tr.Watch(tbl)
	return x
}

func snap(t *testing.T, text string) Snapshot {
	s, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (x *h) closed(cs []Closed[string]) {
	for _, c := range cs {
		if c.Void != "" {
			x.log = append(x.log, "void "+c.Chunk.String())
			continue
		}
		for _, r := range c.Rows {
			x.log = append(x.log, fmt.Sprintf("r %s=%s", r.Key, r.Value))
		}
	}
}

// txn streams transaction xid, committed at lsn, whose changes touch the
// table's keys ("*" for a TRUNCATE, "?" for an unknown key, "other:k"
// for another table's key).
func (x *h) txn(xid uint32, lsn pglogrepl.LSN, keys ...string) {
	x.t.Helper()
	x.closed(x.tr.Advance(lsn))
	if err := x.tr.Begin(xid); err != nil {
		x.t.Fatal(err)
	}
	for _, k := range keys {
		var err error
		switch {
		case k == "*":
			err = x.tr.ObserveAll(tbl, "TRUNCATE")
		case k == "?":
			err = x.tr.ObserveAll(tbl, "a key column is unchanged TOAST")
		case strings.HasPrefix(k, "other:"):
			err = x.tr.Observe(tbl+1, Key(k[6:]))
		case strings.Contains(k, ">"): // a key change: old>new
			o, n, _ := strings.Cut(k, ">")
			err = x.tr.Observe(tbl, Key(o), Key(n))
		default:
			err = x.tr.Observe(tbl, Key(k))
		}
		if err != nil {
			x.t.Fatal(err)
		}
	}
	x.tr.End()
	x.log = append(x.log, fmt.Sprintf("T%d %s", xid, strings.Join(keys, ",")))
	x.closed(x.tr.Advance(lsn + 1))
}

func (x *h) open(chunk Chunk, snapshot string, high pglogrepl.LSN) *Window[string] {
	x.t.Helper()
	w, err := x.tr.Open(tbl, chunk, snap(x.t, snapshot), high)
	if err != nil {
		x.t.Fatal(err)
	}
	return w
}

// rows are "key=value" pairs.
func (x *h) complete(w *Window[string], rows ...string) {
	x.t.Helper()
	var rs []Row[string]
	for _, r := range rows {
		k, v, _ := strings.Cut(r, "=")
		rs = append(rs, Row[string]{Key: Key(k), Value: v, Size: len(r)})
	}
	if err := x.tr.Complete(w, rs); err != nil {
		x.t.Fatal(err)
	}
}

func (x *h) advance(pos pglogrepl.LSN) { x.closed(x.tr.Advance(pos)) }

func (x *h) want(log ...string) {
	x.t.Helper()
	if !slices.Equal(x.log, log) {
		x.t.Errorf("the topic gets\n  %s\nwant\n  %s", strings.Join(x.log, "\n  "), strings.Join(log, "\n  "))
	}
}

var c0, c1 = Chunk{0, 8}, Chunk{8, 16}

// windowCases are the cases of docs/incremental-snapshots.md, "The
// argument, case by case", under the same names
// (TestEveryCaseOfTheArgumentHasATest holds the two lists together).
var windowCases = []struct {
	name string
	run  func(x *h)
}{
	{"a change the snapshot sees keeps the row", func(x *h) {
		w := x.open(c0, "100:100:", 200) // sees 99
		x.txn(99, 150, "a")              // committed before the snapshot, streamed after it opened
		x.complete(w, "a=2", "b=1")
		x.advance(200)
		x.want("T99 a", "r a=2", "r b=1")
	}},
	{"a change the snapshot does not see drops the key", func(x *h) {
		w := x.open(c0, "100:101:100", 200) // 100 is running
		x.txn(100, 150, "a")
		x.complete(w, "a=1", "b=1")
		x.advance(200)
		x.want("T100 a", "r b=1")
	}},
	{"a change after the window follows its rows", func(x *h) {
		w := x.open(c0, "100:100:", 200)
		x.complete(w, "a=1")
		x.txn(100, 250, "a")
		x.want("r a=1", "T100 a")
	}},
	{"the window closes at the high watermark", func(x *h) {
		w := x.open(c0, "100:100:", 200)
		x.complete(w, "a=1")
		x.advance(199) // a transaction the snapshot saw may still be on its way
		x.want()
		x.advance(200) // a keepalive on an idle stream
		x.want("r a=1")
	}},
	{"the window waits for its chunk, the stream does not wait", func(x *h) {
		w := x.open(c0, "100:101:100", 200)
		x.txn(101, 300, "b") // past the high watermark, the chunk not read yet
		x.txn(100, 310, "a")
		x.complete(w, "a=1", "b=1", "c=1")
		x.advance(311)
		x.want("T101 b", "T100 a", "r c=1")
	}},
	{"a transaction streamed before it is visible", func(x *h) {
		// Commit record written and streamed, the transaction not yet
		// out of the proc array when the chunk's snapshot is taken.
		x.txn(100, 150, "a")
		w := x.open(c0, "100:101:100", 200)
		x.complete(w, "a=0", "b=1")
		x.advance(200)
		x.want("T100 a", "r b=1")
	}},
	{"a transaction streamed before the table was watched", func(x *h) {
		x.tr.Unwatch(tbl)
		x.txn(100, 150, "a")
		x.tr.Watch(tbl)
		if _, err := x.tr.Open(tbl, c0, snap(x.t, "100:101:100"), 200); !errors.Is(err, ErrUnproven) {
			x.t.Fatalf("open: %v, want ErrUnproven", err)
		}
		x.tr.Prune(snap(x.t, "101:101:")) // a probe: 100 is visible now
		w := x.open(c0, "101:101:", 200)
		x.complete(w, "a=2")
		x.advance(200)
		x.want("T100 a", "r a=2")
	}},
	{"a delete", func(x *h) {
		w := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "a") // DELETE: its old key
		x.complete(w, "a=1")
		x.advance(200)
		x.want("T100 a")
	}},
	{"a key change", func(x *h) {
		w := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "a>b") // UPDATE … SET id = 'b': old key and new key
		x.complete(w, "a=1", "b=0", "c=1")
		x.advance(200)
		x.want("T100 a>b", "r c=1")
	}},
	{"an update moves a row to a chunk read later", func(x *h) {
		// a is in c0 under S1, the update moves it to c1 (a new
		// ctid), c1 is read under S2, which sees the update.
		w1 := x.open(c0, "100:101:100", 200)
		x.complete(w1, "a=1")
		x.advance(200)
		x.txn(100, 250, "a")
		w2 := x.open(c1, "101:101:", 300)
		x.complete(w2, "a=2")
		x.advance(300)
		x.want("r a=1", "T100 a", "r a=2") // each row is the state the stream has given a there
	}},
	{"an update moves a row to a chunk read later, during the first window", func(x *h) {
		w1 := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "a")
		x.complete(w1, "a=1")
		x.advance(200)
		w2 := x.open(c1, "101:101:", 300)
		x.complete(w2, "a=2")
		x.advance(300)
		x.want("T100 a", "r a=2")
	}},
	{"an update moves a row to a chunk read before", func(x *h) {
		// a is in c1 under S1's successor; the update moves it into
		// c0, read already: no window has it, its change record does.
		w0 := x.open(c0, "100:100:", 200)
		x.complete(w0, "b=1")
		x.advance(200)
		x.txn(100, 250, "a")
		w1 := x.open(c1, "101:101:", 300)
		x.complete(w1)
		x.advance(300)
		x.want("r b=1", "T100 a")
	}},
	{"keys that are not unique", func(x *h) {
		// format.message_key_columns on a column two rows share.
		w := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "t1")
		x.complete(w, "t1=row1", "t1=row2", "t2=row3")
		x.advance(200)
		x.want("T100 t1", "r t2=row3")
	}},
	{"a TRUNCATE the snapshot does not see", func(x *h) {
		w := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "*")
		x.complete(w, "a=1")
		x.advance(200)
		x.want("T100 *", "void pages [0, 8)")
	}},
	{"a TRUNCATE the snapshot sees", func(x *h) {
		w := x.open(c0, "101:101:", 200)
		x.txn(100, 150, "*")
		x.complete(w, "a=2") // inserted after the TRUNCATE
		x.advance(200)
		x.want("T100 *", "r a=2")
	}},
	{"a TRUNCATE streamed before the snapshot sees it", func(x *h) {
		x.txn(100, 150, "*")
		if _, err := x.tr.Open(tbl, c0, snap(x.t, "100:101:100"), 200); !errors.Is(err, ErrUnproven) {
			x.t.Fatalf("open: %v, want ErrUnproven", err)
		}
		x.want("T100 *")
	}},
	{"a change whose key is not known", func(x *h) {
		w := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "?")
		x.complete(w, "a=1")
		x.advance(200)
		x.want("T100 ?", "void pages [0, 8)")
	}},
	{"a rewrite of the table", func(x *h) {
		// The chunk's transaction reads pg_relation_filenode() after
		// its SELECT and finds another file than the plan's.
		w := x.open(c0, "100:100:", 200)
		if err := x.tr.Abandon(w, "relfilenode 16390 is not the plan's 16384"); err != nil {
			x.t.Fatal(err)
		}
		x.advance(100) // void windows need not wait for the high watermark
		x.want("void pages [0, 8)")
		if err := x.tr.Abandon(w, "again"); !errors.Is(err, ErrNotOpen) {
			x.t.Fatalf("abandon a closed window: %v", err)
		}
	}},
	{"another table's change", func(x *h) {
		w := x.open(c0, "100:101:100", 200)
		x.txn(100, 150, "other:a")
		x.complete(w, "a=1")
		x.advance(200)
		x.want("T100 other:a", "r a=1")
	}},
	{"windows close in the order they opened", func(x *h) {
		w1 := x.open(c0, "100:100:", 200)
		w2 := x.open(c1, "100:100:", 150)
		x.complete(w2, "b=1")
		x.complete(w1, "a=1")
		x.advance(200)
		x.want("r a=1", "r b=1")
	}},
	{"a snapshot taken on a standby", func(x *h) {
		// On a hot standby pg_current_snapshot() lists no running id:
		// "747:749:" while 747, committed on the primary and streamed,
		// is not replayed there yet (748 is). InRecovery counts every id
		// from xmin on as unseen: 747's key is dropped, and 748's too,
		// which the snapshot did see (safe: the stream has its change).
		w, err := x.tr.Open(tbl, c0, snap(x.t, "747:749:").InRecovery(), 200)
		if err != nil {
			x.t.Fatal(err)
		}
		x.txn(747, 150, "a")
		x.txn(748, 160, "b")
		x.complete(w, "a=1", "b=2", "c=3")
		x.advance(200)
		x.want("T747 a", "T748 b", "r c=3")
	}},
	{"a stream xid across the epoch", func(x *h) {
		// The snapshot is taken just before the 32-bit counter wraps;
		// the transaction that follows has xid 3 of the next epoch.
		w := x.open(c0, "8589934590:8589934590:", 200) // 2*2^32 - 2
		x.txn(3, 150, "a")
		x.txn(4294967290, 160, "b") // 2*2^32 - 6: before the snapshot, seen
		x.complete(w, "a=1", "b=2")
		x.advance(200)
		x.want("T3 a", "T4294967290 b", "r b=2")
	}},
}

func TestWindowCases(t *testing.T) {
	for _, c := range windowCases {
		t.Run(c.name, func(t *testing.T) { c.run(newH(t, 1000)) })
	}
}

func TestEveryCaseOfTheArgumentHasATest(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/incremental-snapshots.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "### The argument, case by case")
	end := strings.Index(text, "The randomized model")
	if start < 0 || end < start {
		t.Fatal(`docs/incremental-snapshots.md has no section "The argument, case by case" followed by the model`)
	}
	var inDoc []string
	for _, line := range strings.Split(text[start:end], "\n") {
		if rest, ok := strings.CutPrefix(line, "* **"); ok {
			if name, _, ok := strings.Cut(rest, "**"); ok {
				inDoc = append(inDoc, name)
			}
		}
	}
	var inTest []string
	for _, c := range windowCases {
		inTest = append(inTest, c.name)
		if !slices.Contains(inDoc, c.name) {
			t.Errorf("test case %q is not a case of the doc", c.name)
		}
	}
	for _, n := range inDoc {
		if !slices.Contains(inTest, n) {
			t.Errorf("the doc's case %q has no test case", n)
		}
	}
}

func TestWindowVoidWhenMoreKeysChangeThanTheTrackerKeeps(t *testing.T) {
	x := newH(t, 3)
	w := x.open(c0, "100:101:100", 200)
	x.txn(100, 150, "a", "b", "c", "d")
	x.complete(w, "e=1")
	x.advance(200)
	x.want("T100 a,b,c,d", "void pages [0, 8)")
}

func TestOpenRefusedUntilForgottenTransactionsAreProvenVisible(t *testing.T) {
	x := newH(t, 4)
	for i := range uint32(6) {
		x.txn(100+i, pglogrepl.LSN(150+10*i), "a")
	}
	_, err := x.tr.Open(tbl, c0, snap(t, "103:106:103,104,105"), 300)
	if !errors.Is(err, ErrUnproven) {
		t.Fatalf("open: %v, want ErrUnproven: transactions 100-105 were forgotten", err)
	}
	w := x.open(c0, "106:106:", 300) // every one of them seen: proven
	x.complete(w, "a=6")
	x.advance(300)
	if got := x.log[len(x.log)-1]; got != "r a=6" {
		t.Fatalf("last: %s", got)
	}
}

func TestUnwatchDiscardsWindows(t *testing.T) {
	x := newH(t, 100)
	w := x.open(c0, "100:100:", 200)
	if gone := x.tr.Unwatch(tbl); !slices.Equal(gone, []uint64{w.ID()}) {
		t.Fatalf("Unwatch returned %v", gone)
	}
	if err := x.tr.Complete(w, nil); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("complete: %v, want ErrNotOpen", err)
	}
	if _, err := x.tr.Open(tbl, c0, snap(t, "100:100:"), 200); err == nil {
		t.Fatal("a window opened on an unwatched table")
	}
	x.advance(300)
	x.want()
}

func TestTrackerRefusesABrokenStream(t *testing.T) {
	tr := NewTracker[string](10)
	if err := tr.Observe(1, "a"); err == nil {
		t.Error("a change outside a transaction was taken")
	}
	for _, xid := range []uint32{0, 1, 2} {
		if err := tr.Begin(xid); !errors.Is(err, ErrSpecialXid) {
			t.Errorf("Begin(%d): %v", xid, err)
		}
	}
	if err := tr.Begin(5); err != nil {
		t.Fatal(err)
	}
	if err := tr.Begin(6); err == nil {
		t.Error("a BEGIN inside a transaction was taken")
	}
	tr.Watch(1)
	w, err := tr.Open(1, c0, Snapshot{Xmin: 5, Xmax: 6, Xip: []uint64{5}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Complete(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := tr.Complete(w, nil); err == nil {
		t.Error("a window was completed twice")
	}
}

// A transaction streamed by the session before a restart can still be
// invisible when the new session takes its first snapshot (its commit
// waits for a synchronous standby): the saved log brings its keys.
func TestRestoreKeepsTransactionsStreamedBeforeTheRestart(t *testing.T) {
	old := newH(t, 100)
	old.tr.Watch(tbl + 1)
	old.txn(100, 150, "a>b", "other:z") // still waiting for the standby
	old.txn(101, 160, "c")
	old.tr.Prune(snap(t, "100:102:100")) // 101 is visible now: not saved
	saved := old.tr.Save(10)
	data, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}
	var back Saved
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	x := &h{t: t, tr: NewTracker[string](100)}
	if err := x.tr.Restore(back); err != nil {
		t.Fatal(err)
	}
	x.tr.Watch(tbl)
	w := x.open(c0, "100:102:100", 300)
	x.complete(w, "a=1", "b=0", "c=1", "d=1")
	x.advance(300)
	x.want("r c=1", "r d=1")
	if err := x.tr.Restore(back); err == nil {
		t.Error("restored into a tracker in use")
	}
	// Saved without keys past the limit: the window is refused instead.
	y := &h{t: t, tr: NewTracker[string](100)}
	if err := y.tr.Restore(old.tr.Save(1)); err != nil {
		t.Fatal(err)
	}
	y.tr.Watch(tbl)
	if _, err := y.tr.Open(tbl, c0, snap(t, "100:102:100"), 300); !errors.Is(err, ErrUnproven) {
		t.Fatalf("open with keys not saved: %v, want ErrUnproven", err)
	}
	y.open(c0, "102:102:", 300) // 100 visible at last
}

// The stream never carries a transaction committed before the slot's
// consistent point; the slot's exported snapshot sees exactly those.
func TestFloorRefusesSnapshotsThatMissCommitsBeforeTheSlot(t *testing.T) {
	x := newH(t, 100)
	x.tr.SetFloor(snap(t, "100:103:100")) // 101 and 102 committed (in WAL) before the consistent point
	for _, s := range []string{"100:101:100", "100:103:100,101", "101:103:101", "101:103:102"} {
		if _, err := x.tr.Open(tbl, c0, snap(t, s), 200); !errors.Is(err, ErrUnproven) {
			t.Errorf("open under %s: %v, want ErrUnproven", s, err)
		}
	}
	for _, s := range []string{"100:103:100", "100:104:100", "103:103:", "100:110:100,105,107"} {
		if _, err := x.tr.Open(tbl, c0, snap(t, s), 200); err != nil {
			t.Errorf("open under %s: %v", s, err)
		}
	}
}

// A position given inside a transaction (a keepalive read while the
// transaction's messages arrive, say) is not a boundary: a window closed
// there would write rows that already reflect the transaction before the
// rest of its changes, so Advance closes nothing until End.
func TestAdvanceInsideATransactionClosesNothing(t *testing.T) {
	x := newH(t, 100)
	w := x.open(c0, "100:100:", 150) // sees 99, committed at 120 < H
	x.complete(w, "a=2", "b=2")
	x.advance(120)
	if err := x.tr.Begin(99); err != nil {
		t.Fatal(err)
	}
	if err := x.tr.Observe(tbl, "a"); err != nil {
		t.Fatal(err)
	}
	x.closed(x.tr.Advance(300)) // the keepalive
	if err := x.tr.Observe(tbl, "b"); err != nil {
		t.Fatal(err)
	}
	x.tr.End()
	x.log = append(x.log, "T99 a,b")
	x.advance(301)
	x.want("T99 a,b", "r a=2", "r b=2")
}

// The wiring sets a floor per watched table (emit: Incremental.SetFloor):
// the floor that demands more must stay, whatever the order they come in.
func TestRaiseFloorKeepsTheFloorThatDemandsMore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		floors []string
		snap   string
		opens  bool
	}{
		{"one floor seen", []string{"800:800:"}, "800:801:", true},
		{"one floor not seen: a running id below it", []string{"800:800:"}, "799:801:799", false},
		{"a lower floor after a higher one keeps the higher", []string{"900:900:", "800:800:"}, "850:850:", false},
		{"a higher floor after a lower one raises it", []string{"800:800:", "900:900:"}, "850:850:", false},
		{"both seen", []string{"800:800:", "900:900:"}, "900:905:901", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker[string](100)
			tr.Watch(tbl)
			if !tr.Watched(tbl) || !tr.Watching() || tr.Watched(tbl+1) {
				t.Fatal("Watched/Watching do not say what Watch did")
			}
			for _, f := range tc.floors {
				tr.RaiseFloor(snap(t, f))
			}
			_, err := tr.Open(tbl, Chunk{0, 1}, snap(t, tc.snap), 10)
			if got := err == nil; got != tc.opens {
				t.Fatalf("Open under %s with floors %v: err %v, want opens=%v", tc.snap, tc.floors, err, tc.opens)
			}
			if err != nil && !errors.Is(err, ErrUnproven) {
				t.Fatalf("refused with %v, want ErrUnproven", err)
			}
			tr.Unwatch(tbl)
			if tr.Watching() {
				t.Fatal("Watching after the last Unwatch")
			}
		})
	}
}

func TestClosableSaysWhatAdvanceReturns(t *testing.T) {
	tr := NewTracker[string](100)
	tr.Watch(tbl)
	w, err := tr.Open(tbl, Chunk{0, 1}, snap(t, "800:800:"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if w.Closable(200) {
		t.Fatal("closable before its chunk is read")
	}
	if err := tr.Complete(w, nil); err != nil {
		t.Fatal(err)
	}
	if w.Closable(99) || !w.Closable(100) {
		t.Fatal("closable must follow the high watermark")
	}
	if len(tr.Advance(99)) != 0 || len(tr.Advance(100)) != 1 {
		t.Fatal("Advance disagrees with Closable")
	}
}

// Visibility grows on one server, not across servers (docs/
// incremental-snapshots.md, "The floor", on a standby): a hot standby makes
// a commit visible when it replays it, which can be before the primary
// (whose backend still waits for the standby's answer: F6) or after (the
// standby lags), and a standby restarted by a crash reopens at its
// consistent point, which can be behind what it had replayed. A snapshot
// that forgets a logged transaction (Prune) raises the floor, so that a
// later window whose snapshot does not see that transaction is refused
// rather than opened without its keys. Transaction 105 changed key k and
// was streamed before any window opened; the first snapshot sees it and
// forgets it; the second comes from a server that does not see it yet.
func TestAWindowOnAServerThatDoesNotSeeWhatAnEarlierOneForgotIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second Snapshot
		opens         bool
	}{
		{"the primary, then a standby that lags",
			Snapshot{Xmin: 106, Xmax: 106}, Snapshot{Xmin: 104, Xmax: 106}.InRecovery(), false},
		{"a standby, then the primary where 105 still waits for that standby",
			Snapshot{Xmin: 106, Xmax: 106}.InRecovery(), Snapshot{Xmin: 105, Xmax: 106, Xip: []uint64{105}}, false},
		{"a standby, then the same standby restarted behind it",
			Snapshot{Xmin: 107, Xmax: 108}.InRecovery(), Snapshot{Xmin: 105, Xmax: 107}.InRecovery(), false},
		{"a standby, then a later snapshot of it",
			Snapshot{Xmin: 106, Xmax: 106}.InRecovery(), Snapshot{Xmin: 106, Xmax: 109}.InRecovery(), true},
		{"the primary, then a later snapshot of it",
			Snapshot{Xmin: 106, Xmax: 107, Xip: []uint64{106}}, Snapshot{Xmin: 106, Xmax: 108, Xip: []uint64{106}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newH(t, 100)
			x.txn(105, 100, "k")
			w := x.open(c0, tc.first.String(), 200) // forgets 105: seen
			x.complete(w, "k=1")
			x.advance(200)
			x.want("T105 k", "r k=1")
			_, err := x.tr.Open(tbl, Chunk{1, 2}, tc.second, 300)
			if got := err == nil; got != tc.opens {
				t.Fatalf("open under %s after %s forgot 105: %v, want opens=%v", tc.second, tc.first, err, tc.opens)
			}
			if err != nil && !errors.Is(err, ErrUnproven) {
				t.Fatalf("refused with %v, want ErrUnproven", err)
			}
		})
	}
}
