package emit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the main worker's side of incremental snapshots
// (docs/incremental-snapshots.md): it owns the watermark.Tracker, shows it
// every transaction the stream decodes while a snapshot runs, and writes
// the rows of the windows that close, through the one record writer,
// before anything it streams after. Chunk readers (connector/internal/snapshot)
// talk to it through Incremental's queue: they never touch the Tracker,
// which the stream goroutine alone calls.
//
// While no table is watched there is no Tracker: the stream pays one
// atomic load per transaction and nothing else. What the stream carried
// before the Tracker existed is covered by a floor the first reader sets
// (Incremental.SetFloor): every window's snapshot must see every
// transaction id assigned before the table was watched.

// Row is one row a chunk reader read: its record, encoded with the
// table's schema plan exactly as the blocking copy encodes a row (the
// record's unit of durability is set when its window closes).
type Row = watermark.Row[*kgo.Record]

// Window is an open watermark window.
type Window = watermark.Window[*kgo.Record]

// WindowResult is how a window ended: its rows written in Unit (they are
// in Kafka once the main tracker says Unit is durable:
// delivery.Tracker.UnitState), or Void with the reason (read the chunk
// again).
type WindowResult struct {
	Rows, Dropped int
	Unit          *delivery.TxAck
	Void          string
	// Reserved is the bytes of the reservations (delivery.Tracker.Reserve)
	// the written rows took: the reader gives back only the rest.
	Reserved int64
	// Stored: the table's progress with this chunk done is written in
	// the Kafka transaction of Unit (delivery.MainSink.WithUnit:
	// exactly-once),
	// by the ProgressFunc given to Watch, which counted the chunk as
	// written in Unit; the reader does not count it again.
	Stored bool
}

// ProgressFunc makes the watched table's state whose incremental progress
// has chunk done (rows rows), written in unit with the chunk's rows, and
// records that the chunk's rows went in unit; nil to write nothing. It
// runs on the stream goroutine, only when the delivery writes a table
// state with its unit (delivery.MainSink.WithUnit).
type ProgressFunc func(chunk watermark.Chunk, rows int, unit *delivery.TxAck) *phases.State

// HookWindowWritten is the test hook point (Config.Hook) right after a
// window's rows were handed to the sink (and, exactly-once, its progress
// taken into the open Kafka transaction), before the unit that holds
// them ends.
const HookWindowWritten = "incremental_window_written"

// ErrIncrementalStopped is returned to a reader whose request the stream
// goroutine will not answer: the pipeline is stopping.
var ErrIncrementalStopped = errors.New("incremental snapshot: the main worker stopped")

// Incremental is the queue between chunk readers and the main worker's
// Tracker. Its exported methods are safe for concurrent use and block
// until the stream goroutine has acted on the request (or ctx ends); the
// stream goroutine serves the queue at every transaction boundary and at
// every tick of the session loop (at least every second).
type Incremental struct {
	mu      sync.Mutex
	queue   []*incRequest
	pending atomic.Bool
	// wake interrupts the session's wait for the server, so that a
	// request is served at once rather than at the loop's next tick
	// (SetWake: the session's Wake; nil: none).
	wake atomic.Pointer[func()]

	// DisableDrops, a test hook, writes every row of a window whatever
	// the stream changed meanwhile: the integration test checks that its
	// consumer sees the difference (an `r` record over a newer change).
	DisableDrops bool
	// Life is a window's longest life (0: WindowLife); a test hook.
	Life time.Duration
	// Log gets a warning for each window voided past its life (nil: none).
	Log *zap.Logger

	// names names the watched tables (SetName), under mu.
	names map[uint32]string
	// shown is the open windows as the stream goroutine last published
	// them (show), for status; changed says they changed since.
	shown   atomic.Pointer[[]shownWindow]
	changed bool

	// The stream goroutine's alone.
	t       *watermark.Tracker[*kgo.Record]
	results map[uint64]chan WindowResult
	keyBuf  []byte
	rels    map[uint32]*schema.Relation // each watched table's last relation
	// progress is each watched table's ProgressFunc (Watch).
	progress map[uint32]ProgressFunc
	// pos is the stream's last position between transactions in this
	// session (an end LSN, a keepalive's WAL end; 0 until the session
	// passes one): windows close there. A new session streams again from
	// the durable LSN, so pos starts again from 0 (incReset): a unit at the
	// last session's position would end ahead of the transactions the new
	// one has not streamed again, and move the durable LSN past them.
	// maxPos is the largest position of every session: every record made
	// before is in a unit that ends at or before it (StrikeFrom).
	pos, maxPos schema.LSN
	// strikes holds, per topic whose stale keys are held, the keys that
	// every record the main worker writes there strikes (StrikeFrom);
	// tombs the tombstones to write at the next unit.
	strikes map[string]StaleKeys
	tombs   []*incRequest
	// notes are the notifications to write at the next unit (Notify).
	notes []notify.Notification
	// seqAt and seqN number the records windows and tombstones write at
	// one position (nextSeq).
	seqAt schema.LSN
	seqN  int64
	// closedRows counts the rows written by windows, for tests and status.
	closedRows atomic.Int64
}

