package connector

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/offsets"
)

// fakeProducer is a txnProducer that keeps what the sinks give it, for
// their unit tests without a broker. A record is acknowledged at once, or,
// with hold, when release or Flush runs (Flush sends what lingers, as
// kgo's does); fail makes the next acknowledgements failures.
type fakeProducer struct {
	mu      sync.Mutex
	hold    bool
	fail    error
	endErr  error // EndTransaction's answer
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

var _ txnClient = (*fakeProducer)(nil)

func (f *fakeProducer) Produce(_ context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	f.mu.Lock()
	f.events = append(f.events, "produce "+r.Topic)
	f.produced = append(f.produced, kgo.Record{Topic: r.Topic, Key: append([]byte(nil), r.Key...), Value: cloneValue(r.Value), Timestamp: r.Timestamp})
	if f.hold {
		f.pending = append(f.pending, pendingRecord{r, promise})
		f.mu.Unlock()
		return
	}
	err := f.fail
	f.mu.Unlock()
	promise(r, err)
}

// cloneValue copies v, keeping nil (a tombstone) apart from empty.
func cloneValue(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append([]byte{}, v...)
}

// release acknowledges the records held so far.
func (f *fakeProducer) release() {
	f.mu.Lock()
	p, err := f.pending, f.fail
	f.pending = nil
	f.mu.Unlock()
	for _, r := range p {
		r.promise(r.rec, err)
	}
}

func (f *fakeProducer) Flush(context.Context) error {
	f.event("flush")
	f.release()
	return nil
}

func (f *fakeProducer) BeginTransaction() error {
	f.event("begin")
	return nil
}

func (f *fakeProducer) EndTransaction(_ context.Context, commit kgo.TransactionEndTry) error {
	if commit == kgo.TryCommit {
		f.event("commit")
	} else {
		f.event("abort")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.endErr
}

func (f *fakeProducer) AbortBufferedRecords(context.Context) error {
	f.event("abort-buffered")
	f.mu.Lock()
	p := f.pending
	f.pending = nil
	f.mu.Unlock()
	for _, r := range p {
		r.promise(r.rec, kgo.ErrAborting)
	}
	return nil
}

func (f *fakeProducer) Close() { f.event("close") }

func (f *fakeProducer) event(e string) {
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
}

// takeEvents returns the events so far and forgets them.
func (f *fakeProducer) takeEvents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.events
	f.events = nil
	return e
}

// records returns a copy of the records produced so far.
func (f *fakeProducer) records() []kgo.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]kgo.Record(nil), f.produced...)
}

// state decodes the offsets records produced so far, in order, as a
// restart would read them (connector name "shop", topic "offsets").
func (f *fakeProducer) state(t interface{ Fatalf(string, ...any) }) offsets.State {
	var st offsets.State
	for _, r := range f.records() {
		if r.Topic != "offsets" {
			continue
		}
		if err := offsets.Decode("shop", r.Key, r.Value, &st); err != nil {
			t.Fatalf("decode offsets record: %v", err)
		}
	}
	return st
}
