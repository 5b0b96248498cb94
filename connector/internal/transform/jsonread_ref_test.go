package transform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// fromJSONReference is FromJSON built on encoding/json (a generic tree
// with objects in key order, then the schema applied): the reference the
// one-pass reader (jsonread.go) is held to, in tests and under fuzzing.
func fromJSONReference(s *schema.Schema, raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	x, err := decodeOrdered(dec)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return fromJSONValue(s, x)
}

// jsonObject is a JSON object with its keys in the order written (a map
// keeps them in that order: the order its writer gave, not Go's random
// map order); a repeated key keeps its last value, as Jackson and
// encoding/json do.
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) get(k string) any {
	for i := len(o.keys) - 1; i >= 0; i-- {
		if o.keys[i] == k {
			return o.vals[i]
		}
	}
	return nil
}

// decodeOrdered reads one JSON value: objects as *jsonObject, arrays as
// []any, numbers as json.Number, and strings, booleans and null as
// encoding/json does.
func decodeOrdered(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &jsonObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys, o.vals = append(o.keys, k.(string)), append(o.vals, v)
		}
		_, err := dec.Token() // }
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ]
		return a, err
	}
	return t, nil
}

func fromJSONValue(s *schema.Schema, x any) (any, error) {
	if x == nil {
		return nil, nil
	}
	num := func() (json.Number, error) {
		n, ok := x.(json.Number)
		if !ok {
			return "", fmt.Errorf("%v is not a number", x)
		}
		return n, nil
	}
	integer := func(bits int) (int64, error) {
		n, err := num()
		if err != nil {
			return 0, err
		}
		i, err := n.Int64()
		if err != nil || i < -(1<<(bits-1)) || i > 1<<(bits-1)-1 {
			return 0, fmt.Errorf("%s is not an int%d", n, bits)
		}
		return i, nil
	}
	switch logicalKind(s) {
	case TimestampName:
		i, err := integer(64)
		return fromMillis(i), err
	case DateName:
		i, err := integer(32)
		return fromMillis(i * epochDay), err
	case TimeName:
		i, err := integer(32)
		return fromMillis(i), err
	case DecimalName:
		b, err := fromBase64(x)
		if err != nil {
			return nil, err
		}
		scale, err := decimalScale(s)
		return Decimal{Unscaled: signedBig(b), Scale: scale}, err
	}
	switch s.Type {
	case schema.TypeInt8:
		i, err := integer(8)
		return int8(i), err
	case schema.TypeInt16:
		i, err := integer(16)
		return int16(i), err
	case schema.TypeInt32:
		i, err := integer(32)
		return int32(i), err
	case schema.TypeInt64:
		return integer(64)
	case schema.TypeFloat32, schema.TypeFloat64:
		if str, ok := x.(string); ok {
			// mooncdc's encoders write a non-finite double as Jackson does
			// with QUOTE_NON_NUMERIC_NUMBERS (its default): the strings
			// "NaN", "Infinity" and "-Infinity" (schema/json_values.go);
			// the record's Connect value is the double itself.
			f, ok := nonFinite[str]
			if !ok {
				return nil, fmt.Errorf("%q is not a number", str)
			}
			if s.Type == schema.TypeFloat32 {
				return float32(f), nil
			}
			return f, nil
		}
		n, err := num()
		if err != nil {
			return nil, err
		}
		f, err := n.Float64()
		if s.Type == schema.TypeFloat32 {
			return float32(f), err
		}
		return f, err
	case schema.TypeBoolean:
		b, ok := x.(bool)
		if !ok {
			return nil, fmt.Errorf("%v is not a boolean", x)
		}
		return b, nil
	case schema.TypeString:
		str, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string", x)
		}
		return str, nil
	case schema.TypeBytes:
		return fromBase64(x)
	case schema.TypeArray:
		a, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("%v is not an array", x)
		}
		out := make([]any, len(a))
		for i, e := range a {
			v, err := fromJSONValue(s.Items, e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case schema.TypeMap:
		if s.Keys.Type != schema.TypeString {
			return nil, fmt.Errorf("a map default with %s keys is not supported", s.Keys.Type)
		}
		o, ok := x.(*jsonObject)
		if !ok {
			return nil, fmt.Errorf("%v is not an object", x)
		}
		m := &Map{}
		for i, k := range o.keys {
			v, err := fromJSONValue(s.Values, o.vals[i])
			if err != nil {
				return nil, err
			}
			m.Put(k, v)
		}
		return m, nil
	case schema.TypeStruct:
		o, ok := x.(*jsonObject)
		if !ok {
			return nil, fmt.Errorf("%v is not an object", x)
		}
		st := NewStruct(s)
		for i, f := range s.Fields {
			v, err := fromJSONValue(f.Schema, o.get(f.Name))
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			st.Values[i] = v
		}
		return st, nil
	}
	return nil, fmt.Errorf("unknown schema type %q", s.Type)
}

