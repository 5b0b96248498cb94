package emit

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// Emitter is the stream's Handler: it routes each change to its topic,
// has the record writer make its records (record.Writer) and its sink
// deliver them (delivery), counting them in the tracker. It runs on the stream
// goroutine; only the promise runs elsewhere.
type Emitter struct {
	Config
	w *record.Writer

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
	// (record: txmeta.go); txReady says the metadata topic's schemas are
	// registered.
	meta    record.TxMetadata
	txReady bool

	// routes is the route of each table (by oid), its plan for the
	// relation it was made from (record.Plan.Made).
	routes map[uint32]*route
	// last is the route of the relation of the change before: a run of one
	// table's changes finds its plan without a map lookup.
	last *route
	// shapes is each table's last relation (by oid) and announced the
	// tables whose DDL message the next new shape follows (schemachange.go).
	shapes    map[uint32]shapeAt
	announced map[string]bool
	// checked: the tables whose new shape the schema evolution policy
	// has decided on at their DDL (record: evolution.go).
	checked map[string]bool

	// messagesReady: the logical messages' schemas are registered;
	// schemaChangesReady: the schema-change records' (schemachange.go).
	messagesReady, schemaChangesReady bool
	cur                               *delivery.TxAck
}

// HookMainBegin is the test hook point (Config.Hook) where the main
// worker is about to decide a transaction.
const HookMainBegin = "main_begin"

// Config is what an emitter is built with (New takes it
// whole; nothing is set after). The fields after keys are the main
// worker's role; a copy's private catch-up leaves them zero.
type Config struct {
	Ctx     context.Context // bounds schema registration
	Sink    delivery.Sink
	Tracker *delivery.Tracker
	Topics  *delivery.TopicMaker
	Enc     *record.Codec
	Counts  Counts
	Prefix  string
	Plans   *record.Planner
	Include func(schema, table string) bool
	// oid is a copy's table (private catch-up only; 0 for the main
	// worker): its changes are emitted under whatever name the table has
	// since a rename.
	OID  uint32
	Keys Keyer
	// opts says which operations are skipped and whether transaction
	// metadata is written (record: txmeta.go).
	Opts record.Options

	// gate applies the phase rules (main worker only; nil for a copy
	// worker's private catch-up).
	Gate      *phases.Rules
	Hook      func(point, table string) // a test hook at HookMainBegin (nil: none)
	OnPromote func([]*phases.State)     // logs the tables gate promoted (and stored)
	// storesShapes records a table's shape fingerprint when it changes
	// (main worker only; gate stores it), for the next run's comparison.
	StoresShapes bool
	// onTableError parks a table whose records cannot be written (main
	// worker only; nil for a copy worker, whose copy fails instead).
	OnTableError func(table string, lsn schema.LSN, err error)

	// activity counts transactions (main worker), for the heartbeater's
	// idle test; heartbeatTopic receives heartbeat records ("" for none).
	Activity       *atomic.Uint64
	HeartbeatTopic string
	HeartbeatFmt   *record.HeartbeatFormat // nil: no heartbeat records
	HeartbeatOf    []byte                  // how this connector's heartbeat messages begin

	// onSignal receives the signals inserted into signals.table (main
	// worker only; nil otherwise); signalTable is that table.
	OnSignal    func(*schema.Change)
	SignalTable config.TableName

	// skipThrough: the changes at or below it of the first transaction
	// are in Kafka already, sent by the Debezium connector mooncdc took
	// over from mid-transaction (takeover.go); 0: none.
	SkipThrough schema.LSN

	// Incremental is the queue of the incremental snapshots' chunk
	// readers (incremental.go; main worker only, nil otherwise).
	Incremental *Incremental
	// NotifyTopic receives the incremental snapshots' notifications
	// (Incremental.Notify) in NotifyFmt; nil NotifyFmt: none.
	NotifyTopic string
	NotifyFmt   *record.NotificationFormat
}