// NewIncremental returns an idle queue.
func NewIncremental() *Incremental {
	return &Incremental{results: map[uint64]chan WindowResult{}, rels: map[uint32]*schema.Relation{}, progress: map[uint32]ProgressFunc{}}
}

type incKind int

const (
	incWatch incKind = iota
	incUnwatch
	incFloor
	incOpen
	incComplete
	incAbandon
	incStrike
	incEndStrike
	incTombstones
	incNotify
)

type incRequest struct {
	kind  incKind
	table uint32
	chunk watermark.Chunk
	snap  watermark.Snapshot
	high  schema.LSN
	w     *Window
	rows  []Row
	why   string
	prog  ProgressFunc
	topic string
	stale StaleKeys
	note  notify.Notification

	done   chan incReply
	result chan WindowResult // incOpen: where the window's end goes
}

type incReply struct {
	w    *Window
	pos  schema.LSN
	unit *delivery.TxAck
	n    int
	err  error
}

// trackerLimit bounds the Tracker's log and each window's dropped keys
// (entries plus keys): about 64 MB at worst (docs, open questions).
const trackerLimit = 1 << 20

// SetWake sets what wakes the stream goroutine when a request is queued
// (a replication session's Wake; nil for none). Safe for concurrent use.
func (q *Incremental) SetWake(wake func()) {
	if wake == nil {
		q.wake.Store(nil)
		return
	}
	q.wake.Store(&wake)
}

// enqueue hands r to the stream goroutine and wakes it.
func (q *Incremental) enqueue(r *incRequest) {
	q.mu.Lock()
	q.queue = append(q.queue, r)
	q.mu.Unlock()
	q.pending.Store(true)
	if w := q.wake.Load(); w != nil {
		(*w)()
	}
}

func (q *Incremental) call(ctx context.Context, r *incRequest) (incReply, error) {
	r.done = make(chan incReply, 1)
	q.enqueue(r)
	select {
	case rep := <-r.done:
		return rep, rep.err
	case <-ctx.Done():
		return incReply{}, ctx.Err()
	}
}

// Watch starts recording the keys of table's changes; windows of it can
// open once its floor is set. progress (nil: none) makes the table's
// progress record when a delivery writes it with a window's rows. It
// returns the stream's position when the watch took effect: every
// transaction the stream carried before (in any session of this run)
// ended at or before it, so a server whose replay has reached it shows
// all of them visible (the floor on a standby,
// docs/incremental-snapshots.md).
func (q *Incremental) Watch(ctx context.Context, table uint32, progress ProgressFunc) (schema.LSN, error) {
	rep, err := q.call(ctx, &incRequest{kind: incWatch, table: table, prog: progress})
	return rep.pos, err
}

