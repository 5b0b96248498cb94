package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"
)

// This file renders a Kafka Connect schema as an Avro schema the way
// Confluent's AvroConverter (AvroData.fromConnectSchema) does for the
// schemas Debezium builds: connect.name, connect.version,
// connect.parameters and connect.doc properties; int8/int16 as int with
// connect.type; Decimal as bytes with the decimal logical type; the Connect
// Date/Time/Timestamp types with their Avro logical types; optional
// schemas as unions with null (null first and default null; a schema with
// a default puts its type first and the default on the field). The text is
// Avro's Schema.toString of AvroData's schema, property for property, which
// internal/avrodata (an independent implementation of AvroData) holds it
// to in connector's TestAvroSchemasAreWhatAvroConverterWrites. Names are
// adjusted, unlike AvroData's: a character that is not valid in an Avro
// name (the specification's ASCII rule) becomes '_' (docs/types.md "Differences
// from Debezium").

// avroRenderer renders one Avro schema as Avro's Schema.toString prints
// what AvroData builds, which is what the AvroConverter registers: a named
// type is defined once and referred to by name afterwards; a record's
// namespace, and the namespace of a reference, are left out when they are
// the enclosing record's (Avro 1.11 Schema.Name.writeName and
// getQualified); properties come in the order AvroData adds them
// (AvroData.java:1006-1100 at confluentinc/schema-registry HEAD).
type avroRenderer struct {
	defined map[string]bool
	space   string // the enclosing record's namespace, "" for none
	unnamed int    // the unnamed structs named so far (ConnectDefault…)
}

// renderAvro returns the Avro schema JSON of s (the schema of a record key
// or value).
func renderAvro(s *Schema) string {
	r := avroRenderer{defined: map[string]bool{}}
	return string(r.schema(nil, s))
}

// schema appends s, as a union with null when it is optional: null first,
// unless s has a default, which a union's first branch must match
// (AvroData.maybeMakeOptional, AvroData.java:1134-1150).
func (r *avroRenderer) schema(dst []byte, s *Schema) []byte {
	if s.Optional {
		if s.HasDefault {
			dst = append(dst, '[')
			dst = r.plain(dst, s)
			return append(dst, `,"null"]`...)
		}
		dst = append(dst, `["null",`...)
		dst = r.plain(dst, s)
		return append(dst, ']')
	}
	return r.plain(dst, s)
}

// plain appends s without its optionality.
func (r *avroRenderer) plain(dst []byte, s *Schema) []byte {
	switch s.Type {
	case TypeStruct:
		return r.record(dst, s)
	case TypeArray:
		dst = append(dst, `{"type":"array","items":`...)
		dst = r.schema(dst, s.Items)
		return append(r.props(dst, s), '}')
	case TypeMap:
		if s.Keys.Type != TypeString || s.Keys.Optional {
			// AvroData.fromConnectSchema: a map whose keys are not
			// required strings is an array of MapEntry {key, value}
			// records (AvroData.java:918-958; internal/avrodata follows it).
			dst = append(dst, `{"type":"array","items":`...)
			dst = r.mapEntry(dst, s)
			return append(r.props(dst, s), '}')
		}
		dst = append(dst, `{"type":"map","values":`...)
		dst = r.schema(dst, s.Values)
		return append(r.props(dst, s), '}')
	}
	prim := avroPrimitive(s.Type)
	logical := avroLogical(s)
	if s.Name == "" && len(s.Params) == 0 && !s.HasDefault && s.Doc == "" && s.Type != TypeInt8 && s.Type != TypeInt16 {
		return strconv.AppendQuote(dst, prim)
	}
	dst = append(dst, `{"type":`...)
	dst = strconv.AppendQuote(dst, prim)
	if logical == "decimal" {
		// AvroData adds scale and precision first (AvroData.java:900-912).
		scale, precision := decimalScale(s), 64
		for _, p := range s.Params {
			if p.Key == "connect.decimal.precision" {
				precision, _ = strconv.Atoi(p.Value)
			}
		}
		dst = append(dst, `,"scale":`...)
		dst = strconv.AppendInt(dst, int64(scale), 10)
		dst = append(dst, `,"precision":`...)
		dst = strconv.AppendInt(dst, int64(precision), 10)
	}
	dst = r.props(dst, s)
	if s.Type == TypeInt8 || s.Type == TypeInt16 {
		// After connect.name (AvroData.java:1034-1036).
		dst = append(dst, `,"connect.type":`...)
		dst = strconv.AppendQuote(dst, s.Type)
	}
	if logical != "" {
		// Last: LogicalType.addToSchema (AvroData.java:1064-1071).
		dst = append(dst, `,"logicalType":`...)
		dst = strconv.AppendQuote(dst, logical)
	}
	return append(dst, '}')
}

