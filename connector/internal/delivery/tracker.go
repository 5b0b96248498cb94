package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/schema"
)

// TxAck counts the records of one Postgres transaction that Kafka has not
// acknowledged yet. It doubles as the kgo.Record's Context (embedding
// context.Background), so that a record's promise finds its transaction
// without a per-record allocation or lookup.
type TxAck struct {
	context.Context
	end schema.LSN // end LSN; set at Commit, under the tracker's mutex
	// pending counts its records not acknowledged yet and closed says it
	// was committed; both are atomic, so that a record's Add and Ack take
	// no lock: only the Ack that finishes a closed transaction does, to
	// move the durable LSN (see Ack).
	pending atomic.Int64
	closed  atomic.Bool
	gen     uint64 // the tracker generation it was opened in (Restart)
	// ceilings is the tracker's count of SetCeiling calls when it was
	// committed: in exactly-once mode a later call means a Kafka
	// transaction committed its records (UnitState).
	ceilings uint64
}

// Tracker turns out-of-order acks into one contiguous durable LSN: the end
// LSN of the newest transaction that, with every transaction before it, has
// all its records acknowledged. It also bounds memory: the bytes of records
// handed to the producer and not yet acknowledged.
//
// Begin/Add/Commit are called by the stream goroutine, Ack by producer
// promise goroutines; every method is safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	queue   []*TxAck // transactions in commit order, oldest first
	open    *TxAck   // the transaction being read, also last in queue
	durable atomic.Uint64
	failed  error

	inflight atomic.Int64
	// reserved is the part of inflight reserved for incremental
	// snapshots' windows (Reserve): bytes read and held until the stream
	// passes their chunk's high watermark, then written as records.
	reserved atomic.Int64
	// waiting is the bytes of the reservations waiting for room: the
	// stream leaves them that room (roomFor), so that a window is not
	// starved by a stream that takes every byte acknowledged.
	waiting  atomic.Int64
	released atomic.Int64 // bytes Kafka acknowledged so far (not failed): its progress, for readiness
	maxBytes int64
	roomMu   sync.Mutex
	room     chan struct{} // closed and replaced when inflight drops back under maxBytes: wakes every waiter
	// budget, when set (ShareBudget), is the pipeline's tracker: this
	// tracker's bytes count against its bound too, so that the main worker
	// and every copy together stay under kafka.max_inflight_bytes.
	budget  *Tracker
	drained chan struct{} // closed and replaced when the queue empties

	onDurable func(l schema.LSN, txs int)

	// In exactly-once mode (gated) the durable LSN may not pass ceiling,
	// the end LSN covered by the last committed Kafka transaction: a
	// record acknowledged inside an open transaction is not durable yet.
	// acked is the contiguous acknowledged position the ceiling holds back.
	gated   bool
	ceiling schema.LSN
	acked   schema.LSN
	gen     uint64
	// ceilings counts SetCeiling calls: each follows a Kafka commit of
	// every record handed over before it, or an idle moment with no Kafka
	// transaction open (UnitState).
	ceilings uint64
}

// Restart forgets every open transaction and any failure, after an
// aborted Kafka transaction (exactly-once mode): the next session replays
// from the durable LSN, the last commit. Records of the aborted
// transaction still in flight are acknowledged into nothing, their
// failures ignored.
func (t *Tracker) Restart() {
	t.mu.Lock()
	clear(t.queue)
	t.queue = t.queue[:0]
	t.open = nil
	t.failed = nil
	t.acked = t.Durable()
	t.gen++
	close(t.drained)
	t.drained = make(chan struct{})
	t.mu.Unlock()
}

// Gate makes the durable LSN wait for SetCeiling (exactly-once mode). Call
// it before the tracker is used.
func (t *Tracker) Gate() {
	t.gated = true
	t.ceiling = t.Durable()
	t.acked = t.Durable()
}

// SetCeiling raises the position the durable LSN may reach: a Kafka
// transaction covering everything before l is committed.
func (t *Tracker) SetCeiling(l schema.LSN) {
	t.mu.Lock()
	t.ceilings++
	if l > t.ceiling {
		t.ceiling = l
		if d := min(t.acked, t.ceiling); d > t.Durable() {
			t.durable.Store(uint64(d))
			if t.onDurable != nil {
				t.onDurable(d, 0)
			}
		}
	}
	t.mu.Unlock()
}

// NewTracker returns a tracker whose durable LSN starts at start.
func NewTracker(start schema.LSN, maxInflightBytes int64, onDurable func(l schema.LSN, txs int)) *Tracker {
	t := &Tracker{maxBytes: maxInflightBytes, room: make(chan struct{}), drained: make(chan struct{}), onDurable: onDurable}
	t.durable.Store(uint64(start))
	return t
}

// Durable returns the durable LSN.
func (t *Tracker) Durable() schema.LSN { return schema.LSN(t.durable.Load()) }

