package connector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/schema"
)

// emitter is the stream's Handler: it routes each change to its topic,
// encodes it once and hands it to the producer, counting it in the tracker.
// It runs on the stream goroutine; only the promise runs elsewhere.
type emitter struct {
	client  *kgo.Client
	tracker *Tracker
	topics  *topicMaker
	enc     *codec
	ctx     context.Context // bounds schema registration
	metrics *Metrics
	prefix  string
	include func(schema, table string) bool
	// oid is a copy's table (private catch-up only; 0 for the main
	// worker): its changes are emitted under whatever name the table has
	// since a rename.
	oid  uint32
	keys *keyResolver

	// gate applies the phase rules (main worker only; nil for a copy
	// worker's private catch-up): view is the phases as of the open
	// transaction's Begin.
	gate      *phases
	hooks     *Hooks
	view      phaseView
	commit    schema.LSN
	onPromote func([]*tableState) // logs the tables gate promoted (and stored)
	// storesShapes records a table's shape fingerprint when it changes
	// (main worker only; gate stores it), for the next run's comparison.
	storesShapes bool
	// onTableError parks a table whose records cannot be written (main
	// worker only; nil for a copy worker, whose copy fails instead).
	// failed holds the tables parked during the open transaction, whose
	// view still shows them as emitting.
	onTableError func(table string, lsn schema.LSN, err error)
	failed       map[string]bool
	// txn batches whole transactions into Kafka transactions (main worker
	// in exactly-once mode; nil otherwise).
	txn *txnWriter

	// activity counts transactions (main worker), for the heartbeater's
	// idle test; heartbeatTopic receives heartbeat records ("" for none).
	activity       *atomic.Uint64
	heartbeatTopic string
	heartbeatFmt   *heartbeatFormat // nil: no heartbeat records
	heartbeatOf    []byte           // how this connector's heartbeat messages begin

	// opts says which operations are skipped and whether transaction
	// metadata is written (txmeta.go); meta counts the open transaction's
	// records then, and txReady says the metadata topic's schemas are
	// registered.
	opts    recordOptions
	meta    txMetadata
	txReady bool

	// onSignal receives the signals inserted into signals.table (main
	// worker only; nil otherwise); signalTable is that table.
	onSignal    func(*schema.Change)
	signalTable TableName

	// skipThrough: the changes at or below it of the first transaction
	// are in Kafka already, sent by the Debezium connector mooncdc took
	// over from mid-transaction (takeover.go); 0: none.
	skipThrough schema.LSN

	routes map[*schema.Relation]route
	// shapes is each table's last relation (by oid) and announced the
	// tables whose DDL message the next new shape follows (schemachange.go).
	shapes    map[uint32]shapeAt
	announced map[string]bool
	// checked: the tables whose new shape the schema evolution policy
	// has decided on at their DDL (evolution.go).
	checked map[string]bool

	// messagesReady: the logical messages' schemas are registered;
	// schemaChangesReady: the schema-change records' (schemachange.go).
	messagesReady, schemaChangesReady bool
	cur                               *txAck
	pool                              sync.Pool
	promise                           func(*kgo.Record, error)
}

type route struct {
	topic string
	name  string // "schema.table", the phase key
	skip  bool
	// signals: the relation is signals.table, whose inserts are signals.
	signals bool
	rel     *schema.Relation // the relation to encode with (keyed by the primary key)
	nulls   *nullPlan        // rel's NOT NULL columns, for rows that hold a NULL in one (nullable.go)
	// prepared: the record schemas are registered.
	prepared bool
	// keyErr is why the table's key cannot be built (format.message_key_columns
	// it cannot carry): the table is parked at its first change.
	keyErr error
	// outbox: the relation is format.outbox.table, whose changes are
	// outbox events (outbox.go) on the topics they name.
	outbox bool
}

