package watermark

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jackc/pglogrepl"
)

// The model: a table of int keys under random transactions, with
// Postgres's rules that matter here. Writers of a key serialize (a row or
// unique-index lock held until the writer is visible or aborted); a
// transaction writes its commit record (takes an LSN) and only later
// becomes visible, in any order (the window between XLogFlush and
// ProcArrayEndTransaction, long under synchronous replication); a
// snapshot is xmin/xmax/xip as GetSnapshotData makes it; the stream
// writes committed transactions in commit-LSN order, possibly before they
// are visible. Rows live on pages; an update may move its row to another
// page (a new ctid), an insert lands on any page, the table grows.

type mver struct{ xid, seq uint64 } // one state of a row, by the op that wrote it

type mentry struct { // one write of a key, in the order the writers serialized
	xid     uint64
	present bool
	val     mver
	page    uint32
}

type mop struct {
	oldKey, newKey int // -1: none (insert has no old key, delete no new one)
	val            mver
	other          bool // a change to another table (noise for the log)
	truncate       bool // TRUNCATE: every row goes
	unknown        bool // an update whose key the stream cannot tell (a key column as unchanged TOAST)
}

const (
	mRunning = iota
	mCommitted
	mVisible
	mAborted
)

type mtxn struct {
	xid   uint64
	state int
	lsn   pglogrepl.LSN
	ops   []mop
	keys  []int
}

type model struct {
	r        *rand.Rand
	hist     map[int][]mentry
	lock     map[int]*mtxn
	txns     map[uint64]*mtxn
	running  []*mtxn // running or committed, not visible yet
	wal      []*mtxn
	nextXid  uint64
	latest   uint64 // latest completed xid
	nextLSN  pglogrepl.LSN
	pages    uint32
	seq      uint64
	keySpace int
	writable int // keys [0, writable) may be written; the others stay as they are
}

func newModel(r *rand.Rand, firstXid uint64) *model {
	m := &model{r: r, hist: map[int][]mentry{}, lock: map[int]*mtxn{}, txns: map[uint64]*mtxn{},
		nextXid: firstXid, latest: firstXid - 1, nextLSN: 100, pages: 1, keySpace: 40, writable: 40}
	return m
}

func (m *model) newXid() uint64 {
	x := m.nextXid
	m.nextXid++
	if uint32(m.nextXid) < firstNormalXid { // Postgres skips 0, 1, 2 at each epoch
		m.nextXid += firstNormalXid - uint64(uint32(m.nextXid))
	}
	return x
}

// current is key k's newest write by a transaction that is not aborted.
func (m *model) current(k int) (mentry, bool) {
	h := m.hist[k]
	for i := len(h) - 1; i >= 0; i-- {
		if m.txns[h[i].xid].state != mAborted {
			return h[i], h[i].present
		}
	}
	return mentry{}, false
}

// seen is key k as snapshot s reads it.
func (m *model) seen(s Snapshot, k int) (mentry, bool) {
	h := m.hist[k]
	for i := len(h) - 1; i >= 0; i-- {
		t := m.txns[h[i].xid]
		if t.state != mAborted && s.Visible(t.xid) {
			return h[i], h[i].present
		}
	}
	return mentry{}, false
}

func (m *model) snapshot() (Snapshot, pglogrepl.LSN) {
	s := Snapshot{Xmax: m.latest + 1}
	s.Xmin = s.Xmax
	for _, t := range m.running {
		s.Xmin = min(s.Xmin, t.xid)
		if t.xid < s.Xmax {
			s.Xip = append(s.Xip, t.xid)
		}
	}
	slices.Sort(s.Xip)
	return s, m.nextLSN
}

func (m *model) free(k int, t *mtxn) bool { o := m.lock[k]; return o == nil || o == t }

func (m *model) write(t *mtxn, k int, present bool, page uint32) mver {
	m.seq++
	v := mver{t.xid, m.seq}
	m.hist[k] = append(m.hist[k], mentry{xid: t.xid, present: present, val: v, page: page})
	if m.lock[k] == nil {
		m.lock[k] = t
		t.keys = append(t.keys, k)
	}
	return v
}

