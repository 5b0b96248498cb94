package record

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes the outbox envelope (format.envelope outbox,
// schema/outbox.go): the changes of format.outbox.table, streamed or
// copied, and the logical messages with format.outbox.message_prefix
// become events on the topics their route-by values name. The choice is
// made once per relation (route.outbox) and once per message prefix;
// records of other tables, other messages, heartbeats and transaction
// metadata are written as without it, as Debezium's EventRouter leaves a
// record alone when a predicate keeps it from the SMT (its own docs:
// outbox-event-router.adoc, "apply the SMT only to the outbox table").

// OutboxCodec is the outbox half of a codec (nil without the envelope).
// It is NOT safe for concurrent use, as the codec it belongs to.
type OutboxCodec struct {
	cfg *schema.OutboxConfig
	// rows takes the parts of an outbox row; key and value write them
	// in JSON, or keyAvro and valueAvro in Avro (one of each pair is nil).
	rows               *schema.JSONEncoder
	key, value         *schema.JSONEncoder
	keyAvro, valueAvro *schema.AvroEncoder
	reg                *Registry
	valid              map[string]bool // Avro schemas checked valid
	log                *zap.Logger
}

// OutboxUpdateError is an update of the outbox table under
// format.outbox.table_op_invalid_behavior fatal: Debezium fails the task
// (EventRouterDelegate.java:312-313); mooncdc parks the outbox table
// (errored, until `mooncdc resnapshot`), so the stream and the other
// tables go on.
type OutboxUpdateError struct {
	Table string
	LSN   schema.LSN
}

func (e *OutboxUpdateError) Error() string {
	return fmt.Sprintf("an update of the outbox table %s at LSN %s (format.outbox.table_op_invalid_behavior: fatal); "+
		"outbox rows are written once and never updated: fix the application, then run `mooncdc resnapshot %s` "+
		"or set table_op_invalid_behavior to warn", e.Table, e.LSN, e.Table)
}

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *OutboxUpdateError) TableLocal() {}

// Record fills rec with ev's record: topic, key, value (none for a
// tombstone), timestamp (the event's, else now, Debezium's ts_ms:
// EventRouterDelegate.java:253-256), and after the mooncdc.* headers the
// caller has set, `id` and the header fields (:159-160, 203-208) as text,
// as SimpleHeaderConverter writes them.
//
// With Avro, each part's schema is registered under <topic>-key and
// <topic>-value first (blocking while the registry is unreachable, as
// codec.register does): a schema the registry refuses, or that is not
// valid Avro, is a *tableSchemaError; an unreachable registry's error is
// returned as is. An event that cannot be encoded (or whose topic Kafka
// would refuse) is a *RecordError.
func (o *OutboxCodec) record(ctx context.Context, rec *kgo.Record, ch *schema.Change, ev *schema.OutboxEvent, now time.Time, maxRecord int) error {
	if ev.ExpandErr != nil {
		o.log.Warn("outbox payload not expanded: it is sent as the string it is (as Debezium's EventRouter does)",
			zap.String("topic", ev.Topic), zap.Error(ev.ExpandErr))
	}
	if err := CheckRoutedTopic(ev.Topic); err != nil {
		return &RecordError{Topic: ev.Topic, LSN: ch.LSN, Err: err}
	}
	var key, value []byte
	var err error
	if o.keyAvro != nil {
		key, err = o.avro(ctx, o.keyAvro, rec.Key[:0], ev.Topic+"-key", ev.Key)
	} else {
		key = o.key.AppendOutboxKey(rec.Key[:0], ev)
	}
	v, ok := o.cfg.Value(ev)
	switch {
	case err != nil || !ok:
	case o.valueAvro != nil:
		value, err = o.avro(ctx, o.valueAvro, rec.Value[:0], ev.Topic+"-value", v)
	default:
		value, _ = o.value.AppendOutboxValue(rec.Value[:0], o.cfg, ev)
	}
	var re *RecordError
	if errors.As(err, &re) {
		re.LSN = ch.LSN
	}
	if err == nil && len(key)+len(value) > maxRecord {
		err = &RecordError{Topic: ev.Topic, LSN: ch.LSN, Err: &RecordTooLargeError{Size: len(key) + len(value), Max: maxRecord}}
	}
	if err != nil {
		return err
	}
	*rec = kgo.Record{Topic: ev.Topic, Key: key, Context: rec.Context, Headers: rec.Headers, Timestamp: now}
	if ok {
		rec.Value = value
	}
	if ev.HasTime {
		rec.Timestamp = time.UnixMilli(ev.Millis)
	}
	if ev.Placed {
		delivery.PlacePartition(rec, ev.Partition)
	}
	addHeader(rec, schema.OutboxIDHeader, ev.ID)
	for i, f := range o.cfg.Fields {
		if f.Placement == schema.PlaceHeader && ev.Fields[i].Schema != nil {
			addHeader(rec, f.Alias, ev.Fields[i])
		}
	}
	return nil
}

// Event returns the outbox event of ch, a change of the outbox table
// whose schema plan is sp.
func (o *OutboxCodec) Event(sp *schema.Plan, ch *schema.Change) (*schema.OutboxEvent, error) {
	return o.rows.OutboxEvent(sp, ch, o.cfg)
}

// Message returns the outbox event a logical message's content holds.
func (o *OutboxCodec) Message(content []byte) (*schema.OutboxEvent, error) {
	return o.rows.OutboxMessage(o.cfg, content)
}

// Config is format.outbox.
func (o *OutboxCodec) Config() *schema.OutboxConfig { return o.cfg }

// Log is where the outbox's warnings go.
func (o *OutboxCodec) Log() *zap.Logger { return o.log }

// avro registers part p's Avro schema under subject and appends p in
// Confluent's wire format; errors as record says.
func (o *OutboxCodec) avro(ctx context.Context, enc *schema.AvroEncoder, dst []byte, subject string, p schema.OutboxPart) ([]byte, error) {
	text, err := schema.OutboxAvroSchema(p, o.valid)
	if len(o.valid) > 1024 {
		clear(o.valid)
	}
	if err != nil {
		return dst, &TableSchemaError{Err: err}
	}
	id, err := o.reg.id(ctx, subject, text)
	switch {
	case err == nil:
	case ctx.Err() != nil, errors.As(err, new(*config.ConfigError)), registryRetryable(err):
		return dst, err // stopping, credentials, or the registry is down: retried, nothing skipped
	default:
		return dst, &TableSchemaError{Err: err}
	}
	out, err := enc.AppendOutboxAvro(dst, int32(id), p)
	if err != nil {
		return dst, &RecordError{Topic: subject, Err: err}
	}
	return out, nil
}

// addHeader appends header key with p's text, reusing a pooled buffer.
func addHeader(rec *kgo.Record, key string, p schema.OutboxPart) {
	h, n := rec.Headers, len(rec.Headers)
	if n < cap(h) {
		h = h[:n+1]
	} else {
		h = append(h, kgo.RecordHeader{})
	}
	text, null := p.Text()
	h[n].Key = key
	if null {
		h[n].Value = nil
	} else {
		h[n].Value = append(h[n].Value[:0], text...)
	}
	rec.Headers = h
}

// CheckRoutedTopic refuses a routed topic Kafka would refuse, before it
// is created: the route-by value is row data, so this parks the outbox
// table (a *schema.ValueError) instead of failing the stream.
func CheckRoutedTopic(t string) error {
	if err := config.CheckTopicName(t); err != nil {
		return &schema.ValueError{Value: t, Err: fmt.Errorf("routed topic %q %w; check format.outbox.route_by and topic", t, err)}
	}
	return nil
}