// Inflight returns the bytes handed to the producer and not yet
// acknowledged, each record counted with recordCost; for the pipeline's
// tracker, the copies' records too (ShareBudget), and the bytes reserved
// for incremental snapshots' windows (Reserve).
func (t *Tracker) Inflight() int64 { return t.inflight.Load() }

// Settled returns the indexes of the units in acks that are closed with no
// record pending, leaving out those skip names, under the tracker's lock;
// none once a record has failed. skip runs under the lock too, before the
// unit's own state is read. A copy's checkpoints ask it which chunks they
// may store (snapshot: copy_checkpoint.go).
func (t *Tracker) Settled(acks []*TxAck, skip func(i int) bool) []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return nil
	}
	var out []int
	for i, a := range acks {
		if !skip(i) && a.closed.Load() && a.pending.Load() == 0 {
			out = append(out, i)
		}
	}
	return out
}

// UnitState says what became of unit a: durable (closed, every record
// acknowledged and, in exactly-once mode, committed with a Kafka
// transaction), lost (abandoned with its session, or aborted with its
// Kafka transaction, or a record failed: its records may not be in
// Kafka), or neither yet. An incremental snapshot marks a chunk done once
// the unit that holds its rows is durable (snapshot: incremental.go).
func (t *Tracker) UnitState(a *TxAck) (durable, lost bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.failed != nil || a.gen != t.gen:
		return false, true
	case !a.closed.Load():
		return false, t.open != a // Abandon dropped it
	case a.pending.Load() > 0:
		return false, false
	case t.gated:
		// Committed: a SetCeiling after its own commit (its records were
		// in a Kafka transaction committed since), up to its end. The end
		// alone would not do: a unit of the windows' rows can end where
		// an earlier, committed one did.
		return a.end <= t.ceiling && t.ceilings > a.ceilings, false
	}
	return true, false
}

// Begin opens a transaction.
func (t *Tracker) Begin() *TxAck {
	a := &TxAck{Context: context.Background()}
	t.mu.Lock()
	a.gen = t.gen
	t.queue = append(t.queue, a)
	t.open = a
	t.mu.Unlock()
	return a
}

// recordCost is what a record in flight holds beyond its key and value
// buffers, counted against the in-flight bound with them: the kgo.Record,
// its three mooncdc.* headers and the producer's entry for it (measured
// with a heap profile of the frozen-broker benchmark, internal/bench
// membound.go: about 270 bytes a record). Without it, and with the
// buffers counted by length rather than capacity, a bound of 64 MiB of
// small records held about 90 MiB in the heap.
const recordCost = 320

// RecordBytes is what rec counts against the in-flight bound, without
// recordCost: its key and value buffers as allocated. The producer does
// not change them, so the count at Ack is the count at Add.
func RecordBytes(rec *kgo.Record) int { return cap(rec.Key) + cap(rec.Value) }

// ShareBudget makes t's records count against budget's in-flight bound
// as well as its own, and WaitRoom wait for room in both: a copy's
// tracker shares the pipeline's, so that kafka.max_inflight_bytes bounds
// the whole process and not each worker. Call it before t is used.
func (t *Tracker) ShareBudget(budget *Tracker) {
	if budget != t {
		t.budget = budget
	}
}

// Released returns the bytes Kafka acknowledged so far (failed records
// not counted), with the trackers' that share this one's budget.
func (t *Tracker) Released() int64 { return t.released.Load() }

// Add counts one record of a, of n bytes, handed to the producer.
func (t *Tracker) Add(a *TxAck, n int) {
	t.inflight.Add(int64(n + recordCost))
	if t.budget != nil {
		t.budget.inflight.Add(int64(n + recordCost))
	}
	a.pending.Add(1)
}

// Ack counts one record of a, of n bytes, acknowledged (err nil) or
// failed. A failure stops the durable LSN before a for good.
//
// Only the Ack that leaves a committed transaction with nothing pending
// (or a failure) takes the mutex. Commit sets closed before it reads
// pending, and Ack decrements pending before it reads closed, so of an
// Ack that finishes a transaction and the Commit that closes it, at least
// one sees the other's write and advances.
func (t *Tracker) Ack(a *TxAck, n int, err error) {
	t.release(int64(n + recordCost))
	if t.budget != nil {
		t.budget.release(int64(n + recordCost))
	}
	if err == nil {
		t.released.Add(int64(n))
		if t.budget != nil {
			t.budget.released.Add(int64(n))
		}
	}
	left := a.pending.Add(-1)
	if err == nil && (left > 0 || !a.closed.Load()) {
		return
	}
	t.mu.Lock()
	if err != nil && t.failed == nil && a.gen == t.gen {
		t.failed = err
	}
	t.advanceLocked()
	t.mu.Unlock()
}

