package connector

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
)

// This file keeps readiness true to the links: /readyz answers 503, and
// /status and the metrics say why, while the main replication connection
// has heard nothing from Postgres for longer than its silence timeout, or
// Kafka has acknowledged nothing for that long while records wait.

// linkWatch is the pipeline's view of its links. The main session's
// observer writes heardAt and timeout; watch samples the tracker.
type linkWatch struct {
	heardAt atomic.Int64 // unix nanoseconds of the last message from Postgres; 0 before the first session
	timeout atomic.Int64 // the main session's silence timeout, nanoseconds; 0 before it is known

	kafkaAt      atomic.Int64 // unix nanoseconds: Kafka last acknowledged, or nothing was in flight
	lastReleased int64        // watch's own
}

// heard notes a message from Postgres.
func (w *linkWatch) heard(at time.Time) { w.heardAt.Store(at.UnixNano()) }

// silence returns how long Postgres has been silent and the timeout; both
// 0 before the first session has streamed.
func (w *linkWatch) silence(now time.Time) (quiet, timeout time.Duration) {
	h, t := w.heardAt.Load(), w.timeout.Load()
	if h == 0 || t == 0 {
		return 0, 0
	}
	return now.Sub(time.Unix(0, h)), time.Duration(t)
}

// kafkaStall returns how long Kafka has acknowledged nothing while records
// were in flight (0 while nothing is).
func (w *linkWatch) kafkaStall(now time.Time) time.Duration {
	k := w.kafkaAt.Load()
	if k == 0 {
		return 0
	}
	return now.Sub(time.Unix(0, k))
}

// sample looks at the tracker: any acknowledgement since the last sample,
// or no record in flight (incremental snapshots' windows' reservations
// are not records), counts as Kafka's progress.
func (w *linkWatch) sample(now time.Time, t *delivery.Tracker) {
	if t == nil {
		return
	}
	rel := t.Released()
	if t.Inflight()-t.Reserved() <= 0 || rel != w.lastReleased || w.kafkaAt.Load() == 0 {
		w.kafkaAt.Store(now.UnixNano())
	}
	w.lastReleased = rel
}

// notReady returns why the links make the pipeline unready, or "".
func (w *linkWatch) notReady(now time.Time, linkTimeout time.Duration) string {
	if quiet, timeout := w.silence(now); timeout > 0 && quiet > timeout {
		return fmt.Sprintf("postgres silent: no message on the replication connection for %s (timeout %s, postgres.replication_timeout); reconnecting",
			quiet.Round(100*time.Millisecond), timeout)
	}
	if stall := w.kafkaStall(now); stall > linkTimeout {
		return fmt.Sprintf("kafka stalled: no record acknowledged for %s with records in flight (limit %s, postgres.replication_timeout)",
			stall.Round(100*time.Millisecond), linkTimeout)
	}
	return ""
}

// watchLinks samples the tracker and sets the link gauges every second
// until ctx ends.
func (p *Pipeline) watchLinks(ctx context.Context, t *delivery.Tracker) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		now := time.Now()
		p.linkWatch.sample(now, t)
		quiet, _ := p.linkWatch.silence(now)
		p.metrics.LastServerMessage.Set(quiet.Seconds())
		if t.Inflight()-t.Reserved() > 0 { // records, not windows' reservations
			p.metrics.KafkaStalled.Set(p.linkWatch.kafkaStall(now).Seconds())
		} else {
			p.metrics.KafkaStalled.Set(0)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
