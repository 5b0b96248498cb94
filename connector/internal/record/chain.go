package record

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/connectformat"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the transform chain in the writer (the `transforms` key):
// with a chain, every record the writer makes is made as Kafka Connect
// makes a source task's record (AbstractWorkerSourceTask.sendRecords,
// apache/kafka connect/runtime/src/main/java/org/apache/kafka/connect/runtime/AbstractWorkerSourceTask.java:396-405
// and convertTransformedRecord, :479-497 at 1eb7644349c): its Connect view
// (connect_view.go), the chain, then the configured converters on the
// record the chain returns, under its (maybe new) topic: JsonConverter
// with or without schemas, or Confluent's AvroConverter with the derived
// schema registered under the topic's TopicNameStrategy subjects, and the
// SimpleHeaderConverter for the record's headers, after mooncdc's own
// (headers.go, flatheaders.go). The chain is chosen once, when the codec
// is made (Formats.Codec): without one, nothing here runs and the plain
// path is byte for byte what it was.
//
// A record the chain drops is a dropped record (Writer.Send recycles it
// unsent): the position moves past it, as Connect commits a dropped
// record's offset (WorkerSourceTask.recordDropped, WorkerSourceTask.java:126-128).
// A transform that fails is a *RecordError wrapping the *transform.Error,
// which parks the record's table; a converter that fails is one wrapping
// a *FormatError, counted in mooncdc_format_errors_total, which parks it
// too.

// Transforms is what a Formats needs to run a chain (SetTransforms).
type Transforms struct {
	Chain *transform.Chain
	// Context is the context headers every change record carries
	// (ContextHeaders).
	Context []transform.Header
	// Ensure creates a topic the chain routes a record to, as the
	// pipeline creates its other topics (nil: none are created).
	Ensure func(topic string) error
	// Errors counts the records the chain or a converter failed on, by
	// stage (transform, topic, key, value, headers); nil: not counted.
	Errors *prometheus.CounterVec
	// Reserved are topics no record may be routed to (mooncdc's offsets
	// topic): a record the chain sends there parks its table.
	Reserved []string
}

// SetTransforms makes the codecs made afterwards run t's chain on every
// record.
func (f *Formats) SetTransforms(t *Transforms) { f.transforms = t }

