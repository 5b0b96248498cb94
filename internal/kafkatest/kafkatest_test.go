package kafkatest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func createTopic(t *testing.T, cl *kgo.Client, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

func produce(t *testing.T, cl *kgo.Client, topic string, from, to int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rs []*kgo.Record
	for i := from; i < to; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i % 7)), Value: []byte(strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatalf("produce %d..%d to %s: %v", from, to, topic, err)
	}
}

// values returns the record values, checking that offsets increase within
// each partition.
func values(t *testing.T, rs []*kgo.Record) map[string]bool {
	t.Helper()
	seen := make(map[string]bool)
	last := make(map[string]int64)
	for _, r := range rs {
		k := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
		if o, ok := last[k]; ok && r.Offset <= o {
			t.Errorf("%s: offset %d after %d: not in partition order", k, r.Offset, o)
		}
		last[k] = r.Offset
		seen[string(r.Value)] = true
	}
	return seen
}

func wantValues(t *testing.T, rs []*kgo.Record, want ...int) {
	t.Helper()
	got := values(t, rs)
	if len(rs) != len(want) {
		t.Errorf("got %d records, want %d", len(rs), len(want))
	}
	for _, w := range want {
		if !got[strconv.Itoa(w)] {
			t.Errorf("record %d missing", w)
		}
	}
}

func span(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestBrokerRoundTrip(t *testing.T) {
	b := New(t)
	cl := b.Client(t)
	createTopic(t, cl, "a", 3)
	createTopic(t, cl, "b", 1)
	produce(t, cl, "a", 0, 50)
	produce(t, cl, "b", 50, 60)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all := ReadAll(ctx, t, b.Addr(), -1, "a", "b")
	wantValues(t, all, span(0, 60)...)
	if all[len(all)-1].Topic != "b" {
		t.Errorf("records not grouped in topic argument order: last is from %q", all[len(all)-1].Topic)
	}
	if got := ReadAll(ctx, t, b.Addr(), 10, "b"); len(got) != 10 {
		t.Errorf("ReadAll(n=10): %d records", len(got))
	}
	if got := ReadAll(ctx, t, b.Addr(), -1, "missing"); len(got) != 0 {
		t.Errorf("ReadAll of a missing topic: %d records", len(got))
	}
}

// TestReadAllWaitsForRecords: with n >= 0, ReadAll waits for records that
// are produced after it starts.
func TestReadAllWaitsForRecords(t *testing.T) {
	b := New(t)
	cl := b.Client(t)
	createTopic(t, cl, "late", 2)
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = cl.ProduceSync(context.Background(), &kgo.Record{Topic: "late", Value: []byte("0")}).FirstErr()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wantValues(t, ReadAll(ctx, t, b.Addr(), 1, "late"), 0)
}

func txnClient(t *testing.T, addr, id string) *kgo.Client {
	t.Helper()
	return newClient(t, addr, kgo.TransactionalID(id), kgo.DefaultProduceTopic("tx"))
}

// txn produces values from..to in one transaction and commits or aborts it.
func txn(t *testing.T, cl *kgo.Client, from, to int, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, cl, "tx", from, to)
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// TestReadAllSeesOnlyCommittedTransactions also proves ReadAll(n<0) ends on
// a partition whose tail is an abort marker over aborted records, which a
// consumer would never report.
func TestReadAllSeesOnlyCommittedTransactions(t *testing.T) {
	b := New(t)
	createTopic(t, b.Client(t), "tx", 2)
	cl := txnClient(t, b.Addr(), "t1")
	txn(t, cl, 0, 10, true)
	txn(t, cl, 10, 20, false)
	txn(t, cl, 20, 25, true)
	txn(t, cl, 25, 30, false)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	got := ReadAll(ctx, t, b.Addr(), -1, "tx")
	wantValues(t, got, append(span(0, 10), span(20, 25)...)...)
	if ctx.Err() != nil {
		t.Errorf("ReadAll ran until its context expired (%v) instead of stopping at the end", time.Since(start))
	}
}

// TestReadAllSkipsOpenTransaction: records of a transaction still open are
// beyond the last stable offset, so ReadAll(n<0) neither returns nor waits
// for them.
func TestReadAllSkipsOpenTransaction(t *testing.T) {
	b := New(t)
	createTopic(t, b.Client(t), "tx", 1)
	cl := txnClient(t, b.Addr(), "t1")
	txn(t, cl, 0, 3, true)
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, cl, "tx", 3, 6)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wantValues(t, ReadAll(ctx, t, b.Addr(), -1, "tx"), 0, 1, 2)
	if ctx.Err() != nil {
		t.Error("ReadAll waited for the open transaction")
	}
}

