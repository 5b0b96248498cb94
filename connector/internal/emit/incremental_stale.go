package emit

import (
	"context"
	"iter"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the main worker's part in an incremental snapshot's stale
// keys (docs/incremental-snapshots.md, "Stale keys"): while the snapshot
// runs, every record it writes to a topic whose keys are held (a window's
// row, a streamed change) strikes its key from them; at the end it writes
// a tombstone for each key left, in its own order, so that no record of
// the stream can slip between the last strike and the tombstones.

// StaleKeys is a topic's keys that may be stale, held by the snapshot
// (connector/internal/snapshot): the keys the topic had before the
// snapshot's mark, read while the chunks run. The main worker calls
// Strike and Left on the stream goroutine only; an implementation must
// be safe for use concurrently with whatever fills it.
type StaleKeys interface {
	// Strike says the main worker wrote key to the topic: it is no stale
	// key, whether the read of the topic has met it yet or not.
	Strike(key []byte)
	// Left yields the keys to tombstone: those held and not struck.
	Left() iter.Seq[[]byte]
}

// StrikeFrom has every record the main worker writes to topic from now on
// strike its key from keys (until Tombstones or EndStrike), and returns
// the stream position before which every record it wrote is in a unit
// that ends there: once that is durable, a read of the topic sees them.
// It blocks until the stream goroutine has acted on it (or ctx ends).
func (q *Incremental) StrikeFrom(ctx context.Context, topic string, keys StaleKeys) (schema.LSN, error) {
	rep, err := q.call(ctx, &incRequest{kind: incStrike, topic: topic, stale: keys})
	return rep.pos, err
}

// EndStrike stops striking topic's keys if keys are still the ones struck
// there (a snapshot that ends without tombstones). It does not wait.
func (q *Incremental) EndStrike(topic string, keys StaleKeys) {
	q.enqueue(&incRequest{kind: incEndStrike, topic: topic, stale: keys, done: make(chan incReply, 1)})
}

// Tombstones has the main worker write, at its next unit of durability, a
// tombstone to topic for each key the StaleKeys given to StrikeFrom have
// left then, and stop striking topic; it returns how many it wrote, once
// they are handed to the sink, and their unit (WindowResult.Unit). It
// blocks until then (or ctx ends).
func (q *Incremental) Tombstones(ctx context.Context, topic string) (int, *delivery.TxAck, error) {
	rep, err := q.call(ctx, &incRequest{kind: incTombstones, topic: topic})
	return rep.n, rep.unit, err
}

// endStrike stops striking topic's keys.
func (q *Incremental) endStrike(topic string) {
	delete(q.strikes, topic)
	if len(q.strikes) == 0 {
		q.strikes = nil
	}
}

// strike strikes key from topic's held keys, if StrikeFrom asked. Stream
// goroutine only.
func (q *Incremental) strike(topic string, key []byte) {
	if keys := q.strikes[topic]; keys != nil && key != nil && topic != "" {
		keys.Strike(key)
	}
}

// writeTombstones writes the queued tombstones in e.cur, with the headers
// of position at. The keys left are read here, on the stream goroutine
// that strikes them: none the stream wrote before this point is left.
func (e *Emitter) writeTombstones(at schema.LSN) {
	q := e.Incremental
	for _, r := range q.tombs {
		n := 0
		if keys := q.strikes[r.topic]; keys != nil {
			for k := range keys.Left() {
				ts := e.w.Record(e.cur)
				ts.Topic, ts.Key, ts.Value = r.topic, append(ts.Key[:0], k...), nil
				record.SetHeaders(ts, at, at, q.nextSeq(at))
				e.w.Send(ts)
				n++
			}
		}
		q.endStrike(r.topic)
		r.done <- incReply{n: n, unit: e.cur}
	}
	clear(q.tombs)
	q.tombs = q.tombs[:0]
}
