package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is exactly-once delivery (kafka.delivery: exactly-once), which
// at-least-once in a seat (ha.enabled, a worker group) uses too, for its
// fence (New, sink.go). Each worker writes through its own
// transactional producer, whose transactional id derives from the
// connector name, so that a restarted or second instance fences the one
// before: <name>-main for the main worker, <name>-copy-<n> for copy
// worker n.
//
// The main worker's Kafka transaction holds whole Postgres transactions
// and, last, the offsets record whose durable LSN is the end of the newest
// of them. A Kafka transaction is committed at the first Postgres commit
// after kafka.transaction_max_bytes or kafka.transaction_max_interval is
// reached (so a large Postgres transaction spans one long Kafka
// transaction, never split), when the stream idles past the interval, and
// on a graceful stop. Only after the commit does the durable LSN move
// (Tracker.SetCeiling), so Postgres is confirmed only up to what a
// read_committed consumer can see. A session that ends mid-way aborts the
// open Kafka transaction; the next session replays from the last commit.
//
// A copy worker's records (snapshot rows, stale-key tombstones, catch-up
// changes) and its handover's phase record go in one Kafka transaction,
// committed under the pipeline mutex at the handover: a crash anywhere
// leaves all of a handover in Kafka or none of it. A copy that resumes by
// chunk also commits at its checkpoints, each with its progress record
// (snapshot: copy_checkpoint.go).

// exactlyOnce is the exactly-once delivery. Its transactional producers
// are taken over (newExactlyOnce) before the offsets are read, so that an
// earlier instance is fenced and its open transactions aborted, and what
// is read is final.
type exactlyOnce struct {
	cfg deliveryConfig
	log *zap.Logger
	// newClient makes a transactional producer with the id and loads its
	// producer id (Config.NewTxnClient).
	newClient func(ctx context.Context, id string) (TxnClient, error)
	// loadPipeline reads the stored pipeline record (a fence check).
	loadPipeline func(ctx context.Context) (*offsets.Pipeline, error)
	mainCl       TxnClient
	copies       []TxnClient // one per copy worker
}

var _ Mode = (*exactlyOnce)(nil)

func (d *exactlyOnce) mainID() string            { return d.cfg.name + "-main" }
func (d *exactlyOnce) copyID(n int) string       { return fmt.Sprintf("%s-copy-%d", d.cfg.name, n) }
func (d *exactlyOnce) txnTimeout() time.Duration { return d.cfg.kafka.TransactionTimeout }

// takeOver makes the transactional producers that are still missing: the
// main worker's and one per copy worker. It blocks until the brokers
// answer; a partial success is kept for the next call.
func (d *exactlyOnce) takeOver(ctx context.Context, workers int) error {
	if d.mainCl == nil {
		cl, err := d.newClient(ctx, d.mainID())
		if err != nil {
			return err
		}
		d.mainCl = cl
	}
	for n := len(d.copies); n < workers; n++ {
		cl, err := d.newClient(ctx, d.copyID(n))
		if err != nil {
			return err
		}
		d.copies = append(d.copies, cl)
	}
	return nil
}

func (d *exactlyOnce) Close() {
	if d.mainCl != nil {
		d.mainCl.Close()
	}
	for _, cl := range d.copies {
		cl.Close()
	}
}

func (d *exactlyOnce) Main(tracker *Tracker) MainSink {
	tracker.Gate()
	return &eosMain{d: d, cl: d.mainCl, tracker: tracker}
}

// Copy opens the Kafka transaction of copy worker n, replacing its
// producer when the last copy left it unusable.
func (d *exactlyOnce) Copy(ctx context.Context, n int, tracker *Tracker) (CopySink, error) {
	tx := d.copies[n]
	err := tx.BeginTransaction()
	if err != nil {
		d.log.Warn("copy worker's transactional producer is unusable; replacing it", zap.Int("worker", n), zap.Error(err))
		tx.Close()
		if tx, err = d.newClient(ctx, d.copyID(n)); err != nil {
			return nil, err
		}
		d.copies[n] = tx
		if err := tx.BeginTransaction(); err != nil {
			return nil, TxnError(d.copyID(n), err)
		}
	}
	return &eosCopy{d: d, ctx: ctx, cl: tx, id: d.copyID(n), tracker: tracker}, nil
}

