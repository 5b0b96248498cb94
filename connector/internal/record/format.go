package record

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
// its own arguments (Codec.AppendKey).
type recordEncoder interface {
	MarkSnapshot(value []byte, from, to string) ([]byte, bool)
	AppendTxKey(dst []byte, ev *schema.TxEvent) ([]byte, error)
	AppendTxValue(dst []byte, ev *schema.TxEvent) ([]byte, error)
	AppendSchemaChangeKey(dst []byte, sc *schema.SchemaChange) ([]byte, error)
	AppendSchemaChangeValue(dst []byte, sc *schema.SchemaChange) ([]byte, error)
}

// Codec encodes records with the configured key and value formats. Each
// worker has its own (encoders are not safe for concurrent use); they
// share the pipeline's registry. A change is encoded with its relation's
// schema plan (Plan.SchemaPlan), which the codecs of all workers share.
// Before the first record of a relation's plan (or of logical messages),
// Prepare registers its Avro schemas and keeps their ids.
type Codec struct {
	naming             config.TopicNaming // the topic of each table's records
	key, value         recordEncoder
	keyJSON, valueJSON *schema.JSONEncoder // the JSON formats (nil for Avro)
	keyAvro, valueAvro *schema.AvroEncoder
	valueCE            *cloudEventsValue // format.value cloudevents (cloudevents.go)
	ids                avroIDs           // the registry ids of the plans Prepare registered
	reg                *Registry
	maxRecord          int // kafka.max_record_bytes
	// flat is format.envelope flat (nil for debezium); meta gives its
	// headers' values (flatheaders.go).
	flat *schema.FlatConfig
	meta *schema.MetaWriter
	// outbox is format.envelope outbox (nil otherwise): outbox.go.
	outbox *OutboxCodec
	// chain is the transforms chain (nil without one): chain.go.
	chain *chained
}

// Formats makes the codecs of the pipeline's workers (each its own:
// encoders are not safe for concurrent use): format.key and format.value,
// the envelope, and the registry they share. Built once per run, when the
// database name is known; safe for concurrent use.
type Formats struct {
	cfg       config.FormatConfig
	enc       schema.Config
	Registry  *Registry
	Naming    config.TopicNaming
	MaxRecord int // kafka.max_record_bytes
	log       *zap.Logger
	// transforms is the chain every codec runs (nil: none; chain.go).
	transforms *Transforms
}

// EncoderConfig is the schema.Config of cfg's formats for the records of
// database: topic names from naming, column selection and mappers from
// columns (nil for none), onUnknownType told of each column of a type
// without a mapping.
func EncoderConfig(cfg *config.Config, database string, naming config.TopicNaming, columns *config.ColumnRules,
	onUnknownType func(table, column, typ string)) schema.Config {
	f := cfg.Format
	moneyDigits := f.MoneyFractionDigits // 0 is a setting: whole units
	flat, _ := f.SchemaFlat()            // refused by Validate when it fails
	return schema.Config{Flat: flat,
		Name: cfg.Kafka.TopicPrefix, Database: database, Version: config.Version,
		UnavailableValue: f.UnavailableValuePlaceholder, DecimalMode: f.DecimalHandlingMode,
		BinaryMode: f.BinaryHandlingMode, TimePrecisionMode: f.TimePrecisionMode,
		IntervalMode: f.IntervalHandlingMode, HstoreMode: f.HstoreHandlingMode,
		MoneyFractionDigits: &moneyDigits, IncludeUnknownDatatypes: f.IncludeUnknownDatatypes,
		KeepNulls: !f.ReplaceNullWithDefault, OnUnknownType: onUnknownType,
		ShapeColumn: columns.ShapeFunc(), PlanFormats: planFormats(f),
		Route: func(schemaName, table string) (string, string, string) {
			tt := naming.Of(schemaName, table)
			return tt.SchemaName, tt.KeyField, tt.KeyValue
		},
	}
}

// planFormats are the formats of format.key and format.value, which the
// relations' schema plans serve (as Codec picks their encoders).
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

// NewFormats makes the formats of format (with the encoders' settings
// enc), registering in reg (nil without Avro), naming each table's topic,
// refusing records above maxRecord bytes (kafka.max_record_bytes).
func NewFormats(format config.FormatConfig, enc schema.Config, reg *Registry, naming config.TopicNaming, maxRecord int, log *zap.Logger) *Formats {
	return &Formats{cfg: format, enc: enc, Registry: reg, Naming: naming, MaxRecord: maxRecord, log: log}
}

// SchemaConfig is the encoders' settings, which the record plans make
// their schema plans with (NewPlanner).
func (f *Formats) SchemaConfig() schema.Config { return f.enc }

// Codec returns a new codec for one worker.
func (f *Formats) Codec() *Codec {
	cfg := f.enc
	c := &Codec{reg: f.Registry, maxRecord: f.MaxRecord, naming: f.Naming}
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
	if f.cfg.Value == config.FormatCloudEvents {
		c.valueCE = newCloudEventsValue(cfg, f.cfg.JSONSchemas)
		c.value = c.valueCE
	} else {
		c.value, c.valueAvro = pick(f.cfg.Value)
	}
	c.keyJSON, _ = c.key.(*schema.JSONEncoder)
	c.valueJSON, _ = c.value.(*schema.JSONEncoder)
	if ob, _ := f.cfg.SchemaOutbox(); ob != nil { // refused by Validate when it fails
		o := &OutboxCodec{cfg: ob, rows: schema.NewJSONEncoder(cfg), keyAvro: c.keyAvro, valueAvro: c.valueAvro,
			reg: f.Registry, valid: map[string]bool{}, log: f.log.Named("outbox")}
		o.key, o.value = c.keyJSON, c.valueJSON
		c.outbox = o
	}
	view := viewFormat(f.cfg.Key) || viewFormat(f.cfg.Value)
	switch t := f.transforms; {
	case t != nil && (t.Chain.Len() > 0 || view):
		c.chain = newChained(f, t, cfg)
	case view:
		// Protobuf and JSON Schema convert Connect data: the chained path
		// with no transform (registered_formats.go).
		c.chain = newChained(f, noChain(), cfg)
	}
	return c
}

