package connector

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/schema"
)

// This file adapts the tracker and the metrics to the replication
// session's Progress and Observer.

// progress adapts the tracker and the main sink to the session's
// Progress and Ticker.
type progress struct {
	*delivery.Tracker
	sink      delivery.MainSink
	phases    *phases.Rules
	onPromote func([]*phases.State)
	ctx       context.Context
	// em closes incremental snapshots' windows between transactions
	// (emit: Incremental); incErr is the error of one closed at a
	// keepalive, returned by the next Tick.
	em     *emit.Emitter
	incErr error
}

// AdvanceIdle moves the durable LSN when nothing is in flight, and the main
// worker's position for the handover: it has decided everything before
// walEnd.
func (pr *progress) AdvanceIdle(walEnd schema.LSN) {
	if pr.em != nil && pr.incErr == nil {
		pr.incErr = pr.em.Idle(walEnd)
	}
	pr.Tracker.AdvanceIdle(walEnd)
	pr.sink.Idle(walEnd)
	if moved := pr.phases.Advance(walEnd); moved != nil {
		pr.onPromote(moved)
	}
}

// Drain is the main sink's checkpoint barrier: every record handed over
// is acknowledged (in exactly-once mode, committed with the offsets).
func (pr *progress) Drain(ctx context.Context) error { return pr.sink.Flush(ctx) }

// WantPosition implements stream.Positioner: an incremental snapshot's
// window waits for the stream to pass its high watermark.
func (pr *progress) WantPosition() bool { return pr.em != nil && pr.em.WantPosition() }

// Tick implements stream.Ticker: the sink may end a Kafka transaction
// between Postgres transactions.
func (pr *progress) Tick() error {
	if err := pr.incErr; err != nil {
		pr.incErr = nil // it ends this session; the next starts clean
		return err
	}
	if pr.em != nil {
		if err := pr.em.Idle(0); err != nil {
			return err
		}
	}
	return pr.sink.Tick(pr.ctx)
}

// logPromoted logs tables that moved from catchup to ready (phases stored
// them). The write is not waited for: catchup(L) and ready(L) mean the
// same to the main worker once it is past L, so losing it loses nothing.
func (p *Pipeline) logPromoted(moved []*phases.State) {
	for _, ts := range moved {
		p.log.Info("table ready: the main worker is past its handover", zap.String("table", ts.Table.Table), zap.Stringer("lsn", schema.LSN(ts.LSN)))
	}
}

// observer feeds the session's measurements into the metrics.
type observer struct {
	ready     *atomic.Bool
	metrics   *Metrics
	serverEnd *atomic.Uint64
	tracker   *delivery.Tracker
	links     *linkWatch
}

func (o *observer) Silence(d time.Duration) { o.links.timeout.Store(int64(d)) }
func (o *observer) Heard(at time.Time)      { o.links.heard(at) }

func (o *observer) Streaming(on bool) {
	o.ready.Store(on)
	if on {
		o.metrics.Streaming.Set(1)
	} else {
		o.metrics.Streaming.Set(0)
	}
}
func (o *observer) Received(n int) { o.metrics.PayloadBytes.Add(float64(n)) }
func (o *observer) ServerWALEnd(l schema.LSN) {
	o.serverEnd.Store(uint64(l))
	if d := o.tracker.Durable(); l > d {
		o.metrics.LagBytes.Set(float64(l - d))
	}
}
