package connectformat

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes Connect values as JSON the way Confluent's
// JsonSchemaData.fromConnectData (json-schema-converter/.../JsonSchemaData.java:499-674,
// logical types at 419-458) and Kafka Connect's JsonConverter (without
// schemas: Debezium's CloudEvents envelope) write them, then Jackson
// serializes: integers as numbers, floats as Java's Double.toString and
// Float.toString, bytes and Decimal (decimal.format BASE64, both
// converters' default) in base64, Date as days, Time and Timestamp as
// milliseconds, a map with required string keys as an object, other maps
// as an array of {"key", "value"} objects.

// jsonRules says whose rules a value follows where Confluent's
// JsonSchemaData and Kafka's JsonConverter differ: a null in a required
// field without a default, and a map whose keys are not strings.
type jsonRules int

const (
	// schemaDataRules are JsonSchemaData.fromConnectData's: the null field
	// is left out (it returns null for it, JsonSchemaData.java:502-512, and
	// the struct skips it); a map is an object when its keys are required
	// strings, else an array of {"key", "value"} objects
	// (JsonSchemaData.java:573-575).
	schemaDataRules jsonRules = iota
	// converterRules are JsonConverter's (CloudEvents data): the null is
	// refused ("Conversion error: null value for field that is required
	// and has no default value"); a map is an object when its key schema
	// is a string, else an array of [key, value] tuples (apache/kafka
	// connect/json/.../JsonConverter.java:644-676 at 1eb7644349c).
	converterRules
	// converterKeepNulls are JsonConverter's with
	// replace.null.with.default=false: a null stays null where its schema
	// has a default (JsonConverter.java:586-592 at 1eb7644349c).
	converterKeepNulls
)

// converter reports JsonConverter's rules, whatever its null setting.
func (m jsonRules) converter() bool { return m == converterRules || m == converterKeepNulls }

// appendJSONValue appends v of schema s; ok is false when nothing is
// written (a required null under schemaDataRules).
func appendJSONValue(dst []byte, s *schema.Schema, v any, mode jsonRules) (out []byte, ok bool, err error) {
	if v == nil {
		if s.HasDefault && mode != converterKeepNulls {
			d, err := transform.FromJSON(s, s.Default)
			if err != nil {
				return dst, false, fmt.Errorf("the default of a %s: %w", s.Type, err)
			}
			v = d
		}
		if v == nil {
			if s.Optional {
				return append(dst, "null"...), true, nil
			}
			if mode.converter() {
				return dst, false, fmt.Errorf("null value for a required %s without a default", s.Type)
			}
			return dst, false, nil
		}
	}
	bad := func() ([]byte, bool, error) { return dst, false, fmt.Errorf("invalid type for %s: %T", s.Type, v) }
	switch s.Name {
	case transform.DecimalName:
		d, ok := v.(transform.Decimal)
		if !ok || d.Unscaled == nil {
			return bad()
		}
		return appendBase64(dst, twosComplement(d.Unscaled)), true, nil
	case transform.DateName, transform.TimeName, transform.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		ms := t.UnixMilli()
		if s.Name == transform.DateName {
			// Date.fromLogical: whole days; a time of day is refused.
			if ms%millisPerDay != 0 {
				return dst, false, fmt.Errorf("a Date value has a time of day (Connect: \"Kafka Connect Date type should not have any time fields set to non-zero values\")")
			}
			return strconv.AppendInt(dst, ms/millisPerDay, 10), true, nil
		}
		if s.Name == transform.TimeName && (ms < 0 || ms >= millisPerDay) {
			// Time.fromLogical: within the first day.
			return dst, false, fmt.Errorf("a Time value is outside the first day (Connect: \"Kafka Connect Time type should not have any date fields set to non-zero values\")")
		}
		return strconv.AppendInt(dst, ms, 10), true, nil
	}
	switch s.Type {
	case schema.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(dst, int64(x), 10), true, nil
	case schema.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(dst, int64(x), 10), true, nil
	case schema.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(dst, int64(x), 10), true, nil
	case schema.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		return strconv.AppendInt(dst, x, 10), true, nil
	case schema.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		return appendJavaFloat(dst, float64(x), 32), true, nil
	case schema.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		return appendJavaFloat(dst, x, 64), true, nil
	case schema.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		return strconv.AppendBool(dst, x), true, nil
	case schema.TypeString:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		return schema.AppendJSONString(dst, x), true, nil
	case schema.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return appendBase64(dst, x), true, nil
	case schema.TypeArray:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		dst = append(dst, '[')
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			var wrote bool
			if dst, wrote, err = appendJSONValue(dst, s.Items, e, mode); err != nil {
				return dst, false, fmt.Errorf("array element %d: %w", i, err)
			}
			if !wrote { // ArrayNode.add(null) writes null
				dst = append(dst, "null"...)
			}
		}
		return append(dst, ']'), true, nil
	case schema.TypeMap:
		return appendJSONMap(dst, s, v, mode)
	case schema.TypeStruct:
		st, ok := v.(*transform.Struct)
		if !ok || len(st.Values) != len(s.Fields) {
			return dst, false, fmt.Errorf("mismatching struct schema for %q", s.Name)
		}
		dst = append(dst, '{')
		first := true
		for i, f := range s.Fields {
			mark := len(dst)
			if !first {
				dst = append(dst, ',')
			}
			dst = schema.AppendJSONString(dst, f.Name)
			dst = append(dst, ':')
			var wrote bool
			if dst, wrote, err = appendJSONValue(dst, f.Schema, st.Values[i], mode); err != nil {
				return dst, false, fmt.Errorf("field %q: %w", f.Name, err)
			}
			if !wrote {
				dst = dst[:mark]
				continue
			}
			first = false
		}
		return append(dst, '}'), true, nil
	}
	return bad()
}

