package record

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/connectformat"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is format.value cloudevents: Debezium's CloudEventsConverter
// with its defaults (serializer.type and data.serializer.type json,
// extension attributes on, metadata from the value, id and type
// generated; CloudEventsConverterConfig.java:27-83 at v3.6.1.Final) and
// json.schemas.enable as format.json_schemas, json.replace.null.with.default
// as format.replace_null_with_default. A change's value is read
// as Kafka Connect holds it (its plain JSON read back under its Connect
// schema, as the Connect view does) and written by
// connectformat.AppendCloudEvent. A value that is not a change envelope
// (a transaction record, a schema change, a logical message, a
// heartbeat) is written null, as the converter writes it
// (CloudEventsConverter.java:264-272: "TODO Handling of non-data
// messages"); a tombstone stays a tombstone (:264-266).

// cloudEventsValue is the value encoder of format.value cloudevents; one
// per codec (its JSON encoder keeps scratch buffers).
type cloudEventsValue struct {
	json *schema.JSONEncoder
	buf  []byte
	opts connectformat.CloudEventsOptions
}

func newCloudEventsValue(cfg schema.Config, schemas bool) *cloudEventsValue {
	// The data's JsonConverter takes format.replace_null_with_default as
	// json.replace.null.with.default (KeepNulls is its negation).
	return &cloudEventsValue{json: schema.NewJSONEncoder(cfg),
		opts: connectformat.CloudEventsOptions{DataSchemas: schemas, KeepNulls: cfg.KeepNulls}}
}

// AppendValue appends the CloudEvent of ch, a change of the relation of
// plan p (nil for a logical message); nil when the converter writes none.
func (c *cloudEventsValue) AppendValue(dst []byte, p *schema.Plan, ch *schema.Change, now time.Time) ([]byte, error) {
	var err error
	if c.buf, err = c.json.AppendValue(c.buf[:0], p, ch, now); err != nil {
		return dst, err
	}
	_, vs := p.ConnectSchemas(ch)
	v, err := transform.FromJSON(vs, c.buf)
	if err != nil {
		return dst, fmt.Errorf("internal: the record's value does not read back under its Connect schema: %w", err)
	}
	out, ok, err := connectformat.AppendCloudEvent(dst, vs, v, c.opts)
	if err != nil || !ok {
		return nil, err
	}
	return out, nil
}

// The snapshot marker in the event: source.snapshot is the extension
// attribute iodebeziumsnapshot, a string (CloudEventsConverter.java:521-526,
// 552-597); the attributes come before data, so the first match is it.
const ceSnapshotAttr = `"iodebeziumsnapshot":"`

// MarkSnapshot rewrites a copy's last event's snapshot attribute.
func (c *cloudEventsValue) MarkSnapshot(value []byte, from, to string) ([]byte, bool) {
	old := ceSnapshotAttr + from + `"`
	i := bytes.Index(value, []byte(old))
	if i < 0 {
		return value, false
	}
	i += len(ceSnapshotAttr)
	return splice(value, i, i+len(from), to), true
}

// splice replaces value[i:j] with s.
func splice(value []byte, i, j int, s string) []byte {
	out := make([]byte, 0, len(value)-(j-i)+len(s))
	out = append(out, value[:i]...)
	out = append(out, s...)
	return append(out, value[j:]...)
}

// AppendTxValue and AppendSchemaChangeValue write null: the converter
// writes no bytes for a value that is not a change envelope.
func (c *cloudEventsValue) AppendTxValue([]byte, *schema.TxEvent) ([]byte, error) { return nil, nil }

func (c *cloudEventsValue) AppendSchemaChangeValue([]byte, *schema.SchemaChange) ([]byte, error) {
	return nil, nil
}

// errValueOnly: cloudevents is never a key format (config.Validate).
var errValueOnly = errors.New("internal: cloudevents is a value format")

func (c *cloudEventsValue) AppendTxKey([]byte, *schema.TxEvent) ([]byte, error) {
	return nil, errValueOnly
}

func (c *cloudEventsValue) AppendSchemaChangeKey([]byte, *schema.SchemaChange) ([]byte, error) {
	return nil, errValueOnly
}
