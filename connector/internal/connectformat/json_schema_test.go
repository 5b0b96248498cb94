package connectformat

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// JSDT = json-schema-converter/src/test/java/io/confluent/connect/json/JsonSchemaDataTest.java
// at schema-registry 794611bd86d. Each case's expected document is the
// everit schema that test builds, written as JSON (NumberSchema with
// requiresInteger is {"type":"integer"}, without {"type":"number"};
// unprocessedProperties are plain keys); documents are compared as JSON
// values (key order aside), values byte for byte (Jackson writes fields in
// order, compact).

func TestJSONSchemaAsConfluentTests(t *testing.T) {
	record := structOf("Record", "int8", &schema.Schema{Type: schema.TypeInt8}, "string", sString)
	strDefault := &schema.Schema{Type: schema.TypeString, Optional: true, Default: []byte(`"default-string"`), HasDefault: true}
	withDefault := structOf("Record", "int8", &schema.Schema{Type: schema.TypeInt8}, "string", strDefault)
	tsDefault := &schema.Schema{Type: schema.TypeInt64, Name: transform.TimestampName, Version: 1, Default: []byte("0"), HasDefault: true}
	cases := []struct {
		name   string
		s      *schema.Schema
		doc    string
		v      any
		want   string
		cite   string
		noneOK bool // the value is not validated (JSDT skips ShortNode values)
	}{
		{"optional boolean null", &schema.Schema{Type: schema.TypeBoolean, Optional: true},
			`{"oneOf":[{"type":"null"},{"type":"boolean"}]}`, nil, `null`, "JSDT:117-125", false},
		{"boolean", sBool, `{"type":"boolean"}`, true, `true`, "JSDT:128-131", false},
		{"int8", &schema.Schema{Type: schema.TypeInt8}, `{"type":"integer","connect.type":"int8"}`, int8(12), `12`, "JSDT:134-140", true},
		{"int16", sInt16, `{"type":"integer","connect.type":"int16"}`, int16(12), `12`, "JSDT:143-153", true},
		{"int32", sInt32, `{"type":"integer","connect.type":"int32"}`, int32(12), `12`, "JSDT:156-162", false},
		{"int64", sInt64, `{"type":"integer","connect.type":"int64"}`, int64(12), `12`, "JSDT:165-171", false},
		{"float32", sFloat32, `{"type":"number","connect.type":"float32"}`, float32(12.2), `12.2`, "JSDT:174-179", false},
		{"float64", sFloat64, `{"type":"number","connect.type":"float64"}`, 12.2, `12.2`, "JSDT:182-187", false},
		{"bytes", sBytes, `{"type":"string","connect.type":"bytes"}`, []byte("foo"), `"Zm9v"`, "JSDT:190-199", false},
		{"string", sString, `{"type":"string"}`, "string", `"string"`, "JSDT:202-205", false},
		{"decimal base64", &schema.Schema{Type: schema.TypeBytes, Name: transform.DecimalName, Version: 1, Params: []schema.Param{{Key: "scale", Value: "2"}}},
			`{"type":"string","title":"org.apache.kafka.connect.data.Decimal","connect.type":"bytes","connect.version":1,"connect.parameters":{"scale":"2"}}`,
			transform.Decimal{Unscaled: big.NewInt(156), Scale: 2}, `"AJw="`, "JSDT:418-439 (BinaryNode {0, -100})", false},
		{"timestamp with default", tsDefault,
			`{"type":"integer","title":"org.apache.kafka.connect.data.Timestamp","default":0,"connect.type":"int64","connect.version":1}`,
			time.UnixMilli(1234567890).UTC(), `1234567890`, "JSDT:490-507", false},
		{"map with string keys", &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sInt32},
			`{"type":"object","additionalProperties":{"type":"integer","connect.type":"int32"},"connect.type":"map"}`,
			transform.NewMap("hi", int32(32)), `{"hi":32}`, "JSDT:721-736", false},
		{"map with optional keys", &schema.Schema{Type: schema.TypeMap, Keys: sOptStr, Values: sInt32},
			`{"type":"array","items":{"type":"object","properties":{"key":{"oneOf":[{"type":"null"},{"type":"string"}],"connect.index":0},"value":{"type":"integer","connect.index":1,"connect.type":"int32"}}},"connect.type":"map"}`,
			transform.NewMap("hi", int32(32)), `[{"key":"hi","value":32}]`, "JSDT:738-765", false},
		{"map with int keys", &schema.Schema{Type: schema.TypeMap, Keys: sInt32, Values: sInt32},
			`{"type":"array","items":{"type":"object","properties":{"key":{"type":"integer","connect.index":0,"connect.type":"int32"},"value":{"type":"integer","connect.index":1,"connect.type":"int32"}}},"connect.type":"map"}`,
			&transform.Map{Entries: []transform.MapEntry{{Key: int32(54), Value: int32(32)}}}, `[{"key":54,"value":32}]`, "JSDT:767-798", false},
		{"record with a required field unset", record,
			`{"type":"object","title":"Record","properties":{"int8":{"type":"integer","connect.index":0,"connect.type":"int8"},"string":{"type":"string","connect.index":1}}}`,
			transform.NewStruct(record), `{}`, "JSDT:800-824 (a null int8 here: the int8 is set there)", false},
		{"optional field with default", withDefault,
			`{"type":"object","title":"Record","properties":{"int8":{"type":"integer","connect.index":0,"connect.type":"int8"},"string":{"oneOf":[{"type":"null"},{"type":"string","default":"default-string"}],"connect.index":1}}}`,
			transform.NewStruct(withDefault), `{"string":"default-string"}`, "JSDT:826-858 with ignore.default.for.nullables off (the default is written, JSD:501-503)", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := NewJSONSchema(c.s)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, j.Document, []byte(c.doc)) {
				t.Errorf("%s: document\n%s\nwant\n%s", c.cite, j.Document, c.doc)
			}
			got, err := j.AppendJSON(nil, c.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("%s: value %s, want %s", c.cite, got, c.want)
			}
			validate(t, j.Document, got)
		})
	}
}