func (m *model) page() uint32 {
	if m.r.IntN(20) == 0 {
		m.pages++
	}
	return uint32(m.r.IntN(int(m.pages)))
}

// op lets a running transaction write one random key, if it can.
func (m *model) op(t *mtxn) {
	if m.r.IntN(8) == 0 {
		t.ops = append(t.ops, mop{other: true})
		return
	}
	if m.writable == m.keySpace && m.r.IntN(150) == 0 { // TRUNCATE: takes every row (its ACCESS EXCLUSIVE lock waits for every writer)
		for k := range m.keySpace {
			if !m.free(k, t) {
				return
			}
		}
		for k := range m.keySpace { // and holds it: every key is locked until it is visible
			m.write(t, k, false, 0)
		}
		t.ops = append(t.ops, mop{oldKey: -1, newKey: -1, truncate: true})
		return
	}
	k := m.r.IntN(m.writable)
	if !m.free(k, t) {
		return
	}
	cur, present := m.current(k)
	switch {
	case !present:
		v := m.write(t, k, true, m.page())
		t.ops = append(t.ops, mop{oldKey: -1, newKey: k, val: v})
	case m.r.IntN(4) == 0:
		m.write(t, k, false, 0)
		t.ops = append(t.ops, mop{oldKey: k, newKey: -1})
	case m.r.IntN(4) == 0: // a key change
		k2 := m.r.IntN(m.writable)
		if _, taken := m.current(k2); taken || !m.free(k2, t) || k2 == k {
			return
		}
		m.write(t, k, false, 0)
		v := m.write(t, k2, true, m.page())
		t.ops = append(t.ops, mop{oldKey: k, newKey: k2, val: v})
	default:
		page := cur.page
		if m.r.IntN(2) == 0 {
			page = m.page() // not a HOT update: a new ctid, maybe in another chunk
		}
		v := m.write(t, k, true, page)
		t.ops = append(t.ops, mop{oldKey: k, newKey: k, val: v, unknown: m.r.IntN(40) == 0})
	}
}

func (m *model) complete(t *mtxn, state int) {
	t.state = state
	for _, k := range t.keys {
		delete(m.lock, k)
	}
	m.latest = max(m.latest, t.xid)
	m.running = slices.DeleteFunc(m.running, func(o *mtxn) bool { return o == t })
}

// step runs one random event of the database.
func (m *model) step() {
	switch n := m.r.IntN(10); {
	case n < 2 || len(m.running) == 0:
		t := &mtxn{xid: m.newXid()}
		m.txns[t.xid] = t
		m.running = append(m.running, t)
	case n < 6:
		t := m.running[m.r.IntN(len(m.running))]
		if t.state == mRunning {
			m.op(t)
		}
	case n < 8:
		t := m.running[m.r.IntN(len(m.running))]
		if t.state == mRunning {
			if len(t.ops) == 0 || m.r.IntN(10) == 0 {
				m.complete(t, mAborted)
				return
			}
			t.state, t.lsn = mCommitted, m.nextLSN
			m.nextLSN++
			m.wal = append(m.wal, t)
		}
	default: // a committed transaction becomes visible, in any order
		var c []*mtxn
		for _, t := range m.running {
			if t.state == mCommitted {
				c = append(c, t)
			}
		}
		if len(c) > 0 {
			m.complete(c[m.r.IntN(len(c))], mVisible)
		}
	}
}

// The pipeline around a Tracker: the stream, chunk readers and a consumer.
type rig struct {
	t        *testing.T
	m        *model
	tr       *Tracker[mver]
	streamed int             // WAL records written by the stream
	state    map[int]mver    // each key as the stream's changes left it
	consumer map[int]mver    // the topic, compacted, from Watch on
	queue    []Chunk         // chunks to read
	reading  []*Window[mver] // windows whose chunk is read, not handed over yet
	rowsOf   map[uint64][]Row[mver]
	progress Progress
	watched  bool
	rWritten int
	// standby: chunks are read on a hot standby, whose
	// pg_current_snapshot() lists no running id (told).
	standby bool
	// servers: chunks are read on several servers of one cluster, some
	// behind the others (a lagging standby, one restarted behind what it
	// had replayed): a read takes, one time in three, a snapshot and high
	// watermark (its replay position) taken earlier, so that visibility
	// does not only grow from one window's snapshot to the next.
	servers bool
	past    []pastSnapshot

	voids, unproven, dropped, resumed int
}

