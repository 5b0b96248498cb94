package connecttest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Schema is a Kafka Connect schema as JsonConverter.asConnectSchema builds
// it from its JSON form.
type Schema struct {
	Type       string // boolean, int8, int16, int32, int64, float, double, bytes, string, array, map, struct
	Optional   bool
	Name       string
	Version    int
	Doc        string
	Params     map[string]string
	Default    any
	HasDefault bool
	Fields     []Field // struct
	Items      *Schema // array
	Keys       *Schema // map
	Values     *Schema // map
}

// Field is one field of a struct schema.
type Field struct {
	Name   string
	Schema *Schema
}

// Validate checks one record value or key in JsonConverter's enveloped
// form: exactly the fields "schema" and "payload" (JsonConverter.java:349-351),
// a schema JsonConverter accepts, and a payload that converts to it. A nil
// or empty record (a tombstone) is valid. It is pure and safe for
// concurrent use.
func Validate(record []byte) error {
	if len(record) == 0 {
		return nil
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(record, &env); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	s, okS := env["schema"]
	p, okP := env["payload"]
	if !okS || !okP || len(env) != 2 {
		return errors.New(`JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields`)
	}
	schema, err := ParseSchema(s)
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	payload, err := decode(p)
	if err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	return Check(schema, payload, "payload")
}

// ParseSchema reads a schema in JsonConverter's JSON form
// (asConnectSchema, JsonConverter.java:450-561). A null schema (a
// schemaless payload) is an error here: mooncdc always writes one.
func ParseSchema(raw []byte) (*Schema, error) {
	v, err := decode(raw)
	if err != nil {
		return nil, err
	}
	return parseSchema(v, "schema")
}

func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func parseSchema(v any, path string) (*Schema, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema is a JSON object, not %s", path, kind(v))
	}
	typ, ok := obj["type"].(string)
	if !ok {
		return nil, fmt.Errorf("%s: schema must contain 'type' field", path) // :459-460
	}
	s := &Schema{Type: typ}
	var err error
	switch typ { // :463-519
	case "boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string":
	case "array":
		items, ok := obj["items"]
		if !ok || items == nil {
			return nil, fmt.Errorf("%s: array schema did not specify the element type", path)
		}
		if s.Items, err = parseSchema(items, path+".items"); err != nil {
			return nil, err
		}
	case "map":
		keys, ok := obj["keys"]
		if !ok {
			return nil, fmt.Errorf("%s: map schema did not specify the key type", path)
		}
		values, ok := obj["values"]
		if !ok {
			return nil, fmt.Errorf("%s: map schema did not specify the value type", path)
		}
		if s.Keys, err = parseSchema(keys, path+".keys"); err != nil {
			return nil, err
		}
		if s.Values, err = parseSchema(values, path+".values"); err != nil {
			return nil, err
		}
	case "struct":
		fields, ok := obj["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf(`%s: struct schema's "fields" argument is not an array`, path)
		}
		seen := map[string]bool{}
		for i, f := range fields {
			fo, _ := f.(map[string]any)
			name, ok := fo["field"].(string)
			if !ok {
				return nil, fmt.Errorf("%s.fields[%d]: struct schema's field name not specified properly", path, i)
			}
			if seen[name] { // SchemaBuilder.field refuses a duplicate
				return nil, fmt.Errorf("%s: cannot create field because of field name duplication %q", path, name)
			}
			seen[name] = true
			fs, err := parseSchema(f, path+"."+name)
			if err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, Field{Name: name, Schema: fs})
		}
	default:
		return nil, fmt.Errorf("%s: unknown schema type: %s (JsonConverter knows boolean, int8, int16, int32, int64, float, double, bytes, string, array, map, struct)", path, typ)
	}
	// :522-526: optional only when "optional" is the JSON true.
	s.Optional = obj["optional"] == true
	if name, ok := obj["name"].(string); ok {
		s.Name = name
	}
	if ver, ok := obj["version"].(json.Number); ok {
		n, err := ver.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s: version %s is not an integer", path, ver)
		}
		s.Version = int(n)
	}
	if doc, ok := obj["doc"].(string); ok {
		s.Doc = doc
	}
	if params, ok := obj["parameters"].(map[string]any); ok {
		s.Params = map[string]string{}
		for k, pv := range params {
			str, ok := pv.(string)
			if !ok {
				return nil, fmt.Errorf("%s: schema parameters must have string values (%q is %s)", path, k, kind(pv)) // :548-549
			}
			s.Params[k] = str
		}
	}
	if err := checkLogicalSchema(s, path); err != nil {
		return nil, err
	}
	if def, ok := obj["default"]; ok { // :554-556: converted, and validated by SchemaBuilder.defaultValue
		if def == nil && !s.Optional {
			return nil, fmt.Errorf("%s: default null for a required field", path)
		}
		if err := Check(s, def, path+".default"); err != nil {
			return nil, err
		}
		s.Default, s.HasDefault = def, def != nil
	}
	return s, nil
}

