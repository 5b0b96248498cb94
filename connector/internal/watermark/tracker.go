package watermark

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
)

// ErrUnproven is returned by Open when the tracker cannot prove that every
// transaction streamed before the window opened is either seen by the
// window's snapshot or recorded with its keys: a transaction of the table
// streamed before Watch, a TRUNCATE, a change of unknown key, or one of
// too many keys (or anything evicted from the log, or committed before the
// slot's consistent point: SetFloor) is not yet visible to the snapshot. Postgres writes a commit record before the transaction
// becomes visible (and, with synchronous replication, waits for the
// standby in between), so the stream can carry a transaction that a later
// snapshot does not see yet. The state passes as soon as those
// transactions become visible: take a snapshot (Prune) and try again.
var ErrUnproven = errors.New("the snapshot does not see a transaction the stream carried whose keys are not recorded")

// ErrNotOpen is returned by Complete for a window Unwatch discarded (a
// stopped snapshot): drop its rows.
var ErrNotOpen = errors.New("the window is not open (its snapshot was stopped)")

// Tracker holds the watermark windows of the tables being snapshotted
// against the stream. It is
// the pure core of an incremental snapshot: the stream goroutine owns it
// and calls, for every transaction it writes and in commit order, Begin,
// Observe for each change, and End; Advance at every position where no
// transaction is open; Open, Complete and Prune as chunk readers hand it
// their snapshots and rows. It does no I/O, and is not safe for
// concurrent use: one goroutine calls it.
//
// It keeps a log of the transactions it was shown, by table (with their
// keys for a watched table), until a snapshot shows them visible: a
// window opened later applies the ones its snapshot does not see. The log
// is bounded by limit (entries plus keys); past it the oldest entries are
// forgotten and Open refuses (ErrUnproven) until a snapshot proves them
// all visible.
type Tracker[R any] struct {
	limit   int
	held    int // entries plus keys in log
	log     []*entry
	watched map[uint32]bool
	windows []*Window[R]
	nextID  uint64

	// The transaction being streamed.
	inTxn bool
	xid   uint32
	cur   map[uint32]*entry

	// The snapshot of the slot's consistent point, if set: every window's
	// snapshot must see what it sees (SetFloor).
	floor *Snapshot

	// Entries forgotten before a snapshot proved them visible: the
	// greatest of their xids (modulo 2^32), and whether there are any.
	lost    bool
	lostMax uint32

	// now is the clock windows are stamped with at Open (time.Now;
	// SetClock).
	now func() time.Time
}

// entry is one streamed transaction's changes to one table.
type entry struct {
	xid     uint32
	table   uint32
	keys    map[Key]struct{}
	unknown string // non-empty: the keys were not recorded, and why
	gone    bool   // out of the log: proven visible (Prune), or forgotten (evict: lost covers it)
}

// NewTracker returns an empty tracker whose log holds at most limit
// entries plus keys (at least 1). It watches no table.
func NewTracker[R any](limit int) *Tracker[R] {
	return &Tracker[R]{limit: max(limit, 1), watched: map[uint32]bool{}, cur: map[uint32]*entry{}, now: time.Now}
}

// SetClock sets the clock Open stamps windows with (time.Now by default).
// For tests.
func (t *Tracker[R]) SetClock(now func() time.Time) { t.now = now }

// Watch starts recording the keys of table's changes. Windows can open for
// it once every transaction of the table streamed before is visible to
// their snapshot.
func (t *Tracker[R]) Watch(table uint32) { t.watched[table] = true }

// Unwatch stops recording table's keys and discards its open windows (a
// stopped or finished snapshot); it returns their ids.
func (t *Tracker[R]) Unwatch(table uint32) []uint64 {
	delete(t.watched, table)
	var gone []uint64
	kept := t.windows[:0]
	for _, w := range t.windows {
		if w.table == table {
			gone = append(gone, w.id)
			continue
		}
		kept = append(kept, w)
	}
	clear(t.windows[len(kept):])
	t.windows = kept
	return gone
}

// Begin starts the stream transaction with the 32-bit id xid (pgoutput's
// BEGIN). Call Advance with its commit LSN first, so that the windows
// ending there are written before its changes.
func (t *Tracker[R]) Begin(xid uint32) error {
	if xid < firstNormalXid {
		return fmt.Errorf("BEGIN of transaction %d: %w", xid, ErrSpecialXid)
	}
	if t.inTxn {
		return fmt.Errorf("BEGIN of transaction %d inside transaction %d", xid, t.xid)
	}
	t.inTxn, t.xid = true, xid
	clear(t.cur)
	return nil
}

