package delivery

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the delivery seam: kafka.delivery (at-least-once or
// exactly-once) is one implementation of delivery, chosen once when the
// pipeline starts (New), and everything above it (the emitter,
// the copies, the record writer) only ever talks to the sinks it makes.
// No other file asks which mode runs.
//
// A sink is where one worker's records go. Its contract, in the spirit of
// CockroachDB changefeeds' Sink: send hands a record over without
// blocking; a unit (a Postgres transaction, or a message of its own) ends
// with ended; and a barrier (the main sink's flush, a copy sink's
// handover) blocks until everything sent is acknowledged and stored with
// the offsets record that covers it: that barrier is the checkpoint.
//
// Which client writes each offsets record is the delivery's decision:
//
//   - the pipeline record (the durable LSN): at-least-once writes it
//     through the plain producer once a second when it moved (records are
//     acknowledged before the LSN is, so it never runs ahead of them);
//     exactly-once writes it as the last record of every Kafka transaction
//     of the main worker, so it is visible exactly when the records it
//     covers are, and a fenced instance can never write it;
//   - a handover's phase record: at-least-once writes it through the
//     ordered table-state writer once the copy's records are
//     acknowledged; exactly-once writes it as the last record of the
//     copy's Kafka transaction and commits: the copy's rows, its catch-up
//     and its handover become visible together, or none of them;
//   - an incremental snapshot's progress with a window's chunk done:
//     exactly-once writes it in the main worker's Kafka transaction that
//     holds the window's rows, at its commit beside the pipeline record
//     (MainSink.WithUnit), so that a crash never
//     reads a committed chunk again nor counts an aborted one;
//     at-least-once stores it once the rows are acknowledged, through
//     the ordered writer of table states (next item);
//   - every other table state (copying, errored, init, dropped, a
//     promotion from catchup to ready, a shape fingerprint) goes through
//     the one ordered writer of table states (stateWriter), in both
//     modes. Those records are written by several workers (the
//     snapshotter, the main worker, the copies) under the pipeline mutex
//     and must reach the topic in the order they were made; a record in
//     the main worker's Kafka transaction would be ordered by its commit,
//     not by when it was made, and an aborted transaction would lose a
//     shape the replay does not write again. Each of these states reads
//     back as safe: copying, errored and init mean "copy again"; a
//     promotion means nothing new to a main worker past the handover. In
//     exactly-once mode a state of a table whose incremental progress
//     the main worker committed carries the newest committed progress,
//     and lands before the next commit of one (states_progress.go); a
//     copy's checkpoint waits for its record before its next transaction
//     (eosCopy.Checkpoint).

// Producer is what a sink needs of a Kafka client: *kgo.Client, or a fake
// in the sinks' unit tests. Produce must not block (the client's buffer is
// sized above the tracker's bound: producerOpts).
type Producer interface {
	Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error))
	Flush(ctx context.Context) error
}

// txnProducer is a transactional producer (exactly-once).
type txnProducer interface {
	Producer
	BeginTransaction() error
	EndTransaction(ctx context.Context, commit kgo.TransactionEndTry) error
	AbortBufferedRecords(ctx context.Context) error
}

// TxnClient is a transactional producer the exactly-once delivery owns
// and closes.
type TxnClient interface {
	txnProducer
	Close()
}

var _ TxnClient = (*kgo.Client)(nil)

// Sink is where one worker's records go. It is used from one goroutine
// (the worker's), except send, which the chunk writers of a copy call
// concurrently.
type Sink interface {
	// Begin opens a unit of delivery: a Postgres transaction, or a
	// message that is a unit of its own. It does not block.
	Begin() error
	// Send hands rec to the producer and returns at once; promise runs
	// (on the producer's goroutine) when Kafka acknowledged or failed it.
	// rec.Context is its *txAck.
	Send(rec *kgo.Record, promise func(*kgo.Record, error))
	// Ended says that everything of the unit whose end LSN is end was
	// sent. It may block to end a Kafka transaction.
	Ended(ctx context.Context, end schema.LSN) error
}

