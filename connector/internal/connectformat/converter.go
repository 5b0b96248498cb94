package connectformat

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes a Connect record's key, value and headers as Kafka
// Connect's own converters do, for records a transform chain made: the
// JsonConverter (schemas on and off), Confluent's AvroConverter (the
// payload after the Confluent framing, the schema being
// schema.RenderAvro's) and the SimpleHeaderConverter (Kafka's default
// header.converter). Cited at apache/kafka 1eb7644349c and
// confluentinc/schema-registry (AvroData.java) as internal/avrodata is.

// ConverterOptions are the converters' settings that change the bytes.
type ConverterOptions struct {
	// KeepNulls is replace.null.with.default false (JsonConverter) and
	// ignore.default.for.nullables true (AvroConverter): a null stays
	// null where its schema has a default. mooncdc's
	// format.replace_null_with_default false.
	KeepNulls bool
}

// AppendJSONConverter appends v of schema s as JsonConverter.fromConnectData
// writes it (JsonConverter.java:321-332): with schemas, the envelope
// {"schema":…,"payload":…} (a null schema written null); without, the
// value alone. ok is false when it writes no bytes: a null value without
// schema (a tombstone). A value of no schema (schemaless) is refused:
// mooncdc's records and Connect's SMTs on them always have one.
func AppendJSONConverter(dst []byte, s *schema.Schema, v any, schemas bool, opts ConverterOptions) (out []byte, ok bool, err error) {
	if s == nil {
		if v != nil {
			return dst, false, fmt.Errorf("a schemaless value (%T) cannot be written: the converter writes schema-ful records only here", v)
		}
		return dst, false, nil
	}
	start := len(dst)
	if schemas { // convertToJsonWithEnvelope, JsonConverter.java:561-565
		dst = append(dst, `{"schema":`...)
		dst = schema.AppendConnectSchemaJSON(dst, s)
		dst = append(dst, `,"payload":`...)
	}
	rules := converterRules
	if opts.KeepNulls {
		rules = converterKeepNulls
	}
	var wrote bool
	if dst, wrote, err = appendJSONValue(dst, s, v, rules); err != nil {
		return dst[:start], false, err
	}
	if !wrote {
		dst = append(dst, "null"...)
	}
	if schemas {
		dst = append(dst, '}')
	}
	return dst, true, nil
}

// AppendHeaderValue appends a header's value as SimpleHeaderConverter.fromConnectHeader
// writes it (connect/api/src/main/java/org/apache/kafka/connect/storage/SimpleHeaderConverter.java:79-84):
// Values.convertToString (connect/api/src/main/java/org/apache/kafka/connect/data/Values.java:712-773):
// a string as it is, a number or boolean as Java prints it, bytes in
// base64, a date as ISO 8601 (in UTC), a list, map or struct in its
// JSON-like form with embedded strings quoted. ok is false for a null
// (the header has a null value).
func AppendHeaderValue(dst []byte, v any) (out []byte, ok bool, err error) {
	if v == nil {
		return dst, false, nil
	}
	out, err = appendConnectString(dst, v, false)
	return out, err == nil, err
}