// End ends the stream transaction (pgoutput's COMMIT).
func (t *Tracker[R]) End() {
	t.inTxn = false
	clear(t.cur)
}

// Observe records one change of the open transaction to table, with every
// key it touches: an insert's new key, an update's old key (the replica
// identity's old values, or the new tuple's where the identity did not
// change) and new key, a delete's old key. Each open window of the table
// whose snapshot does not see the transaction leaves those keys out.
func (t *Tracker[R]) Observe(table uint32, keys ...Key) error {
	e, err := t.entryFor(table)
	if err != nil {
		return err
	}
	for _, w := range t.windows {
		if w.table == table && !t.sees(w) {
			for _, k := range keys {
				w.drop(k, t.limit)
			}
		}
	}
	if e.gone || e.unknown != "" {
		return nil
	}
	for _, k := range keys {
		if _, ok := e.keys[k]; ok {
			continue
		}
		if t.held >= t.limit {
			t.forgetKeys(e, "the transaction changed more keys than the tracker keeps")
			return nil
		}
		e.keys[k] = struct{}{}
		t.held++
	}
	t.evict()
	return nil
}

// ObserveAll records a change of the open transaction to table that may
// touch any key: a TRUNCATE, or a change whose key is not known (a key
// column sent as unchanged TOAST). Open windows of the table whose
// snapshot does not see the transaction become void (their chunks are
// read again); reason says why.
func (t *Tracker[R]) ObserveAll(table uint32, reason string) error {
	e, err := t.entryFor(table)
	if err != nil {
		return err
	}
	for _, w := range t.windows {
		if w.table == table && !t.sees(w) {
			w.voidBecause(fmt.Sprintf("transaction %d: %s", t.xid, reason))
		}
	}
	if !e.gone && e.unknown == "" {
		t.forgetKeys(e, reason)
	}
	return nil
}

// entryFor returns the open transaction's entry for table, logging a new
// one at its first change.
func (t *Tracker[R]) entryFor(table uint32) (*entry, error) {
	if !t.inTxn {
		return nil, errors.New("a change outside a transaction (no Begin)")
	}
	if e := t.cur[table]; e != nil {
		return e, nil
	}
	e := &entry{xid: t.xid, table: table}
	if t.watched[table] {
		e.keys = map[Key]struct{}{}
	} else {
		e.unknown = "streamed before the table was watched"
	}
	t.cur[table] = e
	t.log = append(t.log, e)
	t.held++
	t.evict()
	return e, nil
}

// forgetKeys turns e into an entry without keys.
func (t *Tracker[R]) forgetKeys(e *entry, why string) {
	t.held -= len(e.keys)
	e.keys = nil
	e.unknown = why
}

// evict forgets the oldest entries while the log is over its limit.
func (t *Tracker[R]) evict() {
	n := 0
	for t.held > t.limit && n < len(t.log) {
		e := t.log[n]
		e.gone = true
		t.held -= 1 + len(e.keys)
		if !t.lost || int32(e.xid-t.lostMax) > 0 {
			t.lostMax = e.xid
		}
		t.lost = true
		n++
	}
	if n > 0 {
		clear(t.log[:n])
		t.log = t.log[n:]
	}
}

// sees reports whether w's snapshot sees the open transaction.
func (t *Tracker[R]) sees(w *Window[R]) bool {
	if w.lastXid != t.xid {
		w.lastXid = t.xid
		w.lastVisible, _ = w.snap.Sees(t.xid) // Begin refused the special ids
	}
	return w.lastVisible
}

// Prune forgets the logged transactions that s sees: they are visible to
// every snapshot taken after s on the same server, so no later window
// needs them.
//
// Snapshots must be handed to Prune and Open in the order they were
// taken (a reader takes its snapshot and hands it over under one lock):
// a transaction s sees may be one an earlier snapshot did not.
//
// Visibility only grows on one server, not across servers: a hot standby
// makes a commit visible when it replays its record, which can be before
// the primary does (its backend still waits for the standby's answer) or
// after (the standby lags), and a standby restarted by a crash reopens
// for queries at its consistent point, which can be behind what it had
// replayed. So when Prune forgets anything it raises the floor to s
// (RaiseFloor): a later window whose snapshot does not see all s sees
// (read on another server, or on a standby that fell behind) is refused
// until it does, instead of missing the forgotten transactions' keys. On
// one server every later snapshot sees all s sees, and the floor costs
// nothing but the check.
func (t *Tracker[R]) Prune(s Snapshot) {
	kept := t.log[:0]
	for _, e := range t.log {
		if s.Visible(FullXid(e.xid, s.Xmax)) {
			e.gone = true
			t.held -= 1 + len(e.keys)
			continue
		}
		kept = append(kept, e)
	}
	forgot := len(kept) < len(t.log)
	clear(t.log[len(kept):])
	t.log = kept
	if t.lost && FullXid(t.lostMax, s.Xmax) < s.Xmin {
		t.lost = false
		forgot = true
	}
	if forgot {
		t.RaiseFloor(s)
	}
}

