package delivery

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is at-least-once delivery (kafka.delivery: at-least-once):
// every worker writes through the pipeline's one idempotent producer (no
// duplicates from producer retries), and the durable LSN is what the
// tracker says Kafka has acknowledged. A restart resumes at the durable
// LSN recorded last, so records after it may be written again.

// atLeastOnce is the at-least-once delivery.
type atLeastOnce struct {
	cfg deliveryConfig
	cl  Producer
	log *zap.Logger
}

var _ Mode = (*atLeastOnce)(nil)

func (d *atLeastOnce) Main(tracker *Tracker) MainSink {
	return &aloMain{d: d, tracker: tracker}
}

func (d *atLeastOnce) Copy(_ context.Context, _ int, tracker *Tracker) (CopySink, error) {
	return &aloCopy{cl: d.cl, tracker: tracker, states: d.cfg.states}, nil
}

func (d *atLeastOnce) Close() {}

// aloMain is the main worker's at-least-once sink.
type aloMain struct {
	d       *atLeastOnce
	tracker *Tracker
	src     offsets.Pipeline
}

var _ MainSink = (*aloMain)(nil)

func (s *aloMain) Begin() error { return nil }

func (s *aloMain) Send(rec *kgo.Record, promise func(*kgo.Record, error)) {
	s.d.cl.Produce(context.Background(), rec, promise)
}

func (s *aloMain) Ended(context.Context, schema.LSN) error { return nil }

// WithUnit: a unit is durable once its records are acknowledged, and a
// table state written beside them could be acknowledged first; the
// caller stores the progress once the unit is durable.
func (s *aloMain) WithUnit(*TxAck, func() *phases.State) bool { return false }
func (s *aloMain) Tick(context.Context) error                 { return nil }

// Idle: the tracker moves the durable LSN itself (Tracker.AdvanceIdle).
func (s *aloMain) Idle(schema.LSN) {}

func (s *aloMain) Open(ctx context.Context, src offsets.Pipeline) error {
	s.src = src
	return writePipeline(ctx, s.d.cl, s.d.cfg.records, &s.src, src)
}

func (s *aloMain) Flush(ctx context.Context) error {
	if err := s.d.cl.Flush(ctx); err != nil {
		return err
	}
	if err := s.tracker.Wait(ctx); err != nil {
		return &fault.CriticalError{Err: err}
	}
	return nil
}

// SessionEnded: records of the session still in flight are acknowledged
// into nothing (Tracker.Abandon); the next session sends them again.
func (s *aloMain) SessionEnded(context.Context, error) error { return nil }

// Run is the offsets writer: the durable LSN goes to the offsets topic
// once a second when it moved (Postgres hears it from the stream). A
// failed record stops the pipeline: the durable LSN cannot pass it.
func (s *aloMain) Run(ctx, soft context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	written := s.src.DurableLSN
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-soft.Done():
			return nil
		case <-t.C:
		}
		if err := s.tracker.Err(); err != nil {
			return &fault.CriticalError{Err: err}
		}
		if d := uint64(s.tracker.Durable()); d != written {
			prev := s.src
			s.src.DurableLSN = d
			s.d.cl.Produce(ctx, s.d.cfg.records.pipeline(&s.src, prev), func(_ *kgo.Record, err error) {
				if err != nil && ctx.Err() == nil {
					s.d.log.Warn("write offsets", zap.Error(err))
				}
			})
			written = d
		}
	}
}

// Stopped records where the clean stop left the durable LSN.
func (s *aloMain) Stopped(ctx context.Context) error {
	prev := s.src
	s.src.DurableLSN = uint64(s.tracker.Durable())
	return writePipeline(ctx, s.d.cl, s.d.cfg.records, &s.src, prev)
}

// aloCopy is a copy's at-least-once sink: the shared producer, and the
// handover's phase through the ordered table-state writer once the copy's
// records are acknowledged.
type aloCopy struct {
	cl      Producer
	tracker *Tracker
	states  *StateWriter
}

var _ CopySink = (*aloCopy)(nil)

func (s *aloCopy) Begin() error                            { return nil }
func (s *aloCopy) Ended(context.Context, schema.LSN) error { return nil }
func (s *aloCopy) Close()                                  {}

// Send produces with no context of the copy's: the producer is shared, and
// franz-go fails a canceled record together with the records buffered
// after it on its partition, which may be the main worker's (a topic that
// kafka.routes shares). A copy that ends leaves its buffered records to
// land: they are upserts a retry writes again.
func (s *aloCopy) Send(rec *kgo.Record, promise func(*kgo.Record, error)) {
	s.cl.Produce(context.Background(), rec, promise)
}

func (s *aloCopy) Settle(context.Context) error { return nil }

func (s *aloCopy) Checkpoint(ctx context.Context, ts *phases.State, setState func(*phases.State) func(context.Context) error) error {
	return setState(ts)(ctx)
}

func (s *aloCopy) Handover(ctx context.Context, ts *phases.State) error {
	if err := waitAcked(ctx, s.tracker); err != nil {
		return err
	}
	return s.states.Enqueue(ts)(ctx)
}

// waitAcked waits, at most handoverAckWait, until every record counted in
// tracker is acknowledged.
func waitAcked(ctx context.Context, tracker *Tracker) error {
	ctx, cancel := context.WithTimeout(ctx, handoverAckWait)
	defer cancel()
	return tracker.Wait(ctx)
}

// handoverAckWait bounds how long a handover waits, holding the pipeline
// mutex (and so the main worker), for the copy's last acknowledgements.
const handoverAckWait = 5 * time.Second