// Commit closes a with its end LSN.
func (t *Tracker) Commit(a *TxAck, end schema.LSN) {
	t.mu.Lock()
	a.end = end
	a.ceilings = t.ceilings
	a.closed.Store(true)
	if t.open == a {
		t.open = nil
	}
	t.advanceLocked()
	t.mu.Unlock()
}

// Abandon drops the open transaction, if any: its session is gone and the
// next session replays it from the durable LSN. Records of it still in
// flight are acknowledged into nothing.
func (t *Tracker) Abandon() {
	t.mu.Lock()
	if t.open != nil {
		n := len(t.queue) - 1
		t.queue[n] = nil
		t.queue = t.queue[:n]
		t.open = nil
	}
	t.advanceLocked()
	t.mu.Unlock()
}

// AdvanceIdle moves the durable LSN to walEnd when nothing is in flight and
// no transaction is open: everything before walEnd has been received and
// made durable or skipped.
func (t *Tracker) AdvanceIdle(walEnd schema.LSN) {
	t.mu.Lock()
	if len(t.queue) == 0 && t.failed == nil && walEnd > max(t.Durable(), t.acked) {
		t.setDurableLocked(walEnd, 0)
	}
	t.mu.Unlock()
}

// Err returns the first record failure, if any.
func (t *Tracker) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *Tracker) advanceLocked() {
	if t.failed != nil {
		return
	}
	i := 0
	var end schema.LSN
	for ; i < len(t.queue); i++ {
		a := t.queue[i]
		if !a.closed.Load() || a.pending.Load() > 0 {
			break
		}
		end = a.end
		t.queue[i] = nil
	}
	if i == 0 {
		return
	}
	t.queue = t.queue[i:]
	if end > t.Durable() {
		t.setDurableLocked(end, i)
	}
	if len(t.queue) == 0 {
		close(t.drained)
		t.drained = make(chan struct{})
	}
}

func (t *Tracker) setDurableLocked(l schema.LSN, txs int) {
	if t.gated {
		t.acked = max(t.acked, l)
		l = min(t.acked, t.ceiling)
		if l <= t.Durable() {
			if t.onDurable != nil && txs > 0 {
				t.onDurable(t.Durable(), txs) // counted as acknowledged
			}
			return
		}
	}
	t.durable.Store(uint64(l))
	if t.onDurable != nil {
		t.onDurable(l, txs)
	}
}

// release takes n acknowledged bytes off the in-flight count, waking the
// waiters of WaitRoom when that makes room: under the bound, or no
// record left in flight beside the windows' reservations (roomFor).
func (t *Tracker) release(n int64) {
	v, w := t.inflight.Add(-n), t.waiting.Load()
	if v+n+w > t.maxBytes && (v+w <= t.maxBytes || v <= t.reserved.Load()) {
		t.wake()
	}
}

// wake wakes the waiters of WaitRoom and Reserve.
func (t *Tracker) wake() {
	t.roomMu.Lock()
	close(t.room)
	t.room = make(chan struct{})
	t.roomMu.Unlock()
}

// roomChan returns the channel the next release that makes room closes.
func (t *Tracker) roomChan() chan struct{} {
	t.roomMu.Lock()
	defer t.roomMu.Unlock()
	return t.room
}

// HasRoom reports whether the in-flight bytes are within the bound, and
// within the shared budget's (ShareBudget).
func (t *Tracker) HasRoom() bool {
	return t.roomFor() && (t.budget == nil || t.budget.roomFor())
}

// roomFor reports whether a record may go: the in-flight bytes, with the
// reservations waiting for room, are within the bound, or nothing but
// windows' reservations is in flight (so that the stream that closes the
// windows never waits for them, only for acknowledgements).
func (t *Tracker) roomFor() bool {
	v := t.inflight.Load()
	return v+t.waiting.Load() <= t.maxBytes || v <= t.reserved.Load()
}

// WaitRoom blocks while the in-flight bytes exceed the bound, or the
// shared budget's (ShareBudget). It returns true when there is room, false
// when deadline passed or ctx is done.
func (t *Tracker) WaitRoom(ctx context.Context, deadline time.Time) bool {
	if t.HasRoom() {
		return true
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var budgetRoom chan struct{} // nil, never ready, without a budget
	for {
		// Take the channels before looking, so an Ack in between is not missed.
		room := t.roomChan()
		if t.budget != nil {
			budgetRoom = t.budget.roomChan()
		}
		if t.HasRoom() {
			return true
		}
		select {
		case <-room:
		case <-budgetRoom:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Wait blocks until no closed transaction waits for acks (the open one, if
// any, is not waited for), a record failed, or ctx is done.
func (t *Tracker) Wait(ctx context.Context) error {
	for {
		t.mu.Lock()
		if t.failed != nil {
			err := t.failed
			t.mu.Unlock()
			return err
		}
		busy := len(t.queue)
		if t.open != nil {
			busy--
		}
		ch := t.drained
		t.mu.Unlock()
		if busy == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
			// The open transaction keeps the queue from emptying; poll.
		}
	}
}