const mTable, mOther = 1, 2

type pastSnapshot struct {
	s    Snapshot
	high pglogrepl.LSN
}

func key(k int) Key { return Key(fmt.Sprint(k)) }

func (g *rig) write(cs []Closed[mver]) {
	for _, c := range cs {
		g.dropped += c.Dropped
		if c.Void != "" {
			g.voids++
			g.queue = append(g.queue, c.Chunk)
			continue
		}
		for _, r := range c.Rows {
			var k int
			fmt.Sscan(string(r.Key), &k)
			// The guarantee: an `r` record is the state the stream has
			// given its key at the point it is written, so it never
			// overwrites a newer change (nor an older one a newer state).
			if s, ok := g.state[k]; !ok || s != r.Value {
				g.t.Fatalf("window %d (%s) writes key %d as %v where the stream has %v (present %v)", c.ID, c.Chunk, k, r.Value, s, ok)
			}
			g.consumer[k] = r.Value
			g.rWritten++
		}
		if err := g.progress.MarkDone(c.Chunk, len(c.Rows)); err != nil {
			g.t.Fatal(err)
		}
	}
}

// stream writes the next WAL record, or reports an idle position.
func (g *rig) stream() {
	m := g.m
	if g.streamed == len(m.wal) {
		g.write(g.tr.Advance(m.nextLSN)) // a keepalive: nothing open, nothing more committed
		return
	}
	t := m.wal[g.streamed]
	g.streamed++
	g.write(g.tr.Advance(t.lsn))
	if err := g.tr.Begin(uint32(t.xid)); err != nil {
		g.t.Fatal(err)
	}
	for _, o := range t.ops {
		var err error
		switch {
		case o.other:
			err = g.tr.Observe(mOther, "x")
		case o.truncate:
			clear(g.state)
			clear(g.consumer) // a consumer empties its copy on a truncate record
			err = g.tr.ObserveAll(mTable, "TRUNCATE")
		default:
			var keys []Key
			if o.oldKey >= 0 {
				keys = append(keys, key(o.oldKey))
				delete(g.state, o.oldKey)
				delete(g.consumer, o.oldKey)
			}
			if o.newKey >= 0 {
				keys = append(keys, key(o.newKey))
				g.state[o.newKey] = o.val
				if g.watched {
					g.consumer[o.newKey] = o.val
				}
			}
			if o.unknown {
				err = g.tr.ObserveAll(mTable, "a key column is unchanged TOAST")
			} else {
				err = g.tr.Observe(mTable, keys...)
			}
		}
		if err != nil {
			g.t.Fatal(err)
		}
	}
	g.tr.End()
	g.write(g.tr.Advance(t.lsn + 1))
}

// streamedLagging reports whether the stream has written a transaction
// that is not visible yet.
func (g *rig) streamedLagging() bool {
	for _, t := range g.m.wal[:g.streamed] {
		if t.state == mCommitted {
			return true
		}
	}
	return false
}

// read starts a chunk: snapshot, high watermark, window, rows.
func (g *rig) read() {
	if len(g.queue) == 0 {
		return
	}
	c := g.queue[0]
	s, high := g.m.snapshot()
	if g.servers {
		g.past = append(g.past, pastSnapshot{s, high})
		if len(g.past) > 60 {
			g.past = g.past[1:]
		}
		if g.m.r.IntN(3) == 0 {
			p := g.past[g.m.r.IntN(len(g.past))]
			s, high = p.s, p.high
		}
	}
	w, err := g.tr.Open(mTable, c, g.told(s), high)
	if errors.Is(err, ErrUnproven) {
		g.unproven++
		return // tried again later
	}
	if err != nil {
		g.t.Fatal(err)
	}
	g.queue = g.queue[1:]
	var rows []Row[mver]
	for k := 0; k < g.m.keySpace; k++ {
		if e, ok := g.m.seen(s, k); ok && e.page >= c.First && e.page < c.End {
			rows = append(rows, Row[mver]{Key: key(k), Value: e.val, Size: 1})
		}
	}
	slices.SortStableFunc(rows, func(a, b Row[mver]) int { return int(g.rowPage(s, a)) - int(g.rowPage(s, b)) })
	g.rowsOf[w.ID()] = rows
	g.reading = append(g.reading, w)
}