// eosMain is the main worker's exactly-once sink: it opens Kafka
// transactions, counts what goes in, and commits them with the offsets
// record. It is used from the stream goroutine only (send from the
// emitter on that goroutine too).
type eosMain struct {
	d       *exactlyOnce
	cl      txnProducer
	tracker *Tracker
	src     offsets.Pipeline // identity of the offsets record

	txOpen  bool // a Kafka transaction is open
	started time.Time
	last    time.Time // the last commit
	// lastRecord is the pipeline record of the last commit: when the
	// broker says the producer is fenced, a newer record by another
	// writer tells a real fence from a transaction the broker aborted.
	lastRecord offsets.Pipeline
	// tried is the pipeline record of the last commit attempted: a commit
	// that failed on the client's side (a broker that died while it
	// answered) may still have committed, and its record is then the
	// stored one, this instance's own.
	tried   offsets.Pipeline
	bytes   int64
	lastEnd schema.LSN // end LSN of the newest Postgres transaction in the open Kafka transaction
	// states are the table states to write in the open transaction, at
	// its commit (WithUnit), by table.
	states map[string]takenState
}

// takenState is a table state WithUnit took, and the ordered writer's
// count of records (StateWriter.seq) when it was made: one handed over
// later holds a newer state of the table (StateWriter.overlay).
type takenState struct {
	ts  *phases.State
	seq uint64
}

var _ MainSink = (*eosMain)(nil)

// Begin opens a Kafka transaction unless one is open.
func (w *eosMain) Begin() error {
	if w.txOpen {
		return nil
	}
	if err := w.cl.BeginTransaction(); err != nil {
		return TxnError(w.d.mainID(), fmt.Errorf("begin Kafka transaction: %w", err))
	}
	w.txOpen, w.started, w.bytes, w.lastEnd = true, time.Now(), 0, 0
	return nil
}

func (w *eosMain) Send(rec *kgo.Record, promise func(*kgo.Record, error)) {
	w.bytes += int64(len(rec.Key) + len(rec.Value))
	w.cl.Produce(context.Background(), rec, promise)
}

// WithUnit makes the table state now and writes it in the open Kafka
// transaction, after a's records: committed with them or aborted with
// them. The ordered writer of table states is not used: its record would
// be visible before the rows it counts are committed. It is produced at
// the commit, beside the pipeline record (the newest state of each table
// only: each counts the ones before), so that the offsets topic's last
// stable offset waits for the transaction no longer than it does for the
// pipeline record: a window closing at the BEGIN of a long transaction
// would otherwise hold every reader of the offsets topic (status, a
// standby) until its end.
func (w *eosMain) WithUnit(a *TxAck, make func() *phases.State) bool {
	if !w.txOpen || a == nil {
		return false
	}
	seq := w.d.cfg.states.seq() // before make reads the table's state
	ts := make()
	if ts == nil {
		return false
	}
	if w.states == nil {
		w.states = map[string]takenState{}
	}
	w.states[ts.Table.Table] = takenState{ts, seq}
	return true
}