// Unwatch stops recording table's keys and discards its open windows (a
// finished or stopped snapshot). It does not wait: the stream goroutine
// acts on it at its next boundary (or never, when it has stopped too).
func (q *Incremental) Unwatch(table uint32) {
	q.enqueue(&incRequest{kind: incUnwatch, table: table, done: make(chan incReply, 1)})
}

// SetFloor raises the snapshot every window must see: one seeing every
// transaction id below z, read after Watch returned (the ids the stream
// may have carried before the Tracker recorded them).
func (q *Incremental) SetFloor(ctx context.Context, z uint64) error {
	_, err := q.call(ctx, &incRequest{kind: incFloor, snap: watermark.Snapshot{Xmin: z, Xmax: z}})
	return err
}

// Ticket is a window being opened: the reader enqueued it in the order its
// snapshot was taken and waits for it outside its snapshot lock.
type Ticket struct {
	q *Incremental
	r *incRequest
}

// Open enqueues a window for chunk of table, read under snap with high
// watermark high. Call it while holding the lock under which snap was
// taken (snapshots must reach the Tracker in the order taken), then Wait.
func (q *Incremental) Open(table uint32, chunk watermark.Chunk, snap watermark.Snapshot, high schema.LSN) *Ticket {
	r := &incRequest{kind: incOpen, table: table, chunk: chunk, snap: snap, high: high,
		done: make(chan incReply, 1), result: make(chan WindowResult, 1)}
	q.enqueue(r)
	return &Ticket{q: q, r: r}
}

