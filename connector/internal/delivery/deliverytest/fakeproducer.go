package deliverytest

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/offsets"
)

// FakeProducer is a transactional producer (delivery's TxnClient) that
// keeps what the sinks give it, for their unit tests without a broker. A
// record is acknowledged at once, or, with Hold, when Release or Flush runs
// (Flush sends what lingers, as kgo's does); Fail makes the next
// acknowledgements failures. Mu guards its fields.
type FakeProducer struct {
	Mu      sync.Mutex
	Hold    bool
	Fail    error
	EndErr  error // EndTransaction's answer
	pending []pendingRecord
	// events is what the producer was asked, in order: "begin",
	// "produce <topic>", "flush", "commit", "abort", "abort-buffered".
	events []string
	// produced holds a copy of every record produced (the sinks recycle
	// theirs once acknowledged).
	produced []kgo.Record
}

type pendingRecord struct {
	rec     *kgo.Record
	promise func(*kgo.Record, error)
}

func (f *FakeProducer) Produce(_ context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	f.Mu.Lock()
	f.events = append(f.events, "produce "+r.Topic)
	f.produced = append(f.produced, kgo.Record{Topic: r.Topic, Key: append([]byte(nil), r.Key...), Value: cloneValue(r.Value), Timestamp: r.Timestamp})
	if f.Hold {
		f.pending = append(f.pending, pendingRecord{r, promise})
		f.Mu.Unlock()
		return
	}
	err := f.Fail
	f.Mu.Unlock()
	promise(r, err)
}

// cloneValue copies v, keeping nil (a tombstone) apart from empty.
func cloneValue(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append([]byte{}, v...)
}

// Release acknowledges the records held so far.
func (f *FakeProducer) Release() {
	f.Mu.Lock()
	p, err := f.pending, f.Fail
	f.pending = nil
	f.Mu.Unlock()
	for _, r := range p {
		r.promise(r.rec, err)
	}
}

func (f *FakeProducer) Flush(context.Context) error {
	f.event("flush")
	f.Release()
	return nil
}

func (f *FakeProducer) BeginTransaction() error {
	f.event("begin")
	return nil
}

func (f *FakeProducer) EndTransaction(_ context.Context, commit kgo.TransactionEndTry) error {
	if commit == kgo.TryCommit {
		f.event("commit")
	} else {
		f.event("abort")
	}
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return f.EndErr
}

func (f *FakeProducer) AbortBufferedRecords(context.Context) error {
	f.event("abort-buffered")
	f.Mu.Lock()
	p := f.pending
	f.pending = nil
	f.Mu.Unlock()
	for _, r := range p {
		r.promise(r.rec, kgo.ErrAborting)
	}
	return nil
}

func (f *FakeProducer) Close() { f.event("close") }

func (f *FakeProducer) event(e string) {
	f.Mu.Lock()
	f.events = append(f.events, e)
	f.Mu.Unlock()
}

// TakeEvents returns the events so far and forgets them.
func (f *FakeProducer) TakeEvents() []string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	e := f.events
	f.events = nil
	return e
}

// Records returns a copy of the records produced so far.
func (f *FakeProducer) Records() []kgo.Record {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]kgo.Record(nil), f.produced...)
}

// State decodes the offsets records produced so far, in order, as a
// restart would read them (connector name "shop", topic "offsets").
func (f *FakeProducer) State(t interface{ Fatalf(string, ...any) }) offsets.State {
	var st offsets.State
	for _, r := range f.Records() {
		if r.Topic != "offsets" {
			continue
		}
		if err := offsets.Decode("shop", r.Key, r.Value, &st); err != nil {
			t.Fatalf("decode offsets record: %v", err)
		}
	}
	return st
}