// Counts are the counters an emitter adds to: the pipeline's
// (Metrics), also for a copy's private catch-up.
type Counts struct {
	TransactionsReceived, ChangesReceived, ChangesWritten prometheus.Counter
}

func New(cfg Config) *Emitter {
	written := cfg.Counts.ChangesWritten
	return &Emitter{Config: cfg, routes: make(map[uint32]*route),
		w: record.NewWriter(cfg.Enc, cfg.Sink, record.NewAcks(cfg.Tracker, new(record.Pool), written, cfg.Opts.TxTopic, cfg.Opts.SchemaChangeTopic))}
}

// Begin implements stream.Handler.
func (e *Emitter) Begin(tx *schema.Tx) error {
	if err := e.Sink.Begin(); err != nil {
		return err
	}
	e.cur = e.Tracker.Begin()
	clear(e.failed)
	if err := e.incBegin(tx); err != nil {
		return err
	}
	if e.Opts.TxTopic != "" {
		// BEGIN is written at the transaction's Begin, in its unit of
		// durability (and Kafka transaction), as Debezium does on the
		// Begin message (PostgresStreamingChangeEventSource.java:348-349).
		e.meta.Begin()
		if err := e.produceTx(tx, e.meta.BeginEvent(tx)); err != nil {
			return err
		}
	}
	if e.Gate != nil {
		if e.Hook != nil {
			e.Hook(HookMainBegin, "")
		}
		var moved []*phases.State
		e.view, moved = e.Gate.Begin(tx.CommitLSN)
		e.viewGen++
		e.commit = tx.CommitLSN
		if moved != nil && e.OnPromote != nil {
			e.OnPromote(moved)
		}
	}
	return nil
}

// Commit implements stream.Handler.
func (e *Emitter) Commit(tx *schema.Tx) error {
	if e.Opts.TxTopic != "" {
		if err := e.produceTx(tx, e.meta.EndEvent(tx)); err != nil {
			return err
		}
	}
	if err := e.incEnd(tx); err != nil {
		return err
	}
	e.Tracker.Commit(e.cur, tx.EndLSN)
	e.cur = nil
	e.SkipThrough = 0 // the one transaction Debezium had sent a part of is whole
	e.Counts.TransactionsReceived.Inc()
	if e.Activity != nil {
		e.Activity.Add(1)
	}
	if e.Gate != nil {
		if moved := e.Gate.Advance(tx.EndLSN); moved != nil && e.OnPromote != nil {
			e.OnPromote(moved)
		}
	}
	return e.Sink.Ended(e.Ctx, tx.EndLSN)
}

