package transform

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sync"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// This file checks values against schemas (ConnectSchema.validateValue) and
// reads a schema's default value (Struct.get falls back to it).

// Validate reports whether v is a value of s as Connect's
// ConnectSchema.validateValue decides it
// (connect/api/src/main/java/org/apache/kafka/connect/data/ConnectSchema.java:213-273):
// null only for an optional schema, the Go type of the schema's type
// (logical types: time.Time, Decimal), struct values of the same schema.
func Validate(s *schema.Schema, v any) error {
	if v == nil {
		if !s.Optional {
			return fmt.Errorf("invalid value: null used for a required %s", s.Type)
		}
		return nil
	}
	switch logicalKind(s) {
	case TimestampName, DateName, TimeName:
		if _, ok := v.(time.Time); !ok {
			return fmt.Errorf("invalid Java object for the logical type %s: %T", s.Name, v)
		}
		return nil
	case DecimalName:
		if _, ok := v.(Decimal); !ok {
			return fmt.Errorf("invalid Java object for the logical type %s: %T", s.Name, v)
		}
		return nil
	}
	ok := false
	switch s.Type {
	case schema.TypeInt8:
		_, ok = v.(int8)
	case schema.TypeInt16:
		_, ok = v.(int16)
	case schema.TypeInt32:
		_, ok = v.(int32)
	case schema.TypeInt64:
		_, ok = v.(int64)
	case schema.TypeFloat32:
		_, ok = v.(float32)
	case schema.TypeFloat64:
		_, ok = v.(float64)
	case schema.TypeBoolean:
		_, ok = v.(bool)
	case schema.TypeString:
		_, ok = v.(string)
	case schema.TypeBytes:
		_, ok = v.([]byte)
	case schema.TypeStruct:
		var st *Struct
		if st, ok = v.(*Struct); ok && !sameStruct(st.Schema, s) {
			return fmt.Errorf("struct schemas do not match")
		}
	case schema.TypeArray:
		var a []any
		if a, ok = v.([]any); ok {
			for _, e := range a {
				if err := Validate(s.Items, e); err != nil {
					return fmt.Errorf("array element: %w", err)
				}
			}
		}
	case schema.TypeMap:
		var m *Map
		if m, ok = v.(*Map); ok {
			for _, e := range m.Entries {
				if err := Validate(s.Keys, e.Key); err != nil {
					return fmt.Errorf("map key: %w", err)
				}
				if err := Validate(s.Values, e.Value); err != nil {
					return fmt.Errorf("map value: %w", err)
				}
			}
		}
	}
	if !ok {
		return fmt.Errorf("invalid Java object for schema type %s: %T", s.Type, v)
	}
	return nil
}

// sameStruct reports whether a struct of schema a may stand where b is
// expected: the same schema, its optionality aside (an optional field
// holds a struct built with the required schema, as Debezium's envelope
// does for before and after).
func sameStruct(a, b *schema.Schema) bool {
	if a == b {
		return true
	}
	// A copy that changed only the optionality shares the fields: the
	// per-record path, without a deep comparison.
	if a.Type == b.Type && a.Name == b.Name && a.Version == b.Version && len(a.Fields) == len(b.Fields) &&
		len(a.Fields) > 0 && &a.Fields[0] == &b.Fields[0] {
		return true
	}
	if a.Optional != b.Optional {
		c := *a
		c.Optional = b.Optional
		a = &c
	}
	return reflect.DeepEqual(a, b)
}

// fieldValue returns field i of st: with replaceNull (the SMTs'
// replace.null.with.default, default true) a null becomes the field's
// default, as Struct.get(Field) does
// (connect/api/src/main/java/org/apache/kafka/connect/data/Struct.java:85-91);
// without, the value as it is (Struct.getWithoutDefault).
func fieldValue(st *Struct, i int, replaceNull bool) (any, error) {
	v := st.Values[i]
	if v != nil || !replaceNull {
		return v, nil
	}
	return defaultOf(st.Schema.Fields[i].Schema)
}

// defaults caches parsed defaults by schema: schemas are built once per
// relation and never changed. It is cleared past maxDefaults entries, so
// schemas rebuilt at every reconnect or schema change cannot grow it.
var defaults struct {
	sync.Mutex
	m map[*schema.Schema]any
}

const maxDefaults = 4096

// defaultOf returns s's default value, nil when it has none.
func defaultOf(s *schema.Schema) (any, error) {
	if !s.HasDefault {
		return nil, nil
	}
	defaults.Lock()
	v, ok := defaults.m[s]
	defaults.Unlock()
	if ok {
		return v, nil
	}
	v, err := FromJSON(s, s.Default)
	if err != nil {
		return nil, fmt.Errorf("read the default of a %s schema: %w", s.Type, err)
	}
	defaults.Lock()
	if defaults.m == nil || len(defaults.m) >= maxDefaults {
		defaults.m = make(map[*schema.Schema]any)
	}
	defaults.m[s] = v
	defaults.Unlock()
	return v, nil
}

// FromJSON reads a value of s from the JSON Kafka Connect's JsonConverter
// writes for it (the form schema.Schema.Default holds): numbers for the
// integer and float types and for Timestamp (ms), Date (days) and Time
// (ms), base64 for bytes and for Decimal's unscaled two's complement.
func FromJSON(s *schema.Schema, raw []byte) (any, error) {
	r := jsonReader{b: raw}
	v, err := r.value(s)
	if err != nil {
		return nil, err
	}
	if r.peek() != 0 || r.i < len(raw) {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// nonFinite are the non-finite doubles by the strings Jackson writes.
var nonFinite = map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}

// decimalScale returns the scale parameter of a Decimal schema.
func decimalScale(s *schema.Schema) (int32, error) {
	for _, p := range s.Params {
		if p.Key == "scale" {
			var n int32
			_, err := fmt.Sscanf(p.Value, "%d", &n)
			return n, err
		}
	}
	return 0, fmt.Errorf("a Decimal schema without a scale parameter")
}

// signedBig reads b as a big-endian two's complement integer
// (new BigInteger(byte[])).
func signedBig(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return n
}
