package delivery

import (
	"context"
	"testing"
	"time"
)

// reserveSoon runs Reserve(n) and says whether it returned within d.
func reserveSoon(t *testing.T, tr *Tracker, n int64) chan error {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- tr.Reserve(context.Background(), n) }()
	return got
}

func returned(got chan error, d time.Duration) (bool, error) {
	select {
	case err := <-got:
		return true, err
	case <-time.After(d):
		return false, nil
	}
}

// Windows' reservations and records share one bound: a reservation waits
// while records fill it, records stop while reservations fill it, and
// the total never passes it.
func TestTrackerReservationsAndRecordsShareTheBound(t *testing.T) {
	const max = 10_000
	tr := NewTracker(0, max, nil)
	a := tr.Begin()
	tr.Add(a, 6000-recordCost) // a record of 6000 bytes in flight

	got := reserveSoon(t, tr, 5000)
	if done, err := returned(got, 50*time.Millisecond); done {
		t.Fatalf("a reservation of 5000 went beside 6000 bytes in flight under a bound of %d (err %v)", max, err)
	}
	// The stream leaves it the room acknowledgements make: else a stream
	// that takes every byte acknowledged starves the window.
	if tr.HasRoom() {
		t.Fatal("the stream may take the room a waiting reservation waits for")
	}
	tr.Ack(a, 6000-recordCost, nil)
	if done, err := returned(got, 2*time.Second); !done || err != nil {
		t.Fatalf("the reservation did not go once the record was acknowledged (done %v, err %v)", done, err)
	}
	if !tr.HasRoom() {
		t.Fatal("no room for the stream beside a reservation of half the bound")
	}
	if tr.Inflight() != 5000 || tr.Reserved() != 5000 {
		t.Fatalf("inflight %d, reserved %d: want 5000 and 5000", tr.Inflight(), tr.Reserved())
	}

	// Records beside the reservation: the stream stops once the total
	// passes the bound, though records alone are under it.
	b := tr.Begin()
	tr.Add(b, 5500-recordCost)
	if tr.HasRoom() {
		t.Fatalf("room with %d in flight (5000 of it reserved) under a bound of %d", tr.Inflight(), max)
	}
	tr.Ack(b, 5500-recordCost, nil)
	if !tr.HasRoom() {
		t.Fatal("no room once the record was acknowledged")
	}

	// A reservation that does not fit beside another waits for its give back.
	got = reserveSoon(t, tr, 6000)
	if done, _ := returned(got, 50*time.Millisecond); done {
		t.Fatal("a reservation of 6000 went beside one of 5000")
	}
	tr.Unreserve(5000)
	if done, err := returned(got, 2*time.Second); !done || err != nil {
		t.Fatalf("the reservation did not go once the other was given back (done %v, err %v)", done, err)
	}
	tr.Unreserve(6000)
	if tr.Inflight() != 0 || tr.Reserved() != 0 {
		t.Fatalf("inflight %d, reserved %d after every give back: want 0", tr.Inflight(), tr.Reserved())
	}

	ctx, cancel := context.WithCancel(context.Background())
	tr.Add(b, max) // full
	done := make(chan error, 1)
	go func() { done <- tr.Reserve(ctx, 100) }()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a waiting reservation did not give up when its context ended")
	}
	if tr.Reserved() != 0 || tr.waiting.Load() != 0 {
		t.Fatalf("a reservation that gave up holds %d bytes, leaves %d waiting", tr.Reserved(), tr.waiting.Load())
	}
}