// MainSink is the main worker's sink. The stream calls begin, send and
// ended per transaction, tick between transactions, idle at a keepalive
// between transactions, flush at a graceful stop and sessionEnded after
// every session.
type MainSink interface {
	Sink
	// Open records the pipeline (src) in the offsets topic before
	// anything streams. It blocks until the record is stored.
	Open(ctx context.Context, src offsets.Pipeline) error
	// Tick runs between Postgres transactions, at least every 100 ms
	// while one waits to become durable (stream.Ticker).
	Tick(ctx context.Context) error
	// Idle says that no transaction is open and everything before walEnd
	// was decided.
	Idle(walEnd schema.LSN)
	// Flush is the checkpoint barrier: it blocks until everything sent is
	// acknowledged and covered by a stored offsets record, or fails.
	Flush(ctx context.Context) error
	// SessionEnded ends what a replication session left (cause: why it
	// ended, nil for a graceful end): the next session replays from the
	// durable LSN. An error means the sink cannot go on (fenced).
	SessionEnded(ctx context.Context, cause error) error
	// Run does the sink's background work until ctx or soft ends (the
	// at-least-once offsets writer); it blocks.
	Run(ctx, soft context.Context) error
	// Stopped records the durable LSN after a clean stop.
	Stopped(ctx context.Context) error
	// WithUnit writes the table state made by make, whose progress counts
	// records sent in unit a (the open one: an incremental snapshot's
	// chunk done), so that it becomes durable exactly with them, and
	// reports whether it did. Exactly-once writes it in the open Kafka
	// transaction, after them (at its commit): the commit makes both
	// visible or neither, and its failure fails the commit.
	// At-least-once writes nothing and does not call make: the caller
	// stores the progress once a is durable, through the ordered writer
	// of table states. make returns nil to write nothing.
	WithUnit(a *TxAck, make func() *phases.State) bool
}

// CopySink is one table copy's sink: every record of the copy (its rows,
// its stale-key tombstones, a resume's stream, its private catch-up), a
// resumable copy's checkpoints and, at the end, the handover's phase.
type CopySink interface {
	Sink
	// Settle makes every record sent so far acknowledged (or failed)
	// before a checkpoint counts them (the copy's writers are paused):
	// exactly-once flushes them into the open Kafka transaction;
	// at-least-once does nothing, as a chunk counts once its records are
	// acknowledged, whenever that is.
	Settle(ctx context.Context) error
	// Checkpoint makes ts, the copying table's state with its progress
	// (snapshot: copy_checkpoint.go), durable with the records the progress counts:
	// at-least-once through setState (the pipeline's view and the ordered
	// writer of table states), waited for; exactly-once as the last record
	// of the copy's Kafka transaction, which it commits, then setState,
	// waited for before the next transaction begins (the ordered writer's
	// record of ts must not land after the next checkpoint's: eosCopy's
	// Checkpoint). It blocks; the copy's writers are paused.
	Checkpoint(ctx context.Context, ts *phases.State, setState func(*phases.State) (wait func(context.Context) error)) error
	// Handover is the copy's checkpoint: it waits (at most
	// handoverAckWait; context.DeadlineExceeded then, to try again later)
	// until every record sent is acknowledged, and stores ts durably with
	// them. Called under the pipeline mutex (phases.handover).
	Handover(ctx context.Context, ts *phases.State) error
	// Close gives up whatever handover did not store (exactly-once: the
	// open Kafka transaction is aborted). It blocks at most 30 s.
	Close()
}

// Mode is kafka.delivery: it makes the sinks. Chosen once, by
// New; the pipeline's other parts never ask which one runs.
type Mode interface {
	// Main returns the main worker's sink, counting in tracker.
	Main(tracker *Tracker) MainSink
	// Copy returns the sink of a copy on copy worker n, counting in
	// tracker. It may block to open a Kafka transaction.
	Copy(ctx context.Context, worker int, tracker *Tracker) (CopySink, error)
	// Close closes the clients the delivery opened.
	Close()
}