// told is the snapshot the wiring hands the Tracker for a chunk read
// under s: on a standby the server's text has no xip, and the wiring
// keeps only what it proves (InRecovery); the rows are still read under
// s itself.
func (g *rig) told(s Snapshot) Snapshot {
	if !g.standby {
		return s
	}
	return Snapshot{Xmin: s.Xmin, Xmax: s.Xmax}.InRecovery()
}

func (g *rig) rowPage(s Snapshot, r Row[mver]) uint32 {
	var k int
	fmt.Sscan(string(r.Key), &k)
	e, _ := g.m.seen(s, k)
	return e.page
}

// hand gives a read chunk's rows to its window.
func (g *rig) hand() {
	if len(g.reading) == 0 {
		return
	}
	i := g.m.r.IntN(len(g.reading))
	w := g.reading[i]
	g.reading = slices.Delete(g.reading, i, i+1)
	if g.m.r.IntN(40) == 0 { // the query failed, or the file is not the plan's
		if err := g.tr.Abandon(w, "canceled by a recovery conflict"); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	if err := g.tr.Complete(w, g.rowsOf[w.ID()]); err != nil {
		g.t.Fatal(err)
	}
}

func (g *rig) watch(chunkPages uint32) {
	g.tr.Watch(mTable)
	g.watched = true
	g.consumer = map[int]mver{}
	pages := g.m.pages // the table's size, read when the snapshot starts
	g.queue, _ = Plan(pages, chunkPages)
	g.progress = Progress{Pages: pages, ChunkPages: chunkPages}
}

// restart is a new session: the Tracker starts from the log the last one
// saved with the durable LSN (here: everything streamed is durable), the
// stream goes on.
func (g *rig) restart() {
	saved := g.tr.Save(1 << 20)
	data, err := json.Marshal(saved)
	if err != nil {
		g.t.Fatal(err)
	}
	var back Saved
	if err := json.Unmarshal(data, &back); err != nil {
		g.t.Fatal(err)
	}
	g.tr = NewTracker[mver](g.tr.limit)
	if err := g.tr.Restore(back); err != nil {
		g.t.Fatal(err)
	}
}

// resume is a kill -9 and a restart during the snapshot: the windows and
// the reads in flight are lost, the new session's Tracker starts from the
// saved log, and the chunks not done are read again from the progress as
// the offsets topic gave it back. Every record written before
// is in Kafka (the model's writes are all acknowledged).
func (g *rig) resume() {
	data, err := json.Marshal(g.progress)
	if err != nil {
		g.t.Fatal(err)
	}
	if g.progress, err = ParseProgress(data); err != nil {
		g.t.Fatal(err)
	}
	g.restart()
	g.reading = nil
	g.tr.Watch(mTable)
	if g.queue, err = g.progress.Remaining(); err != nil {
		g.t.Fatal(err)
	}
	g.resumed++
}

// heldIsCounted checks the Tracker's count of entries plus keys, and its
// bound.
func heldIsCounted[R any](t *Tracker[R]) error {
	n := 0
	for _, e := range t.log {
		if e.gone {
			return fmt.Errorf("entry of transaction %d is in the log and gone", e.xid)
		}
		n += 1 + len(e.keys)
	}
	if n != t.held || t.held > t.limit {
		return fmt.Errorf("the log holds %d entries plus keys, counted %d, limit %d", n, t.held, t.limit)
	}
	return nil
}

// TestModelRowsNeverOverwriteNewerChangesAndTheTableIsRebuilt runs the
// model under random schedules: updates, inserts, deletes and key
// changes in transactions that commit in one order and become visible in
// another, chunks read in parallel under their own snapshots, the stream
// ahead of or behind them, xids crossing an epoch, chunks read on a hot
// standby (one schedule in five) and on several servers some of which lag
// (one in seven: without Prune raising the floor, a window on a lagging
// server misses the keys of a transaction a newer snapshot had pruned,
// and the model writes an `r` record over a newer change). It checks that every
// `r` record written is the state the stream has given its key at that
// point, and that a consumer that starts from nothing when the snapshot
// starts ends with the table's final state.
func TestModelRowsNeverOverwriteNewerChangesAndTheTableIsRebuilt(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 50
	}
	var voids, unproven, rows, dropped, resumed int
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 29))
		// Start a little before an epoch's end, so xids wrap in the run.
		first := uint64(1+seed%3)<<32 - uint64(100+r.IntN(300))
		m := newModel(r, first)
		limit := []int{8, 40, 1 << 20}[seed%3]
		g := &rig{t: t, m: m, tr: NewTracker[mver](limit), state: map[int]mver{}, rowsOf: map[uint64][]Row[mver]{},
			standby: seed%5 == 4, servers: seed%7 == 3}
		watchAt := 200 + r.IntN(400)
		restartAt := r.IntN(watchAt) // a new session: the tracker starts empty, the stream goes on
		steps := 5000
		resumeAt := watchAt + 1 + r.IntN(100) // while chunks are being read
		for i := 0; i < steps; i++ {
			if i == restartAt && i < watchAt-1 && !g.streamedLagging() {
				restartAt++ // restart when it matters: a streamed transaction is not visible yet
			} else if i == restartAt {
				g.restart()
			}
			if i == resumeAt && seed%4 < 2 && !g.progress.Finished() {
				g.resume()
			}
			if i == watchAt {
				g.watch(uint32(1 + r.IntN(3)))
				if seed%2 == 1 {
					// Half the keys are not written from now on: only
					// the windows can bring them to the consumer.
					m.writable = m.keySpace / 2
				}
			}
			if err := heldIsCounted(g.tr); err != nil {
				t.Fatalf("seed %d, step %d: %v", seed, i, err)
			}
			switch n := r.IntN(10); {
			case n < 5:
				m.step()
			case n < 7:
				g.stream()
			case n < 8 && g.watched:
				g.read()
			case n < 9 && g.watched:
				g.hand()
			default:
				if r.IntN(4) == 0 { // the wiring's periodic probe
					s, _ := m.snapshot()
					g.tr.Prune(g.told(s))
				}
			}
		}
		// Wind down: every transaction ends and becomes visible, the
		// stream catches up, every chunk is read.
		for _, tx := range slices.Clone(m.running) {
			if tx.state == mRunning {
				m.complete(tx, mAborted)
			} else {
				m.complete(tx, mVisible)
			}
		}
		for i := 0; len(g.queue)+len(g.reading)+len(g.tr.Windows()) > 0 || g.streamed < len(m.wal); i++ {
			if i > 100000 {
				t.Fatalf("seed %d: the snapshot does not finish: %d chunks queued, %d reading, %d windows", seed, len(g.queue), len(g.reading), len(g.tr.Windows()))
			}
			switch r.IntN(3) {
			case 0:
				g.stream()
			case 1:
				g.read()
			default:
				g.hand()
			}
		}
		if !g.progress.Finished() {
			t.Fatalf("seed %d: progress %+v not finished", seed, g.progress)
		}
		final := map[int]mver{}
		for k := 0; k < m.keySpace; k++ {
			if e, ok := m.current(k); ok {
				final[k] = e.val
			}
		}
		if fmt.Sprint(final) != fmt.Sprint(g.consumer) {
			t.Fatalf("seed %d: the consumer rebuilt\n%v\nthe table is\n%v", seed, g.consumer, final)
		}
		rows += g.rWritten
		voids += g.voids
		unproven += g.unproven
		dropped += g.dropped
		resumed += g.resumed
	}
	t.Logf("%d seeds: %d r records written, %d left out, %d windows void, %d opens refused, %d resumed", seeds, rows, dropped, voids, unproven, resumed)
	if rows == 0 || dropped == 0 || voids == 0 || unproven == 0 || resumed == 0 {
		t.Fatal("the schedules did not reach every case")
	}
}
