package record

import (
	"fmt"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the Connect view: the records the writer makes, as Kafka
// Connect holds Debezium's records between the connector and the
// converter (a transform.Record: topic, key and value each with its
// Connect schema, headers), which is what a transform chain reads.
//
// Which records: every one. Kafka Connect runs the chain on each record a
// source task returns (AbstractWorkerSourceTask.sendRecords,
// apache/kafka connect/runtime/src/main/java/org/apache/kafka/connect/runtime/AbstractWorkerSourceTask.java:396-405
// at 1eb7644349c): Debezium's change records and their tombstones, its
// transaction BEGIN and END, its schema changes and its heartbeats alike.
// A record the chain drops is not sent, and its offset is committed all
// the same (WorkerSourceTask.recordDropped, WorkerSourceTask.java:126-128).
//
// How: the values are the record's plain JSON (the encoder's own, with
// the converter's schemas.enable=false) read back under the record's
// Connect schema with transform.FromJSON, which is JsonConverter's
// toConnectData. Both the JSON and the Avro encoders render the same
// schema.Schema, so the view is the record both would write, decoded;
// it costs an encode and a decode per record (BenchmarkConnectView), and
// is only made when a chain is configured.
//
// What Debezium sets besides (EventDispatcher, debezium-connector-common/src/main/java/io/debezium/pipeline/EventDispatcher.java
// at v3.6.1.Final), each reproduced:
//   - Partition and Timestamp are nil on a change record, its tombstone
//     and a transaction record (EventDispatcher.java:535-542, 547-555;
//     TransactionMonitor.java:169-177); a schema change and a heartbeat
//     name partition 0 (EventDispatcher.java:727-732; HeartbeatImpl.java:173-178).
//   - A change record, its tombstone and a schema change carry the four
//     context headers (extended.headers.enabled, true by default:
//     EventDispatcher.java:562-571, DebeziumHeaderProducer.java:61-70);
//     a transaction record and a heartbeat carry none.
//   - A truncate's key schema is null (EventDispatcher.java:527-528), as
//     is a key-less table's.

// The names of Debezium's context headers (debezium-util/src/main/java/io/debezium/connector/common/DebeziumHeaders.java:10-15).
const (
	HeaderContextLogicalName   = "__debezium.context.connectorLogicalName"
	HeaderContextTaskID        = "__debezium.context.taskId"
	HeaderContextConnectorName = "__debezium.context.connectorName"
	HeaderContextRunID         = "__debezium.context.runId"
)

// ContextHeaders returns Debezium's context headers of a Postgres
// connector with topic prefix logicalName in the run runID (a UUID, new
// at every start as Debezium's CdcSourceTaskContext makes one): the
// logical name, task id "0" (one task: CdcSourceTaskContext.java:51-55),
// the connector name "postgresql" (PostgresConnectorConfig.getConnectorName,
// PostgresConnectorConfig.java:1775-1777) and the run id, each a
// required string (DebeziumHeaderProducer.java:64-67).
func ContextHeaders(logicalName, runID string) []transform.Header {
	str := &schema.Schema{Type: schema.TypeString}
	return []transform.Header{
		{Key: HeaderContextLogicalName, Schema: str, Value: logicalName},
		{Key: HeaderContextTaskID, Schema: str, Value: "0"},
		{Key: HeaderContextConnectorName, Schema: str, Value: "postgresql"},
		{Key: HeaderContextRunID, Schema: str, Value: runID},
	}
}

// ConnectView makes the Connect view of records. Make it with
// NewConnectView; like a Codec it is used from one goroutine (its encoder
// keeps scratch buffers). The Records it returns share nothing with it
// but their schemas (a plan's, immutable) and the context headers (read
// only: transforms copy what they change).
type ConnectView struct {
	enc     *schema.JSONEncoder
	buf     []byte
	context []transform.Header
}

// NewConnectView returns a view of the records made under cfg (the
// encoders' settings: Formats.SchemaConfig), carrying the context headers
// context (ContextHeaders; nil for none, as with extended.headers.enabled
// false).
func NewConnectView(cfg schema.Config, context []transform.Header) *ConnectView {
	return &ConnectView{enc: schema.NewJSONEncoder(cfg), context: context[:len(context):len(context)]}
}

// Change returns the record of ch, a change of the relation of plan sp
// (nil for a logical message) on topic, encoded at now; withValue false
// is the flat envelope's delete-to-tombstone (the delete with a null value
// and value schema). A value that cannot be encoded is the encoder's
// error, as Codec.AppendValue gives it.
func (v *ConnectView) Change(topic string, sp *schema.Plan, ch *schema.Change, now time.Time, withValue bool) (transform.Record, error) {
	r := transform.Record{Topic: topic, Headers: v.context}
	keySchema, valueSchema := sp.ConnectSchemas(ch)
	var hasKey bool
	var err error
	v.buf, hasKey, err = v.enc.AppendKey(v.buf[:0], sp, ch)
	if err != nil {
		return transform.Record{}, err
	}
	if hasKey {
		if r.Key, err = v.read(keySchema, "key"); err != nil {
			return transform.Record{}, err
		}
		r.KeySchema = keySchema
	}
	if !withValue {
		return r, nil
	}
	if v.buf, err = v.enc.AppendValue(v.buf[:0], sp, ch, now); err != nil {
		return transform.Record{}, err
	}
	if r.Value, err = v.read(valueSchema, "value"); err != nil {
		return transform.Record{}, err
	}
	r.ValueSchema = valueSchema
	return r, nil
}

// Tombstone returns the tombstone that follows the delete r: its topic,
// partition, key, timestamp and headers, a null value without schema
// (EventDispatcher.java:546-556).
func Tombstone(r transform.Record) transform.Record {
	r.ValueSchema, r.Value = nil, nil
	return r
}

// TxEvent returns the record of a transaction's BEGIN or END on topic.
func (v *ConnectView) TxEvent(topic string, ev *schema.TxEvent) (transform.Record, error) {
	keySchema, valueSchema := schema.TxConnectSchemas()
	r := transform.Record{Topic: topic, KeySchema: keySchema, ValueSchema: valueSchema}
	var err error
	if v.buf, err = v.enc.AppendTxKey(v.buf[:0], ev); err != nil {
		return transform.Record{}, err
	}
	if r.Key, err = v.read(keySchema, "key"); err != nil {
		return transform.Record{}, err
	}
	if v.buf, err = v.enc.AppendTxValue(v.buf[:0], ev); err != nil {
		return transform.Record{}, err
	}
	if r.Value, err = v.read(valueSchema, "value"); err != nil {
		return transform.Record{}, err
	}
	return r, nil
}

// SchemaChange returns the schema-change record sc on topic.
func (v *ConnectView) SchemaChange(topic string, sc *schema.SchemaChange) (transform.Record, error) {
	keySchema, valueSchema := schema.SchemaChangeConnectSchemas()
	r := transform.Record{Topic: topic, Partition: new(int32), KeySchema: keySchema, ValueSchema: valueSchema, Headers: v.context}
	var err error
	if v.buf, err = v.enc.AppendSchemaChangeKey(v.buf[:0], sc); err != nil {
		return transform.Record{}, err
	}
	if r.Key, err = v.read(keySchema, "key"); err != nil {
		return transform.Record{}, err
	}
	if v.buf, err = v.enc.AppendSchemaChangeValue(v.buf[:0], sc); err != nil {
		return transform.Record{}, err
	}
	if r.Value, err = v.read(valueSchema, "value"); err != nil {
		return transform.Record{}, err
	}
	return r, nil
}

// The heartbeat's Connect schemas (heartbeat_format.go:
// HeartbeatKeyConnect, HeartbeatValueConnect).
var (
	heartbeatKeySchema = &schema.Schema{Type: schema.TypeStruct, Name: heartbeatKeyName, Version: 1,
		Fields: []schema.Field{{Name: "serverName", Schema: &schema.Schema{Type: schema.TypeString}}}}
	heartbeatValueSchema = &schema.Schema{Type: schema.TypeStruct, Name: heartbeatValueName, Version: 1,
		Fields: []schema.Field{{Name: "ts_ms", Schema: &schema.Schema{Type: schema.TypeInt64}}}}
)

// Heartbeat returns the heartbeat record of server serverName (the topic
// prefix) at tsMs on topic.
func Heartbeat(topic, serverName string, tsMs int64) transform.Record {
	key, value := transform.NewStruct(heartbeatKeySchema), transform.NewStruct(heartbeatValueSchema)
	key.Values[0], value.Values[0] = serverName, tsMs
	return transform.Record{Topic: topic, Partition: new(int32), KeySchema: heartbeatKeySchema, Key: key,
		ValueSchema: heartbeatValueSchema, Value: value}
}

// read decodes the JSON in v.buf as a value of s.
func (v *ConnectView) read(s *schema.Schema, part string) (any, error) {
	x, err := transform.FromJSON(s, v.buf)
	if err != nil {
		return nil, fmt.Errorf("internal: the record's %s does not read back under its Connect schema: %w", part, err)
	}
	return x, nil
}