// Wait returns the opened window, or watermark.ErrUnproven (try again
// with a later snapshot), or another error.
func (tk *Ticket) Wait(ctx context.Context) (*Window, error) {
	select {
	case rep := <-tk.r.done:
		return rep.w, rep.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Complete hands w its chunk's rows and waits until the window ends: its
// rows written (or dropped), or void.
func (tk *Ticket) Complete(ctx context.Context, w *Window, rows []Row) (WindowResult, error) {
	if _, err := tk.q.call(ctx, &incRequest{kind: incComplete, w: w, rows: rows}); err != nil {
		return WindowResult{}, err
	}
	return tk.result(ctx)
}

// Abandon gives w up (the chunk could not be read as planned) and waits
// for it to come back void.
func (tk *Ticket) Abandon(ctx context.Context, w *Window, why string) error {
	if _, err := tk.q.call(ctx, &incRequest{kind: incAbandon, w: w, why: why}); err != nil {
		return err
	}
	_, err := tk.result(ctx)
	return err
}

func (tk *Ticket) result(ctx context.Context) (WindowResult, error) {
	select {
	case res, ok := <-tk.r.result:
		if !ok {
			return WindowResult{}, fmt.Errorf("window of %s: %w", tk.r.chunk, watermark.ErrNotOpen)
		}
		return res, nil
	case <-ctx.Done():
		return WindowResult{}, ctx.Err()
	}
}

// WrittenRows is the number of rows windows have written so far.
func (q *Incremental) WrittenRows() int64 { return q.closedRows.Load() }

// serve acts on the queued requests; stream goroutine only.
func (q *Incremental) serve() {
	if !q.pending.Load() {
		return
	}
	q.mu.Lock()
	reqs := q.queue
	q.queue = nil
	q.pending.Store(false)
	q.mu.Unlock()
	q.changed = true
	for _, r := range reqs {
		var rep incReply
		switch r.kind {
		case incWatch:
			if q.t == nil {
				q.t = watermark.NewTracker[*kgo.Record](trackerLimit)
			}
			q.t.Watch(r.table)
			if r.prog != nil {
				q.progress[r.table] = r.prog
			}
			// Served between transactions (a BEGIN before its Begin, a
			// COMMIT after its End, an idle position): every transaction
			// the Tracker was not shown ended at or before maxPos.
			rep.pos = q.maxPos
		case incUnwatch:
			delete(q.progress, r.table)
			if q.t != nil {
				for _, id := range q.t.Unwatch(r.table) {
					if ch := q.results[id]; ch != nil {
						close(ch)
						delete(q.results, id)
					}
				}
				if len(q.t.Windows()) == 0 && !q.t.Watching() {
					q.t = nil // nothing runs: back to zero cost
				}
			}
		case incFloor:
			if q.t == nil {
				rep.err = errors.New("set a floor before watching a table")
			} else {
				q.t.RaiseFloor(r.snap)
			}
		case incOpen:
			if q.t == nil {
				rep.err = fmt.Errorf("open a window on table %d, which is not watched", r.table)
				break
			}
			rep.w, rep.err = q.t.Open(r.table, r.chunk, r.snap, pglogrepl.LSN(r.high))
			if rep.err == nil {
				q.results[rep.w.ID()] = r.result
			}
		case incComplete:
			if q.t == nil {
				rep.err = watermark.ErrNotOpen
			} else {
				rep.err = q.t.Complete(r.w, r.rows)
			}
		case incAbandon:
			if q.t == nil {
				rep.err = watermark.ErrNotOpen
			} else {
				rep.err = q.t.Abandon(r.w, r.why)
			}
		case incStrike:
			if q.strikes == nil {
				q.strikes = map[string]StaleKeys{}
			}
			q.strikes[r.topic] = r.stale
			rep.pos = q.maxPos
		case incEndStrike:
			if q.strikes[r.topic] == r.stale {
				q.endStrike(r.topic)
			}
		case incTombstones:
			q.tombs = append(q.tombs, r) // answered once written
			continue
		case incNotify:
			q.notes = append(q.notes, r.note) // written at the next unit, unanswered
			continue
		}
		r.done <- rep
	}
}

// nextSeq is the mooncdc.tx_seq of the next record a window or a stale
// key's tombstone writes at position at: −2, −3, … counting every such
// record written there, so that none shares (commit_lsn, tx_seq) with a
// streamed change (0 on), a transaction's BEGIN (−1) or another
// window's row, and a consumer that drops repeats by those headers and
// the key (docs/delivery.md) never drops one that is not a repeat.
func (q *Incremental) nextSeq(at schema.LSN) int64 {
	if at != q.seqAt {
		q.seqAt, q.seqN = at, 0
	}
	q.seqN++
	return -1 - q.seqN
}

// active reports whether a Tracker exists (a table is watched, or a
// window is open): the stream shows it its transactions only then.
func (q *Incremental) active() bool { return q != nil && q.t != nil }

// incBegin serves the queue, closes the windows that end before the
// transaction whose commit record is at commit, and begins it in the
// Tracker. The closed windows' rows go into unit a.
func (e *Emitter) incBegin(tx *schema.Tx) error {
	q := e.Incremental
	if q == nil {
		return nil
	}
	q.serve()
	if err := e.writeQueued(tx.CommitLSN); err != nil {
		return err
	}
	if q.t == nil {
		return nil
	}
	if err := e.incAdvance(tx.CommitLSN, tx.CommitLSN); err != nil {
		return err
	}
	return q.t.Begin(tx.Xid)
}

// incEnd ends the transaction in the Tracker and closes the windows that
// end at its end LSN, in its unit (after its changes).
func (e *Emitter) incEnd(tx *schema.Tx) error {
	q := e.Incremental
	if q == nil {
		return nil
	}
	q.pos = tx.EndLSN
	q.maxPos = max(q.maxPos, q.pos)
	if q.t == nil {
		return nil
	}
	q.t.End()
	q.serve()
	defer q.show()
	if err := e.writeQueued(tx.EndLSN); err != nil {
		return err
	}
	if q.t == nil {
		return nil
	}
	return e.incAdvance(tx.EndLSN, tx.EndLSN)
}

// Idle is the stream between transactions at walEnd (a keepalive) or at
// a tick of the session loop (walEnd 0: the last position the stream
// passed). It closes the windows that end there, in a unit of durability
// of their own at that position.
func (e *Emitter) Idle(walEnd schema.LSN) error {
	q := e.Incremental
	if q == nil {
		return nil
	}
	q.serve()
	if walEnd > q.pos {
		q.pos = walEnd
		q.maxPos = max(q.maxPos, q.pos)
	}
	if q.t != nil {
		q.expire(time.Now())
	}
	defer q.show()
	at := q.pos
	closes := q.t != nil && at != 0 && q.closable(at)
	if !closes && (!q.queued() || at == 0) {
		return nil
	}
	return e.ownUnit(at, func(a *delivery.TxAck) error {
		saved := e.cur
		e.cur = a
		defer func() { e.cur = saved }()
		if err := e.writeQueued(at); err != nil {
			return err
		}
		if closes {
			return e.incAdvance(at, at)
		}
		return nil
	})
}

// WantPosition reports whether a window waits for the stream, or a
// reader's request for the stream goroutine (stream goroutine only): the
// session then looks again within 100 ms and asks the server for its WAL
// end (stream.Positioner), so that requests are served and windows close
// on an idle server too.
func (e *Emitter) WantPosition() bool {
	q := e.Incremental
	return q != nil && (q.pending.Load() || q.queued() || q.t != nil && q.t.OpenWindows() > 0)
}

// closable reports whether some window would close at pos (so that an
// idle keepalive makes a unit only when it has rows to write).
func (q *Incremental) closable(pos schema.LSN) bool {
	for _, w := range q.t.Windows() {
		if w.Closable(pglogrepl.LSN(pos)) {
			return true
		}
	}
	return false
}

// incAdvance closes the windows that end at pos and writes their rows in
// e.cur with the headers of position at.
func (e *Emitter) incAdvance(pos, at schema.LSN) error {
	q := e.Incremental
	for _, c := range q.t.Advance(pglogrepl.LSN(pos)) {
		q.changed = true
		res := WindowResult{Void: c.Void, Dropped: c.Dropped, Unit: e.cur}
		for _, r := range c.Rows {
			rec := r.Value
			rec.Context = e.cur
			record.SetPosition(rec, at, at, q.nextSeq(at))
			q.strike(rec.Topic, rec.Key) // a window's row is past the stale keys' mark
			res.Reserved += e.w.SendReserved(rec)
		}
		res.Rows = len(c.Rows)
		q.closedRows.Add(int64(res.Rows))
		if c.Void == "" {
			res.Stored = e.storeWithUnit(c.Table, c.Chunk, res.Rows)
			if e.Hook != nil {
				e.Hook(HookWindowWritten, "")
			}
		}
		if ch := q.results[c.ID]; ch != nil {
			ch <- res
			delete(q.results, c.ID)
		}
	}
	return nil
}

// storeWithUnit writes table's progress with chunk done in e.cur, after
// the chunk's rows, when the delivery writes table states with a unit
// (delivery.MainSink.WithUnit, the one place that decides); it reports
// whether it did.
func (e *Emitter) storeWithUnit(table uint32, chunk watermark.Chunk, rows int) bool {
	fn := e.Incremental.progress[table]
	sink, ok := e.Sink.(delivery.MainSink)
	if fn == nil || !ok {
		return false
	}
	unit := e.cur
	return sink.WithUnit(unit, func() *phases.State { return fn(chunk, rows, unit) })
}

// incReset ends a transaction the session left open (its rest is
// streamed again by the next session; what it showed the Tracker only
// drops keys, which is safe).
func (q *Incremental) incReset() {
	if q == nil {
		return
	}
	q.pos = 0 // the next session has passed nothing yet
	if q.active() {
		q.t.End()
	}
}
