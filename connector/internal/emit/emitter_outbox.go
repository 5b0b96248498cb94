package emit

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// outboxChange writes the event of ch, a change of the outbox table
// (schema.OutboxConfig.Action): an insert or snapshot row is one record,
// a delete or truncate nothing, an update nothing but a warning, an
// error-level log or (fatal) the table parked; an update of the key is a
// delete and an insert, as Debezium sends it. sp is the schema plan to
// encode ch with.
func (e *Emitter) outboxChange(r *record.Plan, sp *schema.Plan, ch *schema.Change) error {
	o := e.Enc.Outbox()
	if ch.Op == schema.OpUpdate && record.KeyChanged(r.Rel, ch.Before, ch.After) {
		// Debezium writes a key change as a delete, its tombstone and a
		// create (as changeOf does); EventRouter drops the first two and
		// routes the create as an event.
		del, cre := *ch, *ch
		del.Op, del.After = schema.OpDelete, nil
		cre.Op, cre.Before = schema.OpCreate, nil
		if err := e.outboxChange(r, sp, &del); err != nil {
			return err
		}
		return e.outboxChange(r, sp, &cre)
	}
	if !e.count(ch) {
		return nil // counted as Debezium counts records before its SMTs
	}
	switch o.Config().Action(ch.Op) {
	case schema.OutboxIgnore:
		return nil
	case schema.OutboxUpdate:
		msg := "an update of the outbox table is not an event and is skipped (format.outbox.table_op_invalid_behavior)"
		switch o.Config().OnUpdate {
		case schema.OutboxFatal:
			return &record.OutboxUpdateError{Table: r.Name, LSN: ch.LSN}
		case schema.OutboxError:
			o.Log().Error(msg, zap.String("table", r.Name), zap.Stringer("lsn", ch.LSN))
		default:
			o.Log().Warn(msg, zap.String("table", r.Name), zap.Stringer("lsn", ch.LSN))
		}
		return nil
	}
	ev, err := o.Event(sp, ch)
	if err != nil {
		return &record.RecordError{Topic: r.Topic, LSN: ch.LSN, Err: err}
	}
	return e.produceOutbox(e.cur, ch, ev)
}

// outboxMessage writes the event of an outbox message. done is false for
// a content that is not an outbox event, which is then written as any
// logical message, with a warning: it is not lost, and a bad message from
// one writer does not stop the stream.
func (e *Emitter) outboxMessage(ch *schema.Change) (done bool, err error) {
	o := e.Enc.Outbox()
	ev, err := o.Message(ch.Message.Content)
	if err == nil {
		err = record.CheckRoutedTopic(ev.Topic)
	}
	if err != nil {
		o.Log().Warn("a logical message with the outbox prefix is not an outbox event; it is written to the messages topic instead",
			zap.String("prefix", ch.Message.Prefix), zap.Stringer("lsn", ch.LSN), zap.Error(err))
		return false, nil
	}
	rec, err := e.outboxRecord(ch, ev)
	var tse *record.TableSchemaError
	if errors.As(err, &tse) || errors.As(err, new(*record.RecordError)) {
		// Nothing was sent and there is no table to park: the message is
		// written as a plain one instead, as a malformed one is.
		o.Log().Warn("an outbox message's record cannot be written (its schema refused, or too large); it is written to the messages topic instead",
			zap.String("prefix", ch.Message.Prefix), zap.Stringer("lsn", ch.LSN), zap.Error(err))
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if ch.Tx == nil {
		return true, e.ownUnit(ch.LSN, func(a *delivery.TxAck) error { rec.Context = a; e.w.Send(rec); return nil })
	}
	e.count(ch)
	rec.Context = e.cur
	e.w.Send(rec)
	return true, nil
}

// produceOutbox hands ev's record to the producer in unit a.
func (e *Emitter) produceOutbox(a *delivery.TxAck, ch *schema.Change, ev *schema.OutboxEvent) error {
	rec, err := e.outboxRecord(ch, ev)
	if err != nil {
		return err
	}
	rec.Context = a
	e.w.Send(rec)
	return nil
}

// OutboxEventError makes an event for a partition its topic lacks
// (ensureEvent's *PartitionRangeError) a *RecordError at lsn, as the
// records that cannot be made are; other errors (creating the topic,
// reading its partitions) stay as they are.
func OutboxEventError(err error, ev *schema.OutboxEvent, lsn schema.LSN) error {
	if pr, ok := err.(*delivery.PartitionRangeError); ok {
		return &record.RecordError{Topic: ev.Topic, LSN: lsn, Err: pr}
	}
	return err
}

// outboxRecord creates ev's topic if needed and makes its record (in
// no unit yet).
func (e *Emitter) outboxRecord(ch *schema.Change, ev *schema.OutboxEvent) (*kgo.Record, error) {
	if err := e.Topics.EnsureEvent(ev); err != nil {
		return nil, OutboxEventError(err, ev, ch.LSN)
	}
	return e.w.Outbox(e.Ctx, nil, ch, ev, time.Now(), record.ChangeCommit(ch), int64(ch.Seq))
}
