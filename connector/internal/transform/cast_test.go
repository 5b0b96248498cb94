package transform

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

const castTest = "CastTest.java"

func decimalSchema(scale int) *schema.Schema {
	return &schema.Schema{Type: schema.TypeBytes, Name: DecimalName, Version: 1, Params: []schema.Param{{Key: "scale", Value: fmt.Sprint(scale)}}}
}

func dec(unscaled int64, scale int32) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

func TestCastConfigAsKafka(t *testing.T) {
	for _, c := range []struct {
		name, spec, want string
	}{
		{castTest + ":74 testConfigEmpty", "", "must specify at least one field to cast"},
		{castTest + ":79 testConfigInvalidSchemaType", "foo:faketype", "invalid type found in casting spec: faketype"},
		{castTest + ":84 testConfigInvalidTargetType field", "foo:array", "does not support casting to ARRAY"},
		{castTest + ":84 testConfigInvalidTargetType whole", "array", "does not support casting to ARRAY"},
		{castTest + ":90 testUnsupportedTargetType", "foo:bytes", "does not support casting to BYTES"},
		{castTest + ":95 testConfigInvalidMap", "foo:int8:extra", "invalid rename mapping: foo:int8:extra"},
		{castTest + ":100 testConfigMixWholeAndFieldTransformation", "foo:int8,int32", "may only specify a single cast"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := oneErr("Cast$Key", "spec", c.spec)
			mustContain(t, err, "transforms.t.spec", c.want)
		})
	}
}

