package record

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the writer's side of the transform chain (chain.go): each
// of Writer's record makers, when its codec runs a chain, makes its record
// here instead, from the record's Connect view. A record the chain drops
// comes back as a dropped record (no topic), which Send recycles unsent;
// a tombstone the chain drops comes back nil.

// changeChained is Change with the chain.
func (w *Writer) changeChained(a *delivery.TxAck, topic string, sp *schema.Plan, ch *schema.Change, now time.Time, withValue, tombstone bool) (rec, ts *kgo.Record, err error) {
	r, err := w.Codec.chain.view.Change(topic, sp, ch, now, withValue)
	if err != nil {
		return nil, nil, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
	}
	rec, err = w.chained(a, r, ch.LSN, now, func(rec *kgo.Record) {
		changeHeaders(rec, ch)
		w.Codec.flatHeaders(rec, ch, now, false)
	})
	if err != nil {
		return nil, nil, err
	}
	if withValue && tombstone && r.KeySchema != nil {
		ts, err = w.chained(a, Tombstone(r), ch.LSN, now, func(ts *kgo.Record) {
			changeHeaders(ts, ch)
			w.Codec.flatHeaders(ts, ch, now, true)
		})
		if err != nil {
			w.drop(rec)
			return nil, nil, err
		}
		if dropped(ts) {
			w.drop(ts)
			ts = nil
		}
	}
	return rec, ts, nil
}

// chained runs the chain on r, the record of the change at lsn, and makes
// its record in unit a with the mooncdc headers headers sets; a dropped
// record when the chain drops it.
func (w *Writer) chained(a *delivery.TxAck, r transform.Record, lsn schema.LSN, now time.Time, headers func(*kgo.Record)) (*kgo.Record, error) {
	c := w.Codec.chain
	out, keep, err := c.apply(r, lsn)
	if err != nil {
		return nil, err
	}
	rec := w.acks.pool.get()
	rec.Context = a
	if !keep {
		return rec, nil // no topic: dropped
	}
	headers(rec)
	if err := c.encode(rec, &out, lsn, now, w.Codec.maxRecord); err != nil {
		w.acks.pool.put(rec)
		return nil, err
	}
	return rec, nil
}

// txEventChained is TxEvent with the chain.
func (w *Writer) txEventChained(a *delivery.TxAck, topic string, tx *schema.Tx, ev *schema.TxEvent) (*kgo.Record, error) {
	r, err := w.Codec.chain.view.TxEvent(topic, ev)
	if err != nil {
		return nil, &RecordError{Topic: topic, LSN: ev.LSN, Err: err}
	}
	seq := int64(-1)
	if ev.Status == schema.TxEnd {
		seq = ev.EventCount
	}
	return w.chained(a, r, ev.LSN, time.Now(), func(rec *kgo.Record) { SetHeaders(rec, ev.LSN, tx.CommitLSN, seq) })
}

// schemaChangeChained is SchemaChange with the chain.
func (w *Writer) schemaChangeChained(a *delivery.TxAck, topic string, sc *schema.SchemaChange, commit schema.LSN, seq int64) (*kgo.Record, error) {
	r, err := w.Codec.chain.view.SchemaChange(topic, sc)
	if err != nil {
		return nil, &RecordError{Topic: topic, LSN: sc.LSN, Err: err}
	}
	return w.chained(a, r, sc.LSN, time.Now(), func(rec *kgo.Record) { SetHeaders(rec, sc.LSN, commit, seq) })
}

// heartbeatChained is Heartbeat with the chain.
func (w *Writer) heartbeatChained(a *delivery.TxAck, topic string, f *HeartbeatFormat, ch *schema.Change) (*kgo.Record, error) {
	now := time.Now()
	return w.chained(a, Heartbeat(topic, f.prefix, now.UnixMilli()), ch.LSN, now, func(rec *kgo.Record) { changeHeaders(rec, ch) })
}
