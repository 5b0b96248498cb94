package delivery

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/schema"
)

func TestTrackerDurableIsContiguousAcrossOutOfOrderAcks(t *testing.T) {
	tr := NewTracker(100, 1<<20, nil)
	a := tr.Begin()
	tr.Add(a, 10)
	tr.Add(a, 10)
	tr.Commit(a, 200)
	b := tr.Begin()
	tr.Add(b, 10)
	tr.Commit(b, 300)
	c := tr.Begin() // still open

	steps := []struct {
		ack  *TxAck
		want schema.LSN
	}{
		{b, 100}, // b done, but a is not: nothing moves
		{a, 100}, // one of a's two records
		{a, 300}, // a and b done
	}
	for i, st := range steps {
		tr.Ack(st.ack, 10, nil)
		if got := tr.Durable(); got != st.want {
			t.Fatalf("step %d: durable %s, want %s", i, got, st.want)
		}
	}
	if tr.Inflight() != 0 {
		t.Fatalf("inflight %d, want 0", tr.Inflight())
	}
	tr.Add(c, 5)
	tr.Commit(c, 400)
	tr.Ack(c, 5, nil)
	if tr.Durable() != 400 {
		t.Fatalf("durable %s, want 400", tr.Durable())
	}
}

func TestTrackerEmptyTransactionIsDurableAtCommit(t *testing.T) {
	tr := NewTracker(1, 100, nil)
	a := tr.Begin()
	tr.Commit(a, 50) // every change filtered out
	if tr.Durable() != 50 {
		t.Fatalf("durable %s, want 50", tr.Durable())
	}
}

func TestTrackerFailureStopsDurableForGood(t *testing.T) {
	tr := NewTracker(1, 100, nil)
	a := tr.Begin()
	tr.Add(a, 1)
	tr.Commit(a, 10)
	b := tr.Begin()
	tr.Add(b, 1)
	tr.Commit(b, 20)
	boom := errors.New("message too large")
	tr.Ack(a, 1, boom)
	tr.Ack(b, 1, nil)
	if tr.Durable() != 1 {
		t.Fatalf("durable moved past a failed record: %s", tr.Durable())
	}
	if !errors.Is(tr.Err(), boom) || !errors.Is(tr.Wait(context.Background()), boom) {
		t.Fatalf("failure not reported: %v", tr.Err())
	}
	tr.AdvanceIdle(1000)
	if tr.Durable() != 1 {
		t.Fatal("idle advance after a failure")
	}
}

func TestTrackerAdvanceIdleOnlyWhenNothingPending(t *testing.T) {
	tr := NewTracker(10, 100, nil)
	a := tr.Begin()
	tr.AdvanceIdle(500)
	if tr.Durable() != 10 {
		t.Fatal("idle advance while a transaction is open")
	}
	tr.Add(a, 1)
	tr.Commit(a, 20)
	tr.AdvanceIdle(500)
	if tr.Durable() != 10 {
		t.Fatal("idle advance while a record is in flight")
	}
	tr.Ack(a, 1, nil)
	tr.AdvanceIdle(500)
	if tr.Durable() != 500 {
		t.Fatalf("durable %s, want 500", tr.Durable())
	}
	tr.AdvanceIdle(400)
	if tr.Durable() != 500 {
		t.Fatal("durable moved backwards")
	}
}

