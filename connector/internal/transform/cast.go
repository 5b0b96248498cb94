package transform

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// Cast is Kafka Connect's Cast$Key / Cast$Value
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/Cast.java):
// fields (or the whole part) cast to int8 … float64, boolean or string.
type Cast struct {
	part        part
	whole       string            // the whole-value target type, "" when fields are cast
	casts       map[string]string // field → target type
	order       []string          // the fields in spec order
	replaceNull bool
	cache       schemaCache
}

// castInputs and castOutputs are SUPPORTED_CAST_INPUT_TYPES and
// SUPPORTED_CAST_OUTPUT_TYPES (Cast.java:96-106), as schema types.
var (
	castInputs  = []string{schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64, schema.TypeFloat32, schema.TypeFloat64, schema.TypeBoolean, schema.TypeString, schema.TypeBytes}
	castOutputs = []string{schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64, schema.TypeFloat32, schema.TypeFloat64, schema.TypeBoolean, schema.TypeString}
)

// connectTypeNames maps Schema.Type names (INT8 … FLOAT32, BOOLEAN) to
// the schema package's spelling.
var connectTypeNames = map[string]string{
	"INT8": schema.TypeInt8, "INT16": schema.TypeInt16, "INT32": schema.TypeInt32, "INT64": schema.TypeInt64,
	"FLOAT32": schema.TypeFloat32, "FLOAT64": schema.TypeFloat64, "BOOLEAN": schema.TypeBoolean,
	"STRING": schema.TypeString, "BYTES": schema.TypeBytes, "ARRAY": schema.TypeArray, "MAP": schema.TypeMap,
	"STRUCT": schema.TypeStruct,
}