// TestJSONSchemaOfADebeziumEnvelopeValidates: the document of a Debezium
// envelope is a valid JSON Schema, and an update written with it is valid
// against it (a validator outside this project decides both).
func TestJSONSchemaOfADebeziumEnvelopeValidates(t *testing.T) {
	j, err := NewJSONSchema(pgEnvelope)
	if err != nil {
		t.Fatal(err)
	}
	framed, err := j.AppendEncode(nil, 9, pgChange(t))
	if err != nil {
		t.Fatal(err)
	}
	id, payload, err := DecodeJSONFrame(framed)
	if err != nil || id != 9 || !bytes.Equal(framed[:5], []byte{0, 0, 0, 0, 9}) {
		t.Fatalf("frame % x: id %d err %v", framed[:5], id, err)
	}
	validate(t, j.Document, payload)
	// The envelope's shape as JSD writes it: before is oneOf null and the
	// Value object with connect.index 0; source.snapshot is an optional
	// string with its default and parameters (JSD:929-965).
	var doc map[string]any
	if err := json.Unmarshal(j.Document, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	before := props["before"].(map[string]any)
	if before["connect.index"] != float64(0) || len(before["oneOf"].([]any)) != 2 {
		t.Errorf("before: %v", before)
	}
	value := before["oneOf"].([]any)[1].(map[string]any)
	if value["title"] != "dbserver1.public.customers.Value" || value["type"] != "object" {
		t.Errorf("before's object: %v", value)
	}
	snap := props["source"].(map[string]any)["properties"].(map[string]any)["snapshot"].(map[string]any)
	inner := snap["oneOf"].([]any)[1].(map[string]any)
	if inner["default"] != "false" || inner["title"] != "io.debezium.data.Enum" || inner["connect.version"] != float64(1) ||
		inner["connect.parameters"].(map[string]any)["allowed"] == nil || snap["connect.index"] != float64(4) {
		t.Errorf("source.snapshot: %v", snap)
	}
	// The value: nulls written as null, the decimal in base64, the date
	// in days, the timestamp in ms, in field order.
	wantPrefix := `{"before":{"id":1001,"name":"Sally","balance":"BNI=","born":7441,"seen":null},"after":{"id":1001,"name":"Sally","balance":"Fi4=","born":7441,"seen":1700000000123},"source":{"version":"3.6.1.Final",`
	if !strings.HasPrefix(string(payload), wantPrefix) {
		t.Errorf("value:\n%s\nwant a prefix\n%s", payload, wantPrefix)
	}
	// An invalid value is refused by the same validator: the check above
	// can fail.
	bad := bytes.Replace(payload, []byte(`"op":"u"`), []byte(`"op":1`), 1)
	if validateErr(t, j.Document, bad) == nil {
		t.Errorf("a number in op validated")
	}
}

func TestJSONSchemaRefusesWhatItCannotWriteExactly(t *testing.T) {
	s := &schema.Schema{Type: schema.TypeString, Params: []schema.Param{{Key: "io.confluent.connect.json.Enum", Value: ""}}}
	if _, err := NewJSONSchema(s); err == nil || !strings.Contains(err.Error(), "io.confluent.connect.json.Enum") {
		t.Errorf("a JSON enum parameter: %v", err)
	}
	j, err := NewJSONSchema(sDate)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendJSON(nil, time.Date(2017, 9, 18, 1, 0, 0, 0, time.UTC)); err == nil {
		t.Errorf("a Date with a time of day: no error")
	}
}

// TestJavaFloatsAndHashOrder: floats as Jackson writes doubles
// (Double.toString), parameters in java.util.HashMap order.
func TestJavaFloatsAndHashOrder(t *testing.T) {
	for _, c := range []struct {
		v    float64
		bits int
		want string
	}{{1, 64, "1.0"}, {12.2, 64, "12.2"}, {1e7, 64, "1.0E7"}, {1.5e-4, 64, "1.5E-4"}, {0.001, 64, "0.001"}, {float64(float32(0.1)), 32, "0.1"},
		// Double.MIN_VALUE's Javadoc: 4.9E-324 (Java 19+ picks the closest
		// of the short decimals that round to a subnormal, not 5.0E-324);
		// the same rule as Cast's (transform.JavaDouble).
		{math.SmallestNonzeroFloat64, 64, "4.9E-324"},
		{math.NaN(), 64, `"NaN"`}, {math.Inf(-1), 64, `"-Infinity"`}, {math.Copysign(0, -1), 64, "-0.0"}} {
		if got := string(appendJavaFloat(nil, c.v, c.bits)); got != c.want {
			t.Errorf("%v: %s, want %s", c.v, got, c.want)
		}
	}
	// String.hashCode spread, table 16: connect.version 1, connect.index
	// 8, scale 9, connect.type 13, connect.decimal.precision 14,
	// connect.parameters 15 (computed apart from javaHashOrder, from the hash codes).
	in := []string{"connect.parameters", "connect.decimal.precision", "connect.type", "scale", "connect.index", "connect.version"}
	want := []string{"connect.version", "connect.index", "scale", "connect.type", "connect.decimal.precision", "connect.parameters"}
	if got := javaHashOrder(in); !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

func validate(t *testing.T, doc, v []byte) {
	t.Helper()
	if err := validateErr(t, doc, v); err != nil {
		t.Fatalf("validate %s: %v", v, err)
	}
}

func validateErr(t *testing.T, doc, v []byte) error {
	t.Helper()
	d, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource("schema.json", d); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("compile the document: %v\n%s", err, doc)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		t.Fatalf("%v: %s", err, v)
	}
	return sch.Validate(inst)
}

// TestJSONSchemaClosedObjects is object.additional.properties=false as
// JSDT:355-416 configures it: each struct's object has
// "additionalProperties": false (maps keep theirs), and a value with a
// property the schema lacks no longer validates.
func TestJSONSchemaClosedObjects(t *testing.T) {
	inner := structOf("field0", "a", &schema.Schema{Type: schema.TypeInt8}, "b", sString)
	s := structOf("R", "x", inner, "m", &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sInt32})
	j, err := NewJSONSchemaOptions(s, JSONSchemaOptions{ClosedObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","title":"R","additionalProperties":false,"properties":{` +
		`"x":{"type":"object","title":"field0","additionalProperties":false,"connect.index":0,"properties":{` +
		`"a":{"type":"integer","connect.index":0,"connect.type":"int8"},"b":{"type":"string","connect.index":1}}},` +
		`"m":{"type":"object","additionalProperties":{"type":"integer","connect.type":"int32"},"connect.index":1,"connect.type":"map"}}}`
	if !sameJSON(t, j.Document, []byte(want)) {
		t.Errorf("document\n%s\nwant\n%s", j.Document, want)
	}
	validate(t, j.Document, []byte(`{"x":{"a":1,"b":"s"},"m":{"k":1}}`))
	if validateErr(t, j.Document, []byte(`{"x":{"a":1,"b":"s","c":2}}`)) == nil {
		t.Errorf("an extra property validated against a closed object")
	}
}