// Writing a window's rows turns their reserved bytes into the records'
// without moving the total (the main worker never waits to write them);
// the acknowledgements take them off; what was not written (a void
// window, dropped rows) is given back.
func TestTrackerWrittenRowsTakeTheirReservation(t *testing.T) {
	const max = 10_000
	tr := NewTracker(0, max, nil)
	if err := tr.Reserve(context.Background(), 3*(100+recordCost)); err != nil {
		t.Fatal(err)
	}
	total := tr.Inflight()
	a := tr.Begin()
	var took int64
	for range 2 { // two of the window's three rows written, one dropped
		took += tr.AddReserved(a, 100)
		if tr.Inflight() != total {
			t.Fatalf("writing a reserved row moved the total from %d to %d", total, tr.Inflight())
		}
	}
	if want := int64(2 * (100 + recordCost)); took != want || tr.Reserved() != total-want {
		t.Fatalf("took %d, reserved %d: want %d taken, %d left", took, tr.Reserved(), want, total-want)
	}
	tr.Unreserve(total - took) // the dropped row's
	if tr.Reserved() != 0 || tr.Inflight() != took {
		t.Fatalf("reserved %d, inflight %d after the give back: want 0, %d", tr.Reserved(), tr.Inflight(), took)
	}
	tr.Commit(a, 100)
	tr.Ack(a, 100, nil)
	tr.Ack(a, 100, nil)
	if tr.Inflight() != 0 || tr.Durable() != 100 {
		t.Fatalf("inflight %d, durable %s once acknowledged: want 0, 0/64", tr.Inflight(), tr.Durable())
	}

	// A row larger than what is reserved counts the rest as a record's.
	if err := tr.Reserve(context.Background(), 50); err != nil {
		t.Fatal(err)
	}
	b := tr.Begin()
	if took := tr.AddReserved(b, 100); took != 50 || tr.Inflight() != 100+recordCost || tr.Reserved() != 0 {
		t.Fatalf("took %d, inflight %d, reserved %d: want 50, %d, 0", took, tr.Inflight(), tr.Reserved(), 100+recordCost)
	}
	tr.Unreserve(10) // nothing reserved: nothing given back
	if tr.Inflight() != 100+recordCost {
		t.Fatalf("giving back more than reserved moved the total to %d", tr.Inflight())
	}
}

// A window larger than the bound goes when nothing else is reserved and
// records leave room for half the bound, and does not stop the stream
// that closes it once its records are acknowledged.
func TestTrackerWindowLargerThanTheBoundStillGoes(t *testing.T) {
	const max = 10_000
	tr := NewTracker(0, max, nil)
	a := tr.Begin()
	tr.Add(a, 4000-recordCost)
	if err := tr.Reserve(context.Background(), 3*max); err != nil {
		t.Fatal(err)
	}
	if tr.HasRoom() {
		t.Fatal("room with a record in flight beside a window over the bound")
	}
	woke := make(chan bool, 1)
	go func() { woke <- tr.WaitRoom(context.Background(), time.Now().Add(5*time.Second)) }()
	time.Sleep(20 * time.Millisecond)
	tr.Ack(a, 4000-recordCost, nil)
	select {
	case ok := <-woke:
		if !ok {
			t.Fatal("the stream found no room with only the window's reservation in flight")
		}
	case <-time.After(time.Second):
		t.Fatal("acknowledging the last record did not wake the stream held up beside a window over the bound")
	}
	// A second reservation waits for the first.
	got := reserveSoon(t, tr, 10)
	if done, _ := returned(got, 50*time.Millisecond); done {
		t.Fatal("a second reservation went beside a window over the bound")
	}
	tr.Unreserve(3 * max)
	if done, err := returned(got, 2*time.Second); !done || err != nil {
		t.Fatalf("the second reservation did not go (done %v, err %v)", done, err)
	}
}

// A read whose rows pass its estimate reserves more as it reads: it waits
// for records like Reserve, and goes over the bound only when nothing but
// reservations is in flight (its window must end, and the others' close
// without it).
func TestTrackerReserveMoreGoesOverTheBoundOnlyWithNoRecordInFlight(t *testing.T) {
	const max = 10_000
	tr := NewTracker(0, max, nil)
	if err := tr.Reserve(context.Background(), 8000); err != nil {
		t.Fatal(err)
	}
	a := tr.Begin()
	tr.Add(a, 1000-recordCost)
	got := make(chan error, 1)
	go func() { got <- tr.ReserveMore(context.Background(), 4000) }()
	if done, _ := returned(got, 50*time.Millisecond); done {
		t.Fatal("more was reserved over the bound beside a record in flight")
	}
	tr.Ack(a, 1000-recordCost, nil)
	if done, err := returned(got, 2*time.Second); !done || err != nil {
		t.Fatalf("more was not reserved once no record was in flight (done %v, err %v)", done, err)
	}
	if tr.Inflight() != 12_000 || tr.Reserved() != 12_000 || !tr.HasRoom() {
		t.Fatalf("inflight %d, reserved %d, room %v: want 12000, 12000 and room for the stream", tr.Inflight(), tr.Reserved(), tr.HasRoom())
	}
	// Reserve (not more) does not go over beside reservations.
	got = reserveSoon(t, tr, 100)
	if done, _ := returned(got, 50*time.Millisecond); done {
		t.Fatal("a new reservation went over the bound beside others")
	}
	tr.Unreserve(12_000)
	if done, err := returned(got, 2*time.Second); !done || err != nil {
		t.Fatalf("the new reservation did not go once room was given back (done %v, err %v)", done, err)
	}
}
