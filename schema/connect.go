package schema

import (
	"strconv"
	"strings"
)

// This file holds the Kafka Connect schema model that both record formats
// are derived from: the JSON converter's {"schema":…} block is its
// JsonConverter rendering, the Avro schema its AvroData rendering. The
// column mapping (types.go) builds one per column, so JSON and Avro can
// never disagree on what a column is.

// The Kafka Connect schema types, spelled as JsonConverter spells them
// (apache/kafka connect/json/src/main/java/org/apache/kafka/connect/json/JsonSchema.java:41-58):
// Connect's FLOAT32 and FLOAT64 are "float" and "double" there.
const (
	TypeInt8    = "int8"
	TypeInt16   = "int16"
	TypeInt32   = "int32"
	TypeInt64   = "int64"
	TypeFloat32 = "float"
	TypeFloat64 = "double"
	TypeBoolean = "boolean"
	TypeString  = "string"
	TypeBytes   = "bytes"
	TypeArray   = "array"
	TypeMap     = "map"
	TypeStruct  = "struct"
)

// Schema is a Kafka Connect schema: a type, optionality, an optional
// semantic name with version and parameters, and the parts of a composite.
// Schemas are built once per relation and never changed after.
type Schema struct {
	Type     string
	Optional bool
	Name     string // e.g. "io.debezium.time.MicroTimestamp"; "" for a plain type
	Version  int    // 0 when the schema has none
	Doc      string
	Params   []Param
	// Default, if HasDefault, is the field's default as JsonConverter
	// writes it (the JSON of the value); AvroDefault, when not nil, is
	// the Avro JSON of a bytes default (AvroData.defaultValueFromConnect
	// writes bytes as an ISO-8859-1 string, JsonConverter as base64).
	Default     []byte
	AvroDefault []byte
	HasDefault  bool

	Fields []Field // struct
	Items  *Schema // array
	Keys   *Schema // map
	Values *Schema // map
}

// Param is one entry of a schema's parameters, kept in order.
type Param struct{ Key, Value string }

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Schema *Schema
}

// optional returns a copy of s marked optional (or required).
func (s *Schema) withOptional(opt bool) *Schema {
	if s.Optional == opt {
		return s
	}
	c := *s
	c.Optional = opt
	return &c
}

// appendConnectJSON writes s as Kafka Connect's JsonConverter writes a
// schema (JsonConverter.asJsonSchema): type, the composite parts, optional,
// name, version, doc, parameters, default; field is added by the caller
// for struct fields.
func appendConnectJSON(dst []byte, s *Schema, field string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, s.Type...)
	dst = append(dst, '"')
	switch s.Type {
	case TypeStruct:
		dst = append(dst, `,"fields":[`...)
		for i, f := range s.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendConnectJSON(dst, f.Schema, f.Name)
		}
		dst = append(dst, ']')
	case TypeArray:
		dst = append(dst, `,"items":`...)
		dst = appendConnectJSON(dst, s.Items, "")
	case TypeMap:
		dst = append(dst, `,"keys":`...)
		dst = appendConnectJSON(dst, s.Keys, "")
		dst = append(dst, `,"values":`...)
		dst = appendConnectJSON(dst, s.Values, "")
	}
	dst = append(dst, `,"optional":`...)
	dst = strconv.AppendBool(dst, s.Optional)
	if s.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, s.Name)
	}
	if s.Version != 0 {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, int64(s.Version), 10)
	}
	if s.Doc != "" {
		dst = append(dst, `,"doc":`...)
		dst = appendJSONString(dst, s.Doc)
	}
	if len(s.Params) > 0 {
		dst = append(dst, `,"parameters":`...)
		dst = appendParams(dst, s.Params)
	}
	if s.HasDefault {
		dst = append(dst, `,"default":`...)
		dst = append(dst, s.Default...)
	}
	if field != "" {
		dst = append(dst, `,"field":`...)
		dst = appendJSONString(dst, field)
	}
	return append(dst, '}')
}

// appendParams writes schema parameters as a JSON object, in order.
func appendParams(dst []byte, params []Param) []byte {
	dst = append(dst, '{')
	for i, p := range params {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, p.Key)
		dst = append(dst, ':')
		dst = appendJSONString(dst, p.Value)
	}
	return append(dst, '}')
}

