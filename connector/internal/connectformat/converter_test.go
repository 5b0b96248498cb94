package connectformat

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// TestHeaderValuesAsSimpleHeaderConverterWritesThem: Values.convertToString
// (connect/api/src/main/java/org/apache/kafka/connect/data/Values.java:712-773
// at apache/kafka 1eb7644349c): a top-level string as it is; embedded in a
// list or map, quoted with " and \ escaped (ValuesTest.java:256-260:
// three"blind\"mice → three\"blind\\\"mice); a string map as
// {"foo":"123","bar":"baz"} (ValuesTest.java:357-365 reads that text back
// as STRING_MAP); numbers as Java prints them; bytes in base64; a date as
// ISO 8601 by Values.dateFormatFor (:791-799); a null is no value.
func TestHeaderValuesAsSimpleHeaderConverterWritesThem(t *testing.T) {
	st := newStruct(t, structOf("", "a", sInt32, "b", sOptStr), "a", int32(1))
	for _, c := range []struct {
		v    any
		want string
	}{
		{"simple", "simple"},
		{`three"blind\"mice`, `three"blind\"mice`},
		{[]any{`three"blind\"mice`}, `["three\"blind\\\"mice"]`},
		{transform.NewMap("foo", "123", "bar", "baz"), `{"foo":"123","bar":"baz"}`},
		{[]any{int32(1234567890), int32(-987654321)}, `[1234567890,-987654321]`},
		{int64(-5), "-5"}, {int8(7), "7"}, {true, "true"},
		{1e10, "1.0E10"}, {float32(3.3), "3.3"},
		{transform.Decimal{Unscaled: big.NewInt(-110), Scale: 2}, "-1.10"},
		{[]byte{1, 2, 255}, "AQL/"},
		{time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC), "2024-03-05"},
		{time.Date(2024, 3, 5, 10, 0, 1, 5e6, time.UTC), "2024-03-05T10:00:01.005Z"},
		{time.UnixMilli(3723004).UTC(), "01:02:03.004Z"},
		{st, `{"a":1,"b":null}`},
	} {
		got, ok, err := AppendHeaderValue(nil, c.v)
		if err != nil || !ok || string(got) != c.want {
			t.Errorf("%#v: %q (%v, %v), want %q", c.v, got, ok, err, c.want)
		}
	}
	if got, ok, err := AppendHeaderValue(nil, nil); ok || err != nil || got != nil {
		t.Errorf("null: %q %v %v, want no value", got, ok, err)
	}
}

// TestJSONConverterNullsTombstonesAndEnvelope: JsonConverter.fromConnectData
// (connect/json/src/main/java/org/apache/kafka/connect/json/JsonConverter.java:321-332,
// convertToJson :583-591): a null value without schema writes no bytes (a
// tombstone); with schemas, {"schema":…,"payload":…}; a null with a
// default is the default unless replace.null.with.default is false; a
// null in a required field without a default is an error.
func TestJSONConverterNullsTombstonesAndEnvelope(t *testing.T) {
	withDefault := &schema.Schema{Type: schema.TypeInt32, Optional: true, HasDefault: true, Default: []byte("5")}
	s := structOf("r", "x", withDefault)
	v := transform.NewStruct(s)
	for _, c := range []struct {
		keep    bool
		schemas bool
		want    string
	}{
		{false, false, `{"x":5}`},
		{true, false, `{"x":null}`},
		{true, true, `{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"default":5,"field":"x"}],"optional":false,"name":"r"},"payload":{"x":null}}`},
	} {
		got, ok, err := AppendJSONConverter(nil, s, v, c.schemas, ConverterOptions{KeepNulls: c.keep})
		if err != nil || !ok || string(got) != c.want {
			t.Errorf("keep nulls %v, schemas %v: %s (%v %v), want %s", c.keep, c.schemas, got, ok, err, c.want)
		}
	}
	if got, ok, err := AppendJSONConverter([]byte("x"), nil, nil, true, ConverterOptions{}); ok || err != nil || string(got) != "x" {
		t.Errorf("a tombstone: %q %v %v, want no bytes", got, ok, err)
	}
	if got, _, err := AppendJSONConverter(nil, sInt32, nil, true, ConverterOptions{}); err == nil {
		t.Errorf("a required null: %s, want an error (convertToJson throws)", got)
	}
	if _, _, err := AppendJSONConverter(nil, structOf("r", "x", sInt32), transform.NewStruct(structOf("r", "x", sInt32)), false, ConverterOptions{}); err == nil ||
		!strings.Contains(err.Error(), "null value for a required int32") {
		t.Errorf("a null in a required field: %v, want JsonConverter's conversion error", err)
	}
	if _, _, err := AppendJSONConverter(nil, nil, "schemaless", false, ConverterOptions{}); err == nil {
		t.Error("a schemaless value was written")
	}
}

