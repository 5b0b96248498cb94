package avrodata

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// This file holds the Avro schema model the conversion builds and write.go
// prints: org.apache.avro.Schema as far as Debezium's schemas need it.

// The names AvroData gives Connect's logical types (Decimal.LOGICAL_NAME ...).
const (
	decimalName   = "org.apache.kafka.connect.data.Decimal"
	dateName      = "org.apache.kafka.connect.data.Date"
	timeName      = "org.apache.kafka.connect.data.Time"
	timestampName = "org.apache.kafka.connect.data.Timestamp"
)

// avroSchema is org.apache.avro.Schema as far as these schemas need it.
type avroSchema struct {
	typ       string // "int", ..., "record", "array", "map", "union"
	props     []prop // JsonProperties, in insertion order
	name, ns  string // record; ns "" is Avro's null namespace
	doc       *string
	fields    []*avroField
	items     *avroSchema // array
	values    *avroSchema // map
	branches  []*avroSchema
	connectID string // the Connect schema it came from, for error messages
}

type prop struct {
	key   string
	value json.RawMessage
}

type avroField struct {
	name  string
	typ   *avroSchema
	doc   *string
	def   json.RawMessage // nil: no default
	props []prop
}

// addProp is JsonProperties.addProp: a key keeps its first value (a
// different second value throws there; here it is an error).
func (a *avroSchema) addProp(k string, v json.RawMessage) error {
	for _, p := range a.props {
		if p.key == k {
			if !bytes.Equal(p.value, v) {
				return fmt.Errorf("can't overwrite property %s", k)
			}
			return nil
		}
	}
	a.props = append(a.props, prop{k, v})
	return nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
