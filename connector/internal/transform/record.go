package transform

import (
	"fmt"
	"math/big"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the record model transforms work on: Kafka Connect's
// ConnectRecord (connect/api/src/main/java/org/apache/kafka/connect/connector/ConnectRecord.java)
// with its schemas from package schema (schema.Schema is Connect's schema
// model already: the JSON and Avro schemas are both rendered from it) and
// Go values in place of Connect's Java objects.

// Record is one Kafka Connect record. A nil schema means schemaless, as in
// Connect; a nil value with a schema is a null of that schema. Transforms
// never change a Record in place: they return a new one that may share
// unchanged parts with the old.
type Record struct {
	Topic       string
	Partition   *int32 // ConnectRecord.kafkaPartition: nil when not decided
	KeySchema   *schema.Schema
	Key         any
	ValueSchema *schema.Schema
	Value       any
	Timestamp   *int64 // milliseconds since the epoch; nil when none
	Headers     []Header
}

// Header is one record header: a key, and a value with its optional
// schema (Connect's org.apache.kafka.connect.header.Header).
type Header struct {
	Key    string
	Schema *schema.Schema
	Value  any
}

// Values are Go values standing for Connect's Java objects:
//
//	int8, int16, int32, int64    INT8 … INT64
//	float32, float64             FLOAT32, FLOAT64
//	bool, string, []byte         BOOLEAN, STRING, BYTES
//	time.Time (UTC)              the logical types Timestamp, Date and Time (java.util.Date)
//	Decimal                      the logical type Decimal (java.math.BigDecimal)
//	*Struct                      STRUCT
//	[]any                        ARRAY
//	*Map                         MAP, and a schemaless object (java.util.Map)
//	nil                          null
//
// Debezium's own semantic types (io.debezium.time.MicroTimestamp …) are
// their primitive values, as in Connect.

// Decimal is Connect's Decimal value: Unscaled × 10^-Scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// Struct is Connect's Struct: a value per field of a struct schema, in the
// schema's order.
type Struct struct {
	Schema *schema.Schema
	Values []any
}

// NewStruct returns a Struct of s with every field null.
func NewStruct(s *schema.Schema) *Struct {
	return &Struct{Schema: s, Values: make([]any, len(s.Fields))}
}

// index returns the position of the field name, or -1.
func index(s *schema.Schema, name string) int {
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return i
		}
	}
	return -1
}

// Get returns the value of the field name without its default
// (Struct.getWithoutDefault); ok is false when the schema has no such field.
func (s *Struct) Get(name string) (v any, ok bool) {
	i := index(s.Schema, name)
	if i < 0 {
		return nil, false
	}
	return s.Values[i], true
}

// Put sets the field name to v, checked against the field's schema as
// Struct.put checks it (ConnectSchema.validateValue): an unknown field, a
// null in a required field or a value of the wrong type is an error.
func (s *Struct) Put(name string, v any) error {
	i := index(s.Schema, name)
	if i < 0 {
		return fmt.Errorf("%s is not a valid field name", name)
	}
	if err := Validate(s.Schema.Fields[i].Schema, v); err != nil {
		return fmt.Errorf("field %q: %w", name, err)
	}
	s.Values[i] = v
	return nil
}

// Map is a Connect map, or a schemaless object, with its entries in
// insertion order (Java's HashMap has none; an order makes output stable).
// Keys are unique.
type Map struct {
	Entries []MapEntry
}

// MapEntry is one entry of a Map.
type MapEntry struct {
	Key, Value any
}

// NewMap returns a map of the given key, value pairs (keys are strings).
func NewMap(kv ...any) *Map {
	m := &Map{Entries: make([]MapEntry, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Put(kv[i], kv[i+1])
	}
	return m
}

// Get returns the value of key k (Map.get: nil when absent).
func (m *Map) Get(k any) (any, bool) {
	for _, e := range m.Entries {
		if e.Key == k {
			return e.Value, true
		}
	}
	return nil, false
}

// Put sets k to v (Map.put): in place when k is there, else appended.
func (m *Map) Put(k, v any) {
	for i := range m.Entries {
		if m.Entries[i].Key == k {
			m.Entries[i].Value = v
			return
		}
	}
	m.Entries = append(m.Entries, MapEntry{k, v})
}

// Remove deletes k (Map.remove).
func (m *Map) Remove(k any) {
	for i := range m.Entries {
		if m.Entries[i].Key == k {
			m.Entries = append(m.Entries[:i:i], m.Entries[i+1:]...)
			return
		}
	}
}

// Clone returns a copy of m (new HashMap<>(m)): the entries are copied,
// the values shared.
func (m *Map) Clone() *Map {
	return &Map{Entries: append([]MapEntry(nil), m.Entries...)}
}

// The Connect logical types' names (connect/api/src/main/java/org/apache/kafka/connect/data/{Timestamp,Date,Time,Decimal}.java).
const (
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
)

// Schemas of Connect's SchemaBuilder presets and logical types, as the
// SMTs build them (Schema.STRING_SCHEMA …, Timestamp.SCHEMA: version 1).
var (
	stringSchema            = &schema.Schema{Type: schema.TypeString}
	optionalStringSchema    = &schema.Schema{Type: schema.TypeString, Optional: true}
	int32Schema             = &schema.Schema{Type: schema.TypeInt32}
	optionalInt32Schema     = &schema.Schema{Type: schema.TypeInt32, Optional: true}
	int64Schema             = &schema.Schema{Type: schema.TypeInt64}
	optionalInt64Schema     = &schema.Schema{Type: schema.TypeInt64, Optional: true}
	timestampSchema         = &schema.Schema{Type: schema.TypeInt64, Name: TimestampName, Version: 1}
	optionalTimestampSchema = &schema.Schema{Type: schema.TypeInt64, Name: TimestampName, Version: 1, Optional: true}
	dateSchema              = &schema.Schema{Type: schema.TypeInt32, Name: DateName, Version: 1}
	optionalDateSchema      = &schema.Schema{Type: schema.TypeInt32, Name: DateName, Version: 1, Optional: true}
	timeSchema              = &schema.Schema{Type: schema.TypeInt32, Name: TimeName, Version: 1}
	optionalTimeSchema      = &schema.Schema{Type: schema.TypeInt32, Name: TimeName, Version: 1, Optional: true}
)

// copyBasics returns a new schema of type typ with s's name, version, doc
// and parameters and nothing else (SchemaUtil.copySchemaBasics,
// connect/transforms/src/main/java/org/apache/kafka/connect/transforms/util/SchemaUtil.java:36-45):
// not its optionality, not its default.
func copyBasics(s *schema.Schema, typ string) *schema.Schema {
	return &schema.Schema{Type: typ, Name: s.Name, Version: s.Version, Doc: s.Doc, Params: s.Params}
}

// logicalKind returns which Connect logical type s is, "" for none.
func logicalKind(s *schema.Schema) string {
	if s == nil {
		return ""
	}
	switch s.Name {
	case TimestampName, DateName, TimeName, DecimalName:
		return s.Name
	}
	return ""
}

// epochDay is one day in milliseconds.
const epochDay = 24 * 60 * 60 * 1000

// millis returns t as Java's Date.getTime: milliseconds since the epoch.
func millis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis is new java.util.Date(ms), in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