// produceStates produces the table states WithUnit took, in the open
// transaction, each with what the ordered writer of table states wrote of
// its table since it was made (StateWriter.overlay), and returns them and
// the wait for their acknowledgements.
func (w *eosMain) produceStates(ctx context.Context) ([]*phases.State, func() error) {
	var done []chan error
	var taken []*phases.State
	for _, st := range w.states {
		ts := w.d.cfg.states.overlay(st.ts, st.seq)
		if ts == nil {
			continue
		}
		taken = append(taken, ts)
		ch := make(chan error, 1)
		w.cl.Produce(ctx, w.d.cfg.records.table(ts), func(_ *kgo.Record, err error) { ch <- err })
		done = append(done, ch)
	}
	clear(w.states)
	return taken, func() error {
		var errs []error
		for _, ch := range done {
			select {
			case err := <-ch:
				errs = append(errs, err)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return errors.Join(errs...)
	}
}

// Ended records that everything up to end (a Postgres commit's end LSN) is
// in the open Kafka transaction, and commits it when a bound is reached.
func (w *eosMain) Ended(ctx context.Context, end schema.LSN) error {
	w.lastEnd = max(w.lastEnd, end)
	k := w.d.cfg.kafka
	if w.bytes >= k.TransactionMaxBytes || time.Since(w.started) >= k.TransactionMaxInterval {
		return w.commit(ctx)
	}
	return nil
}

// txnHeartbeat is how often an idle main worker commits a transaction
// holding only the offsets record: so that an instance that was fenced
// while nothing changed learns it (and releases the slot) within seconds.
const txnHeartbeat = 5 * time.Second

// Tick commits an open transaction that holds whole Postgres
// transactions and is older than the interval: the stream went quiet; and
// writes the heartbeat transaction when idle. Call it between Postgres
// transactions only.
func (w *eosMain) Tick(ctx context.Context) error {
	switch {
	case w.txOpen && w.lastEnd != 0 && time.Since(w.started) >= w.d.cfg.kafka.TransactionMaxInterval:
		return w.commit(ctx)
	case !w.txOpen && time.Since(w.last) >= txnHeartbeat:
		if err := w.Begin(); err != nil {
			return err
		}
		w.lastEnd = w.tracker.Durable()
		return w.commit(ctx)
	}
	return nil
}

// commit writes the offsets record, waits for every record of the
// transaction, commits it and moves the durable LSN. Call it between
// Postgres transactions only. An error leaves the transaction to abort.
func (w *eosMain) commit(ctx context.Context) error {
	if !w.txOpen {
		return nil
	}
	if w.lastEnd == 0 {
		return w.abort(ctx) // nothing whole in it
	}
	src := w.src
	src.DurableLSN = uint64(w.lastEnd)
	prev := w.lastRecord
	if prev == (offsets.Pipeline{}) {
		prev = w.src
	}
	if len(w.states) > 0 {
		// A table's progress goes in: every record of the ordered writer
		// of table states made before it lands before it
		// (states_progress.go).
		if err := w.d.cfg.states.settled(ctx); err != nil {
			return w.failed(err)
		}
	}
	taken, states := w.produceStates(ctx)
	// Produced last and waited for, with the rest (Flush).
	offErr := produceWait(ctx, w.cl, w.d.cfg.records.pipeline(&src, prev))
	w.tried = src
	if err := w.cl.Flush(ctx); err != nil {
		return err
	}
	if err := errors.Join(w.tracker.Err(), offErr, states()); err != nil {
		return w.failed(fmt.Errorf("a record of the Kafka transaction failed: %w", err))
	}
	if err := w.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return w.failed(fmt.Errorf("commit Kafka transaction (up to LSN %s): %w", w.lastEnd, err))
	}
	w.txOpen, w.last, w.lastRecord = false, time.Now(), src
	for _, ts := range taken {
		w.d.cfg.states.committedProgress(ts)
	}
	w.tracker.SetCeiling(w.lastEnd)
	w.d.cfg.transactions.WithLabelValues("commit").Inc()
	return nil
}

// failed types a failed commit. A transaction open about as long as
// kafka.transaction_timeout was most likely timed out by the broker
// (which can look like fencing); replaying would time out again, so a
// person must raise the bound.
func (w *eosMain) failed(err error) error {
	if open := time.Since(w.started); open >= w.d.txnTimeout()*9/10 {
		return &fault.CriticalError{Err: fmt.Errorf("the Kafka transaction was open %s, about kafka.transaction_timeout (%s): a Postgres "+
			"transaction takes longer than that to stream, and is never split; raise kafka.transaction_timeout (and the brokers' "+
			"transaction.max.timeout.ms): %w", open.Round(time.Second), w.d.txnTimeout(), err)}
	}
	return TxnError(w.d.mainID(), err)
}

// abort drops the open transaction: nothing of it becomes visible, and the
// durable LSN stays at the last commit, where the next session resumes.
func (w *eosMain) abort(ctx context.Context) error {
	if !w.txOpen {
		return nil
	}
	w.txOpen = false
	clear(w.states)
	if err := w.cl.AbortBufferedRecords(ctx); err != nil {
		return TxnError(w.d.mainID(), fmt.Errorf("abort Kafka transaction: %w", err))
	}
	if err := w.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		if errors.Is(err, kerr.InvalidProducerEpoch) {
			return &FencedError{TransactionalID: w.d.mainID(), Err: err}
		}
		return TxnError(w.d.mainID(), fmt.Errorf("abort Kafka transaction: %w", err))
	}
	w.d.cfg.transactions.WithLabelValues("abort").Inc()
	return nil
}