// props appends the connect.* properties of s in AvroData's order
// (AvroData.java:1008-1031): doc, version, parameters, default, name.
func (r *avroRenderer) props(dst []byte, s *Schema) []byte {
	if s.Doc != "" {
		dst = append(dst, `,"connect.doc":`...)
		dst = appendJSONString(dst, s.Doc)
	}
	if s.Version != 0 {
		dst = append(dst, `,"connect.version":`...)
		dst = strconv.AppendInt(dst, int64(s.Version), 10)
	}
	if len(s.Params) > 0 {
		dst = append(dst, `,"connect.parameters":`...)
		dst = appendParams(dst, s.Params)
	}
	if s.HasDefault {
		dst = append(dst, `,"connect.default":`...)
		dst = append(dst, s.avroDefault()...)
	}
	if s.Name != "" {
		dst = append(dst, `,"connect.name":`...)
		dst = appendJSONString(dst, AvroName(s.Name))
	}
	return dst
}

// record appends a struct as an Avro record, or a reference to it when
// this schema defined it already. The record has no "doc": AvroData takes
// a record's doc from the io.confluent.connect.avro.record.doc parameter,
// never from the Connect doc, which goes in connect.doc (AvroData.java:982-986).
func (r *avroRenderer) record(dst []byte, s *Schema) []byte {
	full := AvroName(s.Name)
	if s.Name == "" {
		// A struct without a name (a transform's: ValueToKey's key) is
		// io.confluent.connect.avro.ConnectDefault, then ConnectDefault2 …
		// (AvroData.getNameOrDefault, AvroData.java:1124-1132); it has no
		// connect.name.
		r.unnamed++
		full = "io.confluent.connect.avro.ConnectDefault"
		if r.unnamed > 1 {
			full += strconv.Itoa(r.unnamed)
		}
	}
	ns, name := "", full
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		ns, name = full[:i], full[i+1:]
	}
	if r.defined[full] {
		if ns != "" && ns == r.space && !avroTypeName(name) {
			return strconv.AppendQuote(dst, name)
		}
		return strconv.AppendQuote(dst, full)
	}
	r.defined[full] = true
	dst = append(dst, `{"type":"record","name":`...)
	dst = strconv.AppendQuote(dst, name)
	switch {
	case ns != "" && ns != r.space:
		dst = append(dst, `,"namespace":`...)
		dst = strconv.AppendQuote(dst, ns)
	case ns == "" && r.space != "":
		dst = append(dst, `,"namespace":""`...)
	}
	saved := r.space
	r.space = ns
	dst = append(dst, `,"fields":[`...)
	for i, f := range s.Fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = strconv.AppendQuote(dst, avroFieldName(f.Name))
		dst = append(dst, `,"type":`...)
		dst = r.schema(dst, f.Schema)
		switch {
		case f.Schema.HasDefault:
			dst = append(dst, `,"default":`...)
			dst = append(dst, f.Schema.avroDefault()...)
		case f.Schema.Optional:
			dst = append(dst, `,"default":null`...)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	r.space = saved
	return append(r.props(dst, s), '}')
}