// SetFloor sets the snapshot exported when the replication slot was
// created (CREATE_REPLICATION_SLOT … EXPORT_SNAPSHOT, read with
// pg_current_snapshot() in a transaction that imports it): it sees exactly
// the transactions whose commit records precede the slot's consistent
// point, which the stream will never carry, some of which may not be
// visible yet (a commit waiting for a synchronous standby). Open refuses
// a snapshot that does not see all of them.
func (t *Tracker[R]) SetFloor(e Snapshot) { t.floor = &e }

// RaiseFloor makes the floor demand what e demands as well: a window's
// snapshot must then see every transaction the floor or e sees (their
// Union; of two floors one of which sees all the other sees, the one
// that demands more). The wiring sets one per watched table, each the
// snapshot that sees every id assigned before the table was watched, and
// Prune raises it to each snapshot that forgot a logged transaction.
func (t *Tracker[R]) RaiseFloor(e Snapshot) {
	if t.floor == nil {
		t.SetFloor(e)
		return
	}
	if !t.floor.SeesAll(e) {
		t.SetFloor(t.floor.Union(e))
	}
}

// Watched reports whether table is watched.
func (t *Tracker[R]) Watched(table uint32) bool { return t.watched[table] }

// Watching reports whether any table is watched.
func (t *Tracker[R]) Watching() bool { return len(t.watched) > 0 }

// Open starts a window for a chunk of table read under snapshot s, with
// high the WAL position read after s was taken (pg_current_wal_insert_lsn(),
// or pg_last_wal_replay_lsn() on a standby). It prunes the log by s
// (Prune's ordering rule applies) and leaves out of the window every key
// a logged transaction that s does not see changed. It fails with
// ErrUnproven when such a transaction's keys were not recorded.
func (t *Tracker[R]) Open(table uint32, chunk Chunk, s Snapshot, high pglogrepl.LSN) (*Window[R], error) {
	if !t.watched[table] {
		return nil, fmt.Errorf("open a window on table %d, which is not watched", table)
	}
	if t.floor != nil && !s.SeesAll(*t.floor) {
		return nil, fmt.Errorf("%w: snapshot %s does not see every transaction the floor %s sees (assigned before the table was watched, or seen by an earlier window's snapshot)", ErrUnproven, s, *t.floor)
	}
	t.Prune(s)
	if t.lost {
		return nil, fmt.Errorf("%w (the log overflowed; transaction %d and earlier ones are not proven visible)", ErrUnproven, t.lostMax)
	}
	w := &Window[R]{id: t.nextID, table: table, chunk: chunk, snap: s, high: high, opened: t.now(), dropped: map[Key]struct{}{}}
	for _, e := range t.log {
		if e.table != table {
			continue
		}
		if e.unknown != "" {
			// Its changes may touch any row the snapshot reads, and
			// the stream has already written them.
			return nil, fmt.Errorf("%w: transaction %d of table %d (%s)", ErrUnproven, e.xid, table, e.unknown)
		}
		for k := range e.keys {
			w.drop(k, t.limit)
		}
	}
	if w.void != "" {
		return nil, fmt.Errorf("%w: %s", ErrUnproven, w.void)
	}
	t.nextID++
	t.windows = append(t.windows, w)
	return w, nil
}

// Complete hands w the rows its chunk read under its snapshot, in the
// order read; the rows whose keys were changed by transactions the
// snapshot does not see are left out now or as such changes arrive.
// The window ends at the first Advance at or past its High.
func (t *Tracker[R]) Complete(w *Window[R], rows []Row[R]) error {
	if !t.isOpen(w) {
		return fmt.Errorf("complete window %d: %w", w.id, ErrNotOpen)
	}
	if w.complete {
		return fmt.Errorf("window %d completed twice", w.id)
	}
	w.complete = true
	if w.void != "" {
		return nil
	}
	w.rows = rows
	for _, r := range rows {
		w.bytes += r.Size
	}
	return nil
}