func TestCastAsKafka(t *testing.T) {
	unchanged := []struct {
		name, typ string
		in        Record
	}{
		{castTest + ":105 castNullValueRecordWithSchema", "Cast$Value", Record{Topic: "topic", Partition: i32p(0), KeySchema: sString, Key: "key", ValueSchema: sString}},
		{castTest + ":131 castNullValueRecordSchemaless", "Cast$Value", Record{Topic: "topic", Partition: i32p(0), KeySchema: sString, Key: "key"}},
		{castTest + ":140 castNullKeyRecordWithSchema", "Cast$Key", Record{Topic: "topic", Partition: i32p(0), KeySchema: sString, ValueSchema: sString, Value: "value"}},
		{castTest + ":149 castNullKeyRecordSchemaless", "Cast$Key", Record{Topic: "topic", Partition: i32p(0), ValueSchema: sString, Value: "value"}},
	}
	for _, c := range unchanged {
		t.Run(c.name, func(t *testing.T) {
			eq(t, "record", apply(t, one(t, c.typ, "spec", "foo:int64"), c.in), c.in)
		})
	}
	for _, c := range []struct {
		replace string
		want    any
	}{{"false", nil}, {"true", "10"}} { // data(), CastTest.java:61-65
		t.Run(castTest+":115 castFieldWithDefaultValueRecordWithSchema "+c.replace, func(t *testing.T) {
			tr := one(t, "Cast$Value", "spec", "magic:string", "replace.null.with.default", c.replace)
			s := structOf("magic", withDefault(sOptInt32, "10"))
			out := apply(t, tr, Record{Topic: "topic", KeySchema: sString, Key: "key", ValueSchema: s, Value: newStruct(t, s, "magic", nil)})
			eq(t, "type", fieldSchema(t, out.ValueSchema, "magic").Type, schema.TypeString)
			eq(t, "magic", get(t, out.Value, "magic"), c.want)
		})
	}
	whole := []struct {
		line     int
		name     string
		spec     string
		s        *schema.Schema
		in, want any
	}{
		{158, "castWholeRecordKeyWithSchema", "int8", sInt32, int32(42), int8(42)},
		{168, "castWholeRecordValueWithSchemaInt8", "int8", sInt32, int32(42), int8(42)},
		{178, "castWholeRecordValueWithSchemaInt16", "int16", sInt32, int32(42), int16(42)},
		{188, "castWholeRecordValueWithSchemaInt32", "int32", sInt32, int32(42), int32(42)},
		{198, "castWholeRecordValueWithSchemaInt64", "int64", sInt32, int32(42), int64(42)},
		{208, "castWholeRecordValueWithSchemaFloat32", "float32", sInt32, int32(42), float32(42)},
		{218, "castWholeRecordValueWithSchemaFloat64", "float64", sInt32, int32(42), float64(42)},
		{228, "castWholeRecordValueWithSchemaBooleanTrue", "boolean", sInt32, int32(42), true},
		{238, "castWholeRecordValueWithSchemaBooleanFalse", "boolean", sInt32, int32(0), false},
		{248, "castWholeRecordValueWithSchemaString", "string", sInt32, int32(42), "42"},
		{258, "castWholeBigDecimalRecordValueWithSchemaString", "string", decimalSchema(0), dec(42, 0), "42"},
		// :269: new Date(MILLIS_PER_DAY + 1) formatted by Values.dateFormatFor:
		// a timestamp, yyyy-MM-dd'T'HH:mm:ss.SSS'Z' (Values.java:71-73, 791-799).
		{269, "castWholeDateRecordValueWithSchemaString", "string", timestampSchema, fromMillis(epochDay + 1), "1970-01-02T00:00:00.001Z"},
		{292, "castWholeRecordKeySchemaless", "int8", nil, int32(42), int8(42)},
		{302, "castWholeRecordValueSchemalessInt8", "int8", nil, int32(42), int8(42)},
		{312, "castWholeRecordValueSchemalessInt16", "int16", nil, int32(42), int16(42)},
		{322, "castWholeRecordValueSchemalessInt32", "int32", nil, int32(42), int32(42)},
		{332, "castWholeRecordValueSchemalessInt64", "int64", nil, int32(42), int64(42)},
		{342, "castWholeRecordValueSchemalessFloat32", "float32", nil, int32(42), float32(42)},
		{352, "castWholeRecordValueSchemalessFloat64", "float64", nil, int32(42), float64(42)},
		{362, "castWholeRecordValueSchemalessBooleanTrue", "boolean", nil, int32(42), true},
		{372, "castWholeRecordValueSchemalessBooleanFalse", "boolean", nil, int32(0), false},
		{382, "castWholeRecordValueSchemalessString", "string", nil, int32(42), "42"},
	}
	for _, c := range whole {
		t.Run(fmt.Sprintf("%s:%d %s", castTest, c.line, c.name), func(t *testing.T) {
			key := c.line == 158 || c.line == 292
			typ := "Cast$Value"
			in := Record{Topic: "topic", Partition: i32p(0), ValueSchema: c.s, Value: c.in}
			if key {
				typ = "Cast$Key"
				in = Record{Topic: "topic", Partition: i32p(0), KeySchema: c.s, Key: c.in, ValueSchema: sString, Value: "bogus"}
			}
			out := apply(t, one(t, typ, "spec", c.spec), in)
			s, v := out.ValueSchema, out.Value
			if key {
				s, v = out.KeySchema, out.Key
			}
			eq(t, "value", v, c.want)
			if c.s == nil {
				if s != nil {
					t.Errorf("schema = %v, want none", s)
				}
			} else {
				eq(t, "schema type", s.Type, map[string]string{"int8": schema.TypeInt8, "int16": schema.TypeInt16, "int32": schema.TypeInt32, "int64": schema.TypeInt64, "float32": schema.TypeFloat32, "float64": schema.TypeFloat64, "boolean": schema.TypeBoolean, "string": schema.TypeString}[c.spec])
			}
		})
	}
	t.Run(castTest+":280 castWholeRecordDefaultValue", func(t *testing.T) {
		s := withDefault(sFloat32, "-42.125")
		out := apply(t, one(t, "Cast$Value", "spec", "int32"), Record{Topic: "topic", ValueSchema: s, Value: float32(42.125)})
		eq(t, "type", out.ValueSchema.Type, schema.TypeInt32)
		eq(t, "value", out.Value, int32(42))
		d, err := defaultOf(out.ValueSchema)
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "default", d, int32(-42))
	})
	t.Run(castTest+":392 castWholeRecordValueSchemalessUnsupportedType", func(t *testing.T) {
		mustContain(t, applyErr(t, one(t, "Cast$Value", "spec", "int8"), Record{Topic: "topic", Value: []any{"foo"}}), "does not support casting from ARRAY")
	})
	t.Run(castTest+":400 castLogicalToPrimitive", func(t *testing.T) {
		tr := one(t, "Cast$Value", "spec", "date_to_int32:int32,timestamp_to_int64:int64,time_to_int64:int64,decimal_to_int32:int32,timestamp_to_float64:float64,null_timestamp_to_int32:int32")
		s := structOf("date_to_int32", dateSchema, "timestamp_to_int64", timestampSchema, "time_to_int64", timeSchema,
			"decimal_to_int32", decimalSchema(0), "timestamp_to_float64", timestampSchema, "null_timestamp_to_int32", optionalTimestampSchema)
		v := newStruct(t, s, "date_to_int32", fromMillis(epochDay), "timestamp_to_int64", fromMillis(0), "time_to_int64", fromMillis(1),
			"decimal_to_int32", dec(math.MaxInt32+1, 0), "timestamp_to_float64", fromMillis(math.MaxInt64), "null_timestamp_to_int32", nil)
		out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: v})
		eq(t, "date_to_int32", get(t, out.Value, "date_to_int32"), int32(1))
		eq(t, "timestamp_to_int64", get(t, out.Value, "timestamp_to_int64"), int64(0))
		eq(t, "time_to_int64", get(t, out.Value, "time_to_int64"), int64(1))
		eq(t, "decimal_to_int32", get(t, out.Value, "decimal_to_int32"), int32(math.MinInt32))
		eq(t, "timestamp_to_float64", get(t, out.Value, "timestamp_to_float64"), 9.223372036854776e18)
		eq(t, "null_timestamp_to_int32", get(t, out.Value, "null_timestamp_to_int32"), nil)
		for f, typ := range map[string]string{"date_to_int32": schema.TypeInt32, "timestamp_to_int64": schema.TypeInt64, "time_to_int64": schema.TypeInt64,
			"decimal_to_int32": schema.TypeInt32, "timestamp_to_float64": schema.TypeFloat64, "null_timestamp_to_int32": schema.TypeInt32} {
			eq(t, f+" type", fieldSchema(t, out.ValueSchema, f).Type, typ)
		}
	})
	t.Run(castTest+":453 castLogicalToString", func(t *testing.T) {
		tr := one(t, "Cast$Value", "spec", "date:string,decimal:string,time:string,timestamp:string")
		s := structOf("date", dateSchema, "decimal", decimalSchema(0), "time", timeSchema, "timestamp", timestampSchema)
		// Kafka uses new Date() for the timestamp; a fixed instant here,
		// formatted by hand with ISO_8601_TIMESTAMP_FORMAT_PATTERN.
		v := newStruct(t, s, "date", fromMillis(epochDay), "decimal", dec(1982, 0), "time", fromMillis(3600_000), "timestamp", fromMillis(1700000000123))
		out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: v})
		eq(t, "date", get(t, out.Value, "date"), "1970-01-02")
		eq(t, "decimal", get(t, out.Value, "decimal"), "1982")
		eq(t, "time", get(t, out.Value, "time"), "01:00:00.000Z")
		eq(t, "timestamp", get(t, out.Value, "timestamp"), "2023-11-14T22:13:20.123Z")
		for _, f := range []string{"date", "decimal", "time", "timestamp"} {
			eq(t, f+" type", fieldSchema(t, out.ValueSchema, f).Type, schema.TypeString)
		}
	})
	t.Run(castTest+":492 castFieldsWithSchema", func(t *testing.T) {
		tr := one(t, "Cast$Value", "spec", "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,string:int32,bigdecimal:string,date:string,optional:int32,bytes:string,byteArray:string")
		s := structOf("int8", sInt8, "int16", opt(sInt16), "int32", withDefault(sInt32, "2"), "int64", sInt64, "float32", sFloat32,
			"float64", withDefault(sFloat64, "-1.125"), "boolean", sBool, "string", sString, "bigdecimal", decimalSchema(0), "date", dateSchema,
			"optional", opt(sFloat32), "timestamp", timestampSchema, "bytes", sBytes, "byteArray", sBytes)
		raw := []byte{0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10}
		v := newStruct(t, s, "int8", int8(8), "int16", int16(16), "int32", int32(32), "int64", int64(64), "float32", float32(32), "float64", -64.0,
			"boolean", true, "bigdecimal", dec(42, 0), "date", fromMillis(epochDay), "string", "42", "timestamp", fromMillis(0), "bytes", raw, "byteArray", raw)
		out := apply(t, tr, Record{Topic: "topic", ValueSchema: s, Value: v})
		want := map[string]any{"int8": int16(8), "int16": int32(16), "int32": int64(32), "int64": true, "float32": 32.0, "float64": true,
			"boolean": int8(1), "string": int32(42), "bigdecimal": "42", "date": "1970-01-02", "timestamp": fromMillis(0),
			"bytes": "/ty6mHZUMhA=", "byteArray": "/ty6mHZUMhA=", "optional": nil}
		for f, w := range want {
			eq(t, f, get(t, out.Value, f), w)
		}
		if !fieldSchema(t, out.ValueSchema, "int16").Optional {
			t.Error("int16 is no longer optional")
		}
		for f, w := range map[string]any{"int32": int64(2), "float64": true} {
			d, err := defaultOf(fieldSchema(t, out.ValueSchema, f))
			if err != nil {
				t.Fatal(err)
			}
			eq(t, f+" default", d, w)
		}
		for f, typ := range map[string]string{"int8": schema.TypeInt16, "int16": schema.TypeInt32, "int32": schema.TypeInt64, "int64": schema.TypeBoolean,
			"float32": schema.TypeFloat64, "float64": schema.TypeBoolean, "boolean": schema.TypeInt8, "string": schema.TypeInt32, "bigdecimal": schema.TypeString,
			"date": schema.TypeString, "optional": schema.TypeInt32, "bytes": schema.TypeString, "byteArray": schema.TypeString, "timestamp": schema.TypeInt64} {
			eq(t, f+" type", fieldSchema(t, out.ValueSchema, f).Type, typ)
		}
		eq(t, "timestamp schema unchanged", fieldSchema(t, out.ValueSchema, "timestamp"), timestampSchema)
	})
	t.Run(castTest+":580 castFieldsSchemaless", func(t *testing.T) {
		tr := one(t, "Cast$Value", "spec", "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,string:int32")
		in := NewMap("int8", int8(8), "int16", int16(16), "int32", int32(32), "int64", int64(64), "float32", float32(32), "float64", -64.0, "boolean", true, "string", "42")
		out := apply(t, tr, Record{Topic: "topic", Value: in})
		if out.ValueSchema != nil {
			t.Error("schema set")
		}
		eq(t, "value", out.Value, NewMap("int8", int16(8), "int16", int32(16), "int32", int64(32), "int64", true, "float32", 32.0, "float64", true, "boolean", int8(1), "string", int32(42)))
	})
}