func fromBase64(x any) ([]byte, error) {
	str, ok := x.(string)
	if !ok {
		return nil, fmt.Errorf("%v is not a base64 string", x)
	}
	return base64.StdEncoding.DecodeString(str)
}

// fuzzSchema is a struct with a field of each kind the reader reads: the
// integers, floats, boolean, string, bytes, the logical types, an array,
// a map, a nested optional struct.
var fuzzSchema = structOf(
	"i8", opt(sInt8), "i16", opt(sInt16), "i32", opt(sInt32), "i64", opt(sInt64),
	"f32", opt(sFloat32), "f64", opt(sFloat64), "b", opt(sBool), "s", sOptStr, "by", opt(sBytes),
	"ts", opt(timestampSchema), "d", opt(dateSchema), "t", opt(timeSchema), "dec", opt(decimalSchema(2)),
	"arr", opt(&schema.Schema{Type: schema.TypeArray, Items: sOptStr}),
	"m", opt(&schema.Schema{Type: schema.TypeMap, Keys: sString, Values: opt(sInt32)}),
	"st", opt(structOf("x", sOptStr, "y", opt(sInt64))),
)

// TestFromJSONIsTheReference: the one-pass reader reads what the
// encoding/json reference reads, to the same values (maps in their
// order), and refuses what it refuses.
func TestFromJSONIsTheReference(t *testing.T) {
	for _, in := range fuzzSeeds {
		checkAgainstReference(t, in)
	}
}

var fuzzSeeds = []string{
	`{"i8":-128,"i16":300,"i32":-5,"i64":9007199254740993,"f32":1.5,"f64":"NaN","b":true,"s":"a\"\\\/\b\f\n\r\tb\u00e9\ud83d\ude00","by":"AQL/","ts":-1,"d":2,"t":1234,"dec":"AIA=","arr":["x",null],"m":{"z":1,"a":null},"st":{"y":2,"x":"q","extra":[1,{"k":[]}]}}`,
	`{"f64":"Infinity","f32":"-Infinity","s":"\ud800x","unknown":{"a":[true,false,null,-0.5e+3]}}`,
	`{"i8":128}`, `{"i32":1.5}`, `{"s":1}`, `{"b":"true"}`, `{"by":"%%"}`, `{"f64":"1.5"}`, `{"f64":1e400}`, `{"f64":1e-400}`,
	`{"st":{"x":"a","x":"b"}}`, `{"m":{"k":1,"k":2}}`, `{}`, `null`, ` { "i32" : 7 } `, `{"i32":7} x`, `{"i32":07}`, `{"s":"\x"}`,
	`{"s":"` + "\xff\xfeok" + `"}`, `{"s":"a` + "\x01" + `"}`, `{"arr":[]}`, `{"arr":[,]}`, `{"m":[]}`, `[1]`, `{"i32":-}`, `{"i32":1.}`, `{"f64":.5}`,
}

func checkAgainstReference(t *testing.T, in string) {
	t.Helper()
	got, err := FromJSON(fuzzSchema, []byte(in))
	want, werr := fromJSONReference(fuzzSchema, []byte(in))
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, the reference's %v", in, err, werr)
	}
	if err == nil && !sameValue(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", in, got, want)
	}
}

// sameValue is reflect.DeepEqual with NaN equal to NaN.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || math.IsNaN(float64(x)) && math.IsNaN(float64(y)))
	case *Struct:
		y, ok := b.(*Struct)
		if !ok || x.Schema != y.Schema || len(x.Values) != len(y.Values) {
			return false
		}
		for i := range x.Values {
			if !sameValue(x.Values[i], y.Values[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// FuzzFromJSON: any input reads as the reference reads it, or both
// refuse it; never a panic.
func FuzzFromJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkAgainstReference(t, in) })
}