// parseCastSpec is Cast.parseFieldTypes (Cast.java:409-441).
func parseCastSpec(t *Cast, mappings []string) error {
	if len(mappings) == 0 {
		return fmt.Errorf("must specify at least one field to cast")
	}
	t.casts = map[string]string{}
	target := func(name string) (string, error) {
		typ, ok := connectTypeNames[strings.ToUpper(strings.TrimSpace(name))]
		if !ok {
			return "", fmt.Errorf("invalid type found in casting spec: %s", strings.TrimSpace(name))
		}
		if !contains(castOutputs, typ) {
			return "", fmt.Errorf("cast transformation does not support casting to %s; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]", strings.ToUpper(strings.TrimSpace(name)))
		}
		return typ, nil
	}
	for _, m := range mappings {
		parts := javaSplit(m, ":")
		switch len(parts) {
		case 1:
			typ, err := target(parts[0])
			if err != nil {
				return err
			}
			t.whole = typ
		case 2:
			typ, err := target(parts[1])
			if err != nil {
				return err
			}
			f := strings.TrimSpace(parts[0])
			if _, dup := t.casts[f]; !dup {
				t.order = append(t.order, f)
			}
			t.casts[f] = typ
		default:
			return fmt.Errorf("invalid rename mapping: %s", m)
		}
	}
	if t.whole != "" && len(mappings) > 1 {
		return fmt.Errorf("cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const castPurpose = "cast types"

// Apply implements Transform (Cast.java:132-188).
func (t *Cast) Apply(r Record) (Record, bool, error) {
	s, v := t.part.get(&r)
	if v == nil {
		return r, true, nil
	}
	if s == nil {
		if t.whole != "" {
			out, err := castValue(nil, v, t.whole)
			if err != nil {
				return r, false, err
			}
			return t.part.set(r, nil, out), true, nil
		}
		m, err := requireMap(v, castPurpose)
		if err != nil {
			return r, false, err
		}
		out := m.Clone()
		for _, f := range t.order {
			fv, _ := m.Get(f)
			cv, err := castValue(nil, fv, t.casts[f])
			if err != nil {
				return r, false, fmt.Errorf("field %q: %w", f, err)
			}
			out.Put(f, cv)
		}
		return t.part.set(r, nil, out), true, nil
	}
	us, err := t.cache.get(s, t.updatedSchema)
	if err != nil {
		return r, false, err
	}
	if t.whole != "" {
		out, err := castValue(s, v, t.whole)
		if err != nil {
			return r, false, err
		}
		return t.part.set(r, us, out), true, nil
	}
	st, err := requireStruct(v, castPurpose)
	if err != nil {
		return r, false, err
	}
	out := NewStruct(us)
	for i, f := range st.Schema.Fields {
		fv, err := fieldValue(st, i, t.replaceNull)
		if err != nil {
			return r, false, err
		}
		if typ, ok := t.casts[f.Name]; ok {
			if fv, err = castValue(f.Schema, fv, typ); err != nil {
				return r, false, fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		if err := Validate(us.Fields[i].Schema, fv); err != nil {
			return r, false, fmt.Errorf("field %q: %w", f.Name, err)
		}
		out.Values[i] = fv
	}
	return t.part.set(r, us, out), true, nil
}

// updatedSchema is Cast.getOrBuildSchema (Cast.java:197-231). A cast
// field's schema is a new plain schema (no name), optional and with a
// default as the field's; a whole-value cast keeps the name, version, doc
// and parameters (copySchemaBasics).
func (t *Cast) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	var out *schema.Schema
	if t.whole != "" {
		out = copyBasics(s, t.whole)
	} else {
		if s.Type != schema.TypeStruct {
			return nil, fmt.Errorf("only Struct objects supported for [%s], found a %s schema", castPurpose, s.Type)
		}
		out = copyBasics(s, schema.TypeStruct)
		for _, f := range s.Fields {
			typ, ok := t.casts[f.Name]
			if !ok {
				out.Fields = append(out.Fields, f)
				continue
			}
			fs := &schema.Schema{Type: typ, Optional: f.Schema.Optional}
			if err := castDefault(f.Schema, fs); err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			out.Fields = append(out.Fields, schema.Field{Name: f.Name, Schema: fs})
		}
	}
	out.Optional = s.Optional
	if err := castDefault(s, out); err != nil {
		return nil, err
	}
	return out, nil
}

// castDefault sets to's default to from's default cast to to's type.
func castDefault(from, to *schema.Schema) error {
	d, err := defaultOf(from)
	if err != nil || d == nil {
		return err
	}
	cv, err := castValue(from, d, to.Type)
	if err != nil {
		return fmt.Errorf("cast the default: %w", err)
	}
	to.Default, err = json.Marshal(cv)
	to.HasDefault = err == nil
	return err
}

// schemaTypeOf is ConnectSchema.schemaType(value.getClass()) for a
// schemaless value: "" for a class Connect's data API does not know.
func schemaTypeOf(v any) string {
	switch v.(type) {
	case int8:
		return schema.TypeInt8
	case int16:
		return schema.TypeInt16
	case int32:
		return schema.TypeInt32
	case int64:
		return schema.TypeInt64
	case float32:
		return schema.TypeFloat32
	case float64:
		return schema.TypeFloat64
	case bool:
		return schema.TypeBoolean
	case string:
		return schema.TypeString
	case []byte:
		return schema.TypeBytes
	case []any:
		return schema.TypeArray
	case *Map:
		return schema.TypeMap
	case *Struct:
		return schema.TypeStruct
	}
	return ""
}

// castValue is Cast.castValueToType (Cast.java:268-309).
func castValue(s *schema.Schema, v any, target string) (any, error) {
	if v == nil {
		return nil, nil
	}
	var from string
	if s == nil {
		if from = schemaTypeOf(v); from == "" {
			return nil, fmt.Errorf("cast transformation was passed a value of type %s which is not supported by Connect's data API", javaClass(v))
		}
	} else {
		from = s.Type
	}
	if !contains(castInputs, from) {
		return nil, fmt.Errorf("cast transformation does not support casting from %s; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]", strings.ToUpper(javaTypeName(from)))
	}
	if s != nil && s.Name != "" && target != schema.TypeString {
		// Cast.encodeLogicalType (Cast.java:256-266).
		if d, ok := v.(time.Time); ok {
			ms := millis(d)
			switch s.Name {
			case DateName:
				// Date.fromLogical (connect/api/src/main/java/org/apache/kafka/connect/data/Date.java:57-68).
				if ms%epochDay != 0 {
					return nil, fmt.Errorf("kafka Connect Date type should not have any time fields set to non-zero values (%s)", d.UTC().Format(time.RFC3339Nano))
				}
				v = int32(ms / epochDay)
			case TimeName:
				// Time.fromLogical (connect/api/src/main/java/org/apache/kafka/connect/data/Time.java:57-67).
				if ms < 0 || ms > epochDay {
					return nil, fmt.Errorf("kafka Connect Time type should not have any date fields set to non-zero values (%s)", d.UTC().Format(time.RFC3339Nano))
				}
				v = int32(ms)
			case TimestampName:
				v = ms
			}
		}
	}
	out, ok := castTo(v, target)
	if !ok {
		if _, isStr := v.(string); isStr {
			return nil, fmt.Errorf("value (%v) was out of range for requested data type", v)
		}
		return nil, fmt.Errorf("unexpected type in Cast transformation: %s", javaClass(v))
	}
	return out, nil
}

func javaTypeName(t string) string {
	for k, v := range connectTypeNames {
		if v == t {
			return k
		}
	}
	return t
}

// number is Java's Number view of a value: its longValue, intValue and
// doubleValue (floatValue for float targets).
type number struct {
	long   int64
	int    int32
	double float64
	float  float32
}

func asNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int8:
		return number{int64(x), int32(x), float64(x), float32(x)}, true
	case int16:
		return number{int64(x), int32(x), float64(x), float32(x)}, true
	case int32:
		return number{int64(x), x, float64(x), float32(x)}, true
	case int64:
		return number{x, int32(x), float64(x), float32(x)}, true
	case float32:
		return number{javaD2L(float64(x)), javaD2I(float64(x)), float64(x), x}, true
	case float64:
		return number{javaD2L(x), javaD2I(x), x, float32(x)}, true
	case Decimal:
		l := x.longValue()
		return number{l, int32(l), x.float64Value(), x.float32Value()}, true
	}
	return number{}, false
}

// castTo is Cast.castToInt8 … castToString (Cast.java:311-401); ok is
// false on an unexpected type or a string that does not parse.
func castTo(v any, target string) (any, bool) {
	if target == schema.TypeString {
		switch x := v.(type) {
		case time.Time:
			return javaDateString(x), true
		case []byte:
			return base64.StdEncoding.EncodeToString(x), true
		}
		return javaString(v)
	}
	if n, ok := asNumber(v); ok {
		switch target {
		case schema.TypeInt8:
			return int8(n.int), true // Number.byteValue: (byte) intValue()
		case schema.TypeInt16:
			return int16(n.int), true
		case schema.TypeInt32:
			return n.int, true
		case schema.TypeInt64:
			return n.long, true
		case schema.TypeFloat32:
			return n.float, true
		case schema.TypeFloat64:
			return n.double, true
		case schema.TypeBoolean:
			return n.long != 0, true
		}
	}
	if b, ok := v.(bool); ok {
		var i int64
		if b {
			i = 1
		}
		switch target {
		case schema.TypeInt8:
			return int8(i), true
		case schema.TypeInt16:
			return int16(i), true
		case schema.TypeInt32:
			return int32(i), true
		case schema.TypeInt64:
			return i, true
		case schema.TypeFloat32:
			return float32(i), true
		case schema.TypeFloat64:
			return float64(i), true
		case schema.TypeBoolean:
			return b, true
		}
	}
	str, ok := v.(string)
	if !ok {
		return nil, false
	}
	switch target {
	case schema.TypeInt8, schema.TypeInt16, schema.TypeInt32, schema.TypeInt64:
		bits := map[string]int{schema.TypeInt8: 8, schema.TypeInt16: 16, schema.TypeInt32: 32, schema.TypeInt64: 64}[target]
		i, ok := parseJavaInt(str, bits) // Byte.parseByte …
		if !ok {
			return nil, false
		}
		switch bits {
		case 8:
			return int8(i), true
		case 16:
			return int16(i), true
		case 32:
			return int32(i), true
		}
		return i, true
	case schema.TypeFloat32:
		f, ok := parseJavaFloat(str, 32)
		return float32(f), ok
	case schema.TypeFloat64:
		return parseJavaFloat(str, 64)
	case schema.TypeBoolean:
		return strings.EqualFold(str, "true"), true // Boolean.parseBoolean
	}
	return nil, false
}

// javaString is Object.toString for the values Cast may see.
func javaString(v any) (any, bool) {
	switch x := v.(type) {
	case int8:
		return strconv.FormatInt(int64(x), 10), true
	case int16:
		return strconv.FormatInt(int64(x), 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float32:
		return JavaDouble(float64(x), 32), true
	case float64:
		return JavaDouble(x, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case string:
		return x, true
	case Decimal:
		return x.String(), true
	}
	return nil, false
}

// javaDateString is Values.dateFormatFor(d).format(d)
// (connect/api/src/main/java/org/apache/kafka/connect/data/Values.java:791-799
// with the patterns of lines 71-73): a time of day before one day past the
// epoch, a date at midnight, else a timestamp. Java formats in the JVM's
// zone; mooncdc in UTC, the zone Kafka Connect workers are run in.
func javaDateString(d time.Time) string {
	ms := millis(d)
	d = d.UTC()
	switch {
	case ms < epochDay:
		return d.Format("15:04:05.000") + "Z"
	case ms%epochDay == 0:
		return d.Format("2006-01-02")
	}
	return d.Format("2006-01-02T15:04:05.000") + "Z"
}
