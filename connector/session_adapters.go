package connector

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file adapts the tracker and the metrics to the replication
// session's Progress and Observer.

// progress adapts the tracker to the session's Progress.
type progress struct {
	*Tracker
	client *kgo.Client
	phases *phases
	p      *Pipeline
	ctx    context.Context
	txn    *txnWriter // exactly-once mode; nil otherwise
}

// AdvanceIdle moves the durable LSN when nothing is in flight, and the main
// worker's position for the handover: it has decided everything before
// walEnd.
func (pr *progress) AdvanceIdle(walEnd schema.LSN) {
	pr.Tracker.AdvanceIdle(walEnd)
	if pr.txn != nil {
		pr.txn.idle(walEnd)
	}
	if moved := pr.phases.advance(walEnd); moved != nil {
		pr.p.logPromoted(moved)
	}
}

// logPromoted logs tables that moved from catchup to ready (phases stored
// them). The write is not waited for: catchup(L) and ready(L) mean the
// same to the main worker once it is past L, so losing it loses nothing.
func (p *Pipeline) logPromoted(moved []*tableState) {
	for _, ts := range moved {
		p.log.Info("table ready: the main worker is past its handover", zap.String("table", ts.Table.Table), zap.Stringer("lsn", schema.LSN(ts.LSN)))
	}
}

// storeTable writes ts to the offsets topic without waiting (phases.store:
// a promotion, a shape); a failure is logged, and the state is written
// again with the next change of the table.
func (p *Pipeline) storeTable(ctx context.Context, ts *tableState) {
	p.enqueueTable(ctx, ts, func(err error) {
		if err != nil && ctx.Err() == nil {
			p.log.Warn("store table phase", zap.String("table", ts.Table.Table), zap.Error(err))
		}
	})
}

// enqueueTable hands ts's record to the producer and returns at once;
// done gets the result. Every table state goes through it: the offsets
// topic has one partition and franz-go keeps the order of the records
// handed to it, so states enqueued under the pipeline mutex (phases.store,
// the snapshotter's setPhase, a handover) reach the topic in the order
// they were made, and the last record of a table is its newest state.
// Producing after the mutex was released let a writer that changed a
// table first write last, and a restart read back the older state.
func (p *Pipeline) enqueueTable(ctx context.Context, ts *tableState, done func(error)) {
	t := ts.Table
	t.UpdatedMs = time.Now().UnixMilli()
	p.client.Produce(ctx, offsets.TableRecord(p.cfg.Kafka.OffsetsTopic, p.cfg.Name, t), func(_ *kgo.Record, err error) { done(err) })
}

// Drain flushes the producer: every record handed over is acked or failed;
// in exactly-once mode it commits the open Kafka transaction.
func (pr *progress) Drain(ctx context.Context) error {
	if pr.txn != nil {
		if err := pr.txn.commit(ctx); err != nil {
			return err
		}
	}
	if err := pr.client.Flush(ctx); err != nil {
		return err
	}
	if err := pr.Tracker.Wait(ctx); err != nil {
		return &criticalError{err}
	}
	return nil
}

// observer feeds the session's measurements into the metrics.
type observer struct {
	p         *Pipeline
	serverEnd *atomic.Uint64
	tracker   *Tracker
}

func (o *observer) Streaming(on bool) {
	o.p.ready.Store(on)
	if on {
		o.p.metrics.Streaming.Set(1)
	} else {
		o.p.metrics.Streaming.Set(0)
	}
}
func (o *observer) Received(n int) { o.p.metrics.PayloadBytes.Add(float64(n)) }
func (o *observer) ServerWALEnd(l schema.LSN) {
	o.serverEnd.Store(uint64(l))
	if d := o.tracker.Durable(); l > d {
		o.p.metrics.LagBytes.Set(float64(l - d))
	}
}
