package connector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// recordEncoder is what both record formats offer (schema.JSONEncoder,
// schema.AvroEncoder); a change's key and value each format encodes with
// its own arguments (codec.AppendKey).
type recordEncoder interface {
	MarkSnapshot(value []byte, from, to string) ([]byte, bool)
	AppendTxKey(dst []byte, ev *schema.TxEvent) ([]byte, error)
	AppendTxValue(dst []byte, ev *schema.TxEvent) ([]byte, error)
	AppendSchemaChangeKey(dst []byte, sc *schema.SchemaChange) ([]byte, error)
	AppendSchemaChangeValue(dst []byte, sc *schema.SchemaChange) ([]byte, error)
}

// codec encodes records with the configured key and value formats. Each
// worker has its own (encoders are not safe for concurrent use); they
// share the pipeline's registry. A change is encoded with its relation's
// schema plan (recordPlan.splan), which the codecs of all workers share.
// Before the first record of a relation's plan (or of logical messages),
// prepare registers its Avro schemas and keeps their ids.
type codec struct {
	naming             config.TopicNaming // the topic of each table's records
	key, value         recordEncoder
	keyJSON, valueJSON *schema.JSONEncoder // the JSON formats (nil for Avro)
	keyAvro, valueAvro *schema.AvroEncoder
	ids                avroIDs // the registry ids of the plans prepare registered
	reg                *registry
	maxRecord          int // kafka.max_record_bytes
	// flat is format.envelope flat (nil for debezium); meta gives its
	// headers' values (flatheaders.go).
	flat *schema.FlatConfig
	meta *schema.MetaWriter
	// outbox is format.envelope outbox (nil otherwise): outbox.go.
	outbox *outboxCodec
}

// formats makes the codecs of the pipeline's workers (each its own:
// encoders are not safe for concurrent use): format.key and format.value,
// the envelope, and the registry they share. Built once per run, when the
// database name is known; safe for concurrent use.
type formats struct {
	cfg       config.FormatConfig
	enc       schema.Config
	reg       *registry
	naming    config.TopicNaming
	maxRecord int // kafka.max_record_bytes
	log       *zap.Logger
}

// encoderConfig is the schema.Config of the pipeline.
func (p *Pipeline) encoderConfig() schema.Config {
	f := p.cfg.Format
	moneyDigits := f.MoneyFractionDigits // 0 is a setting: whole units
	flat, _ := f.SchemaFlat()            // refused by Validate when it fails
	return schema.Config{Flat: flat,
		Name: p.cfg.Kafka.TopicPrefix, Database: p.database, Version: config.Version,
		UnavailableValue: f.UnavailableValuePlaceholder, DecimalMode: f.DecimalHandlingMode,
		BinaryMode: f.BinaryHandlingMode, TimePrecisionMode: f.TimePrecisionMode,
		IntervalMode: f.IntervalHandlingMode, HstoreMode: f.HstoreHandlingMode,
		MoneyFractionDigits: &moneyDigits, IncludeUnknownDatatypes: f.IncludeUnknownDatatypes,
		KeepNulls: !f.ReplaceNullWithDefault, OnUnknownType: p.unknownType,
		ShapeColumn: p.columns.ShapeFunc(), PlanFormats: planFormats(f),
		Route: func(schemaName, table string) (string, string, string) {
			tt := p.naming.Of(schemaName, table)
			return tt.SchemaName, tt.KeyField, tt.KeyValue
		},
	}
}

// planFormats are the formats of format.key and format.value, which the
// relations' schema plans serve (as codec picks their encoders).
func planFormats(f config.FormatConfig) schema.PlanFormats {
	pf := schema.PlanJSON
	for _, format := range []string{f.Key, f.Value} {
		switch {
		case format == config.FormatAvro:
			pf |= schema.PlanAvro
		case f.JSONSchemas:
			pf |= schema.PlanJSONSchemas
		}
	}
	return pf
}

// formats returns the pipeline's formats, for the database it streams.
func (p *Pipeline) formats() *formats {
	return &formats{cfg: p.cfg.Format, enc: p.encoderConfig(), reg: p.registry, naming: p.naming,
		maxRecord: int(p.cfg.Kafka.MaxRecordBytes), log: p.log}
}

// unknownType warns once per column of a type without a mapping.
func (p *Pipeline) unknownType(table, column, typ string) {
	if _, seen := p.unknownTypes.LoadOrStore(table+"\x00"+column, true); seen {
		return
	}
	p.log.Warn("column type has no mapping; its values are sent as their text form (a string)",
		zap.String("table", table), zap.String("column", column), zap.String("type", typ))
}

// codec returns a new codec for one worker.
func (f *formats) codec() *codec {
	cfg := f.enc
	c := &codec{reg: f.reg, maxRecord: f.maxRecord, naming: f.naming}
	pick := func(format string) (recordEncoder, *schema.AvroEncoder) {
		switch {
		case format == config.FormatAvro:
			a := schema.NewAvroEncoder(cfg)
			return a, a
		case f.cfg.JSONSchemas:
			return schema.NewJSONSchemaEncoder(cfg), nil
		}
		return schema.NewJSONEncoder(cfg), nil
	}
	if cfg.Flat != nil {
		c.flat, c.meta = cfg.Flat, schema.NewMetaWriter(cfg)
	}
	c.key, c.keyAvro = pick(f.cfg.Key)
	c.value, c.valueAvro = pick(f.cfg.Value)
	c.keyJSON, _ = c.key.(*schema.JSONEncoder)
	c.valueJSON, _ = c.value.(*schema.JSONEncoder)
	if ob, _ := f.cfg.SchemaOutbox(); ob != nil { // refused by Validate when it fails
		o := &outboxCodec{cfg: ob, rows: schema.NewJSONEncoder(cfg), keyAvro: c.keyAvro, valueAvro: c.valueAvro,
			reg: f.reg, valid: map[string]bool{}, log: f.log.Named("outbox")}
		o.key, o.value = c.keyJSON, c.valueJSON
		c.outbox = o
	}
	return c
}