// checkLogicalSchema checks what Connect's logical types require of their
// schema: Decimal is bytes with a "scale" parameter (Decimal.scale throws
// "Invalid Decimal schema: scale parameter not found"), Date and Time are
// int32, Timestamp int64 (connect/api Decimal.java, Date.java, Time.java,
// Timestamp.java builders).
func checkLogicalSchema(s *Schema, path string) error {
	want := ""
	switch s.Name {
	case "org.apache.kafka.connect.data.Decimal":
		want = "bytes"
		if _, err := strconv.Atoi(s.Params["scale"]); err != nil {
			return fmt.Errorf("%s: invalid Decimal schema: scale parameter not found or not an integer", path)
		}
	case "org.apache.kafka.connect.data.Date", "org.apache.kafka.connect.data.Time":
		want = "int32"
	case "org.apache.kafka.connect.data.Timestamp":
		want = "int64"
	}
	if want != "" && s.Type != want {
		return fmt.Errorf("%s: logical type %s must be %s, not %s", path, s.Name, want, s.Type)
	}
	return nil
}

// Check converts a decoded JSON value (decoded with UseNumber) to s as
// JsonConverter.convertToConnect does (JsonConverter.java:697-746 and the
// converters at :69-230), strictly.
func Check(s *Schema, v any, path string) error {
	if v == nil { // :702-707; replace.null.with.default is true by default
		if s.Optional || s.HasDefault {
			return nil
		}
		return fmt.Errorf("%s: invalid null value for required %s field", path, s.Type)
	}
	switch s.Name { // the logical converters (:149-226)
	case "org.apache.kafka.connect.data.Decimal":
		switch x := v.(type) {
		case json.Number:
			return nil // decimal.format NUMERIC
		case string:
			if _, err := base64.StdEncoding.DecodeString(x); err != nil {
				return fmt.Errorf("%s: invalid bytes for Decimal field: %v", path, err)
			}
			return nil
		default:
			return fmt.Errorf("%s: invalid type for Decimal, underlying representation should be numeric or bytes but was %s", path, kind(v))
		}
	case "org.apache.kafka.connect.data.Date", "org.apache.kafka.connect.data.Time":
		if !isInt(v, 32) {
			return fmt.Errorf("%s: invalid type for %s, underlying representation should be integer but was %s", path, s.Name, kind(v))
		}
		return nil
	case "org.apache.kafka.connect.data.Timestamp":
		if !isInt(v, 64) {
			return fmt.Errorf("%s: invalid type for Timestamp, underlying representation should be integral but was %s", path, kind(v))
		}
		return nil
	}
	switch s.Type {
	case "boolean":
		if _, ok := v.(bool); !ok {
			return mismatch(path, s, v)
		}
	case "int8", "int16", "int32", "int64":
		bits, _ := strconv.Atoi(s.Type[3:])
		if !isInt(v, bits) {
			return mismatch(path, s, v)
		}
	case "float", "double":
		switch x := v.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				return mismatch(path, s, v)
			}
			if s.Type == "float" && !math.IsInf(f, 0) && math.IsInf(float64(float32(f)), 0) { // Java's floatValue rounds to nearest
				return fmt.Errorf("%s: %s overflows a float", path, x)
			}
		case string:
			// Jackson writes NaN and the infinities as strings
			// (JsonWriteFeature.WRITE_NAN_AS_STRINGS, on by default).
			if x != "NaN" && x != "Infinity" && x != "-Infinity" {
				return mismatch(path, s, v)
			}
		default:
			return mismatch(path, s, v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return mismatch(path, s, v)
		}
	case "bytes":
		x, ok := v.(string)
		if !ok {
			return mismatch(path, s, v)
		}
		if _, err := base64.StdEncoding.DecodeString(x); err != nil {
			return fmt.Errorf("%s: invalid bytes field: %v", path, err)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return mismatch(path, s, v)
		}
		for i, el := range a {
			if err := Check(s.Items, el, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "map":
		return checkMap(s, v, path)
	case "struct":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: structs should be encoded as JSON objects, but found %s", path, kind(v))
		}
		known := make(map[string]bool, len(s.Fields))
		for _, f := range s.Fields {
			known[f.Name] = true
			if err := Check(f.Schema, obj[f.Name], path+"."+f.Name); err != nil {
				return err
			}
		}
		for k := range obj {
			if !known[k] {
				// JsonConverter ignores it: data the schema does not describe is lost.
				return fmt.Errorf("%s: field %q is not in the struct's schema", path, k)
			}
		}
	}
	return nil
}

// checkMap follows the map converter (:95-123): a JSON object when the key
// schema is string, else an array of [key, value] pairs.
func checkMap(s *Schema, v any, path string) error {
	if s.Keys.Type == "string" {
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: maps with string fields should be encoded as JSON objects, but found %s", path, kind(v))
		}
		for k, el := range obj {
			if err := Check(s.Values, el, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: maps with non-string fields should be encoded as JSON array of tuples, but found %s", path, kind(v))
	}
	for i, e := range arr {
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			return fmt.Errorf("%s[%d]: found invalid map entry instead of array tuple of length 2", path, i)
		}
		if err := Check(s.Keys, pair[0], fmt.Sprintf("%s[%d].key", path, i)); err != nil {
			return err
		}
		if err := Check(s.Values, pair[1], fmt.Sprintf("%s[%d].value", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func isInt(v any, bits int) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	_, err := strconv.ParseInt(string(n), 10, bits)
	return err == nil
}

func mismatch(path string, s *Schema, v any) error {
	return fmt.Errorf("%s: %s for a %s field", path, kind(v), s.Type)
}

func kind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "the number " + string(x)
	case string:
		return strconv.Quote(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