// Prepare registers the Avro schemas of the records of plan p on topic (p
// nil: logical messages) under TopicNameStrategy, <topic>-key and
// <topic>-value, and keeps their ids for p. It blocks while the registry
// is unreachable; a schema the registry refuses, or that is not valid
// Avro, is a *TableSchemaError.
func (c *Codec) Prepare(ctx context.Context, topic string, p *schema.Plan) error {
	var ids *schema.AvroIDs
	if p != nil && (c.keyAvro != nil || c.valueAvro != nil) {
		ids = c.ids.of(p)
	}
	return c.register(ctx, topic, func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error {
		return enc.Register(p, ids, key, value, register)
	})
}

// PrepareTx registers the Avro schemas of the transaction metadata
// records on topic, as prepare does for a table's.
func (c *Codec) PrepareTx(ctx context.Context, topic string) error {
	return c.register(ctx, topic, func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error {
		return enc.RegisterTxMetadata(key, value, register)
	})
}

// PrepareSchemaChange registers the Avro schemas of the schema-change
// records on topic.
func (c *Codec) PrepareSchemaChange(ctx context.Context, topic string) error {
	return c.register(ctx, topic, func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error {
		return enc.RegisterSchemaChange(key, value, register)
	})
}

// register has each Avro encoder register its schemas (with do) under
// topic's subjects, and classifies the failure.
func (c *Codec) register(ctx context.Context, topic string,
	do func(enc *schema.AvroEncoder, key, value bool, register func(bool, string) (int, error)) error) error {
	if c.chain != nil {
		// With a transform chain, the schemas registered are the
		// transformed records', under their topics, at their first record
		// (chain.go): not the plan's, which no record is written with.
		return nil
	}
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
			return &TableSchemaError{Err: err} // the schema is not valid Avro
		case ctx.Err() != nil, errors.As(err, new(*config.ConfigError)):
			return err // stopping, or every table would fail alike (credentials)
		case !registryRetryable(err):
			return &TableSchemaError{Err: err} // refused: incompatible, not registered, bad request
		default:
			return err
		}
	}
	return nil
}

// AppendTxKey and AppendTxValue encode a transaction metadata record.
func (c *Codec) AppendTxKey(dst []byte, ev *schema.TxEvent) ([]byte, error) {
	return c.key.AppendTxKey(dst, ev)
}

func (c *Codec) AppendTxValue(dst []byte, ev *schema.TxEvent) ([]byte, error) {
	return c.value.AppendTxValue(dst, ev)
}

// AppendSchemaChangeKey and AppendSchemaChangeValue encode a schema-change
// record.
func (c *Codec) AppendSchemaChangeKey(dst []byte, sc *schema.SchemaChange) ([]byte, error) {
	return c.key.AppendSchemaChangeKey(dst, sc)
}

func (c *Codec) AppendSchemaChangeValue(dst []byte, sc *schema.SchemaChange) ([]byte, error) {
	return c.value.AppendSchemaChangeValue(dst, sc)
}

// AppendKey and AppendValue encode ch, a change of the relation of plan p
// (nil for a logical message); with Avro, p's schemas are registered
// (Prepare).
func (c *Codec) AppendKey(dst []byte, p *schema.Plan, ch *schema.Change) ([]byte, bool, error) {
	if c.keyAvro != nil {
		return c.keyAvro.AppendKey(dst, p, c.ids.get(p), ch)
	}
	return c.keyJSON.AppendKey(dst, p, ch)
}

func (c *Codec) AppendValue(dst []byte, p *schema.Plan, ch *schema.Change, now time.Time) ([]byte, error) {
	switch {
	case c.valueAvro != nil:
		return c.valueAvro.AppendValue(dst, p, c.ids.get(p), ch, now)
	case c.valueCE != nil:
		return c.valueCE.AppendValue(dst, p, ch, now)
	}
	return c.valueJSON.AppendValue(dst, p, ch, now)
}

// MarkSnapshot rewrites a snapshot record's source.snapshot marker.
func (c *Codec) MarkSnapshot(value []byte, from, to string) ([]byte, bool) {
	return c.value.MarkSnapshot(value, from, to)
}

// TopicOf is the topic of table schemaName.table's records.
func (c *Codec) TopicOf(schemaName, table string) string { return c.naming.Of(schemaName, table).Topic }

// Outbox is the codec's outbox half (nil without format.envelope
// outbox).
func (c *Codec) Outbox() *OutboxCodec { return c.outbox }

// checkSize refuses a record above kafka.max_record_bytes before it is
// produced: the broker would refuse it anyway, later and for the whole
// batch. The table is parked; nothing of it is skipped silently.
func (c *Codec) checkSize(key, value []byte) error {
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

// TableSchemaError is a table whose records cannot be written until a
// person acts: its schema is refused by the registry or is not valid. The
// table goes errored; the stream and other tables go on.
type TableSchemaError struct{ Err error }

func (e *TableSchemaError) Error() string { return e.Err.Error() }

func (e *TableSchemaError) Unwrap() error { return e.Err }

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *TableSchemaError) TableLocal() {}
