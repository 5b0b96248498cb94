package record

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the one record writer: every record mooncdc writes to a
// data topic (a change, a snapshot row, its tombstone, a transaction's
// BEGIN and END, a schema change, a heartbeat, an outbox event) is made
// here, encoded once into a pooled record, refused when above
// kafka.max_record_bytes, given its headers, counted in its worker's
// tracker and handed to its sink (connector/internal/delivery). A failure to encode is a
// *RecordError, which fault.TableFault classifies.

// Pool recycles records with their key, value and header buffers,
// so that a record costs no allocation once the pool is warm. Safe for
// concurrent use. Its free list is a sync.Pool (pool.go), or under the
// race detector a plain one (pool_race.go).
type Pool struct{ free freeList }

func (rp *Pool) get() *kgo.Record {
	if rec := rp.free.get(); rec != nil {
		return rec
	}
	return new(kgo.Record)
}

// put recycles rec, keeping its buffers.
func (rp *Pool) put(rec *kgo.Record) {
	*rec = kgo.Record{Key: rec.Key[:0], Value: rec.Value[:0], Headers: rec.Headers[:0]}
	rp.free.put(rec)
}

// Acks is the promise of one worker's records: it counts each record in
// its tracker as acknowledged (or failed), and recycles it. Safe for
// concurrent use; promise is bound once, so producing allocates no
// closure.
type Acks struct {
	tracker *delivery.Tracker
	pool    *Pool
	// written counts the change records Kafka acknowledged (nil: not
	// counted); tombstones and the records of notChanges are not changes.
	written    prometheus.Counter
	notChanges [2]string
	promise    func(*kgo.Record, error)
}

func NewAcks(tracker *delivery.Tracker, pool *Pool, written prometheus.Counter, notChanges ...string) *Acks {
	a := &Acks{tracker: tracker, pool: pool, written: written}
	copy(a.notChanges[:], notChanges)
	a.promise = a.done
	return a
}

// done runs on the producer's promise goroutine.
func (a *Acks) done(rec *kgo.Record, err error) {
	n := delivery.RecordBytes(rec)
	if err != nil {
		err = fmt.Errorf("produce to topic %q: %w", rec.Topic, err)
	} else if a.written != nil && rec.Value != nil && rec.Topic != a.notChanges[0] && rec.Topic != a.notChanges[1] {
		a.written.Inc()
	}
	a.tracker.Ack(rec.Context.(*delivery.TxAck), n, err)
	a.pool.put(rec)
}

// Writer makes one worker's records and hands them to its sink. It
// is used from one goroutine (its codec is not safe for concurrent use);
// the sink, the acks and the pool may be shared by several writers (the
// chunk writers of a copy).
type Writer struct {
	Codec *Codec
	Sink  delivery.Sink
	acks  *Acks
}

func NewWriter(enc *Codec, s delivery.Sink, a *Acks) *Writer {
	return &Writer{Codec: enc, Sink: s, acks: a}
}

// Change encodes ch, with sp, its relation's schema plan (nil for a
// logical message), into a record for topic in unit a, with its headers
// (headers.go, flatheaders.go); with tombstone, also the tombstone that
// follows it (same key and headers, a null value; nil when ch has no
// key). Nothing is sent: send them in order. A key-only record (withValue
// false) is the delete-to-tombstone of the flat envelope: the delete
// itself with a null value.
func (w *Writer) Change(a *delivery.TxAck, topic string, sp *schema.Plan, ch *schema.Change, now time.Time, withValue, tombstone bool) (rec, ts *kgo.Record, err error) {
	if w.Codec.chain != nil {
		return w.changeChained(a, topic, sp, ch, now, withValue, tombstone)
	}
	rec = w.acks.pool.get()
	key, hasKey, err := w.Codec.AppendKey(rec.Key[:0], sp, ch)
	if err != nil {
		rec.Key = key[:0]
		w.acks.pool.put(rec)
		return nil, nil, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
	}
	var value []byte
	if withValue {
		value, err = w.Codec.AppendValue(rec.Value[:0], sp, ch, now)
		if err == nil {
			err = w.Codec.checkSize(key, value)
		}
		if err != nil {
			rec.Key, rec.Value = key[:0], value[:0]
			w.acks.pool.put(rec)
			return nil, nil, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
		}
	} else {
		// delete-to-tombstone: the delete itself, its value and value
		// schema null, headers and all (DefaultDeleteHandlingStrategy.java:61-69).
		tombstone = false
	}
	// The record's timestamp is now, the envelope's ts_ms: what the
	// producer would stamp a moment later, without a clock read per record.
	// Debezium sets none (EventDispatcher.java:535-542), so Connect's
	// producer stamps the send time (docs/types.md, Differences from Debezium).
	*rec = kgo.Record{Topic: topic, Value: value, Context: a, Headers: rec.Headers, Timestamp: now}
	if hasKey {
		rec.Key = key
	}
	changeHeaders(rec, ch)
	// The tombstone copies rec's key and headers now: once sent, rec may
	// be acknowledged and recycled (on the producer's goroutine) before
	// Produce even returns.
	if tombstone && hasKey {
		ts = w.acks.pool.get()
		*ts = kgo.Record{Topic: topic, Key: append(ts.Key[:0], key...), Context: a, Headers: ts.Headers, Timestamp: now}
		copyHeaders(ts, rec)
		w.Codec.flatHeaders(ts, ch, now, true)
	}
	w.Codec.flatHeaders(rec, ch, now, false)
	return rec, ts, nil
}