func newEmitter(ctx context.Context, client *kgo.Client, tracker *Tracker, topics *topicMaker, enc *codec, m *Metrics, prefix string,
	include func(string, string) bool, keys *keyResolver, opts recordOptions) *emitter {
	e := &emitter{ctx: ctx, client: client, tracker: tracker, topics: topics, enc: enc, metrics: m, prefix: prefix, include: include,
		keys: keys, opts: opts, routes: make(map[*schema.Relation]route)}
	e.pool.New = func() any { return new(kgo.Record) }
	e.promise = e.onAck
	return e
}

// Begin implements stream.Handler.
func (e *emitter) Begin(tx *schema.Tx) error {
	if e.txn != nil {
		if err := e.txn.begin(); err != nil {
			return err
		}
	}
	e.cur = e.tracker.Begin()
	clear(e.failed)
	if e.opts.txTopic != "" {
		// BEGIN is written at the transaction's Begin, in its unit of
		// durability (and Kafka transaction), as Debezium does on the
		// Begin message (PostgresStreamingChangeEventSource.java:348-349).
		e.meta.begin()
		if err := e.produceTx(tx, e.meta.beginEvent(tx)); err != nil {
			return err
		}
	}
	if e.gate != nil {
		e.hooks.call(HookMainBegin, "")
		var moved []*tableState
		e.view, moved = e.gate.begin(tx.CommitLSN)
		e.commit = tx.CommitLSN
		if moved != nil && e.onPromote != nil {
			e.onPromote(moved)
		}
	}
	return nil
}

// Commit implements stream.Handler.
func (e *emitter) Commit(tx *schema.Tx) error {
	if e.opts.txTopic != "" {
		if err := e.produceTx(tx, e.meta.endEvent(tx)); err != nil {
			return err
		}
	}
	e.tracker.Commit(e.cur, tx.EndLSN)
	e.cur = nil
	e.skipThrough = 0 // the one transaction Debezium had sent a part of is whole
	e.metrics.TransactionsReceived.Inc()
	if e.activity != nil {
		e.activity.Add(1)
	}
	if e.gate != nil {
		if moved := e.gate.advance(tx.EndLSN); moved != nil && e.onPromote != nil {
			e.onPromote(moved)
		}
	}
	if e.txn != nil {
		return e.txn.ended(e.ctx, tx.EndLSN)
	}
	return nil
}

// Change implements stream.Handler.
func (e *emitter) Change(ch *schema.Change) error {
	e.metrics.ChangesReceived.Inc()
	if e.skipThrough != 0 && ch.Tx != nil && ch.LSN <= e.skipThrough {
		return nil
	}
	if ch.Op == schema.OpMessage {
		if ch.Message.Prefix == HeartbeatMessagePrefix {
			return e.heartbeat(ch)
		}
		if ch.Message.Prefix == DDLMessagePrefix {
			if done, err := e.schemaChange(ch); done || err != nil {
				return err
			}
		}
		if o := e.enc.outbox; o != nil && o.cfg.MessagePrefix != "" && ch.Message.Prefix == o.cfg.MessagePrefix {
			if done, err := e.outboxMessage(ch); done || err != nil {
				return err
			}
		}
		topic := e.prefix + ".message"
		if err := e.topics.ensure(topic); err != nil {
			return err
		}
		if !e.messagesReady {
			if err := e.enc.prepare(e.ctx, topic, nil); err != nil {
				return err
			}
			e.messagesReady = true
		}
		if ch.Tx == nil {
			// A non-transactional message is its own unit of durability.
			return e.ownUnit(ch.LSN, func(a *txAck) error { return e.produce(a, topic, ch, false) })
		}
		return e.produce(e.cur, topic, ch, false)
	}
	r, err := e.route(ch)
	if err != nil || r.skip {
		return err
	}
	if r.signals && ch.Op == schema.OpCreate {
		// Before the phase rules: a signal acts whether or not the signal
		// table's own copy is handed over (EventDispatcher.java:313-321
		// hands a create to the source channel before it is emitted).
		e.onSignal(ch)
	}
	if ch.Op == schema.OpTruncate {
		// A schema change of its own, in any phase, as a DDL message's.
		if err := e.truncated(r.rel, ch); err != nil {
			return err
		}
	}
	if e.gate != nil && !e.view.emitsChange(r.name, ch.Relation.OID, e.commit, ch.LSN) || e.failed[r.name] {
		return nil // not handed over yet, or emitted by the copy worker, or parked
	}
	if r.keyErr != nil {
		return e.tableError(r.name, ch.LSN, r.keyErr)
	}
	if !r.prepared {
		rel, err := e.enc.prepareRelaxing(e.ctx, r.topic, r.rel)
		if err != nil {
			return e.tableError(r.name, ch.LSN, err)
		}
		if rel != r.rel { // the registry refused NOT NULL columns it had as optional
			r.rel, r.nulls = rel, newNullPlan(rel)
		}
		r.prepared = true
		e.routes[ch.Relation] = r
	}
	ch.Relation = r.rel
	if err := e.relaxNulls(e.ctx, r, ch); err != nil {
		return e.tableError(r.name, ch.LSN, err)
	}
	write := e.changeOf
	if r.outbox {
		write = e.outboxChange
	}
	if err := write(r, ch); err != nil {
		return e.tableError(r.name, ch.LSN, err)
	}
	return nil
}