// Idle raises the durable LSN to walEnd when no Kafka transaction is open
// and nothing is in flight: everything before walEnd was committed or
// skipped.
func (w *eosMain) Idle(walEnd schema.LSN) {
	if !w.txOpen {
		w.tracker.SetCeiling(walEnd)
	}
}

// Open stores the pipeline record in a transaction of its own
// (exactly-once mode never writes the offsets outside a transaction: a
// fenced instance's late write could otherwise move them back).
func (w *eosMain) Open(ctx context.Context, src offsets.Pipeline) error {
	if err := w.Begin(); err != nil {
		return err
	}
	w.lastEnd = schema.LSN(src.DurableLSN)
	w.src = src
	if err := w.commit(ctx); err != nil {
		return errors.Join(err, w.abort(ctx))
	}
	return nil
}

// Flush commits the open transaction and waits for every record.
func (w *eosMain) Flush(ctx context.Context) error {
	if err := w.commit(ctx); err != nil {
		return err
	}
	if err := w.cl.Flush(ctx); err != nil {
		return err
	}
	if err := w.tracker.Wait(ctx); err != nil {
		return &fault.CriticalError{Err: err}
	}
	return nil
}

// Run: every Kafka transaction carries the offsets record; nothing to do
// in the background.
func (w *eosMain) Run(context.Context, context.Context) error { return nil }

// Stopped: the last Kafka transaction, committed by the drain, recorded
// the durable LSN.
func (w *eosMain) Stopped(context.Context) error { return nil }

// SessionEnded ends whatever the last session left: it aborts the open
// Kafka transaction (or, when the producer cannot, replaces it: a new
// producer with the same transactional id aborts it) and resets the
// tracker to the last commit, where the next session resumes. A fenced
// producer is not recovered.
func (w *eosMain) SessionEnded(ctx context.Context, cause error) error {
	if cause == nil && !w.txOpen {
		return nil
	}
	if w.txOpen {
		err := w.abort(ctx)
		epoch := errors.Is(cause, kerr.InvalidProducerEpoch) || errors.Is(cause, kerr.ProducerFenced) ||
			errors.As(err, new(*FencedError))
		if epoch && w.fencedByAnother(ctx) {
			return &FencedError{TransactionalID: w.d.mainID(), Err: errors.Join(cause, err)}
		}
		if err == nil && epoch {
			// The abort went through, but the producer's epoch is stale:
			// every later write would fail the same way.
			err = errors.New("stale producer epoch")
		}
		if err != nil {
			w.d.log.Warn("abort of the Kafka transaction failed; replacing the transactional producer", zap.Error(err))
			if err := w.replaceClient(ctx); err != nil {
				return err
			}
		}
	}
	w.txOpen = false
	w.tracker.Restart()
	return nil
}