// TestAvroValuesDecodeUnderTheRenderedSchema: AppendAvro's bytes are the
// Avro binary encoding of the value under schema.RenderAvro's schema
// (decoded by hamba/avro, an Avro implementation of its own): every
// primitive, int8/int16 as int, the logical types (decimal bytes, date
// days, time-millis, timestamp-millis), arrays, a string-keyed map, a map
// with int keys as an array of {key, value} records (AvroData.java:918-958),
// nested and optional structs, and the union order: ["null", T], or
// [T, "null"] for a schema with a default (AvroData.java:1134-1150).
func TestAvroValuesDecodeUnderTheRenderedSchema(t *testing.T) {
	withDefault := &schema.Schema{Type: schema.TypeString, Optional: true, HasDefault: true, Default: []byte(`"dflt"`)}
	inner := structOf("inner.Rec", "n", sOptInt64)
	s := structOf("test.Rec",
		"i8", &schema.Schema{Type: schema.TypeInt8}, "i16", sInt16, "i32", sInt32, "i64", sInt64,
		"f32", sFloat32, "f64", sFloat64, "b", sBool, "s", sString, "by", sBytes,
		"dec", decimalSchema("2", "5"), "date", sDate, "time", sTime, "ts", sTimestamp,
		"arr", &schema.Schema{Type: schema.TypeArray, Items: sOptStr},
		"m", &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sInt32},
		"mi", &schema.Schema{Type: schema.TypeMap, Keys: sInt32, Values: sString},
		"in", opt(inner), "nul", opt(inner), "dflt", withDefault, "dfltSet", withDefault, "none", sOptStr,
	)
	v := newStruct(t, s, "i8", int8(-8), "i16", int16(300), "i32", int32(-70000), "i64", int64(1)<<40,
		"f32", float32(1.5), "f64", -2.25, "b", true, "s", "héllo", "by", []byte{0, 255},
		"dec", transform.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, "date", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC),
		"time", time.UnixMilli(3723004).UTC(), "ts", time.UnixMilli(1709632801005).UTC(),
		"arr", []any{"a", nil}, "m", transform.NewMap("z", int32(1), "a", int32(2)),
		"mi", transform.NewMap(int32(7), "seven"), "in", newStruct(t, inner, "n", int64(9)), "dfltSet", "given")
	text, err := schema.RenderAvro(s)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := avro.Parse(text)
	if err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	for _, keep := range []bool{false, true} {
		b, err := AppendAvro(nil, s, v, ConverterOptions{KeepNulls: keep})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := avro.Unmarshal(parsed, b, &got); err != nil {
			t.Fatalf("decode: %v (schema %s)", err, text)
		}
		want := map[string]any{"i8": 8 * -1, "i16": 300, "i32": -70000, "i64": int64(1) << 40, "f32": float32(1.5), "f64": -2.25,
			"b": true, "s": "héllo", "by": []byte{0, 255}, "dec": big.NewRat(-12345, 100),
			"date": time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC), "time": 3723004 * time.Millisecond,
			"ts": time.UnixMilli(1709632801005).UTC(), "arr": []any{"a", nil}, "m": map[string]any{"z": 1, "a": 2},
			"mi": []any{map[string]any{"key": 7, "value": "seven"}}, "in": map[string]any{"inner.Rec": map[string]any{"n": int64(9)}},
			"nul": nil, "dflt": "dflt", "dfltSet": "given", "none": nil}
		if keep {
			want["dflt"] = nil
		}
		// hamba decodes a union with null as its value, but a named
		// type's branch as {name: value}.
		for k, w := range want {
			if g := got[k]; !reflect.DeepEqual(normalizeAvro(g), normalizeAvro(w)) {
				t.Errorf("keep nulls %v: %s = %#v, want %#v", keep, k, g, w)
			}
		}
	}
}

// normalizeAvro compares decoded values: *big.Rat by value, times in UTC.
func normalizeAvro(v any) any {
	switch x := v.(type) {
	case *big.Rat:
		return x.RatString()
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}