// New makes the delivery kafka.delivery names: the one place the
// mode is chosen. Exactly-once takes over its transactional producers
// first (blocking, retried while the brokers are unreachable), before the
// offsets are read: an earlier instance is fenced and its open
// transactions aborted, so what is read afterwards is final.
//
// At-least-once in a seat (standby instances, ha.enabled, or a worker
// group: Config.Seated) writes through the same transactional producers, for
// their fence: an instance whose turn has passed must never get a record
// into Kafka after its successor's first, and only the broker can promise
// that. The sequence it closes:
//
//	A active ── A paused (SIGSTOP, a stopped VM, a long GC pause), holding
//	records it has not sent, or between its lease check (group's lease) and a write
//	── A's session expires ── B is assigned, takes over <name>-main and
//	<name>-copy-<n> (InitProducerID bumps their epochs: A's open
//	transactions are aborted) ── B writes ── A resumes ── franz-go sends
//	what A buffered, before A's own clock says its lease lapsed
//	── the broker refuses every write of A's old epoch (INVALID_PRODUCER_EPOCH
//	or PRODUCER_FENCED): nothing of A lands after B's first record.
//
// A plain idempotent producer has no such fence (its producer id is its
// own; a successor cannot revoke it), so no local check can close this
// window. What at-least-once keeps: a session that ends replays from the
// durable LSN, which moves only after a commit (Tracker.Gate), as
// exactly-once's does. A read_uncommitted consumer also sees the aborted
// transactions' records, which come before the successor's resend of
// them: duplicates, as at-least-once allows, never a stale value last.
func New(ctx context.Context, o Config) (Mode, error) {
	dc := deliveryConfig{name: o.Name, records: o.States.records, kafka: o.Kafka, transactions: o.Transactions, states: o.States}
	log := o.Log.Named("delivery")
	if o.Kafka.Delivery != config.DeliveryExactlyOnce && !o.Seated {
		return &atLeastOnce{cfg: dc, cl: o.Client, log: log}, nil
	}
	if o.Kafka.Delivery != config.DeliveryExactlyOnce {
		log.Info("at-least-once in a standby group: writing in Kafka transactions, so that the broker fences this instance once another takes over",
			zap.String("transactional_id", o.Name+"-main"))
	}
	d := &exactlyOnce{cfg: dc, log: log, newClient: o.NewTxnClient, loadPipeline: o.LoadPipeline}
	if err := fault.Retry(ctx, o.Log, "take over the transactional producers", func() error { return d.takeOver(ctx, o.Workers) }); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Config is what New is given: the configuration,
// the clients, and where it counts.
type Config struct {
	Name    string             // the connector name: transactional ids
	Kafka   config.KafkaConfig // kafka.delivery chooses the mode
	Workers int                // snapshot.workers: one copy producer each (exactly-once)
	// Seated says the pipeline runs in a seat (standby instances,
	// ha.enabled, or a worker group): at-least-once then writes through
	// transactional producers too, for their fence.
	Seated bool
	// Client is the plain producer (at-least-once); NewTxnClient makes a
	// transactional producer with the id given, initialized (it blocks);
	// LoadPipeline reads the pipeline's offsets record (exactly-once, once
	// the producers are taken over).
	Client       Producer
	NewTxnClient func(ctx context.Context, id string) (TxnClient, error)
	LoadPipeline func(ctx context.Context) (*offsets.Pipeline, error)
	States       *StateWriter           // the ordered writer of table states, and the offsets records
	Transactions *prometheus.CounterVec // Metrics.KafkaTransactions, by outcome
	Log          *zap.Logger
}

// deliveryConfig is what a delivery needs besides its clients.
type deliveryConfig struct {
	name         string  // the connector name: transactional ids
	records      Records // the offsets records, and their topic
	kafka        config.KafkaConfig
	transactions *prometheus.CounterVec // Metrics.KafkaTransactions
	states       *StateWriter           // the ordered writer of table states
}