// replaceClient closes the main worker's producer and makes a new one
// with the same transactional id, retrying with backoff until it works,
// the id is fenced, the settings are refused, or ctx ends.
func (w *eosMain) replaceClient(ctx context.Context) error {
	w.d.mainCl.Close()
	bo := fault.NewBackoff(200*time.Millisecond, 10*time.Second)
	for {
		cl, err := w.d.newClient(ctx, w.d.mainID())
		if err == nil {
			w.d.mainCl, w.cl = cl, cl
			return nil
		}
		if errors.As(err, new(*FencedError)) || errors.As(err, new(*config.ConfigError)) {
			return err
		}
		w.d.log.Debug("transactional producer", zap.Error(err))
		if !fault.Sleep(ctx, bo.Next()) {
			return ctx.Err()
		}
	}
}

// fencedByAnother tells a real fence from a broker that aborted the open
// transaction itself (a transaction timeout, a coordinator that lost its
// state): both bump the producer epoch. An instance that fences this one
// stores its own pipeline record right after; so after a moment, a
// committed pipeline record other than this instance's own (of its last
// commit, or of the commit it last tried, which a broker that died while
// answering may have made) means another instance runs. When the offsets cannot be read, it assumes a
// fence: stopping is safe, taking the id back could fence the other one.
func (w *eosMain) fencedByAnother(ctx context.Context) bool {
	if !fault.Sleep(ctx, 2*time.Second) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	st, err := w.d.loadPipeline(ctx)
	if err != nil || st == nil {
		w.d.log.Warn("the producer's epoch moved and the offsets cannot be read to tell why: taking it for a fence",
			zap.String("transactional_id", w.d.mainID()), zap.Error(err))
		return true
	}
	if *st != w.lastRecord && *st != w.tried {
		w.d.log.Warn("the producer's epoch moved and another pipeline record is stored: another instance took over",
			zap.String("transactional_id", w.d.mainID()), zap.Any("stored", *st), zap.Any("ours", w.lastRecord))
		return true
	}
	w.d.log.Warn("the broker aborted the open Kafka transaction (its producer epoch moved, but no other instance wrote the offsets): "+
		"taking the transactional id back and replaying from the last commit", zap.String("transactional_id", w.d.mainID()))
	return false
}

// TxnError types the errors of a transactional producer: fenced (another
// instance took the id over) or a timeout the settings must fix.
func TxnError(id string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.ProducerFenced):
		return &FencedError{TransactionalID: id, Err: err}
	case errors.Is(err, kerr.InvalidProducerEpoch):
		// On a produce this may be recoverable (the abort that follows
		// tells: a fenced producer's abort is refused as fenced); on an
		// abort it is a fence.
		return &TxnAbortedError{Err: err}
	case errors.Is(err, kerr.InvalidTransactionTimeout):
		return &config.ConfigError{Err: fmt.Errorf("kafka.transaction_timeout: the brokers refuse it (%v); "+
			"set it at most to their transaction.max.timeout.ms", err)}
	case errors.Is(err, context.Canceled):
		return err
	}
	return &TxnAbortedError{Err: err}
}

// TxnAbortedError is a Kafka transaction that could not commit (a broker
// went away, the transaction timed out): it is aborted and its Postgres
// transactions are read again from the last commit, so nothing is lost or
// doubled. A transaction that times out every time is a Postgres
// transaction (or table copy) longer than kafka.transaction_timeout.
type TxnAbortedError struct{ Err error }

func (e *TxnAbortedError) Error() string {
	return "Kafka transaction aborted (replayed from the last commit; if this repeats, a Postgres transaction or a table copy may outlast kafka.transaction_timeout): " + e.Err.Error()
}
func (e *TxnAbortedError) Unwrap() error { return e.Err }

// Retryable marks the error for classify: the next session replays from
// the last commit.
func (e *TxnAbortedError) Retryable() {}
