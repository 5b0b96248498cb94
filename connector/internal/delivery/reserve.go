package delivery

import (
	"context"
	"time"
)

// This file holds the reservations of incremental snapshots' windows in
// the main worker's tracker (docs/incremental-snapshots.md, "Memory"): a
// window's rows are read before the stream passes the chunk's high
// watermark and held until it does, then written as records. Their
// bytes count in the same in-flight total as the records, so that
// records in flight plus rows held by windows stay within
// kafka.max_inflight_bytes, and not 1.5 times it.
//
// A reader reserves its chunk's estimate before it reads (Reserve: it
// waits like a record would; while it waits the stream leaves it the room
// acknowledgements make, but never waits for a window), trues it up
// to the rows as it reads them (ReserveMore: it waits too) and once read
// (Grow, Unreserve), and the main worker
// turns the reserved bytes into its records' as it writes the window's
// rows (AddReserved: it never waits, the bytes being counted already).
// What the window did not write (void, dropped rows) the reader gives
// back (Unreserve). Reservations are made in the main worker's tracker
// only (not in one that shares a budget, ShareBudget).

// reserveMaxWait is the longest a waiting reservation sleeps between two
// looks at the in-flight total: release wakes waiters only when the total
// comes back under the bound, and a reservation may need more room.
const reserveMaxWait = 20 * time.Millisecond

// Reserve counts n bytes of a window in flight, once they fit: the
// in-flight total plus n within the bound. A reservation when none is
// held needs only the room of half the bound, so that a window larger
// than the windows' share (a chunk of one page of wide rows) still goes,
// alone. It fails only when ctx ends.
func (t *Tracker) Reserve(ctx context.Context, n int64) error {
	return t.reserve(ctx, n, false)
}

// ReserveMore is Reserve for a window that holds more rows than it
// reserved, while it reads them: it waits for room as Reserve does, and
// goes over the bound only when no record is in flight beside the
// reservations (a chunk larger than the bound must still read, and the
// windows beside it close without it).
func (t *Tracker) ReserveMore(ctx context.Context, n int64) error {
	return t.reserve(ctx, n, true)
}

func (t *Tracker) reserve(ctx context.Context, n int64, more bool) error {
	wait := time.Millisecond
	var timer *time.Timer
	waiting := false
	// The room the stream leaves it: a reservation larger than half the
	// bound waits only for that much (as it goes with it, below).
	w := min(n, t.maxBytes/2)
	defer func() {
		if waiting {
			t.waiting.Add(-w)
			t.wake() // given up: the stream may have room again
		}
	}()
	for {
		room := t.roomChan() // before looking, so a release in between is not missed
		v := t.inflight.Load()
		r := t.reserved.Load()
		if v+n <= t.maxBytes || r == 0 && v+min(n, t.maxBytes/2) <= t.maxBytes || more && v <= r {
			if t.inflight.CompareAndSwap(v, v+n) {
				t.reserved.Add(n)
				if waiting {
					t.waiting.Add(-w) // the room it was left is its own now
					waiting = false
				}
				return nil
			}
			continue // a record came or went meanwhile: look again
		}
		if !waiting {
			// The stream leaves it room from now (roomFor): the
			// acknowledgements make room that the stream does not take.
			t.waiting.Add(w)
			waiting = true
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-room:
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, reserveMaxWait)
	}
}

// Grow reserves n more bytes at once, without waiting: rows already read
// and held, larger than their estimate.
func (t *Tracker) Grow(n int64) {
	t.inflight.Add(n)
	t.reserved.Add(n)
}

// Unreserve gives back n reserved bytes (at most what is reserved),
// waking the waiters of WaitRoom and Reserve when that makes room.
func (t *Tracker) Unreserve(n int64) {
	for n > 0 {
		r := t.reserved.Load()
		m := min(n, r)
		if m <= 0 {
			return
		}
		if t.reserved.CompareAndSwap(r, r-m) {
			t.release(m)
			return
		}
	}
}

// AddReserved counts one record of a, of n bytes, handed to the producer,
// as Add does, taking its bytes from the reservations: the in-flight
// total does not move while reserved bytes remain. It returns the bytes
// it took, which the reservation's owner no longer gives back.
func (t *Tracker) AddReserved(a *TxAck, n int) int64 {
	cost := int64(n + recordCost)
	var took int64
	for {
		r := t.reserved.Load()
		took = min(cost, r)
		if t.reserved.CompareAndSwap(r, r-took) {
			break
		}
	}
	t.inflight.Add(cost - took)
	a.pending.Add(1)
	return took
}

// Reserved returns the bytes reserved for windows, part of Inflight.
func (t *Tracker) Reserved() int64 { return t.reserved.Load() }