// appendConnectString is Values.append.
func appendConnectString(dst []byte, v any, embedded bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float32:
		return append(dst, transform.JavaDouble(float64(x), 32)...), nil
	case float64:
		return append(dst, transform.JavaDouble(x, 64)...), nil
	case transform.Decimal:
		return append(dst, x.String()...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case string:
		if !embedded {
			return append(dst, x...), nil
		}
		dst = append(dst, '"')
		for i := 0; i < len(x); i++ { // Values.escape: \ and " only
			if x[i] == '\\' || x[i] == '"' {
				dst = append(dst, '\\')
			}
			dst = append(dst, x[i])
		}
		return append(dst, '"'), nil
	case []byte:
		if embedded {
			dst = append(dst, '"')
		}
		dst = base64.StdEncoding.AppendEncode(dst, x)
		if embedded {
			dst = append(dst, '"')
		}
		return dst, nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendConnectString(dst, e, true); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case *transform.Map:
		dst = append(dst, '{')
		for i, e := range x.Entries {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendConnectString(dst, e.Key, true); err != nil {
				return dst, err
			}
			dst = append(dst, ':')
			if dst, err = appendConnectString(dst, e.Value, true); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case *transform.Struct:
		dst = append(dst, '{')
		for i, f := range x.Schema.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst, _ = appendConnectString(dst, f.Name, true)
			dst = append(dst, ':')
			fv := x.Values[i]
			if fv == nil && f.Schema.HasDefault { // Struct.get: the default
				d, err := transform.FromJSON(f.Schema, f.Schema.Default)
				if err != nil {
					return dst, err
				}
				fv = d
			}
			var err error
			if dst, err = appendConnectString(dst, fv, true); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case time.Time: // Values.dateFormatFor, :791-799
		ms := x.UnixMilli()
		switch {
		case ms < millisPerDay:
			return x.UTC().AppendFormat(dst, "15:04:05.000Z"), nil
		case ms%millisPerDay == 0:
			return x.UTC().AppendFormat(dst, "2006-01-02"), nil
		}
		return x.UTC().AppendFormat(dst, "2006-01-02T15:04:05.000Z"), nil
	}
	return dst, fmt.Errorf("failed to serialize unexpected value type %T", v)
}

// AppendAvro appends v of schema s in Avro's binary encoding under the
// schema schema.RenderAvro(s) gives, as AvroData.fromConnectData and the
// Avro writer make it (without the Confluent framing: the caller writes
// magic byte 0 and the schema id before it). An optional schema is a union
// with null, null first unless the schema has a default (the renderer's
// rule); a map whose keys are not required strings is an array of
// {key, value} records; Decimal is its unscaled two's complement, Date
// days, Time and Timestamp milliseconds. A null where the schema has a
// default is the default unless opts.KeepNulls.
func AppendAvro(dst []byte, s *schema.Schema, v any, opts ConverterOptions) ([]byte, error) {
	return appendAvro(dst, s, v, opts)
}

func appendAvro(dst []byte, s *schema.Schema, v any, opts ConverterOptions) ([]byte, error) {
	if v == nil && s.HasDefault && !opts.KeepNulls {
		d, err := transform.FromJSON(s, s.Default)
		if err != nil {
			return dst, fmt.Errorf("the default of a %s: %w", s.Type, err)
		}
		v = d
	}
	if s.Optional {
		// The union's branch: ["null", T], or [T, "null"] with a default.
		nullIndex, valueIndex := int64(0), int64(1)
		if s.HasDefault {
			nullIndex, valueIndex = 1, 0
		}
		if v == nil {
			return appendVarint(dst, nullIndex), nil
		}
		dst = appendVarint(dst, valueIndex)
	} else if v == nil {
		return dst, fmt.Errorf("null value for a required %s", s.Type)
	}
	bad := func() ([]byte, error) { return dst, fmt.Errorf("invalid type for %s: %T", s.Type, v) }
	switch s.Name {
	case transform.DecimalName:
		d, ok := v.(transform.Decimal)
		if !ok || d.Unscaled == nil {
			return bad()
		}
		b := twosComplement(d.Unscaled)
		dst = appendVarint(dst, int64(len(b)))
		return append(dst, b...), nil
	case transform.DateName, transform.TimeName, transform.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		ms := t.UnixMilli()
		switch s.Name {
		case transform.DateName:
			if ms%millisPerDay != 0 {
				return dst, fmt.Errorf("a Date value has a time of day")
			}
			return appendVarint(dst, ms/millisPerDay), nil
		case transform.TimeName:
			if ms < 0 || ms >= millisPerDay {
				return dst, fmt.Errorf("a Time value is outside the first day")
			}
		}
		return appendVarint(dst, ms), nil
	}
	switch s.Type {
	case schema.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return bad()
		}
		return appendVarint(dst, int64(x)), nil
	case schema.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return bad()
		}
		return appendVarint(dst, int64(x)), nil
	case schema.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		return appendVarint(dst, int64(x)), nil
	case schema.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		return appendVarint(dst, x), nil
	case schema.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(x)), nil
	case schema.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(x)), nil
	case schema.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		if x {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case schema.TypeString:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		dst = appendVarint(dst, int64(len(x)))
		return append(dst, x...), nil
	case schema.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		dst = appendVarint(dst, int64(len(x)))
		return append(dst, x...), nil
	case schema.TypeArray:
		a, ok := v.([]any)
		if !ok {
			return bad()
		}
		if len(a) > 0 {
			dst = appendVarint(dst, int64(len(a)))
			for i, e := range a {
				var err error
				if dst, err = appendAvro(dst, s.Items, e, opts); err != nil {
					return dst, fmt.Errorf("array element %d: %w", i, err)
				}
			}
		}
		return append(dst, 0), nil
	case schema.TypeMap:
		m, ok := v.(*transform.Map)
		if !ok {
			return bad()
		}
		asMap := s.Keys.Type == schema.TypeString && !s.Keys.Optional
		if len(m.Entries) > 0 {
			dst = appendVarint(dst, int64(len(m.Entries)))
			for _, e := range m.Entries {
				var err error
				if asMap {
					k, ok := e.Key.(string)
					if !ok {
						return dst, fmt.Errorf("a map key %T is not a string", e.Key)
					}
					dst = appendVarint(dst, int64(len(k)))
					dst = append(dst, k...)
				} else if dst, err = appendAvro(dst, s.Keys, e.Key, opts); err != nil { // MapEntry.key
					return dst, fmt.Errorf("map key: %w", err)
				}
				if dst, err = appendAvro(dst, s.Values, e.Value, opts); err != nil {
					return dst, fmt.Errorf("map value: %w", err)
				}
			}
		}
		return append(dst, 0), nil
	case schema.TypeStruct:
		st, ok := v.(*transform.Struct)
		if !ok || len(st.Values) != len(s.Fields) {
			return dst, fmt.Errorf("mismatching struct schema for %q", s.Name)
		}
		for i, f := range s.Fields {
			var err error
			if dst, err = appendAvro(dst, f.Schema, st.Values[i], opts); err != nil {
				return dst, fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		return dst, nil
	}
	return bad()
}

// appendVarint writes n zig-zag encoded, Avro's int and long.
func appendVarint(dst []byte, n int64) []byte {
	return binary.AppendUvarint(dst, uint64(n<<1)^uint64(n>>63))
}