// ownUnit writes what produce adds to a unit of durability of its own, a
// non-transactional message at lsn: counted in the tracker like a
// transaction ending at lsn, and in exactly-once mode inside a Kafka
// transaction (begin and ended pair here, whatever produce does).
func (e *emitter) ownUnit(lsn schema.LSN, produce func(*txAck) error) error {
	if e.txn != nil {
		if err := e.txn.begin(); err != nil {
			return err
		}
	}
	a := e.tracker.Begin()
	err := produce(a)
	e.tracker.Commit(a, lsn)
	if err == nil && e.txn != nil {
		err = e.txn.ended(e.ctx, lsn)
	}
	return err
}

// tableError parks the table of a change that cannot be written: its
// schema is refused, or one of its values cannot be encoded. The main
// worker sends the table to errored (waiting for `mooncdc resnapshot`)
// and goes on with the others; anything else stops the stream, which is
// what a copy worker's catch-up does too (its copy then fails).
func (e *emitter) tableError(table string, lsn schema.LSN, err error) error {
	var tse *tableSchemaError
	var re *RecordError
	var ve *schema.ValueError
	var big *RecordTooLargeError
	parkable := errors.As(err, &tse) || errors.As(err, &re) && (errors.As(err, &ve) || errors.As(err, &big) || errors.As(err, new(*PartitionRangeError))) ||
		errors.As(err, new(*OutboxUpdateError))
	if !parkable || e.onTableError == nil {
		return err
	}
	if e.failed == nil {
		e.failed = map[string]bool{}
	}
	e.failed[table] = true
	e.onTableError(table, lsn, err)
	return nil
}

// changeOf writes one row change of a routed table.
func (e *emitter) changeOf(r route, ch *schema.Change) error {
	if ch.Op == schema.OpUpdate && keyChanged(r.rel, ch.Before, ch.After) {
		// As Debezium: a delete and tombstone for the old key, then a
		// create for the new one.
		del, cre := *ch, *ch
		del.Op, del.After = schema.OpDelete, nil
		cre.Op, cre.Before = schema.OpCreate, nil
		if err := e.produce(e.cur, r.topic, &del, true); err != nil {
			return err
		}
		return e.produce(e.cur, r.topic, &cre, false)
	}
	return e.produce(e.cur, r.topic, ch, ch.Op == schema.OpDelete)
}

