package connector

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/schema"
)

// emitter is the stream's Handler: it routes each change to its topic,
// has the record writer make its records (writer.go) and its sink deliver
// them (sink.go), counting them in the tracker. It runs on the stream
// goroutine; only the promise runs elsewhere.
type emitter struct {
	emitterConfig
	w *recordWriter

	// view is the phases as of the open transaction's Begin (main worker);
	// viewGen counts the views taken, so that a route's cached state of its
	// table (route.state) is looked up once per transaction.
	view    phases.View
	viewGen uint64
	commit  schema.LSN
	// failed holds the tables parked during the open transaction, whose
	// view still shows them as emitting.
	failed map[string]bool
	// meta counts the open transaction's records for its metadata
	// (txmeta.go); txReady says the metadata topic's schemas are
	// registered.
	meta    txMetadata
	txReady bool

	// routes is the route of each table (by oid), its plan for the
	// relation it was made from (recordPlan.from).
	routes map[uint32]*route
	// last is the route of the relation of the change before: a run of one
	// table's changes finds its plan without a map lookup.
	last *route
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
}

// emitterConfig is what an emitter is built with (newEmitter takes it
// whole; nothing is set after). The fields after keys are the main
// worker's role; a copy's private catch-up leaves them zero.
type emitterConfig struct {
	ctx     context.Context // bounds schema registration
	sink    sink
	tracker *Tracker
	topics  *topicMaker
	enc     *codec
	metrics *Metrics
	prefix  string
	plans   *planner
	include func(schema, table string) bool
	// oid is a copy's table (private catch-up only; 0 for the main
	// worker): its changes are emitted under whatever name the table has
	// since a rename.
	oid  uint32
	keys keyer
	// opts says which operations are skipped and whether transaction
	// metadata is written (txmeta.go).
	opts recordOptions

	// gate applies the phase rules (main worker only; nil for a copy
	// worker's private catch-up).
	gate      *phases.Rules
	hooks     *Hooks
	onPromote func([]*phases.State) // logs the tables gate promoted (and stored)
	// storesShapes records a table's shape fingerprint when it changes
	// (main worker only; gate stores it), for the next run's comparison.
	storesShapes bool
	// onTableError parks a table whose records cannot be written (main
	// worker only; nil for a copy worker, whose copy fails instead).
	onTableError func(table string, lsn schema.LSN, err error)

	// activity counts transactions (main worker), for the heartbeater's
	// idle test; heartbeatTopic receives heartbeat records ("" for none).
	activity       *atomic.Uint64
	heartbeatTopic string
	heartbeatFmt   *heartbeatFormat // nil: no heartbeat records
	heartbeatOf    []byte           // how this connector's heartbeat messages begin

	// onSignal receives the signals inserted into signals.table (main
	// worker only; nil otherwise); signalTable is that table.
	onSignal    func(*schema.Change)
	signalTable config.TableName

	// skipThrough: the changes at or below it of the first transaction
	// are in Kafka already, sent by the Debezium connector mooncdc took
	// over from mid-transaction (takeover.go); 0: none.
	skipThrough schema.LSN
}

func newEmitter(cfg emitterConfig) *emitter {
	written := cfg.metrics.ChangesWritten
	return &emitter{emitterConfig: cfg, routes: make(map[uint32]*route),
		w: newRecordWriter(cfg.enc, cfg.sink, newAcks(cfg.tracker, new(recordPool), written, cfg.opts.txTopic, cfg.opts.schemaChangeTopic))}
}

// Begin implements stream.Handler.
func (e *emitter) Begin(tx *schema.Tx) error {
	if err := e.sink.begin(); err != nil {
		return err
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
		var moved []*phases.State
		e.view, moved = e.gate.Begin(tx.CommitLSN)
		e.viewGen++
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
		if moved := e.gate.Advance(tx.EndLSN); moved != nil && e.onPromote != nil {
			e.onPromote(moved)
		}
	}
	return e.sink.ended(e.ctx, tx.EndLSN)
}