// FormatError is a record the chain returned that its converter could not
// write: which part (key, value, headers) and why. It parks its table.
type FormatError struct {
	Stage string
	Err   error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("the %s converter failed on the transformed record: %v", e.Stage, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *FormatError) TableLocal() {}

// The converters a side (key or value) is written with.
const (
	sideJSON = iota
	sideJSONSchemas
	sideAvro
	// sideCloudEvents is format.value cloudevents: Debezium's
	// CloudEventsConverter on the record the chain returns (the event of
	// an envelope, null for any other value: connectformat.AppendCloudEvent).
	sideCloudEvents = sideJSONSchema + 1
)

// chained is a codec's chain: its view, the converters, and what it
// registered. Used from the codec's goroutine only.
type chained struct {
	t          *Transforms
	view       *ConnectView
	key, value int // sideJSON …
	opts       connectformat.ConverterOptions
	reg        *Registry
	// avro holds the registry id of each schema under each subject,
	// texts the Avro text of each schema: both by schema pointer, which
	// the plans and the transforms' caches keep stable.
	avro  map[avroSubject]int
	texts map[*schema.Schema]string
	// topics are the topics ensured (or known to exist) already.
	topics map[string]bool
	// schemas are the Protobuf and JSON Schema schemas rendered
	// (registered_formats.go); their ids are in avro too, by the same key.
	schemas schemas
	// jsonSchemaOpts are the JSON Schema converter's settings
	// (format.json_schema_additional_properties).
	jsonSchemaOpts connectformat.JSONSchemaOptions
	// ceOpts are format.value cloudevents' (cloudevents.go).
	ceOpts connectformat.CloudEventsOptions
}

type avroSubject struct {
	s     *schema.Schema
	topic string
	key   bool
}

func newChained(f *Formats, t *Transforms, cfg schema.Config) *chained {
	side := func(format string) int {
		if side, ok := registeredSide(format); ok {
			return side
		}
		if format == config.FormatCloudEvents {
			return sideCloudEvents
		}
		switch {
		case format == config.FormatAvro:
			return sideAvro
		case f.cfg.JSONSchemas:
			return sideJSONSchemas
		}
		return sideJSON
	}
	return &chained{t: t, view: NewConnectView(cfg, t.Context),
		key: side(f.cfg.Key), value: side(f.cfg.Value), opts: connectformat.ConverterOptions{KeepNulls: cfg.KeepNulls},
		reg: f.Registry, avro: map[avroSubject]int{}, texts: map[*schema.Schema]string{}, topics: map[string]bool{},
		schemas: schemas{pb: map[*schema.Schema]*connectformat.Protobuf{}, js: map[*schema.Schema]*connectformat.JSONSchema{},
			refs: map[string]sr.SchemaReference{}},
		jsonSchemaOpts: connectformat.JSONSchemaOptions{ClosedObjects: !f.cfg.JSONSchemaAdditionalProperties},
		ceOpts:         connectformat.CloudEventsOptions{DataSchemas: f.cfg.JSONSchemas, KeepNulls: cfg.KeepNulls}}
}

// Chained reports whether the codec runs a transform chain.
func (c *Codec) Chained() bool { return c.chain != nil }

// dropped reports whether rec is a record the chain dropped: made so that
// the callers' bookkeeping (a copy's held row) goes on, never sent.
func dropped(rec *kgo.Record) bool { return rec.Topic == "" }

// apply runs the chain on r, the record of a change at lsn on topic;
// keep is false when it drops the record.
func (ch *chained) apply(r transform.Record, lsn schema.LSN) (transform.Record, bool, error) {
	out, keep, err := ch.t.Chain.Apply(r)
	if err != nil {
		ch.count("transform")
		return out, false, &RecordError{Topic: r.Topic, LSN: lsn, Err: err}
	}
	return out, keep, nil
}

func (ch *chained) count(stage string) {
	if ch.t.Errors != nil {
		ch.t.Errors.WithLabelValues(stage).Inc()
	}
}

// encode writes r, as the chain returned it for the change at lsn, into
// rec (a pooled record, its headers set by the caller already): its
// topic (created when new), key, value and headers. maxRecord is
// kafka.max_record_bytes.
func (ch *chained) encode(rec *kgo.Record, r *transform.Record, lsn schema.LSN, now time.Time, maxRecord int) error {
	if !ch.topics[r.Topic] {
		if err := config.CheckTopicName(r.Topic); err != nil {
			return ch.failed(r.Topic, lsn, "topic", fmt.Errorf("the transformed record's topic %q %w", r.Topic, err))
		}
		if slices.Contains(ch.t.Reserved, r.Topic) {
			return ch.failed(r.Topic, lsn, "topic", fmt.Errorf("the transformed record's topic %q is mooncdc's own (kafka.offsets_topic); route it elsewhere", r.Topic))
		}
		if err := ch.ensure(r.Topic); err != nil {
			return err
		}
	}
	key, keyOK, err := ch.appendSide(rec.Key[:0], r.Topic, r.KeySchema, r.Key, true, ch.key)
	if err != nil {
		rec.Key = key[:0]
		return ch.failed(r.Topic, lsn, "key", err)
	}
	value, valueOK, err := ch.appendSide(rec.Value[:0], r.Topic, r.ValueSchema, r.Value, false, ch.value)
	if err == nil && len(key)+len(value) > maxRecord {
		err = &RecordTooLargeError{Size: len(key) + len(value), Max: maxRecord}
	}
	if err != nil {
		rec.Key, rec.Value = key[:0], value[:0]
		var tl *RecordTooLargeError
		if errors.As(err, &tl) {
			return &RecordError{Topic: r.Topic, LSN: lsn, Err: err}
		}
		return ch.failed(r.Topic, lsn, "value", err)
	}
	rec.Topic, rec.Key, rec.Value = r.Topic, nil, nil
	if keyOK {
		rec.Key = key
	}
	if valueOK {
		rec.Value = value
	}
	rec.Timestamp = now
	if r.Timestamp != nil {
		rec.Timestamp = time.UnixMilli(*r.Timestamp)
	}
	h := rec.Headers
	for _, x := range r.Headers {
		b, ok, err := connectformat.AppendHeaderValue(nil, x.Value)
		if err != nil {
			return ch.failed(r.Topic, lsn, "headers", fmt.Errorf("header %q: %w", x.Key, err))
		}
		if !ok {
			b = nil
		}
		h = append(h, kgo.RecordHeader{Key: x.Key, Value: b})
	}
	rec.Headers = h
	return nil
}

func (ch *chained) failed(topic string, lsn schema.LSN, stage string, err error) error {
	var rw *registryError
	switch {
	case errors.As(err, &rw):
		return rw.err // unreachable, or stopping: retried as Prepare's are
	case errors.As(err, new(*TableSchemaError)):
		return &RecordError{Topic: topic, LSN: lsn, Err: err} // parks the table
	}
	ch.count(stage)
	return &RecordError{Topic: topic, LSN: lsn, Err: &FormatError{Stage: stage, Err: err}}
}

// registryError carries an error of the registry that is not the
// table's (unreachable, stopping, credentials) through appendSide.
type registryError struct{ err error }

func (e *registryError) Error() string { return e.err.Error() }
func (e *registryError) Unwrap() error { return e.err }

// ensure creates topic the first time a record goes to it.
func (ch *chained) ensure(topic string) error {
	if ch.t.Ensure != nil {
		if err := ch.t.Ensure(topic); err != nil {
			return err
		}
	}
	ch.topics[topic] = true
	return nil
}

// appendSide writes one side of a record with its converter; ok is false
// when the converter writes no bytes (a null).
func (ch *chained) appendSide(dst []byte, topic string, s *schema.Schema, v any, isKey bool, side int) ([]byte, bool, error) {
	switch side {
	case sideJSON, sideJSONSchemas:
		return connectformat.AppendJSONConverter(dst, s, v, side == sideJSONSchemas, ch.opts)
	case sideProtobuf, sideJSONSchema:
		return ch.appendRegistered(dst, topic, s, v, isKey, side)
	case sideCloudEvents:
		return connectformat.AppendCloudEvent(dst, s, v, ch.ceOpts)
	}
	// AvroConverter.fromConnectData: a null value is no bytes, whatever
	// its schema (the serializer returns null for null).
	if v == nil {
		return dst, false, nil
	}
	if s == nil {
		return dst, false, fmt.Errorf("a schemaless %T cannot be written as Avro", v)
	}
	id, err := ch.avroID(topic, s, isKey)
	if err != nil {
		return dst, false, err
	}
	start := len(dst)
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(id))
	if dst, err = connectformat.AppendAvro(dst, s, v, ch.opts); err != nil {
		return dst[:start], false, err
	}
	return dst, true, nil
}

