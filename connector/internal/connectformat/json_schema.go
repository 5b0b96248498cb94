package connectformat

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file turns a Connect schema into the JSON Schema document
// Confluent's JsonSchemaData.fromConnectSchema writes with its defaults
// (json-schema-converter/src/main/java/io/confluent/connect/json/JsonSchemaData.java:741-968,
// cited JSD:n; defaults in JsonSchemaDataConfig.java:35-61: additional
// properties allowed, decimals in base64, no generalized sum types), and
// writes values framed as KafkaJsonSchemaSerializer does: magic byte 0,
// the 4-byte schema id, the JSON.

// JSONSchema is the JSON Schema of one Connect schema. It is immutable
// and safe for concurrent use.
type JSONSchema struct {
	// Document is the schema, registered under the subject as it is.
	Document []byte
	schema   *schema.Schema
}

const jsonNamespace = "io.confluent.connect.json"

// JSONSchemaOptions are the converter's settings that change the document.
type JSONSchemaOptions struct {
	// ClosedObjects is object.additional.properties=false
	// (JsonSchemaDataConfig.java:35, default true): every struct's object
	// gets "additionalProperties": false (JSD:920-922). With the default,
	// open objects, the registry's default (strict) BACKWARD check refuses
	// an added optional property, so a column added to a table is refused
	// (schema-registry json-schema-provider SchemaDiff.java:44-121:
	// OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL is compatible,
	// ..._TO_OPEN_CONTENT_MODEL only under the lenient policy).
	ClosedObjects bool
}

// NewJSONSchema builds the JSON Schema document of s with the converter's
// defaults.
func NewJSONSchema(s *schema.Schema) (*JSONSchema, error) {
	return NewJSONSchemaOptions(s, JSONSchemaOptions{})
}

// NewJSONSchemaOptions builds the JSON Schema document of s.
func NewJSONSchemaOptions(s *schema.Schema, opts JSONSchemaOptions) (*JSONSchema, error) {
	if s == nil {
		return nil, fmt.Errorf("json schema: no schema (a schemaless value has no JSON Schema)")
	}
	w := jsonSchemaWriter{opts}
	doc, err := w.appendSchema(nil, s, -1, false)
	if err != nil {
		return nil, err
	}
	return &JSONSchema{Document: doc, schema: s}, nil
}

type jsonSchemaWriter struct{ opts JSONSchemaOptions }

// AppendEncode appends v in Confluent's JSON Schema wire format with the
// schema id the registry gave Document.
func (j *JSONSchema) AppendEncode(dst []byte, id int, v any) ([]byte, error) {
	dst, _ = new(sr.ConfluentHeader).AppendEncode(dst, id, nil)
	return j.AppendJSON(dst, v)
}

// AppendJSON appends v as JsonSchemaData.fromConnectData and Jackson
// write it (no framing): null for a null value.
func (j *JSONSchema) AppendJSON(dst []byte, v any) ([]byte, error) {
	out, ok, err := appendJSONValue(dst, j.schema, v, schemaDataRules)
	if err != nil {
		return dst, fmt.Errorf("json schema: %w", err)
	}
	if !ok {
		out = append(out, "null"...)
	}
	return out, nil
}

// member is one key of a schema object, its value as JSON.
type member struct {
	key string
	val []byte
}