// Change implements stream.Handler.
func (e *Emitter) Change(ch *schema.Change) error {
	e.Counts.ChangesReceived.Inc()
	if e.SkipThrough != 0 && ch.Tx != nil && ch.LSN <= e.SkipThrough {
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
		if o := e.Enc.Outbox(); o != nil && o.Config().MessagePrefix != "" && ch.Message.Prefix == o.Config().MessagePrefix {
			if done, err := e.outboxMessage(ch); done || err != nil {
				return err
			}
		}
		topic := e.Prefix + ".message"
		if err := e.Topics.Ensure(topic); err != nil {
			return err
		}
		if !e.messagesReady {
			if err := e.Enc.Prepare(e.Ctx, topic, nil); err != nil {
				return err
			}
			e.messagesReady = true
		}
		if ch.Tx == nil {
			// A non-transactional message is its own unit of durability.
			return e.ownUnit(ch.LSN, func(a *delivery.TxAck) error { return e.produce(a, topic, nil, ch, false) })
		}
		return e.produce(e.cur, topic, nil, ch, false)
	}
	r, err := e.route(ch)
	if err == nil && e.Incremental.active() {
		err = e.incChange(r, ch)
	}
	if err != nil || r.Skip {
		return err
	}
	if r.Signals && e.OnSignal != nil && ch.Op == schema.OpCreate {
		// Before the phase rules: a signal acts whether or not the signal
		// table's own copy is handed over (EventDispatcher.java:313-321
		// hands a create to the source channel before it is emitted).
		e.OnSignal(ch)
	}
	if ch.Op == schema.OpTruncate {
		// A schema change of its own, in any phase, as a DDL message's.
		if err := e.truncated(r.Rel, ch); err != nil {
			return err
		}
	}
	if e.Gate != nil {
		if r.gen != e.viewGen {
			r.state, r.own = e.view.StateOf(r.Name, ch.Relation.OID)
			r.gen = e.viewGen
		}
		if !phases.EmitsChange(r.state, r.own, ch.Relation.OID, e.commit, ch.LSN) {
			return nil // not handed over yet, or emitted by the copy worker, or parked
		}
	}
	if e.failed[r.Name] {
		return nil // parked during this transaction
	}
	if r.KeyErr != nil {
		return e.tableError(r.Name, ch.LSN, r.KeyErr)
	}
	if !r.prepared {
		sp, err := e.Enc.PrepareRelaxing(e.Ctx, r.Topic, r.SchemaPlan)
		if err != nil {
			return e.tableError(r.Name, ch.LSN, err)
		}
		if sp != r.SchemaPlan { // the registry refused NOT NULL columns it had as optional
			r.Relaxed(sp)
		}
		r.prepared = true
	}
	ch.Relation = r.Rel
	sp, err := e.Enc.RelaxNulls(e.Ctx, r.Plan, ch)
	if err != nil {
		return e.tableError(r.Name, ch.LSN, err)
	}
	write := e.changeOf
	if r.Outbox {
		write = e.outboxChange
	}
	if err := write(r.Plan, sp, ch); err != nil {
		return e.tableError(r.Name, ch.LSN, err)
	}
	return nil
}

// ownUnit writes what produce adds to a unit of durability of its own, a
// non-transactional message at lsn: counted in the tracker like a
// transaction ending at lsn, and in exactly-once mode inside a Kafka
// transaction (begin and ended pair here, whatever produce does).
func (e *Emitter) ownUnit(lsn schema.LSN, produce func(*delivery.TxAck) error) error {
	if err := e.Sink.Begin(); err != nil {
		return err
	}
	a := e.Tracker.Begin()
	err := produce(a)
	e.Tracker.Commit(a, lsn)
	if err == nil {
		err = e.Sink.Ended(e.Ctx, lsn)
	}
	return err
}

// tableError parks the table of a change that cannot be written: its
// schema is refused, or one of its values cannot be encoded. The main
// worker sends the table to errored (waiting for `mooncdc resnapshot`)
// and goes on with the others; anything else stops the stream, which is
// what a copy worker's catch-up does too (its copy then fails).
func (e *Emitter) tableError(table string, lsn schema.LSN, err error) error {
	if !fault.TableFault(err) || e.OnTableError == nil {
		return err
	}
	if e.failed == nil {
		e.failed = map[string]bool{}
	}
	e.failed[table] = true
	e.OnTableError(table, lsn, err)
	return nil
}

// changeOf writes one row change of a routed table, encoded with sp.
func (e *Emitter) changeOf(r *record.Plan, sp *schema.Plan, ch *schema.Change) error {
	if ch.Op == schema.OpUpdate && record.KeyChanged(r.Rel, ch.Before, ch.After) {
		// As Debezium: a delete and tombstone for the old key, then a
		// create for the new one.
		del, cre := *ch, *ch
		del.Op, del.After = schema.OpDelete, nil
		cre.Op, cre.Before = schema.OpCreate, nil
		if err := e.produce(e.cur, r.Topic, sp, &del, true); err != nil {
			return err
		}
		return e.produce(e.cur, r.Topic, sp, &cre, false)
	}
	return e.produce(e.cur, r.Topic, sp, ch, ch.Op == schema.OpDelete)
}

