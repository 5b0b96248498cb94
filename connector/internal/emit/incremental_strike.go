package emit

import (
	"context"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the stale keys' side of an incremental snapshot on the
// main worker (incremental.go): the keys the stream writes to a topic
// while its stale keys are read are struck, and the tombstones of the
// keys left are written at the next unit of durability.

// StrikeFrom starts recording the keys the main worker writes to topic,
// and returns the stream position before which every record it wrote is
// in a unit that ends there: once that is durable, a read of the topic
// sees them, and the ones after are struck from the tombstones.
func (q *Incremental) StrikeFrom(ctx context.Context, topic string) (schema.LSN, error) {
	rep, err := q.call(ctx, &incRequest{kind: incStrike, topic: topic})
	return rep.pos, err
}

// Tombstones has the main worker write a tombstone to topic for each of
// keys that it did not write since StrikeFrom, at the next unit of
// durability, and stop striking topic; it returns how many it wrote, once
// they are handed to the sink, and their unit (WindowResult.Unit). With
// nil keys it only stops striking.
func (q *Incremental) Tombstones(ctx context.Context, topic string, keys [][]byte) (int, *delivery.TxAck, error) {
	rep, err := q.call(ctx, &incRequest{kind: incTombstones, topic: topic, keys: keys})
	return rep.n, rep.unit, err
}

// endStrike stops recording topic's keys.
func (q *Incremental) endStrike(topic string) {
	delete(q.strikes, topic)
	if len(q.strikes) == 0 {
		q.strikes = nil
	}
}

// Strike records that the main worker wrote key to topic (a streamed
// change), while that topic's stale keys are read. Stream goroutine only;
// nothing is recorded unless StrikeFrom asked.
func (q *Incremental) strike(topic string, key []byte) {
	if set := q.strikes[topic]; set != nil {
		set[string(key)] = struct{}{}
	}
}

// writeTombstones writes the queued tombstones in e.cur, with the headers
// of position at.
func (e *Emitter) writeTombstones(at schema.LSN) {
	q := e.Incremental
	for _, r := range q.tombs {
		set := q.strikes[r.topic]
		n := 0
		for _, k := range r.keys {
			if _, struck := set[string(k)]; struck {
				continue
			}
			ts := e.w.Record(e.cur)
			ts.Topic, ts.Key, ts.Value = r.topic, append(ts.Key[:0], k...), nil
			record.SetHeaders(ts, at, at, q.nextSeq(at))
			e.w.Send(ts)
			n++
		}
		q.endStrike(r.topic)
		r.done <- incReply{n: n, unit: e.cur}
	}
	clear(q.tombs)
	q.tombs = q.tombs[:0]
}
