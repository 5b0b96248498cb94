package delivery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file holds every write to the offsets topic: the records (the
// pipeline's durable LSN, a table's state), stamped with when they were
// written, and the ordered writer of table states. Which client writes
// each record is the delivery's decision (sink.go); how it is made and
// waited for is decided here.

// Records makes the offsets records of one connector.
type Records struct {
	Name, Topic string
}

// pipeline stamps src with now (UpdatedMs, and DurableMs when the durable
// LSN moved since prev, the record written before) and returns its record.
func (r Records) pipeline(src *offsets.Pipeline, prev offsets.Pipeline) *kgo.Record {
	src.Stamp(prev, time.Now().UnixMilli())
	return offsets.PipelineRecord(r.Topic, r.Name, *src)
}

// table returns ts's record, stamped with now.
func (r Records) table(ts *phases.State) *kgo.Record {
	t := ts.Table
	t.UpdatedMs = time.Now().UnixMilli()
	return offsets.TableRecord(r.Topic, r.Name, t)
}

// StateWriter is the one ordered writer of table states: the offsets
// topic has one partition and franz-go keeps the order of the records
// handed to one client, so states handed to it under the pipeline mutex
// reach the topic in the order they were made, and the last record of a
// table is its newest state. Safe for concurrent use; enqueue does not
// block.
type StateWriter struct {
	// ctx is the pipeline's: the records are produced with it (a caller's
	// ended wait does not fail its record).
	ctx     context.Context
	cl      Producer
	records Records
	log     *zap.Logger

	mu sync.Mutex
	// last is closed when the newest record handed over is acknowledged
	// or failed (nil before the first): the offsets topic has one
	// partition, so the ones before it are by then (settled).
	last chan struct{}
	// committed is, by table, the newest incremental snapshot progress
	// the main worker committed in its Kafka transaction (exactly-once:
	// committedProgress), which a state written here must not take back.
	committed map[string]watermark.Progress
	// n counts the records handed over; latest is, by table, the newest
	// state handed over while the table's incremental snapshot ran (its
	// progress set, or set before) and its number (overlay).
	n      uint64
	latest map[string]handedState
}

// NewStateWriter makes the ordered writer of table states that writes
// records through cl with ctx, the pipeline's.
func NewStateWriter(ctx context.Context, cl Producer, records Records, log *zap.Logger) *StateWriter {
	return &StateWriter{ctx: ctx, cl: cl, records: records, log: log}
}

// stateWriteTimeout bounds the wait enqueue returns.
const stateWriteTimeout = 30 * time.Second

// Enqueue hands ts's record to the producer and returns the wait for it,
// which the caller may skip (a failure is logged either way; a state is
// written again with the table's next change). The wait returns when the
// record is acknowledged (nil) or failed, its ctx ended (a stop), or
// stateWriteTimeout passed (an error wrapping context.DeadlineExceeded). It does not use ProduceSync: the client runs
// with the pipeline's hard context (kgo.WithContext), and once an abort
// cancels that, a record already handed over is finished only by Close,
// which Run calls after every goroutine has returned.
func (w *StateWriter) Enqueue(ts *phases.State) (wait func(context.Context) error) {
	table := ts.Table.Table
	done := make(chan error, 1)
	acked := make(chan struct{})
	w.mu.Lock()
	ts = w.newestProgress(ts)
	w.last = acked
	w.handed(ts)
	w.mu.Unlock()
	w.cl.Produce(w.ctx, w.records.table(ts), func(_ *kgo.Record, err error) {
		if err != nil && w.ctx.Err() == nil {
			w.log.Warn("store table phase", zap.String("table", table), zap.Error(err))
		}
		close(acked)
		done <- err
	})
	return func(ctx context.Context) error {
		timer := time.NewTimer(stateWriteTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("write the phase of %s to the offsets topic: %w", table, ctx.Err())
		case <-timer.C:
			return fmt.Errorf("write the phase of %s to the offsets topic: not acknowledged after %s: %w", table, stateWriteTimeout, context.DeadlineExceeded)
		}
	}
}

// settled waits until every record handed over so far is acknowledged or
// failed, at most until ctx ends or stateWriteTimeout passes.
func (w *StateWriter) settled(ctx context.Context) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	last := w.last
	w.mu.Unlock()
	if last == nil {
		return nil
	}
	timer := time.NewTimer(stateWriteTimeout)
	defer timer.Stop()
	select {
	case <-last:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the table states written before: %w", ctx.Err())
	case <-timer.C:
		return fmt.Errorf("wait for the table states written before: not acknowledged after %s: %w", stateWriteTimeout, context.DeadlineExceeded)
	}
}

// writePipeline stamps src (pipeline) and stores it in the offsets topic
// through cl, waiting for it (at most 30 s).
func writePipeline(ctx context.Context, cl Producer, r Records, src *offsets.Pipeline, prev offsets.Pipeline) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := produceWait(ctx, cl, r.pipeline(src, prev)); err != nil {
		return fmt.Errorf("write offsets to topic %q: %w", r.Topic, err)
	}
	return nil
}

// produceWait produces rec through cl and waits for its acknowledgement,
// at most until ctx ends. Unlike ProduceSync it returns when ctx ends even
// if the client never finishes the record (its context is the pipeline's
// hard one, which an abort cancels: only Close finishes it then).
func produceWait(ctx context.Context, cl Producer, rec *kgo.Record) error {
	done := make(chan error, 1)
	cl.Produce(ctx, rec, func(_ *kgo.Record, err error) { done <- err })
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