// route is the main worker's entry for a table: its plan (what is decided
// once per relation) and what the main worker learns of the table as it
// runs, which a plan must not hold: its phase in the view numbered gen
// (own: under the table's own name, not by its oid after a rename),
// looked up once per transaction, not per row, and whether its record
// schemas are registered (prepared; a copy registers them per connection,
// before its first row).
type route struct {
	*record.Plan
	state    *phases.State
	own      bool
	gen      uint64
	prepared bool
}

// route returns where the changes of ch's relation go. Relations are
// immutable and replaced on change (a new Relation message), so the cache
// holds one plan per table oid, good while its relation is the one the
// plan was made from (record.Plan.Made); it is rebuilt when a session ends
// (relations are per session). A relation seen for the first time may
// announce a schema change (schemachange.go).
func (e *Emitter) route(ch *schema.Change) (*route, error) {
	rel := ch.Relation
	if e.last != nil && e.last.Made(rel) {
		return e.last, nil
	}
	if r, ok := e.routes[rel.OID]; ok && r.Made(rel) {
		e.last = r
		return r, nil
	}
	pl := e.Plans.Plan(rel, e.Include(rel.Schema, rel.Table) || e.OID != 0 && rel.OID == e.OID)
	r := &route{Plan: &pl}
	if !r.Skip {
		if r.OwnTopic() {
			if err := e.Topics.Ensure(r.Topic); err != nil {
				return r, err
			}
		}
		keyed, err := e.Keys.Keyed(rel)
		if err != nil && !errors.As(err, new(*record.KeyRuleError)) {
			return r, err
		}
		if r.WithKey(keyed, err); err == nil {
			if err := e.relationChanged(r.SchemaPlan, ch); err != nil {
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
func (e *Emitter) produce(a *delivery.TxAck, topic string, sp *schema.Plan, ch *schema.Change, tombstone bool) error {
	if !e.count(ch) {
		return nil
	}
	withValue, tombstone := true, tombstone && !e.Opts.NoTombstones
	if e.Opts.Flat != nil && ch.Op != schema.OpMessage {
		if withValue, tombstone = e.Opts.Flat.Records(ch, !e.Opts.NoTombstones); !withValue && !tombstone {
			return nil
		}
	}
	rec, ts, err := e.w.Change(a, topic, sp, ch, time.Now(), withValue, tombstone)
	if err != nil {
		return err
	}
	if q := e.Incremental; q != nil && q.strikes != nil {
		// The topic and key as written: a transform chain may have
		// changed both (rec.Topic is "" when it dropped the record).
		q.strike(rec.Topic, rec.Key)
	}
	e.w.Send(rec)
	if ts != nil {
		e.w.Send(ts)
	}
	return nil
}

// count numbers ch in the open transaction's metadata; false for an
// operation of format.skipped_operations, which is not written, nor
// counted (EventDispatcher.java:323-330).
func (e *Emitter) count(ch *schema.Change) bool {
	if e.Opts.Skip.Has(ch.Op) {
		return false
	}
	if e.Opts.TxTopic != "" && ch.Tx != nil {
		coll := record.MessageCollection
		if ch.Relation != nil {
			coll = ch.Relation.QualifiedName()
		}
		ch.TxOrder, ch.TxTableOrder = e.meta.Event(coll)
	}
	return true
}

// produceTx writes a BEGIN or END record to the transaction metadata
// topic, in the open transaction's unit.
func (e *Emitter) produceTx(tx *schema.Tx, ev *schema.TxEvent) error {
	topic := e.Opts.TxTopic
	if !e.txReady {
		if err := e.Topics.Ensure(topic); err != nil {
			return err
		}
		if err := e.Enc.PrepareTx(e.Ctx, topic); err != nil {
			return err
		}
		e.txReady = true
	}
	rec, err := e.w.TxEvent(e.cur, topic, tx, ev)
	if err != nil {
		return err
	}
	e.w.Send(rec)
	return nil
}

// Reset forgets per-session state.
func (e *Emitter) Reset() {
	clear(e.routes)
	e.last = nil
	e.messagesReady = false
	e.txReady = false
	e.cur = nil
	e.Incremental.incReset()
	e.Keys.Close()
}