// appendJSONMap writes a map: an object, or an array of entries as
// mode's rules say.
func appendJSONMap(dst []byte, s *schema.Schema, v any, mode jsonRules) ([]byte, bool, error) {
	m, ok := v.(*transform.Map)
	if !ok {
		return dst, false, fmt.Errorf("invalid type for map: %T", v)
	}
	object := s.Keys.Type == schema.TypeString && (!s.Keys.Optional || mode.converter())
	tuples := mode.converter()
	if object {
		dst = append(dst, '{')
	} else {
		dst = append(dst, '[')
	}
	var err error
	for i, e := range m.Entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		if object {
			k, ok := e.Key.(string)
			if !ok {
				return dst, false, fmt.Errorf("map key: invalid type for string: %T", e.Key)
			}
			dst = schema.AppendJSONString(dst, k)
			dst = append(dst, ':')
		} else if tuples {
			dst = append(dst, '[')
			var wrote bool
			if dst, wrote, err = appendJSONValue(dst, s.Keys, e.Key, mode); err != nil {
				return dst, false, fmt.Errorf("map key: %w", err)
			}
			if !wrote {
				dst = append(dst, "null"...)
			}
			dst = append(dst, ',')
		} else {
			dst = append(dst, `{"key":`...)
			var wrote bool
			if dst, wrote, err = appendJSONValue(dst, s.Keys, e.Key, mode); err != nil {
				return dst, false, fmt.Errorf("map key: %w", err)
			}
			if !wrote {
				dst = append(dst, "null"...)
			}
			dst = append(dst, `,"value":`...)
		}
		var wrote bool
		if dst, wrote, err = appendJSONValue(dst, s.Values, e.Value, mode); err != nil {
			return dst, false, fmt.Errorf("map value: %w", err)
		}
		if !wrote {
			dst = append(dst, "null"...)
		}
		switch {
		case tuples && !object:
			dst = append(dst, ']')
		case !object:
			dst = append(dst, '}')
		}
	}
	if object {
		return append(dst, '}'), true, nil
	}
	return append(dst, ']'), true, nil
}

func appendBase64(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendJavaFloat writes a float as Jackson does: Java's Double.toString
// (Float.toString for bits 32, transform.JavaDouble); NaN and the
// infinities as the strings "NaN", "Infinity", "-Infinity" (Jackson's
// WRITE_NAN_AS_STRINGS, on by default).
func appendJavaFloat(dst []byte, v float64, bits int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		dst = append(dst, '"')
		dst = append(dst, transform.JavaDouble(v, bits)...)
		return append(dst, '"')
	}
	return append(dst, transform.JavaDouble(v, bits)...)
}