// Change implements stream.Handler.
func (e *emitter) Change(ch *schema.Change) error {
	e.metrics.ChangesReceived.Inc()
	if e.skipThrough != 0 && ch.Tx != nil && ch.LSN <= e.skipThrough {
		return nil
	}
	if ch.Op == schema.OpMessage {
		if ch.Message.Prefix == config.HeartbeatMessagePrefix {
			return e.heartbeat(ch)
		}
		if ch.Message.Prefix == config.DDLMessagePrefix {
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
			return e.ownUnit(ch.LSN, func(a *txAck) error { return e.produce(a, topic, nil, ch, false) })
		}
		return e.produce(e.cur, topic, nil, ch, false)
	}
	r, err := e.route(ch)
	if err != nil || r.skip {
		return err
	}
	if r.signals && e.onSignal != nil && ch.Op == schema.OpCreate {
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
	if e.gate != nil {
		if r.gen != e.viewGen {
			r.state, r.own = e.view.StateOf(r.name, ch.Relation.OID)
			r.gen = e.viewGen
		}
		if !phases.EmitsChange(r.state, r.own, ch.Relation.OID, e.commit, ch.LSN) {
			return nil // not handed over yet, or emitted by the copy worker, or parked
		}
	}
	if e.failed[r.name] {
		return nil // parked during this transaction
	}
	if r.keyErr != nil {
		return e.tableError(r.name, ch.LSN, r.keyErr)
	}
	if !r.prepared {
		sp, err := e.enc.prepareRelaxing(e.ctx, r.topic, r.splan)
		if err != nil {
			return e.tableError(r.name, ch.LSN, err)
		}
		if sp != r.splan { // the registry refused NOT NULL columns it had as optional
			r.relaxed(sp)
		}
		r.prepared = true
	}
	ch.Relation = r.rel
	sp, err := e.relaxNulls(e.ctx, r.recordPlan, ch)
	if err != nil {
		return e.tableError(r.name, ch.LSN, err)
	}
	write := e.changeOf
	if r.outbox {
		write = e.outboxChange
	}
	if err := write(r.recordPlan, sp, ch); err != nil {
		return e.tableError(r.name, ch.LSN, err)
	}
	return nil
}

// ownUnit writes what produce adds to a unit of durability of its own, a
// non-transactional message at lsn: counted in the tracker like a
// transaction ending at lsn, and in exactly-once mode inside a Kafka
// transaction (begin and ended pair here, whatever produce does).
func (e *emitter) ownUnit(lsn schema.LSN, produce func(*txAck) error) error {
	if err := e.sink.begin(); err != nil {
		return err
	}
	a := e.tracker.Begin()
	err := produce(a)
	e.tracker.Commit(a, lsn)
	if err == nil {
		err = e.sink.ended(e.ctx, lsn)
	}
	return err
}

// tableError parks the table of a change that cannot be written: its
// schema is refused, or one of its values cannot be encoded. The main
// worker sends the table to errored (waiting for `mooncdc resnapshot`)
// and goes on with the others; anything else stops the stream, which is
// what a copy worker's catch-up does too (its copy then fails).
func (e *emitter) tableError(table string, lsn schema.LSN, err error) error {
	if !fault.TableFault(err) || e.onTableError == nil {
		return err
	}
	if e.failed == nil {
		e.failed = map[string]bool{}
	}
	e.failed[table] = true
	e.onTableError(table, lsn, err)
	return nil
}

// changeOf writes one row change of a routed table, encoded with sp.
func (e *emitter) changeOf(r *recordPlan, sp *schema.Plan, ch *schema.Change) error {
	if ch.Op == schema.OpUpdate && keyChanged(r.rel, ch.Before, ch.After) {
		// As Debezium: a delete and tombstone for the old key, then a
		// create for the new one.
		del, cre := *ch, *ch
		del.Op, del.After = schema.OpDelete, nil
		cre.Op, cre.Before = schema.OpCreate, nil
		if err := e.produce(e.cur, r.topic, sp, &del, true); err != nil {
			return err
		}
		return e.produce(e.cur, r.topic, sp, &cre, false)
	}
	return e.produce(e.cur, r.topic, sp, ch, ch.Op == schema.OpDelete)
}

// route is the main worker's entry for a table: its plan (what is decided
// once per relation) and what the main worker learns of the table as it
// runs, which a plan must not hold: its phase in the view numbered gen
// (own: under the table's own name, not by its oid after a rename),
// looked up once per transaction, not per row, and whether its record
// schemas are registered (prepared; a copy registers them per connection,
// before its first row).
type route struct {
	*recordPlan
	state    *phases.State
	own      bool
	gen      uint64
	prepared bool
}

// route returns where the changes of ch's relation go. Relations are
// immutable and replaced on change (a new Relation message), so the cache
// holds one plan per table oid, good while its relation is the one the
// plan was made from (recordPlan.made); it is rebuilt when a session ends
// (relations are per session). A relation seen for the first time may
// announce a schema change (schemachange.go).
func (e *emitter) route(ch *schema.Change) (*route, error) {
	rel := ch.Relation
	if e.last != nil && e.last.made(rel) {
		return e.last, nil
	}
	if r, ok := e.routes[rel.OID]; ok && r.made(rel) {
		e.last = r
		return r, nil
	}
	pl := e.plans.plan(rel, e.include(rel.Schema, rel.Table) || e.oid != 0 && rel.OID == e.oid)
	r := &route{recordPlan: &pl}
	if !r.skip {
		if r.ownTopic() {
			if err := e.topics.ensure(r.topic); err != nil {
				return r, err
			}
		}
		keyed, err := e.keys.keyed(rel)
		if err != nil && !errors.As(err, new(*keyRuleError)) {
			return r, err
		}
		if r.withKey(keyed, err); err == nil {
			if err := e.relationChanged(r.splan, ch); err != nil {
				return r, err
			}
		}
	}
	e.routes[rel.OID], e.last = r, r
	return r, nil
}

// produce encodes ch into a pooled record and hands it to the producer;
// with tombstone, a record with the same key and a null value follows. An
// operation of format.skipped_operations is not written, nor counted in
// the transaction metadata (EventDispatcher.java:323-330). In the flat
// envelope the table's record options decide instead which records a
// change becomes (schema.FlatConfig.Records), after the numbering, as the
// SMT runs on records Debezium has counted.
func (e *emitter) produce(a *txAck, topic string, sp *schema.Plan, ch *schema.Change, tombstone bool) error {
	if !e.count(ch) {
		return nil
	}
	withValue, tombstone := true, tombstone && !e.opts.noTombstones
	if e.opts.flat != nil && ch.Op != schema.OpMessage {
		if withValue, tombstone = e.opts.flat.Records(ch, !e.opts.noTombstones); !withValue && !tombstone {
			return nil
		}
	}
	rec, ts, err := e.w.change(a, topic, sp, ch, time.Now(), withValue, tombstone)
	if err != nil {
		return err
	}
	e.w.send(rec)
	if ts != nil {
		e.w.send(ts)
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
	rec, err := e.w.txEvent(e.cur, topic, tx, ev)
	if err != nil {
		return err
	}
	e.w.send(rec)
	return nil
}

// reset forgets per-session state.
func (e *emitter) reset() {
	clear(e.routes)
	e.last = nil
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

// Fatal marks the error as one no retry fixes: a value that cannot be
// encoded; retrying would crash-loop.
func (e *RecordError) Fatal() {}