// appendSchema is rawSchemaFromConnectSchema (JSD:765-968): index is
// the field's position in its struct (connect.index), -1 for none;
// ignoreOptional is set for union members only (not written here).
func (w jsonSchemaWriter) appendSchema(dst []byte, s *schema.Schema, index int, ignoreOptional bool) ([]byte, error) {
	for _, p := range s.Params {
		if strings.HasPrefix(p.Key, jsonNamespace+".") || strings.HasPrefix(p.Key, "org.apache.kafka.connect.data.") {
			return nil, fmt.Errorf("json schema: the parameter %q (a JSON Schema converter's enum, union or id) is not supported", p.Key)
		}
	}
	var typed []member           // the type's own keys (describePropertiesTo)
	props := map[string][]byte{} // unprocessedProps (a HashMap)
	connectType := func(t string) { props["connect.type"] = strconv.AppendQuote(nil, t) }
	switch s.Type {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64: // JSD:787-802
		typed = append(typed, member{"type", []byte(`"integer"`)})
		connectType(s.Type)
	case schema.TypeFloat32:
		typed = append(typed, member{"type", []byte(`"number"`)})
		connectType("float32")
	case schema.TypeFloat64:
		typed = append(typed, member{"type", []byte(`"number"`)})
		connectType("float64")
	case schema.TypeBoolean:
		typed = append(typed, member{"type", []byte(`"boolean"`)})
	case schema.TypeString:
		typed = append(typed, member{"type", []byte(`"string"`)})
	case schema.TypeBytes: // JSD:833-839: a string in base64 (decimals too)
		typed = append(typed, member{"type", []byte(`"string"`)})
		connectType("bytes")
	case schema.TypeArray: // JSD:840-853
		items, err := w.appendSchema(nil, s.Items, -1, false)
		if err != nil {
			return nil, err
		}
		typed = append(typed, member{"type", []byte(`"array"`)}, member{"items", items})
	case schema.TypeMap: // JSD:854-873
		if s.Keys.Type == schema.TypeString && !s.Keys.Optional {
			vals, err := w.appendSchema(nil, s.Values, -1, false)
			if err != nil {
				return nil, err
			}
			typed = append(typed, member{"type", []byte(`"object"`)}, member{"additionalProperties", vals})
		} else {
			k, err := w.appendSchema(nil, s.Keys, 0, false)
			if err != nil {
				return nil, err
			}
			v, err := w.appendSchema(nil, s.Values, 1, false)
			if err != nil {
				return nil, err
			}
			entry := objectJSON([]member{{"type", []byte(`"object"`)}, {"properties", objectJSON([]member{{"key", k}, {"value", v}})}})
			typed = append(typed, member{"type", []byte(`"array"`)}, member{"items", entry})
		}
		connectType("map")
	case schema.TypeStruct:
		if s.Optional { // JSD:890-895: oneOf null and the struct made required
			inner := *s
			inner.Optional = false
			body, err := w.appendSchema(nil, &inner, -1, false)
			if err != nil {
				return nil, err
			}
			return combined(dst, body, index), nil
		}
		var fields []member
		for i, f := range s.Fields { // JSD:896-919
			fs, err := w.appendSchema(nil, f.Schema, i, false)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			fields = append(fields, member{f.Name, fs})
		}
		typed = append(typed, member{"type", []byte(`"object"`)}, member{"properties", objectJSON(fields)})
		if w.opts.ClosedObjects {
			typed = append(typed, member{"additionalProperties", []byte("false")})
		}
	default:
		return nil, fmt.Errorf("json schema: unsupported type %q", s.Type)
	}
	// JSD:929-951: title, version, description, parameters, default.
	var generic []member
	if s.Name != "" {
		generic = append(generic, member{"title", schema.AppendJSONString(nil, s.Name)})
	}
	if s.Doc != "" {
		generic = append(generic, member{"description", schema.AppendJSONString(nil, s.Doc)})
	}
	if s.HasDefault {
		d, err := defaultJSON(s)
		if err != nil {
			return nil, err
		}
		generic = append(generic, member{"default", d})
	}
	if s.Version != 0 {
		props["connect.version"] = strconv.AppendInt(nil, int64(s.Version), 10)
	}
	if len(s.Params) > 0 {
		var ps []member
		for _, p := range javaHashOrder(paramKeys(s.Params)) {
			v, _ := param(s, p)
			ps = append(ps, member{p, schema.AppendJSONString(nil, v)})
		}
		props["connect.parameters"] = objectJSON(ps)
	}
	if s.Optional && !ignoreOptional { // JSD:953-965: oneOf null and the type
		body := objectJSON(append(append(generic, typed...), propMembers(props)...))
		return combined(dst, body, index), nil
	}
	if index >= 0 {
		props["connect.index"] = strconv.AppendInt(nil, int64(index), 10)
	}
	return append(dst, objectJSON(append(append(generic, typed...), propMembers(props)...))...), nil
}

// combined is the oneOf of null and body, with connect.index.
func combined(dst, body []byte, index int) []byte {
	m := []member{{"oneOf", append(append([]byte(`[{"type":"null"},`), body...), ']')}}
	if index >= 0 {
		m = append(m, member{"connect.index", strconv.AppendInt(nil, int64(index), 10)})
	}
	return append(dst, objectJSON(m)...)
}

// defaultJSON is the default as fromConnectData writes it: the JSON
// schema.Schema holds (JsonConverter's form) read back and written again.
func defaultJSON(s *schema.Schema) ([]byte, error) {
	v, err := transform.FromJSON(s, s.Default)
	if err != nil {
		return nil, fmt.Errorf("json schema: the default of a %s: %w", s.Type, err)
	}
	out, ok, err := appendJSONValue(nil, s, v, schemaDataRules)
	if err != nil {
		return nil, fmt.Errorf("json schema: the default of a %s: %w", s.Type, err)
	}
	if !ok {
		return []byte("null"), nil
	}
	return out, nil
}

func paramKeys(ps []schema.Param) []string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
	}
	return keys
}

// propMembers writes the connect.* keys in the order Java's HashMap
// iterates them (unprocessedProps is one).
func propMembers(props map[string][]byte) []member {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable start; the hash order decides
	var out []member
	for _, k := range javaHashOrder(keys) {
		out = append(out, member{k, props[k]})
	}
	return out
}

func objectJSON(ms []member) []byte {
	b := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = schema.AppendJSONString(b, m.key)
		b = append(b, ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// javaHashOrder orders keys as a java.util.HashMap of them iterates:
// by bucket (String.hashCode spread, table size 16 doubled past a 0.75
// load), insertion order within a bucket.
func javaHashOrder(keys []string) []string {
	n := 16
	for float64(len(keys)) > float64(n)*0.75 {
		n *= 2
	}
	type kb struct {
		k string
		b uint32
		i int
	}
	var ks []kb
	for i, k := range keys {
		var h int32
		for _, c := range utf16Units(k) {
			h = 31*h + int32(c)
		}
		u := uint32(h)
		ks = append(ks, kb{k, (u ^ u>>16) & uint32(n-1), i})
	}
	sort.SliceStable(ks, func(a, b int) bool { return ks[a].b < ks[b].b })
	out := make([]string, len(ks))
	for i, x := range ks {
		out[i] = x.k
	}
	return out
}

// utf16Units are the Java chars of s.
func utf16Units(s string) []uint16 {
	var u []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			u = append(u, uint16(0xd800+(r>>10)), uint16(0xdc00+(r&0x3ff)))
			continue
		}
		u = append(u, uint16(r))
	}
	return u
}