// mapEntry appends the record AvroData makes of an entry of a map whose
// keys are not strings: io.confluent.connect.avro.MapEntry {key, value},
// with no connect.* properties of its own (AvroData.java:918-958), or a
// reference to it once defined. (A named map's entries take the map's name
// in AvroData; Debezium's maps have none.)
func (r *avroRenderer) mapEntry(dst []byte, s *Schema) []byte {
	const ns, name = "io.confluent.connect.avro", "MapEntry"
	if r.defined[ns+"."+name] {
		if ns == r.space {
			return strconv.AppendQuote(dst, name)
		}
		return strconv.AppendQuote(dst, ns+"."+name)
	}
	r.defined[ns+"."+name] = true
	dst = append(dst, `{"type":"record","name":"MapEntry"`...)
	if r.space != ns {
		dst = append(dst, `,"namespace":"io.confluent.connect.avro"`...)
	}
	saved := r.space
	r.space = ns
	dst = append(dst, `,"fields":[{"name":"key","type":`...)
	dst = r.schema(dst, s.Keys)
	if s.Keys.Optional {
		dst = append(dst, `,"default":null`...)
	}
	dst = append(dst, `},{"name":"value","type":`...)
	dst = r.schema(dst, s.Values)
	if s.Values.Optional {
		dst = append(dst, `,"default":null`...)
	}
	r.space = saved
	return append(dst, "}]}"...)
}

// avroTypeName reports whether a short name is one of Avro's type names,
// which a reference must not be written as (Avro's Name.shouldWriteFull).
func avroTypeName(n string) bool {
	switch n {
	case "null", "boolean", "int", "long", "float", "double", "bytes", "string", "record", "enum", "array", "map", "union", "fixed":
		return true
	}
	return false
}

// avroDefault is the Avro JSON of s's default.
func (s *Schema) avroDefault() []byte {
	if s.AvroDefault != nil {
		return s.AvroDefault
	}
	return s.Default
}

func avroPrimitive(t string) string {
	switch t {
	case TypeInt8, TypeInt16, TypeInt32:
		return "int"
	case TypeInt64:
		return "long"
	case TypeFloat32:
		return "float"
	case TypeFloat64:
		return "double"
	}
	return t // boolean, string, bytes
}

// avroLogical is the Avro logical type AvroData gives Connect's logical
// types (Debezium's own semantic types have none).
func avroLogical(s *Schema) string {
	switch s.Name {
	case "org.apache.kafka.connect.data.Decimal":
		return "decimal"
	case "org.apache.kafka.connect.data.Date":
		return "date"
	case "org.apache.kafka.connect.data.Time":
		return "time-millis"
	case "org.apache.kafka.connect.data.Timestamp":
		return "timestamp-millis"
	}
	return ""
}

// AvroName adjusts a dotted full name to Avro's rules: each part starts
// with a letter or '_' and goes on with letters, digits or '_'; any other
// character becomes '_' (Debezium's avro schema name adjustment).
func AvroName(s string) string {
	ok := true
	for i := 0; i < len(s) && ok; i++ {
		first := i == 0 || s[i-1] == '.'
		ok = avroNameChar(s[i], first) || (s[i] == '.' && !first && i+1 < len(s))
	}
	if ok && s != "" {
		return s
	}
	b := []byte(s)
	for i := range b {
		first := i == 0 || b[i-1] == '.'
		if b[i] == '.' && !first && i+1 < len(b) {
			continue
		}
		if !avroNameChar(b[i], first) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// avroFieldName adjusts a column name to an Avro field name.
func avroFieldName(s string) string {
	ok := s != ""
	for i := 0; i < len(s) && ok; i++ {
		ok = avroNameChar(s[i], i == 0)
	}
	if ok {
		return s
	}
	b := []byte(s)
	for i := range b {
		if !avroNameChar(b[i], i == 0) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func avroNameChar(c byte, first bool) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// RenderAvro returns the Avro schema Confluent's AvroConverter registers
// for the Connect schema s (a record key's or value's, a transform's
// derived schema among them), or an error when it is not valid Avro.
func RenderAvro(s *Schema) (string, error) {
	text := renderAvro(s)
	if err := checkAvro(s.Name, text); err != nil {
		return "", err
	}
	return text, nil
}

// checkAvro parses an Avro schema with hamba/avro, so that a schema that
// the registry would refuse (for example two columns whose names adjust to
// the same field name) is an error naming the table before anything is
// sent.
func checkAvro(what, s string) error {
	if _, err := avro.ParseWithCache(s, "", &avro.SchemaCache{}); err != nil {
		return fmt.Errorf("the Avro schema of %s is not valid (%w); rename the offending columns", what, err)
	}
	return nil
}