// route returns where the changes of ch's relation go. Relations are
// immutable and replaced on change, so the cache is keyed by pointer; it is
// rebuilt when a session ends (relations are per session). A relation seen
// for the first time may announce a schema change (schemachange.go).
func (e *emitter) route(ch *schema.Change) (route, error) {
	rel := ch.Relation
	if r, ok := e.routes[rel]; ok {
		return r, nil
	}
	r := route{skip: !e.include(rel.Schema, rel.Table) && (e.oid == 0 || rel.OID != e.oid), rel: rel, name: rel.QualifiedName()}
	r.signals = e.onSignal != nil && rel.Schema == e.signalTable.Schema && rel.Table == e.signalTable.Table
	r.outbox = e.enc.outbox != nil && e.enc.outbox.cfg.IsTable(rel.Schema, rel.Table)
	if !r.skip {
		r.topic = e.enc.naming.Of(rel.Schema, rel.Table).Topic
		if err := e.ensureTableTopic(r); err != nil {
			return r, err
		}
		keyed, err := e.keys.keyed(rel)
		if errors.As(err, new(*keyRuleError)) {
			r.keyErr = err
			e.routes[rel] = r
			return r, nil
		}
		if err != nil {
			return r, err
		}
		r.rel, r.nulls = keyed, newNullPlan(keyed)
		if err := e.relationChanged(keyed, ch); err != nil {
			return r, err
		}
	}
	if len(e.routes) > 4096 {
		clear(e.routes)
	}
	e.routes[rel] = r
	return r, nil
}

// produce encodes ch into a pooled record and hands it to the producer;
// with tombstone, a record with the same key and a null value follows. An
// operation of format.skipped_operations is not written, nor counted in
// the transaction metadata (EventDispatcher.java:323-330). In the flat
// envelope the table's record options decide instead which records a
// change becomes (schema.FlatConfig.Records), after the numbering, as the
// SMT runs on records Debezium has counted.
func (e *emitter) produce(a *txAck, topic string, ch *schema.Change, tombstone bool) error {
	if !e.count(ch) {
		return nil
	}
	withValue, tombstone := true, tombstone && !e.opts.noTombstones
	if e.opts.flat != nil && ch.Op != schema.OpMessage {
		if withValue, tombstone = e.opts.flat.Records(ch, !e.opts.noTombstones); !withValue && !tombstone {
			return nil
		}
	}
	now := time.Now()
	rec := e.pool.Get().(*kgo.Record)
	key, hasKey, err := e.enc.AppendKey(rec.Key[:0], ch)
	if err != nil {
		e.pool.Put(rec)
		return &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
	}
	if !withValue {
		// delete-to-tombstone: the delete itself, its value and value
		// schema null, headers and all (DefaultDeleteHandlingStrategy.java:61-69).
		*rec = kgo.Record{Topic: topic, Context: a, Headers: rec.Headers}
		if hasKey {
			rec.Key = key
		}
		changeHeaders(rec, ch)
		e.enc.flatHeaders(rec, ch, now, false)
		e.send(a, rec)
		return nil
	}
	value, err := e.enc.AppendValue(rec.Value[:0], ch, now)
	if err == nil {
		err = e.enc.checkSize(key, value)
	}
	if err != nil {
		rec.Key, rec.Value = key[:0], value[:0]
		e.pool.Put(rec)
		return &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
	}
	*rec = kgo.Record{Topic: topic, Value: value, Context: a, Headers: rec.Headers}
	if hasKey {
		rec.Key = key
	}
	changeHeaders(rec, ch)
	// The tombstone copies rec's key and headers before rec is sent: once
	// produced, rec may be acked and recycled by onAck (on the producer's
	// goroutine) before Produce even returns.
	var ts *kgo.Record
	if tombstone && hasKey {
		ts = e.pool.Get().(*kgo.Record)
		*ts = kgo.Record{Topic: topic, Key: append(ts.Key[:0], key...), Context: a, Headers: ts.Headers}
		copyHeaders(ts, rec)
		e.enc.flatHeaders(ts, ch, now, true)
	}
	e.enc.flatHeaders(rec, ch, now, false)
	e.send(a, rec)
	if ts != nil {
		e.send(a, ts)
	}
	return nil
}