// Abandon gives up w because its chunk could not be read as planned: the
// query failed or was cancelled (a recovery conflict on a standby), or
// the table's relfilenode is not the plan's (a rewrite: VACUUM FULL,
// CLUSTER, ALTER TABLE … TYPE, which move rows without change records).
// It comes back from Advance as void, to read again.
func (t *Tracker[R]) Abandon(w *Window[R], why string) error {
	if !t.isOpen(w) {
		return fmt.Errorf("abandon window %d: %w", w.id, ErrNotOpen)
	}
	w.voidBecause(why)
	w.complete = true
	return nil
}

func (t *Tracker[R]) isOpen(w *Window[R]) bool {
	for _, o := range t.windows {
		if o == w {
			return true
		}
	}
	return false
}

// OpenWindows is the number of open windows (Windows without the copy).
func (t *Tracker[R]) OpenWindows() int { return len(t.windows) }

// Windows returns the open windows, in the order they were opened.
func (t *Tracker[R]) Windows() []*Window[R] { return append([]*Window[R](nil), t.windows...) }

// Advance tells the tracker that the stream stands at pos with no
// transaction open: every transaction whose commit record starts before
// pos has been written (pos is the next BEGIN's commit LSN, a COMMIT's
// end LSN, or a keepalive's WAL end while idle). It returns the windows
// that end here, in the order they were opened: each complete window
// whose High is at or before pos, with its rows to write now, before the
// stream's next change, and each complete void window, to read again. It
// keeps the others. Every window Open returned comes back here exactly
// once (unless Unwatch discards it).
//
// Inside a transaction (after Begin, before End) it closes nothing: the
// argument's positions are between transactions, and a window closed
// inside one would put its rows among that transaction's changes, rows
// that reflect it if the position is past its commit record. (A keepalive
// the walsender sends while it sends a transaction carries the end of the
// record decoded before the commit record, XLogSendLogical setting sentPtr
// only after a record is processed, so it is not past; the Tracker does
// not rely on that.) The next Advance after End closes the window.
func (t *Tracker[R]) Advance(pos pglogrepl.LSN) []Closed[R] {
	if t.inTxn {
		return nil
	}
	var out []Closed[R]
	kept := t.windows[:0]
	for _, w := range t.windows {
		switch {
		case w.void != "" && w.complete:
			out = append(out, Closed[R]{ID: w.id, Table: w.table, Chunk: w.chunk, Void: w.void})
		case w.complete && pos >= w.high:
			c := Closed[R]{ID: w.id, Table: w.table, Chunk: w.chunk, Rows: w.rows[:0:0]}
			for _, r := range w.rows {
				if _, gone := w.dropped[r.Key]; gone {
					c.Dropped++
					continue
				}
				c.Rows = append(c.Rows, r)
			}
			out = append(out, c)
		default:
			kept = append(kept, w)
			continue
		}
	}
	clear(t.windows[len(kept):])
	t.windows = kept
	return out
}

// Expired is a window Expire voided.
type Expired struct {
	ID    uint64
	Table uint32
	Chunk Chunk
	Age   time.Duration
	Why   string // the window's void reason
}

// Expire voids every open window that is not void yet and was opened
// more than life before now, and returns them; pos is the stream's
// position (to say how far it is behind a read window's High). A window
// that lives that long holds its rows (up to a chunk's worth of
// kafka.max_inflight_bytes) and its dropped keys while nothing ends it:
// the stream has not passed its High (it is behind, or stalled), or its
// chunk's read has not ended (a lock held on the table, a slow server).
// Voiding is safe at any moment, inside a transaction too: a void window
// writes nothing and its chunk is read again under a new snapshot, as
// after a TRUNCATE (docs/incremental-snapshots.md, "A window's longest
// life"). It comes back from Advance as void once its chunk is read.
func (t *Tracker[R]) Expire(now time.Time, life time.Duration, pos pglogrepl.LSN) []Expired {
	var out []Expired
	for _, w := range t.windows {
		age := now.Sub(w.opened)
		if w.void != "" || age <= life {
			continue
		}
		var why string
		if w.complete {
			why = fmt.Sprintf("open %s, past a window's longest life (%s): the stream, at %s, has not passed its high watermark %s (it is behind or stalled, e.g. sending a long transaction)",
				age.Round(time.Millisecond), life, pos, w.high)
		} else {
			why = fmt.Sprintf("open %s, past a window's longest life (%s): its chunk's read has not ended (a slow or overloaded server)",
				age.Round(time.Millisecond), life)
		}
		w.voidBecause(why)
		out = append(out, Expired{ID: w.id, Table: w.table, Chunk: w.chunk, Age: age, Why: why})
	}
	return out
}