// Schemas shared by every envelope (Debezium's names and versions).
var (
	schemaString         = &Schema{Type: TypeString}
	schemaOptionalString = &Schema{Type: TypeString, Optional: true}
	schemaInt64          = &Schema{Type: TypeInt64}
	schemaOptionalInt64  = &Schema{Type: TypeInt64, Optional: true}

	// sourceSchema is io.debezium.connector.postgresql.Source of Debezium
	// 3.6.1: the common fields of SchemaFactory.sourceInfoSchemaBuilder
	// (SchemaFactory.java:151-163, version 1), then Postgres' own
	// (PostgresSourceInfoStructMaker.java:22-31). origin and origin_lsn
	// stay null: mooncdc does not decode pgoutput Origin messages.
	sourceSchema = &Schema{Type: TypeStruct, Name: "io.debezium.connector.postgresql.Source", Version: 1, Fields: []Field{
		{"version", schemaString},
		{"connector", schemaString},
		{"name", schemaString},
		{"ts_ms", schemaInt64},
		{"snapshot", snapshotSchema},
		{"db", schemaString},
		{"sequence", schemaOptionalString},
		{"ts_us", schemaOptionalInt64},
		{"ts_ns", schemaOptionalInt64},
		{"schema", schemaString},
		{"table", schemaString},
		{"txId", schemaOptionalInt64},
		{"lsn", schemaOptionalInt64},
		{"xmin", schemaOptionalInt64},
		{"origin", schemaOptionalString},
		{"origin_lsn", schemaOptionalInt64},
	}}

	// snapshotSchema is source.snapshot: an optional io.debezium.data.Enum
	// of SnapshotRecord's values, lower case in declaration order, default
	// "false" (SchemaFactory.snapshotRecordSchema, SchemaFactory.java:144-149;
	// SnapshotRecord.java:16-44).
	snapshotSchema = &Schema{Type: TypeString, Optional: true, Name: "io.debezium.data.Enum", Version: 1,
		Params: []Param{{"allowed", strings.Join(SnapshotMarkers, ",")}}, Default: []byte(`"` + SnapshotFalse + `"`), HasDefault: true}

	// transactionSchema is Debezium's transaction block, event.block.
	transactionSchema = &Schema{Type: TypeStruct, Optional: true, Name: "event.block", Version: 1, Fields: []Field{
		{"id", schemaString},
		{"total_order", schemaInt64},
		{"data_collection_order", schemaInt64},
	}}

	// messageKeySchema and messageValueSchema are the schemas of logical
	// decoding messages (Debezium's LogicalDecodingMessageMonitor), each
	// version 1 (PostgresSchemaFactory.java:33-67).
	messageKeySchema = &Schema{Type: TypeStruct, Name: "io.debezium.connector.postgresql.MessageKey", Version: 1, Fields: []Field{
		{"prefix", schemaOptionalString},
	}}
	messageValueSchema = &Schema{Type: TypeStruct, Name: "io.debezium.connector.postgresql.MessageValue", Version: 1, Fields: []Field{
		{"op", schemaString},
		{"ts_ms", schemaOptionalInt64},
		{"source", sourceSchema},
		{"transaction", transactionSchema},
		{"message", &Schema{Type: TypeStruct, Name: "io.debezium.connector.postgresql.Message", Version: 1, Fields: []Field{
			{"prefix", schemaOptionalString},
			{"content", &Schema{Type: TypeBytes, Optional: true}},
		}}},
	}}
)

// envelopeSchema is the value schema of a table's records:
// <prefix>.<schema>.<table>.Envelope, version 2 (Envelope.java:32), with
// Debezium 3.6.1's field order: before, after, source and transaction as
// TableSchemaBuilder adds them (TableSchemaBuilder.java:191-196), then op,
// ts_ms, ts_us, ts_ns (SchemaFactory.java:436-439).
func envelopeSchema(base string, value *Schema) *Schema {
	opt := value.withOptional(true)
	return &Schema{Type: TypeStruct, Name: base + ".Envelope", Version: 2, Fields: []Field{
		{"before", opt},
		{"after", opt},
		{"source", sourceSchema},
		{"transaction", transactionSchema},
		{"op", schemaString},
		{"ts_ms", schemaOptionalInt64},
		{"ts_us", schemaOptionalInt64},
		{"ts_ns", schemaOptionalInt64},
	}}
}