func TestTrackerAbandonDropsOpenTransaction(t *testing.T) {
	tr := NewTracker(10, 100, nil)
	a := tr.Begin()
	tr.Add(a, 1)
	tr.Commit(a, 20)
	b := tr.Begin()
	tr.Add(b, 1)
	tr.Abandon() // session lost mid-transaction b
	tr.Ack(b, 1, nil)
	tr.Ack(a, 1, nil)
	if tr.Durable() != 20 {
		t.Fatalf("durable %s, want 20", tr.Durable())
	}
	if err := tr.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestTrackerWaitRoomBlocksUntilAcked(t *testing.T) {
	tr := NewTracker(1, 100, nil)
	a := tr.Begin()
	tr.Add(a, 150)
	if tr.WaitRoom(context.Background(), time.Now().Add(20*time.Millisecond)) {
		t.Fatal("room while over the bound")
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		tr.Ack(a, 150, nil)
	}()
	if !tr.WaitRoom(context.Background(), time.Now().Add(5*time.Second)) {
		t.Fatal("no room after the ack")
	}
}

func TestBackoffIsCappedAndGrows(t *testing.T) {
	b := fault.NewBackoff(100*time.Millisecond, time.Second)
	prev := time.Duration(0)
	for i := 0; i < 20; i++ {
		d := b.Next()
		if d > time.Second {
			t.Fatalf("backoff %v over the cap", d)
		}
		if i < 3 && d < prev/2 {
			t.Fatalf("backoff shrank: %v after %v", d, prev)
		}
		prev = d
	}
}

// TestTrackerGatedWaitsForTheKafkaCommit: in exactly-once mode an
// acknowledged transaction is durable only once a Kafka commit covers it,
// and after a Restart late failures of the aborted transaction are
// ignored.
func TestTrackerGatedWaitsForTheKafkaCommit(t *testing.T) {
	tr := NewTracker(100, 1<<20, nil)
	tr.Gate()
	a := tr.Begin()
	tr.Add(a, 10)
	tr.Commit(a, 200)
	tr.Ack(a, 10, nil)
	if got := tr.Durable(); got != 100 {
		t.Fatalf("acknowledged but not committed: durable %s, want 100", got)
	}
	tr.SetCeiling(200)
	if got := tr.Durable(); got != 200 {
		t.Fatalf("committed: durable %s, want 200", got)
	}
	// A commit ahead of the acks (cannot happen after Flush, but the
	// ceiling alone must not move the LSN).
	b := tr.Begin()
	tr.Add(b, 10)
	tr.Commit(b, 300)
	tr.SetCeiling(300)
	if got := tr.Durable(); got != 200 {
		t.Fatalf("committed, not acknowledged: durable %s, want 200", got)
	}
	// Aborted: the transaction is forgotten; its late failure is ignored.
	tr.Restart()
	tr.Ack(b, 10, errors.New("aborted"))
	if err := tr.Err(); err != nil {
		t.Fatalf("failure of an aborted transaction stuck: %v", err)
	}
	c := tr.Begin()
	tr.Add(c, 10)
	tr.Commit(c, 400)
	tr.Ack(c, 10, nil)
	tr.SetCeiling(400)
	if got := tr.Durable(); got != 400 {
		t.Fatalf("after the restart: durable %s, want 400", got)
	}
	// Idle: nothing open, nothing in flight; the ceiling still bounds.
	tr.AdvanceIdle(500)
	if got := tr.Durable(); got != 400 {
		t.Fatalf("idle without a commit: durable %s, want 400", got)
	}
	tr.SetCeiling(500)
	if got := tr.Durable(); got != 500 {
		t.Fatalf("idle, ceiling raised: durable %s, want 500", got)
	}
}

// TestCopyTrackerWaitsForThePipelinesBudget protects the process-wide
// memory bound: a copy's records count against the pipeline's in-flight
// bound, so the copy waits when the main worker has used the budget up,
// and the pipeline's count shows the copy's bytes.
func TestCopyTrackerWaitsForThePipelinesBudget(t *testing.T) {
	main := NewTracker(1, 1000, nil)
	cp := NewTracker(1, 1000, nil)
	cp.ShareBudget(main)
	ma := main.Begin()
	main.Add(ma, 900)
	ca := cp.Begin()
	cp.Add(ca, 100) // within the copy's own bound, over the shared one
	if got, want := main.Inflight(), int64(900+100+2*recordCost); got != want {
		t.Fatalf("pipeline in flight %d, want %d (its records and the copy's)", got, want)
	}
	if cp.HasRoom() || cp.WaitRoom(context.Background(), time.Now().Add(20*time.Millisecond)) {
		t.Fatal("the copy has room while the pipeline's budget is used up")
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		main.Ack(ma, 900, nil)
	}()
	if !cp.WaitRoom(context.Background(), time.Now().Add(5*time.Second)) {
		t.Fatal("no room for the copy after the pipeline's records were acknowledged")
	}
	cp.Ack(ca, 100, nil)
	if main.Inflight() != 0 || cp.Inflight() != 0 {
		t.Fatalf("in flight after every ack: pipeline %d, copy %d, want 0", main.Inflight(), cp.Inflight())
	}
}

// TestTrackerLockFreeAcksNeverMissTheLastOne: records of many
// transactions acknowledged from several goroutines while the
// transactions are still being committed: whatever the interleaving of
// the last Ack and the Commit, the durable LSN reaches the last end.
func TestTrackerLockFreeAcksNeverMissTheLastOne(t *testing.T) {
	for round := 0; round < 50; round++ {
		tr := NewTracker(0, 1<<30, nil)
		const txs, recs = 40, 25
		acks := make(chan *TxAck, txs*recs)
		done := make(chan struct{})
		for w := 0; w < 4; w++ {
			go func() {
				for a := range acks {
					tr.Ack(a, 1, nil)
				}
				done <- struct{}{}
			}()
		}
		for i := 1; i <= txs; i++ {
			a := tr.Begin()
			for r := 0; r < recs; r++ {
				tr.Add(a, 1)
				acks <- a
			}
			tr.Commit(a, schema.LSN(i*100))
		}
		close(acks)
		for w := 0; w < 4; w++ {
			<-done
		}
		if d := tr.Durable(); d != txs*100 {
			t.Fatalf("round %d: durable %s, want %s", round, d, schema.LSN(txs*100))
		}
	}
}

// UnitState tells an incremental snapshot when the unit holding a
// window's rows is durable: closed and acknowledged, and in exactly-once
// mode committed (the ceiling past its end); abandoned with its session,
// aborted (Restart) or after a failure it is lost.
func TestTrackerUnitStateIsDurableOnlyOnceAcknowledgedAndCommitted(t *testing.T) {
	state := func(tr *Tracker, a *TxAck) string {
		d, l := tr.UnitState(a)
		switch {
		case d && l:
			return "both"
		case d:
			return "durable"
		case l:
			return "lost"
		}
		return "pending"
	}
	tr := NewTracker(100, 1<<20, nil)
	a := tr.Begin()
	tr.Add(a, 10)
	if got := state(tr, a); got != "pending" {
		t.Fatalf("open unit: %s", got)
	}
	tr.Commit(a, 200)
	if got := state(tr, a); got != "pending" {
		t.Fatalf("closed with a record in flight: %s", got)
	}
	tr.Ack(a, 10, nil)
	if got := state(tr, a); got != "durable" {
		t.Fatalf("closed and acknowledged: %s", got)
	}
	b := tr.Begin()
	tr.Add(b, 10)
	tr.Ack(b, 10, nil) // acknowledged, but its session ended before its commit
	tr.Abandon()
	if got := state(tr, b); got != "lost" {
		t.Fatalf("abandoned: %s", got)
	}

	eos := NewTracker(100, 1<<20, nil)
	eos.Gate()
	c := eos.Begin()
	eos.Add(c, 10)
	eos.Commit(c, 300)
	eos.Ack(c, 10, nil)
	if got := state(eos, c); got != "pending" {
		t.Fatalf("exactly-once, acknowledged, not committed: %s", got)
	}
	eos.SetCeiling(300)
	if got := state(eos, c); got != "durable" {
		t.Fatalf("exactly-once, committed: %s", got)
	}
	// A unit that ends where the committed one did is not committed with it.
	same := eos.Begin()
	eos.Add(same, 10)
	eos.Commit(same, 300)
	eos.Ack(same, 10, nil)
	if got := state(eos, same); got != "pending" {
		t.Fatalf("exactly-once, a unit at the committed end, not committed itself: %s", got)
	}
	eos.SetCeiling(300)
	if got := state(eos, same); got != "durable" {
		t.Fatalf("exactly-once, a unit at the committed end, committed: %s", got)
	}
	d := eos.Begin()
	eos.Add(d, 10)
	eos.Commit(d, 400)
	eos.Restart() // its Kafka transaction aborted
	if got := state(eos, d); got != "lost" {
		t.Fatalf("exactly-once, aborted: %s", got)
	}
}
