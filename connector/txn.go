package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is exactly-once delivery (kafka.delivery: exactly-once). Each
// worker writes through its own transactional producer, whose
// transactional id derives from the connector name, so that a restarted or
// second instance fences the one before: <name>-main for the main worker,
// <name>-copy-<n> for copy worker n.
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
// (copy_checkpoint.go).

// newTxnClient returns a transactional producer with id, and loads its
// producer id: that fences any earlier producer with the same id and
// aborts its open transaction, so that what is read afterwards
// (read_committed) is final. It blocks until the broker answers or ctx
// ends.
func (p *Pipeline) newTxnClient(ctx context.Context, id string, hooks kgo.Hook) (*kgo.Client, error) {
	opts := append(p.producerOpts(hooks),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(p.cfg.Kafka.TransactionTimeout),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka transactional client %s: %w", id, err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return nil, txnError(id, fmt.Errorf("initialize transactional producer %s: %w", id, err))
	}
	p.addProducer(cl)
	return cl, nil
}

// txnError types the errors of a transactional producer: fenced (another
// instance took the id over) or a timeout the settings must fix.
func txnError(id string, err error) error {
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
		return &ConfigError{Err: fmt.Errorf("kafka.transaction_timeout: the brokers refuse it (%v); "+
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

// txnWriter is the main worker's side of exactly-once: it opens Kafka
// transactions, counts what goes in, and commits them with the offsets
// record. It is used from the stream goroutine only.
type txnWriter struct {
	p       *Pipeline
	cl      *kgo.Client
	id      string
	tracker *Tracker
	src     offsets.Pipeline // identity of the offsets record

	open    bool
	started time.Time
	last    time.Time // the last commit
	// lastRecord is the pipeline record of the last commit: when the
	// broker says the producer is fenced, a newer record by another
	// writer tells a real fence from a transaction the broker aborted.
	lastRecord offsets.Pipeline
	bytes      int64
	lastEnd    schema.LSN // end LSN of the newest Postgres transaction in the open Kafka transaction

	// newClient makes a replacement producer; onClient hands it to the
	// emitter.
	newClient func(context.Context) (*kgo.Client, error)
	onClient  func(*kgo.Client)
}

// begin opens a Kafka transaction unless one is open.
func (w *txnWriter) begin() error {
	if w.open {
		return nil
	}
	if err := w.cl.BeginTransaction(); err != nil {
		return txnError(w.id, fmt.Errorf("begin Kafka transaction: %w", err))
	}
	w.open, w.started, w.bytes, w.lastEnd = true, time.Now(), 0, 0
	return nil
}

// add counts n bytes handed to the producer in the open transaction.
func (w *txnWriter) add(n int) { w.bytes += int64(n) }

// ended records that everything up to end (a Postgres commit's end LSN) is
// in the open Kafka transaction, and commits it when a bound is reached.
func (w *txnWriter) ended(ctx context.Context, end schema.LSN) error {
	w.lastEnd = max(w.lastEnd, end)
	if w.bytes >= w.p.cfg.Kafka.TransactionMaxBytes || time.Since(w.started) >= w.p.cfg.Kafka.TransactionMaxInterval {
		return w.commit(ctx)
	}
	return nil
}

// txnHeartbeat is how often an idle main worker commits a transaction
// holding only the offsets record: so that an instance that was fenced
// while nothing changed learns it (and releases the slot) within seconds.
const txnHeartbeat = 5 * time.Second

// tick commits an open transaction that holds whole Postgres
// transactions and is older than the interval: the stream went quiet; and
// writes the heartbeat transaction when idle. Call it between Postgres
// transactions only.
func (w *txnWriter) tick(ctx context.Context) error {
	switch {
	case w.open && w.lastEnd != 0 && time.Since(w.started) >= w.p.cfg.Kafka.TransactionMaxInterval:
		return w.commit(ctx)
	case !w.open && time.Since(w.last) >= txnHeartbeat:
		if err := w.begin(); err != nil {
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
func (w *txnWriter) commit(ctx context.Context) error {
	if !w.open {
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
	src.Stamp(prev, time.Now().UnixMilli())
	// Produced last and waited for, with the rest (Flush).
	offErr := w.cl.ProduceSync(ctx, offsets.PipelineRecord(w.p.cfg.Kafka.OffsetsTopic, w.p.cfg.Name, src)).FirstErr()
	if err := w.cl.Flush(ctx); err != nil {
		return err
	}
	if err := errors.Join(w.tracker.Err(), offErr); err != nil {
		return w.failed(fmt.Errorf("a record of the Kafka transaction failed: %w", err))
	}
	if err := w.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return w.failed(fmt.Errorf("commit Kafka transaction (up to LSN %s): %w", w.lastEnd, err))
	}
	w.open, w.last, w.lastRecord = false, time.Now(), src
	w.tracker.SetCeiling(w.lastEnd)
	w.p.metrics.KafkaTransactions.WithLabelValues("commit").Inc()
	return nil
}

// failed types a failed commit. A transaction open about as long as
// kafka.transaction_timeout was most likely timed out by the broker
// (which can look like fencing); replaying would time out again, so a
// person must raise the bound.
func (w *txnWriter) failed(err error) error {
	if open := time.Since(w.started); open >= w.p.cfg.Kafka.TransactionTimeout*9/10 {
		return &criticalError{fmt.Errorf("the Kafka transaction was open %s, about kafka.transaction_timeout (%s): a Postgres "+
			"transaction takes longer than that to stream, and is never split; raise kafka.transaction_timeout (and the brokers' "+
			"transaction.max.timeout.ms): %w", open.Round(time.Second), w.p.cfg.Kafka.TransactionTimeout, err)}
	}
	return txnError(w.id, err)
}

// abort drops the open transaction: nothing of it becomes visible, and the
// durable LSN stays at the last commit, where the next session resumes.
func (w *txnWriter) abort(ctx context.Context) error {
	if !w.open {
		return nil
	}
	w.open = false
	if err := w.cl.AbortBufferedRecords(ctx); err != nil {
		return txnError(w.id, fmt.Errorf("abort Kafka transaction: %w", err))
	}
	if err := w.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		if errors.Is(err, kerr.InvalidProducerEpoch) {
			return &FencedError{TransactionalID: w.id, Err: err}
		}
		return txnError(w.id, fmt.Errorf("abort Kafka transaction: %w", err))
	}
	w.p.metrics.KafkaTransactions.WithLabelValues("abort").Inc()
	return nil
}

// idle raises the durable LSN to walEnd when no Kafka transaction is open
// and nothing is in flight: everything before walEnd was committed or
// skipped.
func (w *txnWriter) idle(walEnd schema.LSN) {
	if !w.open {
		w.tracker.SetCeiling(walEnd)
	}
}

// writeOffsetsTxn stores the pipeline record in a transaction of its own
// (exactly-once mode never writes the offsets outside a transaction: a
// fenced instance's late write could otherwise move them back).
func (w *txnWriter) writeOffsetsTxn(ctx context.Context, src offsets.Pipeline) error {
	if err := w.begin(); err != nil {
		return err
	}
	w.lastEnd = schema.LSN(src.DurableLSN)
	w.src = src
	if err := w.commit(ctx); err != nil {
		return errors.Join(err, w.abort(ctx))
	}
	return nil
}

// recover ends whatever the last session left: it aborts the open Kafka
// transaction (or, when the producer cannot, replaces it: a new producer
// with the same transactional id aborts it) and resets the tracker to the
// last commit, where the next session resumes. A fenced producer is not
// recovered.
func (w *txnWriter) recover(ctx context.Context, cause error) error {
	if w.open {
		err := w.abort(ctx)
		epoch := errors.Is(cause, kerr.InvalidProducerEpoch) || errors.Is(cause, kerr.ProducerFenced) ||
			errors.As(err, new(*FencedError))
		if epoch && w.fencedByAnother(ctx) {
			return &FencedError{TransactionalID: w.id, Err: errors.Join(cause, err)}
		}
		if err == nil && epoch {
			// The abort went through, but the producer's epoch is stale:
			// every later write would fail the same way.
			err = errors.New("stale producer epoch")
		}
		if err != nil {
			w.p.log.Warn("abort of the Kafka transaction failed; replacing the transactional producer", zap.Error(err))
			w.cl.Close()
			bo := newBackoff(200*time.Millisecond, 10*time.Second)
			for {
				cl, err := w.newClient(ctx)
				if err == nil {
					w.cl = cl
					w.onClient(cl)
					break
				}
				if errors.As(err, new(*FencedError)) || errors.As(err, new(*ConfigError)) {
					return err
				}
				w.p.log.Debug("transactional producer", zap.Error(err))
				if !sleepCtx(ctx, bo.next()) {
					return ctx.Err()
				}
			}
		}
	}
	w.open = false
	w.tracker.Restart()
	return nil
}

// fencedByAnother tells a real fence from a broker that aborted the open
// transaction itself (a transaction timeout, a coordinator that lost its
// state): both bump the producer epoch. An instance that fences this one
// stores its own pipeline record right after; so after a moment, a
// committed pipeline record other than this instance's last one means
// another instance runs. When the offsets cannot be read, it assumes a
// fence: stopping is safe, taking the id back could fence the other one.
func (w *txnWriter) fencedByAnother(ctx context.Context) bool {
	if !sleepCtx(ctx, 2*time.Second) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	st, err := offsets.Load(ctx, w.p.client, w.p.cfg.Kafka.OffsetsTopic, w.p.cfg.Name)
	if err != nil || st.Pipeline == nil {
		return true
	}
	if *st.Pipeline != w.lastRecord {
		return true
	}
	w.p.log.Warn("the broker aborted the open Kafka transaction (its producer epoch moved, but no other instance wrote the offsets): "+
		"taking the transactional id back and replaying from the last commit", zap.String("transactional_id", w.id))
	return false
}

// Tick implements stream.Ticker for the main worker.
func (pr *progress) Tick() error {
	if pr.txn == nil {
		return nil
	}
	return pr.txn.tick(pr.ctx)
}

// beginCopyTxn opens the Kafka transaction of copy worker n, replacing its
// producer when the last copy left it unusable.
func (c *copier) beginCopyTxn(ctx context.Context, n int) (*kgo.Client, error) {
	tx := c.txns[n]
	if err := tx.BeginTransaction(); err == nil {
		return tx, nil
	} else {
		c.log.Warn("copy worker's transactional producer is unusable; replacing it", zap.Int("worker", n), zap.Error(err))
	}
	tx.Close()
	tx, err := c.newTxn(ctx, n)
	if err != nil {
		return nil, err
	}
	c.txns[n] = tx
	if err := tx.BeginTransaction(); err != nil {
		return nil, txnError(fmt.Sprintf("%s-copy-%d", c.p.cfg.Name, n), err)
	}
	return tx, nil
}

// endCopyTxn aborts the copy's transaction unless its handover committed
// it (then there is nothing to abort).
func (c *copier) endCopyTxn(tx *kgo.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tx.AbortBufferedRecords(ctx); err != nil {
		c.log.Debug("abort the copy's buffered records", zap.Error(err))
	}
	if err := tx.EndTransaction(ctx, kgo.TryAbort); err != nil {
		// The next copy on this worker replaces the producer.
		c.log.Debug("abort the copy's Kafka transaction", zap.Error(err))
	}
}

// commitHandover stores the handover's phase as the last record of the
// copy's Kafka transaction and commits it (called under the pipeline
// mutex).
func (c *copier) commitHandover(ctx context.Context, tx *kgo.Client, ts *tableState) error {
	t := ts.Table
	t.UpdatedMs = time.Now().UnixMilli()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tx.ProduceSync(ctx, offsets.TableRecord(c.p.cfg.Kafka.OffsetsTopic, c.p.cfg.Name, t)).FirstErr(); err != nil {
		return err
	}
	if err := tx.Flush(ctx); err != nil {
		return err
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return txnError(c.p.cfg.Name+"-copy", fmt.Errorf("commit the copy's Kafka transaction: %w", err))
	}
	c.p.metrics.KafkaTransactions.WithLabelValues("commit").Inc()
	return nil
}
