package transform

import (
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// TestFromJSONReadsJsonConverterDefaults: a schema's default is the JSON
// JsonConverter writes (connect/json/src/main/java/org/apache/kafka/connect/json/JsonConverter.java,
// convertToJson): logical types as their encoded primitive, bytes and
// Decimal's unscaled two's complement in base64.
func TestFromJSONReadsJsonConverterDefaults(t *testing.T) {
	for _, c := range []struct {
		s    *schema.Schema
		json string
		want any
	}{
		{sInt8, "-5", int8(-5)},
		{sInt16, "300", int16(300)},
		{sInt64, "9007199254740993", int64(9007199254740993)}, // beyond a double's exact range
		{sFloat32, "1.5", float32(1.5)},
		{sBool, "true", true},
		{sString, `"x"`, "x"},
		{sBytes, `"AQL/"`, []byte{1, 2, 255}},
		{dateSchema, "2", fromMillis(2 * epochDay)},
		{timeSchema, "1234", fromMillis(1234)},
		{timestampSchema, "-1", fromMillis(-1)},
		{decimalSchema(2), `"AIA="`, Decimal{Unscaled: big.NewInt(128), Scale: 2}},
		{decimalSchema(0), `"/w=="`, Decimal{Unscaled: big.NewInt(-1), Scale: 0}},
		{&schema.Schema{Type: schema.TypeArray, Items: sInt32}, "[1,2]", []any{int32(1), int32(2)}},
		{&schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sInt32}, `{"a":1}`, NewMap("a", int32(1))},
		{structOf("a", sInt32, "b", sOptStr), `{"a":1}`, &Struct{Schema: structOf("a", sInt32, "b", sOptStr), Values: []any{int32(1), nil}}},
		{sOptStr, "null", nil},
	} {
		got, err := FromJSON(c.s, []byte(c.json))
		if err != nil {
			t.Errorf("%s %s: %v", c.s.Type, c.json, err)
			continue
		}
		eq(t, c.s.Type+" "+c.json, got, c.want)
	}
	for _, c := range []struct {
		s    *schema.Schema
		json string
	}{{sInt8, "128"}, {sInt32, "1.5"}, {sString, "1"}, {sBool, `"true"`}, {sBytes, `"%%"`}} {
		if _, err := FromJSON(c.s, []byte(c.json)); err == nil {
			t.Errorf("%s %s read without an error", c.s.Type, c.json)
		}
	}
}

// TestFromJSONReadsTheEncodersNonFiniteFloatsAndKeepsMapOrder: mooncdc's
// encoders write NaN and the infinities as Jackson does by default
// (QUOTE_NON_NUMERIC_NUMBERS: the strings "NaN", "Infinity",
// "-Infinity"; Debezium's own test expects the doubles themselves in the
// Connect record, AbstractRecordsProducerTest.java:250-255 at
// v3.6.1.Final); a map keeps the order its JSON was written in (an hstore
// in Postgres' order), so a record read back and written again is the
// same bytes every time.
func TestFromJSONReadsTheEncodersNonFiniteFloatsAndKeepsMapOrder(t *testing.T) {
	for _, c := range []struct {
		s    *schema.Schema
		json string
		want float64
	}{
		{sFloat32, `"NaN"`, math.NaN()}, {sFloat64, `"Infinity"`, math.Inf(1)}, {sFloat64, `"-Infinity"`, math.Inf(-1)},
	} {
		got, err := FromJSON(c.s, []byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		f, ok := got.(float64)
		if c.s.Type == schema.TypeFloat32 {
			var f32 float32
			f32, ok = got.(float32)
			f = float64(f32)
		}
		if !ok || !(math.IsNaN(f) && math.IsNaN(c.want) || f == c.want) {
			t.Errorf("%s as %s: %#v, want %v", c.json, c.s.Type, got, c.want)
		}
	}
	if _, err := FromJSON(sFloat64, []byte(`"1.5"`)); err == nil {
		t.Error(`"1.5" read as a double: only the non-finite names are strings`)
	}
	m := &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sInt32}
	want := NewMap("z", int32(1), "a", int32(2), "m", int32(3), "b", int32(4))
	for range 20 { // Go's map order is random: twenty reads would show it
		got, err := FromJSON(m, []byte(`{"z":1,"a":2,"m":3,"b":4}`))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) { // not eq: it compares maps in any order
			t.Fatalf("map read as %#v, want the entries in the order written: %#v", got, want)
		}
	}
	if _, err := FromJSON(sInt32, []byte(`1 2`)); err == nil {
		t.Error("two JSON values read as one")
	}
}

// TestValidateAsConnectSchema: Struct.put refuses what
// ConnectSchema.validateValue refuses (ConnectSchema.java:213-273).
func TestValidateAsConnectSchema(t *testing.T) {
	s := structOf("a", sInt32, "b", sOptStr, "c", timestampSchema, "d", opt(structOf("x", sInt8)))
	st := NewStruct(s)
	for _, c := range []struct {
		field string
		v     any
		ok    bool
	}{
		{"a", int32(1), true}, {"a", int64(1), false}, {"a", nil, false},
		{"b", nil, true}, {"b", "x", true}, {"b", []byte("x"), false},
		{"c", fromMillis(0), true}, {"c", int64(0), false},
		{"d", &Struct{Schema: structOf("x", sInt8), Values: []any{int8(1)}}, true},
		{"d", &Struct{Schema: structOf("y", sInt8), Values: []any{int8(1)}}, false},
		{"nope", int32(1), false},
	} {
		err := st.Put(c.field, c.v)
		if (err == nil) != c.ok {
			t.Errorf("put %s = %#v: error %v, want ok %v", c.field, c.v, err, c.ok)
		}
	}
}