// count numbers ch in the open transaction's metadata; false for an
// operation of format.skipped_operations, which is not written, nor
// counted (EventDispatcher.java:323-330).
func (e *emitter) count(ch *schema.Change) bool {
	if e.opts.skip.has(ch.Op) {
		return false
	}
	if e.opts.txTopic != "" && ch.Tx != nil {
		coll := messageCollection
		if ch.Relation != nil {
			coll = ch.Relation.QualifiedName()
		}
		ch.TxOrder, ch.TxTableOrder = e.meta.event(coll)
	}
	return true
}

// ensureTableTopic creates the topic of r's table, except the outbox
// table's, which gets no records of its own.
func (e *emitter) ensureTableTopic(r route) error {
	if r.outbox {
		return nil
	}
	return e.topics.ensure(r.topic)
}

// produceTx writes a BEGIN or END record to the transaction metadata
// topic, in the open transaction's unit.
func (e *emitter) produceTx(tx *schema.Tx, ev *schema.TxEvent) error {
	topic := e.opts.txTopic
	if !e.txReady {
		if err := e.topics.ensure(topic); err != nil {
			return err
		}
		if err := e.enc.prepareTx(e.ctx, topic); err != nil {
			return err
		}
		e.txReady = true
	}
	rec := e.pool.Get().(*kgo.Record)
	key, err := e.enc.AppendTxKey(rec.Key[:0], ev)
	if err != nil {
		e.pool.Put(rec)
		return &RecordError{Topic: topic, LSN: ev.LSN, Err: err}
	}
	value, err := e.enc.AppendTxValue(rec.Value[:0], ev)
	if err != nil {
		rec.Key = key[:0]
		e.pool.Put(rec)
		return &RecordError{Topic: topic, LSN: ev.LSN, Err: err}
	}
	*rec = kgo.Record{Topic: topic, Key: key, Value: value, Context: e.cur, Headers: rec.Headers}
	// Dedupe headers as for changes: BEGIN numbers -1, END after the
	// transaction's records.
	seq := int64(-1)
	if ev.Status == schema.TxEnd {
		seq = ev.EventCount
	}
	setHeaders(rec, ev.LSN, tx.CommitLSN, seq)
	e.send(e.cur, rec)
	return nil
}

func (e *emitter) send(a *txAck, rec *kgo.Record) {
	e.tracker.Add(a, recordBytes(rec))
	if e.txn != nil {
		e.txn.add(len(rec.Key) + len(rec.Value))
	}
	// Produce does not block: the client's buffer is sized above the
	// tracker's bound, and the stream waits on the tracker instead.
	e.client.Produce(context.Background(), rec, e.promise)
}

// onAck runs on the producer's promise goroutine.
func (e *emitter) onAck(rec *kgo.Record, err error) {
	a := rec.Context.(*txAck)
	n := recordBytes(rec)
	if err != nil {
		err = fmt.Errorf("produce to topic %q: %w", rec.Topic, err)
	} else if rec.Value != nil && rec.Topic != e.opts.txTopic && rec.Topic != e.opts.schemaChangeTopic {
		e.metrics.ChangesWritten.Inc() // tombstones and BEGIN/END are not changes
	}
	e.tracker.Ack(a, n, err)
	key, value, headers := rec.Key[:0], rec.Value[:0], rec.Headers[:0]
	*rec = kgo.Record{Key: key, Value: value, Headers: headers}
	e.pool.Put(rec)
}

// reset forgets per-session state.
func (e *emitter) reset() {
	clear(e.routes)
	e.messagesReady = false
	e.txReady = false
	e.cur = nil
	e.keys.close()
}

// RecordError is a change that could not be turned into a record.
type RecordError struct {
	Topic string
	LSN   schema.LSN
	Err   error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("encode change at LSN %s for topic %q: %v", e.LSN, e.Topic, e.Err)
}
func (e *RecordError) Unwrap() error { return e.Err }