// avroID is the registry id of s under topic's key or value subject,
// registered at its first use. A schema that is not valid Avro, or that
// the registry refuses, is a *TableSchemaError; an unreachable registry
// blocks until it answers or the pipeline stops.
func (ch *chained) avroID(topic string, s *schema.Schema, isKey bool) (int, error) {
	k := avroSubject{s, topic, isKey}
	if id, ok := ch.avro[k]; ok {
		return id, nil
	}
	text, ok := ch.texts[s]
	if !ok {
		var err error
		if text, err = schema.RenderAvro(s); err != nil {
			return 0, &TableSchemaError{Err: err}
		}
		ch.texts[s] = text
	}
	ctx := ch.reg.Stopping
	if ctx == nil {
		ctx = context.Background()
	}
	subject, err := ch.reg.subject(ctx, topicSubject(topic, isKey))
	if err != nil {
		return 0, &registryError{err}
	}
	id, err := ch.reg.id(ctx, subject, text)
	switch {
	case err == nil:
	case ctx.Err() != nil, errors.As(err, new(*config.ConfigError)), registryRetryable(err):
		return 0, &registryError{err}
	default:
		return 0, &TableSchemaError{Err: err}
	}
	ch.avro[k] = id
	return id, nil
}

// Chain returns the transform chain the codecs run, nil without one.
func (f *Formats) Chain() *transform.Chain {
	if f.transforms == nil {
		return nil
	}
	return f.transforms.Chain
}