// TestProcessKeepsAcknowledgedRecordsAcrossKill is the guarantee the
// process harness exists for: whatever the broker acknowledged survives
// SIGKILL, and the address stays the same so old clients reconnect.
func TestProcessKeepsAcknowledgedRecordsAcrossKill(t *testing.T) {
	p := StartProcess(t, t.TempDir())
	addr := p.Addr()
	cl := newClient(t, addr)
	createTopic(t, cl, "plain", 3)
	produce(t, cl, "plain", 0, 100)

	p.Kill()
	p.Start(t)
	if p.Addr() != addr {
		t.Fatalf("address changed across restart: %s -> %s", addr, p.Addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wantValues(t, ReadAll(ctx, t, addr, -1, "plain"), span(0, 100)...)

	produce(t, cl, "plain", 100, 110) // the old client reconnects
	p.Stop()
	p.Start(t)
	wantValues(t, ReadAll(ctx, t, addr, -1, "plain"), span(0, 110)...)
}

// TestProcessKillAbortsOpenTransactionAndHidesNoLaterOne: a transaction
// open at SIGKILL is aborted on restart, committed ones stay committed, and
// the next transaction of the same transactional id is visible. Plain kfake
// fails the last part (it writes no abort marker for crash-aborted
// transactions); kfakeserver repairs that on start.
func TestProcessKillAbortsOpenTransactionAndHidesNoLaterOne(t *testing.T) {
	p := StartProcess(t, t.TempDir())
	addr := p.Addr()
	createTopic(t, newClient(t, addr), "tx", 2)
	tx := txnClient(t, addr, "t1")
	txn(t, tx, 0, 5, true)
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tx, "tx", 5, 8) // open at the kill

	p.Kill()
	p.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wantValues(t, ReadAll(ctx, t, addr, -1, "tx"), span(0, 5)...)

	tx2 := txnClient(t, addr, "t1")
	txn(t, tx2, 8, 10, true)
	wantValues(t, ReadAll(ctx, t, addr, -1, "tx"), append(span(0, 5), 8, 9)...)

	// Killed again after the repair: nothing changes.
	p.Kill()
	p.Start(t)
	wantValues(t, ReadAll(ctx, t, addr, -1, "tx"), append(span(0, 5), 8, 9)...)
}

// TestProcessStopKeepsOpenTransactionLive: after a clean stop kfake
// restores open transactions; the crash repair must leave them alone so the
// producer can still commit.
func TestProcessStopKeepsOpenTransactionLive(t *testing.T) {
	p := StartProcess(t, t.TempDir())
	addr := p.Addr()
	createTopic(t, newClient(t, addr), "tx", 1)
	tx := txnClient(t, addr, "t1")
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(t, tx, "tx", 0, 3)

	p.Stop()
	p.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit the transaction that was open across a clean restart: %v", err)
	}
	wantValues(t, ReadAll(ctx, t, addr, -1, "tx"), 0, 1, 2)
}

// TestProcessExitsWhenParentGoesAway: kfakeserver shuts down when its stdin
// closes, which is what happens when the test binary dies without cleanup.
func TestProcessExitsWhenParentGoesAway(t *testing.T) {
	p := StartProcess(t, t.TempDir())
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(startTimeout):
		t.Fatal("kfakeserver still running after its stdin closed")
	}
	if !p.cmd.ProcessState.Success() {
		t.Errorf("kfakeserver exit: %v", p.cmd.ProcessState)
	}
}

// TestReadAllWaitsForATopicCreatedLater: with n >= 0 the topic may not
// exist yet; ReadAll picks it up as soon as it does.
func TestReadAllWaitsForATopicCreatedLater(t *testing.T) {
	b := New(t)
	cl := b.Client(t)
	go func() {
		time.Sleep(200 * time.Millisecond)
		ctx := context.Background()
		_, _ = kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "later")
		_ = cl.ProduceSync(ctx, &kgo.Record{Topic: "later", Value: []byte("0")}).FirstErr()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	wantValues(t, ReadAll(ctx, t, b.Addr(), 1, "later"), 0)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v: waited on stale metadata", d)
	}
}

func TestReadAllStartsAtTheLogStart(t *testing.T) {
	b := New(t)
	cl := b.Client(t)
	createTopic(t, cl, "trimmed", 1)
	produce(t, cl, "trimmed", 0, 10)
	offs := kadm.Offsets{}
	offs.AddOffset("trimmed", 0, 4, -1)
	resp, err := kadm.NewClient(cl).DeleteRecords(context.Background(), offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wantValues(t, ReadAll(ctx, t, b.Addr(), -1, "trimmed"), span(4, 10)...)
}