// TestCastJavaConversions pins the Java conversions Cast relies on
// (Cast.java:311-401) at their edges: Number.byteValue truncates,
// (int) of a double saturates, Boolean.parseBoolean, a string out of range
// is Cast.java:306-308's error, Double.toString's two notations.
func TestCastJavaConversions(t *testing.T) {
	for _, c := range []struct {
		in     any
		target string
		want   any
	}{
		{int32(300), schema.TypeInt8, int8(44)},                     // (byte) 300
		{1e20, schema.TypeInt32, int32(math.MaxInt32)},              // (int) 1e20
		{math.NaN(), schema.TypeInt64, int64(0)},                    // (long) NaN
		{-1.5, schema.TypeInt16, int16(-1)},                         // toward zero
		{0.5, schema.TypeBoolean, false},                            // longValue() != 0
		{"TRUE", schema.TypeBoolean, true},                          // equalsIgnoreCase
		{"yes", schema.TypeBoolean, false},                          //
		{" 1.5 ", schema.TypeFloat64, 1.5},                          // Double.parseDouble trims
		{"2f", schema.TypeFloat32, float32(2)},                      // a float suffix
		{1e7, schema.TypeString, "1.0E7"},                           // Double.toString
		{0.001, schema.TypeString, "0.001"},                         //
		{1e-4, schema.TypeString, "1.0E-4"},                         //
		{float32(0.1), schema.TypeString, "0.1"},                    // Float.toString
		{100.0, schema.TypeString, "100.0"},                         //
		{dec(12345, 7), schema.TypeString, "0.0012345"},             // BigDecimal.toString, plain
		{dec(12345, 10), schema.TypeString, "0.0000012345"},         // adjusted -6: plain
		{dec(12345, 11), schema.TypeString, "1.2345E-7"},            // adjusted -7: scientific
		{dec(12, -3), schema.TypeString, "1.2E+4"},                  // negative scale
		{dec(-425, 2), schema.TypeInt32, int32(-4)},                 // BigDecimal.intValue
		{dec(math.MaxInt64, 0), schema.TypeInt16, int16(-1)},        // (short) intValue of the low bits
		{fromMillis(-1), schema.TypeString, "23:59:59.999Z"},        // dateFormatFor: < one day → time
		{fromMillis(-epochDay), schema.TypeString, "00:00:00.000Z"}, // the first rule wins before the epoch too
		{fromMillis(2 * epochDay), schema.TypeString, "1970-01-03"}, // % day == 0 → date
	} {
		var s *schema.Schema
		if d, ok := c.in.(Decimal); ok {
			s = decimalSchema(int(d.Scale))
		}
		if _, ok := c.in.(interface{ UnixMilli() int64 }); ok {
			s = timestampSchema
		}
		got, err := castValue(s, c.in, c.target)
		if err != nil {
			t.Errorf("cast %v to %s: %v", c.in, c.target, err)
			continue
		}
		eq(t, fmt.Sprintf("cast %v to %s", c.in, c.target), got, c.want)
	}
	for _, c := range []struct {
		in     string
		target string
	}{{"128", schema.TypeInt8}, {"0x10", schema.TypeInt32}, {"inf", schema.TypeFloat64}, {"1_0", schema.TypeFloat64}} {
		_, err := castValue(nil, c.in, c.target)
		mustContain(t, err, "out of range for requested data type")
	}
}