// prepare registers the Avro schemas of the records of plan p on topic (p
// nil: logical messages) under TopicNameStrategy, <topic>-key and
// <topic>-value, and keeps their ids for p. It blocks while the registry
// is unreachable; a schema the registry refuses, or that is not valid
// Avro, is a *tableSchemaError.
func (c *codec) prepare(ctx context.Context, topic string, p *schema.Plan) error {
	var ids *schema.AvroIDs
	if p != nil && (c.keyAvro != nil || c.valueAvro != nil) {
		ids = c.ids.of(p)
	}
	return c.register(ctx, topic, func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error {
		return enc.Register(p, ids, key, value, register)
	})
}

// prepareTx registers the Avro schemas of the transaction metadata
// records on topic, as prepare does for a table's.
func (c *codec) prepareTx(ctx context.Context, topic string) error {
	return c.register(ctx, topic, func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error {
		return enc.RegisterTxMetadata(key, value, register)
	})
}

// prepareSchemaChange registers the Avro schemas of the schema-change
// records on topic.
func (c *codec) prepareSchemaChange(ctx context.Context, topic string) error {
	return c.register(ctx, topic, func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error {
		return enc.RegisterSchemaChange(key, value, register)
	})
}

// register has each Avro encoder register its schemas (with do) under
// topic's subjects, and classifies the failure.
func (c *codec) register(ctx context.Context, topic string,
	do func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error) error {
	var regErr error
	register := func(isKey bool, s string) (int, error) {
		subject, err := c.reg.subject(ctx, topicSubject(topic, isKey))
		if err != nil {
			regErr = err
			return 0, err
		}
		id, err := c.reg.id(ctx, subject, s)
		regErr = err
		return id, err
	}
	for _, role := range []struct {
		enc        *schema.AvroEncoder
		key, value bool
	}{{c.keyAvro, true, false}, {c.valueAvro, false, true}} {
		if role.enc == nil {
			continue
		}
		err := do(role.enc, role.key, role.value, register)
		switch {
		case err == nil:
		case err != regErr:
			return &tableSchemaError{err: err} // the schema is not valid Avro
		case ctx.Err() != nil, errors.As(err, new(*config.ConfigError)):
			return err // stopping, or every table would fail alike (credentials)
		case !registryRetryable(err):
			return &tableSchemaError{err: err} // refused: incompatible, not registered, bad request
		default:
			return err
		}
	}
	return nil
}

// AppendTxKey and AppendTxValue encode a transaction metadata record.
func (c *codec) AppendTxKey(dst []byte, ev *schema.TxEvent) ([]byte, error) {
	return c.key.AppendTxKey(dst, ev)
}

func (c *codec) AppendTxValue(dst []byte, ev *schema.TxEvent) ([]byte, error) {
	return c.value.AppendTxValue(dst, ev)
}

// AppendSchemaChangeKey and AppendSchemaChangeValue encode a schema-change
// record.
func (c *codec) AppendSchemaChangeKey(dst []byte, sc *schema.SchemaChange) ([]byte, error) {
	return c.key.AppendSchemaChangeKey(dst, sc)
}

func (c *codec) AppendSchemaChangeValue(dst []byte, sc *schema.SchemaChange) ([]byte, error) {
	return c.value.AppendSchemaChangeValue(dst, sc)
}

// AppendKey and AppendValue encode ch, a change of the relation of plan p
// (nil for a logical message); with Avro, p's schemas are registered
// (prepare).
func (c *codec) AppendKey(dst []byte, p *schema.Plan, ch *schema.Change) ([]byte, bool, error) {
	if c.keyAvro != nil {
		return c.keyAvro.AppendKey(dst, p, c.ids.get(p), ch)
	}
	return c.keyJSON.AppendKey(dst, p, ch)
}

func (c *codec) AppendValue(dst []byte, p *schema.Plan, ch *schema.Change, now time.Time) ([]byte, error) {
	if c.valueAvro != nil {
		return c.valueAvro.AppendValue(dst, p, c.ids.get(p), ch, now)
	}
	return c.valueJSON.AppendValue(dst, p, ch, now)
}

// checkSize refuses a record above kafka.max_record_bytes before it is
// produced: the broker would refuse it anyway, later and for the whole
// batch. The table is parked; nothing of it is skipped silently.
func (c *codec) checkSize(key, value []byte) error {
	if n := len(key) + len(value); n > c.maxRecord {
		return &RecordTooLargeError{Size: n, Max: c.maxRecord}
	}
	return nil
}

// RecordTooLargeError is a record above kafka.max_record_bytes.
type RecordTooLargeError struct{ Size, Max int }

func (e *RecordTooLargeError) Error() string {
	return fmt.Sprintf("record of %d bytes is above kafka.max_record_bytes %d; raise it (and the brokers' message.max.bytes, "+
		"or the topic's max.message.bytes if the topic was not created by mooncdc), then run `mooncdc resnapshot` for the table", e.Size, e.Max)
}

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *RecordTooLargeError) TableLocal() {}

// tableSchemaError is a table whose records cannot be written until a
// person acts: its schema is refused by the registry or is not valid. The
// table goes errored; the stream and other tables go on.
type tableSchemaError struct{ err error }

func (e *tableSchemaError) Error() string { return e.err.Error() }

func (e *tableSchemaError) Unwrap() error { return e.err }

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *tableSchemaError) TableLocal() {}
