package connector

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/schema"
)

// This file bounds a clean stop by shutdown_timeout (see Pipeline.Run).

// boundStop waits, once a stop was asked for, until the clean stop is done
// (hard ends: nil) or shutdown_timeout passes (the error to return, with
// the records still unacknowledged then), logging what it waits for.
func (p *Pipeline) boundStop(hard context.Context) *ShutdownTimeoutError {
	limit := time.NewTimer(p.cfg.ShutdownTimeout)
	defer limit.Stop()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-hard.Done():
			return nil
		case <-p.abort:
			return nil
		case <-tick.C:
			if n := p.unacked(); n > 0 {
				p.log.Info("stopping: waiting for Kafka to acknowledge records", zap.Int64("records", n),
					zap.Duration("shutdown_timeout", p.cfg.ShutdownTimeout))
			}
		case <-limit.C:
			return &ShutdownTimeoutError{Timeout: p.cfg.ShutdownTimeout, Unacked: p.unacked(), Durable: schema.LSN(p.durable())}
		}
	}
}

// unacked counts the records handed to the producers and not yet
// acknowledged by Kafka. Safe for concurrent use.
func (p *Pipeline) unacked() int64 {
	p.producersMu.Lock()
	defer p.producersMu.Unlock()
	var n int64
	for _, cl := range p.producers {
		n += cl.BufferedProduceRecords()
	}
	return n
}

// addProducer makes cl's buffered records count in unacked.
func (p *Pipeline) addProducer(cl *kgo.Client) {
	p.producersMu.Lock()
	p.producers = append(p.producers, cl)
	p.producersMu.Unlock()
}

func (p *Pipeline) durable() uint64 {
	if t := p.tracker.Load(); t != nil {
		return uint64(t.Durable())
	}
	return 0
}