// TestCastLogicalOutsideItsType: Cast encodes a Date or Time with
// Date.fromLogical / Time.fromLogical (Cast.java:256-266), which throw for
// a Date with a time of day and for a Time outside [0, one day]
// (connect/api/src/main/java/org/apache/kafka/connect/data/Date.java:62-65,
// Time.java:63-65); the value is never truncated silently. A cast to
// string skips the encoding (Cast.java:282) and formats the instant.
func TestCastLogicalOutsideItsType(t *testing.T) {
	for _, c := range []struct {
		s    *schema.Schema
		in   int64 // ms
		to   string
		want any // nil: an error
	}{
		{dateSchema, epochDay + 1, schema.TypeInt32, nil},
		{dateSchema, -epochDay, schema.TypeInt32, int32(-1)}, // (int) (-86400000 / MILLIS_PER_DAY)
		{dateSchema, 3 * epochDay, schema.TypeInt64, int64(3)},
		{timeSchema, -1, schema.TypeInt32, nil},
		{timeSchema, epochDay + 1, schema.TypeInt64, nil},
		{timeSchema, epochDay, schema.TypeInt32, int32(epochDay)}, // unixMillis > MILLIS_PER_DAY: the day itself passes
		{dateSchema, epochDay + 1, schema.TypeString, "1970-01-02T00:00:00.001Z"},
	} {
		got, err := castValue(c.s, fromMillis(c.in), c.to)
		name := fmt.Sprintf("cast %s %d ms to %s", c.s.Name, c.in, c.to)
		if c.want == nil {
			mustContain(t, err, "should not have any")
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		eq(t, name, got, c.want)
	}
}

// TestCastJavaNumbersAsJDK: Double.toString / Float.toString and
// Double.parseDouble / Float.parseFloat where they are easy to get wrong,
// with the values JDK 25 prints (the shortest-digits rule of JDK 19+:
// a subnormal whose shortest decimal has one digit gets the closest of
// one or two digits; hexadecimal float strings are numbers to Java).
func TestCastJavaNumbersAsJDK(t *testing.T) {
	for _, c := range []struct {
		in     any
		target string
		want   any
	}{
		{math.SmallestNonzeroFloat64, schema.TypeString, "4.9E-324"},
		{float32(math.SmallestNonzeroFloat32), schema.TypeString, "1.4E-45"},
		{-3 * math.SmallestNonzeroFloat64, schema.TypeString, "-1.5E-323"},
		{math.Float32frombits(7), schema.TypeString, "9.8E-45"},
		{"0x1p3", schema.TypeFloat64, 8.0},
		{"-0x1.8p1", schema.TypeFloat64, -3.0},
		{"0x1p3f", schema.TypeFloat32, float32(8)},
		{"0X.8P1d", schema.TypeFloat64, 1.0},
		{"0x1p-1075", schema.TypeFloat64, 0.0},
		{"0x1.000001p0", schema.TypeFloat64, 1.0000000596046448},
		{"0x1.000001p0", schema.TypeFloat32, float32(1)},
	} {
		got, err := castValue(nil, c.in, c.target)
		if err != nil {
			t.Errorf("cast %v to %s: %v", c.in, c.target, err)
			continue
		}
		eq(t, fmt.Sprintf("cast %v to %s", c.in, c.target), got, c.want)
	}
	for _, in := range []string{"0x1", "0x_1p3"} { // NumberFormatException in Java
		_, err := castValue(nil, in, schema.TypeFloat64)
		mustContain(t, err, "out of range for requested data type")
	}
}

// TestCastParsesIntegersAsJava: Byte.parseByte … Long.parseLong read
// every Unicode decimal digit of the BMP by Character.digit; values as
// Temurin 25 prints them.
func TestCastParsesIntegersAsJava(t *testing.T) {
	for _, c := range []struct {
		in     string
		target string
		want   any // nil: NumberFormatException
	}{
		{"١٢", schema.TypeInt8, int8(12)},
		{"１２", schema.TypeInt64, int64(12)},
		{"-١٢", schema.TypeInt16, int16(-12)},
		{"1٢3", schema.TypeInt32, int32(123)},
		{"१२७", schema.TypeInt8, int8(127)},
		{"१२८", schema.TypeInt8, nil},
		{"१२८", schema.TypeInt64, int64(128)},
		{"𝟙𝟚", schema.TypeInt64, nil},
		{"+", schema.TypeInt32, nil},
		{"", schema.TypeInt32, nil},
	} {
		got, err := castValue(nil, c.in, c.target)
		name := fmt.Sprintf("cast %q to %s", c.in, c.target)
		if c.want == nil {
			if err == nil {
				t.Errorf("%s = %v, want Java's NumberFormatException", name, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		eq(t, name, got, c.want)
	}
}
