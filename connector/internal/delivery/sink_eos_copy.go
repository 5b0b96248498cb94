package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is a copy's side of exactly-once delivery (sink_eos.go): its
// records, checkpoints and handover in the copy worker's own Kafka
// transactions.

// eosCopy is a copy's exactly-once sink: one Kafka transaction of the copy
// worker's producer, committed by the handover with the phase record last.
type eosCopy struct {
	d *exactlyOnce
	// ctx is the copy's: records are produced with it, so that what is
	// still buffered when the copy ends fails at once (its transaction is
	// aborted anyway, and the producer is the copy worker's own).
	ctx context.Context
	cl  txnProducer
	id  string // the transactional id
	// tracker counts the copy's records: the handover waits for them.
	tracker   *Tracker
	committed bool
}

var _ CopySink = (*eosCopy)(nil)

func (s *eosCopy) Begin() error                            { return nil }
func (s *eosCopy) Ended(context.Context, schema.LSN) error { return nil }

func (s *eosCopy) Send(rec *kgo.Record, promise func(*kgo.Record, error)) {
	s.cl.Produce(s.ctx, rec, promise)
}

// Settle flushes the copy's records into the open Kafka transaction.
func (s *eosCopy) Settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.cl.Flush(ctx)
}

// Checkpoint writes ts as the last record of the copy's Kafka transaction,
// commits it, sets the view and waits until the ordered writer of table
// states has stored it again, then begins the next transaction.
//
// The progress is durable at the commit; the ordered writer stores it
// again with the table's newest state (ts was read before, and another
// writer may have changed the table's state since). That second record is
// written by another client, outside the copy's transactions, so nothing
// but this wait orders it before the next checkpoint's commit. Without
// it, under load:
//
//	checkpoint k commits progress Pk (base Bk) ── the ordered writer's Pk
//	lingers in its client, or is in flight ── the copy streams on and
//	checkpoint k+1 commits Pk+1 (base Bk+1) with the changes up to Bk+1
//	── the ordered writer's Pk lands, after Pk+1 ── a crash before its
//	Pk+1 lands
//
// left Pk the table's last record: the next run resumed from Bk and wrote
// the changes between Bk and Bk+1 a second time (and a Pk landing after
// the handover's phase record would even have put a handed-over table back
// to copying). With the wait, every record handed to the ordered writer
// before checkpoint k returned is in the topic before checkpoint k+1's.
// What is left: another writer's record of the table's state made between
// the two (the main worker's shape fingerprint: a DDL while the table is
// copied) carries Pk and may land after Pk+1; a resume from it starts
// over, as the shape changed (snapshot: copy_resume.go), so no change
// record is written twice.
func (s *eosCopy) Checkpoint(ctx context.Context, ts *phases.State, setState func(*phases.State) func(context.Context) error) error {
	if err := s.commit(ctx, ts, "at a checkpoint"); err != nil {
		return err
	}
	if err := setState(ts)(ctx); err != nil {
		// Its record may still land later: the copy stops here (and is
		// retried from what is stored) rather than commit past it.
		return fmt.Errorf("store the copy's progress again with the table's state: %w", err)
	}
	if err := s.cl.BeginTransaction(); err != nil {
		return TxnError(s.id, fmt.Errorf("begin the copy's next Kafka transaction: %w", err))
	}
	return nil
}

// Handover stores the handover's phase as the last record of the copy's
// Kafka transaction and commits it.
func (s *eosCopy) Handover(ctx context.Context, ts *phases.State) error {
	if err := waitAcked(ctx, s.tracker); err != nil {
		return err
	}
	if err := s.commit(ctx, ts, "at its handover"); err != nil {
		return err
	}
	s.committed = true
	return nil
}

// commit writes ts's record last in the copy's Kafka transaction, waits
// for every record and commits it (at most 30 s).
func (s *eosCopy) commit(ctx context.Context, ts *phases.State, at string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := produceWait(ctx, s.cl, s.d.cfg.records.table(ts)); err != nil {
		return err
	}
	if err := s.cl.Flush(ctx); err != nil {
		return err
	}
	if err := s.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return TxnError(s.id, fmt.Errorf("commit the copy's Kafka transaction %s: %w", at, err))
	}
	s.d.cfg.transactions.WithLabelValues("commit").Inc()
	return nil
}

// Close aborts the copy's transaction unless its handover committed it.
func (s *eosCopy) Close() {
	if s.committed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.cl.AbortBufferedRecords(ctx); err != nil {
		s.d.log.Debug("abort the copy's buffered records", zap.Error(err))
	}
	if err := s.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		// The next copy on this worker replaces the producer.
		s.d.log.Debug("abort the copy's Kafka transaction", zap.Error(err))
	}
}