// TxEvent encodes a transaction's BEGIN or END for topic in unit a; its
// dedupe headers number BEGIN -1 and END after the transaction's records.
func (w *Writer) TxEvent(a *delivery.TxAck, topic string, tx *schema.Tx, ev *schema.TxEvent) (*kgo.Record, error) {
	if w.Codec.chain != nil {
		return w.txEventChained(a, topic, tx, ev)
	}
	rec := w.acks.pool.get()
	key, err := w.Codec.AppendTxKey(rec.Key[:0], ev)
	if err != nil {
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: ev.LSN, Err: err}
	}
	value, err := w.Codec.AppendTxValue(rec.Value[:0], ev)
	if err != nil {
		rec.Key = key[:0]
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: ev.LSN, Err: err}
	}
	*rec = kgo.Record{Topic: topic, Key: key, Value: value, Context: a, Headers: rec.Headers}
	seq := int64(-1)
	if ev.Status == schema.TxEnd {
		seq = ev.EventCount
	}
	SetHeaders(rec, ev.LSN, tx.CommitLSN, seq)
	return rec, nil
}

// SchemaChange encodes a schema-change record for topic in unit a.
func (w *Writer) SchemaChange(a *delivery.TxAck, topic string, sc *schema.SchemaChange, commit schema.LSN, seq int64) (*kgo.Record, error) {
	if w.Codec.chain != nil {
		return w.schemaChangeChained(a, topic, sc, commit, seq)
	}
	rec := w.acks.pool.get()
	key, err := w.Codec.AppendSchemaChangeKey(rec.Key[:0], sc)
	if err != nil {
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: sc.LSN, Err: err}
	}
	value, err := w.Codec.AppendSchemaChangeValue(rec.Value[:0], sc)
	if err == nil {
		err = w.Codec.checkSize(key, value)
	}
	if err != nil {
		rec.Key, rec.Value = key[:0], value[:0]
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: sc.LSN, Err: err}
	}
	*rec = kgo.Record{Topic: topic, Key: key, Value: value, Context: a, Headers: rec.Headers}
	SetHeaders(rec, sc.LSN, commit, seq)
	return rec, nil
}

// Heartbeat encodes a heartbeat record of the message ch for topic in
// unit a.
func (w *Writer) Heartbeat(a *delivery.TxAck, topic string, f *HeartbeatFormat, ch *schema.Change) (*kgo.Record, error) {
	if w.Codec.chain != nil {
		return w.heartbeatChained(a, topic, f, ch)
	}
	rec := w.acks.pool.get()
	key, err := f.appendKey(rec.Key[:0])
	if err != nil {
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
	}
	value, err := f.appendValue(rec.Value[:0], time.Now().UnixMilli())
	if err != nil {
		rec.Key = key[:0]
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
	}
	*rec = kgo.Record{Topic: topic, Key: key, Value: value, Context: a, Headers: rec.Headers[:0]}
	changeHeaders(rec, ch)
	return rec, nil
}

// Notification encodes the notification n for topic in unit a, with the
// mooncdc.* headers of position at, numbered seq (as the rows of an
// incremental snapshot's windows). Nothing is sent. The transforms chain
// does not see it (docs/incremental-snapshots.md, "The surface").
func (w *Writer) Notification(a *delivery.TxAck, topic string, f *NotificationFormat, n notify.Notification, at schema.LSN, seq int64) (*kgo.Record, error) {
	rec := w.acks.pool.get()
	key, err := f.AppendKey(rec.Key[:0], n)
	if err != nil {
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: at, Err: err}
	}
	value, err := f.AppendValue(rec.Value[:0], n)
	if err != nil {
		rec.Key = key[:0]
		w.acks.pool.put(rec)
		return nil, &RecordError{Topic: topic, LSN: at, Err: err}
	}
	*rec = kgo.Record{Topic: topic, Key: key, Value: value, Context: a, Headers: rec.Headers[:0]}
	SetHeaders(rec, at, at, seq)
	return rec, nil
}

// Outbox makes the record of ev, the outbox event of ch, in unit a, with
// the mooncdc.* headers of ch at commit, numbered seq, before the event's
// own (outbox.go: its topic, key, value, timestamp, partition, headers,
// size check and *RecordError). Nothing is sent. The one place an outbox
// record is made, streamed or copied; it blocks while the registry is
// unreachable (Avro).
func (w *Writer) Outbox(ctx context.Context, a *delivery.TxAck, ch *schema.Change, ev *schema.OutboxEvent, now time.Time,
	commit schema.LSN, seq int64) (*kgo.Record, error) {
	if w.Codec.chain != nil {
		return w.outboxChained(a, ch, ev, now, commit, seq)
	}
	rec := w.acks.pool.get()
	rec.Context = a
	SetHeaders(rec, ch.LSN, commit, seq)
	if err := w.Codec.outbox.record(ctx, rec, ch, ev, now, w.Codec.maxRecord); err != nil {
		w.acks.pool.put(rec)
		return nil, err
	}
	return rec, nil
}

// Record returns an empty pooled record in unit a, for a record made
// elsewhere (a stale key's tombstone).
func (w *Writer) Record(a *delivery.TxAck) *kgo.Record {
	rec := w.acks.pool.get()
	rec.Context = a
	return rec
}

// drop recycles a record that will not be sent.
func (w *Writer) drop(rec *kgo.Record) { w.acks.pool.put(rec) }

// Discard recycles a record made and not sent (one made again instead).
func (w *Writer) Discard(rec *kgo.Record) { w.drop(rec) }

// Send counts rec in its unit (rec.Context) and hands it to the sink. It
// does not block. A record the transform chain dropped is recycled
// unsent: its unit completes without it.
func (w *Writer) Send(rec *kgo.Record) {
	if dropped(rec) { // the transform chain dropped it (writer_chain.go)
		w.drop(rec)
		return
	}
	w.acks.tracker.Add(rec.Context.(*delivery.TxAck), delivery.RecordBytes(rec))
	w.Sink.Send(rec, w.acks.promise)
}

// SendReserved is Send for a row an incremental snapshot's window held:
// its bytes are taken from the tracker's reservations
// (delivery.Tracker.AddReserved), so it never waits. It returns the
// bytes taken (0 for a record the transform chain dropped).
func (w *Writer) SendReserved(rec *kgo.Record) int64 {
	if dropped(rec) {
		w.drop(rec)
		return 0
	}
	took := w.acks.tracker.AddReserved(rec.Context.(*delivery.TxAck), delivery.RecordBytes(rec))
	w.Sink.Send(rec, w.acks.promise)
	return took
}

// SendWhenRoom sends rec once the tracker's in-flight bytes are within
// its bound (a copy's rows push back on the copy; the stream waits
// through its session instead). It fails when ctx ends or a record
// failed.
func (w *Writer) SendWhenRoom(ctx context.Context, rec *kgo.Record) error {
	if dropped(rec) {
		w.drop(rec)
		return nil
	}
	t := w.acks.tracker
	for !t.HasRoom() && !t.WaitRoom(ctx, time.Now().Add(time.Second)) {
		if err := ctx.Err(); err != nil {
			w.drop(rec)
			return err
		}
		if err := t.Err(); err != nil {
			w.drop(rec)
			return err
		}
	}
	w.Send(rec)
	return nil
}
