package connectformat

import (
	"bytes"
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// Confluent's sources cited here are schema-registry at 794611bd86d:
// PD = protobuf-converter/src/main/java/io/confluent/connect/protobuf/ProtobufData.java,
// PDT = protobuf-converter/src/test/java/io/confluent/connect/protobuf/ProtobufDataTest.java,
// PSU = protobuf-provider/src/main/java/io/confluent/kafka/schemaregistry/protobuf/ProtobufSchemaUtils.java,
// PST = protobuf-provider/src/test/java/io/confluent/kafka/schemaregistry/protobuf/ProtobufSchemaTest.java.

// envelopeProto is the text the converter registers for pgEnvelope, as
// its rules make it: the package and message from the schema name
// (PD:1735-1754), fields numbered in order (PD:766-799), nested messages
// by their unqualified name, each once (PD:845-860, 2005-2022), the
// logical types as imported messages (PD:1013-1031, 873-877), the
// decimal's precision and scale in confluent.field_meta written value
// first (ProtobufSchema.java:1107-1114, the form of PST:1628-1640), and
// the layout of PSU:304-395, 538-693, 860-920.
const envelopeProto = `syntax = "proto3";
package dbserver1.public.customers;

import "confluent/type/decimal.proto";
import "google/type/date.proto";
import "google/protobuf/timestamp.proto";

message Envelope {
  Value before = 1;
  Value after = 2;
  Source source = 3;
  block transaction = 4;
  string op = 5;
  int64 ts_ms = 6;
  int64 ts_us = 7;
  int64 ts_ns = 8;

  message Value {
    int32 id = 1;
    string name = 2;
    confluent.type.Decimal balance = 3 [(confluent.field_meta) = {
      params: [
        {
          value: "10",
          key: "precision"
        },
        {
          value: "2",
          key: "scale"
        }
      ]
    }];
    google.type.Date born = 4;
    google.protobuf.Timestamp seen = 5;
  }
  message Source {
    string version = 1;
    string connector = 2;
    string name = 3;
    int64 ts_ms = 4;
    string snapshot = 5;
    string db = 6;
    string sequence = 7;
    int64 ts_us = 8;
    int64 ts_ns = 9;
    string schema = 10;
    string table = 11;
    int64 txId = 12;
    int64 lsn = 13;
    int64 xmin = 14;
    string origin = 15;
    int64 origin_lsn = 16;
  }
  message block {
    string id = 1;
    int64 total_order = 2;
    int64 data_collection_order = 3;
  }
}
`

func TestProtobufSchemaOfADebeziumEnvelopeIsTheConvertersText(t *testing.T) {
	p, err := NewProtobuf(pgEnvelope)
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != envelopeProto {
		t.Fatalf("text:\n%s\nwant:\n%s", p.Text, envelopeProto)
	}
	if got := string(p.Message.FullName()); got != "dbserver1.public.customers.Envelope" {
		t.Errorf("message %s", got)
	}
	k, err := NewProtobuf(pgKey)
	if err != nil {
		t.Fatal(err)
	}
	wantKey := "syntax = \"proto3\";\npackage dbserver1.public.customers;\n\nmessage Key {\n  int32 id = 1;\n}\n"
	if k.Text != wantKey {
		t.Errorf("key text:\n%s\nwant:\n%s", k.Text, wantKey)
	}
}

// TestProtobufSchemaTypesAsConfluentTests is PDT:1520-1662
// (testFromConnectComplex) without its enum field (a Protobuf-converter
// parameter mooncdc's schemas never carry; refused, see
// TestProtobufRefusesWhatItCannotWriteExactly): the field types, the map
// entry messages named ConnectDefault2Entry … after the unnamed root
// (ConnectDefault1), and the values read back.
func TestProtobufSchemaTypesAsConfluentTests(t *testing.T) {
	int8d := &schema.Schema{Type: schema.TypeInt8, Doc: "int8 field", Default: []byte("2"), HasDefault: true}
	s := structOf("",
		"int8", int8d, "int16", sInt16, "int32", sInt32, "int64", sInt64,
		"float32", sFloat32, "float64", sFloat64, "boolean", sBool, "string", sString, "bytes", sBytes,
		"array", &schema.Schema{Type: schema.TypeArray, Items: sString},
		"map", &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sInt32},
		"mapNonStringKeys", &schema.Schema{Type: schema.TypeMap, Keys: sInt32, Values: sInt32},
		"mapNullValues", &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: sOptStr})
	p, err := NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, typ string }{ // PDT:1567-1613
		{"int8", "int32"}, {"int16", "int32"}, {"int32", "int32"}, {"int64", "int64"},
		{"float32", "float"}, {"float64", "double"}, {"boolean", "bool"}, {"string", "string"},
		{"bytes", "bytes"}, {"array", "string"}, {"map", "ConnectDefault2Entry"},
		{"mapNonStringKeys", "ConnectDefault3Entry"}, {"mapNullValues", "ConnectDefault4Entry"},
	}
	fields := p.proto.MessageType[0].Field
	if len(fields) != len(want) {
		t.Fatalf("%d fields, want %d", len(fields), len(want))
	}
	for i, w := range want {
		f := fields[i]
		typ := f.GetTypeName()
		if typ == "" {
			typ = strings.ToLower(strings.TrimPrefix(f.GetType().String(), "TYPE_"))
		}
		if f.GetName() != w.name || typ != w.typ {
			t.Errorf("field %d: %s %s, want %s %s", i, typ, f.GetName(), w.typ, w.name)
		}
	}
	if p.Message.FullName() != "ConnectDefault1" {
		t.Errorf("root %s, want ConnectDefault1 (PD:362-365)", p.Message.FullName())
	}
	v := newStruct(t, s, "int8", int8(12), "int16", int16(12), "int32", int32(12), "int64", int64(12),
		"float32", float32(12.2), "float64", 12.2, "boolean", true, "string", "foo", "bytes", []byte("foo"),
		"array", []any{"a", "b", "c"}, "map", transform.NewMap("field", int32(1)),
		"mapNonStringKeys", &transform.Map{Entries: []transform.MapEntry{{Key: int32(1), Value: int32(1)}}},
		"mapNullValues", transform.NewMap("field", nil))
	m := roundTrip(t, p, v)
	get := func(name string) protoreflect.Value {
		return m.Get(p.Message.Fields().ByName(protoreflect.Name(name)))
	}
	// PDT:1615-1661
	if get("int8").Int() != 12 || get("int16").Int() != 12 || get("int32").Int() != 12 || get("int64").Int() != 12 {
		t.Errorf("integers: %v %v %v %v", get("int8"), get("int16"), get("int32"), get("int64"))
	}
	if get("float32").Float() != float64(float32(12.2)) || get("float64").Float() != 12.2 || !get("boolean").Bool() {
		t.Errorf("float32 %v float64 %v boolean %v", get("float32"), get("float64"), get("boolean"))
	}
	if get("string").String() != "foo" || string(get("bytes").Bytes()) != "foo" {
		t.Errorf("string %v bytes %v", get("string"), get("bytes"))
	}
	arr := get("array").List()
	if arr.Len() != 3 || arr.Get(0).String() != "a" || arr.Get(2).String() != "c" {
		t.Errorf("array %v", arr)
	}
	entry := func(name string) protoreflect.Message {
		l := get(name).List()
		if l.Len() != 1 {
			t.Fatalf("%s: %d entries", name, l.Len())
		}
		return l.Get(0).Message()
	}
	e := entry("map")
	if k, v := e.Get(e.Descriptor().Fields().ByName("key")), e.Get(e.Descriptor().Fields().ByName("value")); k.String() != "field" || v.Int() != 1 {
		t.Errorf("map entry %v %v", k, v)
	}
	e = entry("mapNonStringKeys")
	if k, v := e.Get(e.Descriptor().Fields().ByName("key")), e.Get(e.Descriptor().Fields().ByName("value")); k.Int() != 1 || v.Int() != 1 {
		t.Errorf("mapNonStringKeys entry %v %v", k, v)
	}
	e = entry("mapNullValues")
	if v := e.Get(e.Descriptor().Fields().ByName("value")); v.String() != "" { // PDT:1655-1660: "" read back
		t.Errorf("mapNullValues value %q", v.String())
	}
	// int8's default (2) stands in for a null, as Struct.get gives it.
	v.Values[0] = nil
	if m := roundTrip(t, p, v); m.Get(p.Message.Fields().ByName("int8")).Int() != 2 {
		t.Errorf("a null int8 with default 2: %v", m.Get(p.Message.Fields().ByName("int8")))
	}
	// int8 and int16 carry connect.type (PD:1035-1043).
	if !strings.Contains(p.Text, "int32 int8 = 1 [(confluent.field_meta) = {\n    params: [\n      {\n        key: \"connect.type\",\n        value: \"int8\"\n      }\n    ]\n  }];\n") {
		t.Errorf("int8 field text:\n%s", p.Text)
	}
}

// TestProtobufNestedNames: a nested struct named as its field gets the
// suffix Message (PDT:1687-1701); two uses of one logical type import its
// file once (PDT:1664-1672).
func TestProtobufNestedNames(t *testing.T) {
	nested := structOf("nested", "string", sString)
	p, err := NewProtobuf(structOf("", "nested", nested))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Message.Fields().ByName("nested").Message().Name(); got != "nestedMessage" {
		t.Errorf("nested message %s, want nestedMessage", got)
	}
	p, err = NewProtobuf(structOf("", "createdAt", sTimestamp, "updatedAt", sTimestamp))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Imports) != 1 || p.Imports[0] != "google/protobuf/timestamp.proto" {
		t.Errorf("imports %v", p.Imports)
	}
}

// TestProtobufLogicalValuesAsConfluentTests writes the values of
// PDT:1784-1872 and reads back what those tests expect.
func TestProtobufLogicalValuesAsConfluentTests(t *testing.T) {
	s := structOf("Logical", "dec", decimalSchema("3", "8"), "date", sDate, "time", sTime, "ts", sTimestamp,
		"negdec", decimalSchema("0", "4"), "before", sTimestamp)
	p, err := NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	v := newStruct(t, s,
		"dec", transform.Decimal{Unscaled: big.NewInt(12345678), Scale: 3},
		"date", time.Date(2017, 9, 18, 0, 0, 0, 0, time.UTC),
		"time", time.UnixMilli(11*3600_000+12*60_000+13_000+140).UTC(),
		"ts", time.Date(2017, 9, 18, 0, 0, 0, 0, time.UTC),
		"negdec", transform.Decimal{Unscaled: big.NewInt(-128), Scale: 0},
		"before", time.UnixMilli(-1).UTC())
	m := roundTrip(t, p, v)
	msg := func(name string) protoreflect.Message {
		return m.Get(p.Message.Fields().ByName(protoreflect.Name(name))).Message()
	}
	field := func(m protoreflect.Message, name string) protoreflect.Value {
		return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	// PDT:1786-1793: value = BigInteger.valueOf(12345678).toByteArray(),
	// precision 8, scale 3.
	d := msg("dec")
	if !bytes.Equal(field(d, "value").Bytes(), []byte{0x00, 0xbc, 0x61, 0x4e}) || field(d, "precision").Uint() != 8 || field(d, "scale").Int() != 3 {
		t.Errorf("decimal %v %v %v", field(d, "value").Bytes(), field(d, "precision"), field(d, "scale"))
	}
	// BigInteger.valueOf(-128).toByteArray() is {0x80}; precision 3.
	d = msg("negdec")
	if !bytes.Equal(field(d, "value").Bytes(), []byte{0x80}) || field(d, "precision").Uint() != 3 {
		t.Errorf("negative decimal %v %v", field(d, "value").Bytes(), field(d, "precision"))
	}
	// PDT:1810-1815
	dt := msg("date")
	if field(dt, "year").Int() != 2017 || field(dt, "month").Int() != 9 || field(dt, "day").Int() != 18 {
		t.Errorf("date %v", dt)
	}
	// PDT:1832-1838: 11:12:13 and 14_000_0000 nanos.
	tm := msg("time")
	if field(tm, "hours").Int() != 11 || field(tm, "minutes").Int() != 12 || field(tm, "seconds").Int() != 13 || field(tm, "nanos").Int() != 140_000_000 {
		t.Errorf("time %v", tm)
	}
	// PDT:1855-1858: Timestamps.fromMillis of 2017-09-18 UTC.
	ts := msg("ts")
	if field(ts, "seconds").Int() != 1505692800 || field(ts, "nanos").Int() != 0 {
		t.Errorf("timestamp %v", ts)
	}
	// Timestamps.fromMillis(-1): seconds -1, nanos 999000000 (normalized).
	ts = msg("before")
	if field(ts, "seconds").Int() != -1 || field(ts, "nanos").Int() != 999_000_000 {
		t.Errorf("timestamp before the epoch %v", ts)
	}
}

// TestProtobufRoundTripThroughTheProtobufParser parses the registered text
// with protocompile (a .proto compiler) and reads the framed bytes of a
// Debezium update with the parsed descriptor: what a consumer that fetches
// the schema by id does.
func TestProtobufRoundTripThroughTheProtobufParser(t *testing.T) {
	p, err := NewProtobuf(pgEnvelope)
	if err != nil {
		t.Fatal(err)
	}
	parsed := compileProto(t, p.Text)
	got := protodesc.ToFileDescriptorProto(parsed)
	ours := protodesc.ToFileDescriptorProto(p.File)
	// The text has no file name and no option import; compare messages.
	for _, m := range [][2]*descriptorpb.DescriptorProto{{got.MessageType[0], ours.MessageType[0]}} {
		stripOptions(m[0])
		stripOptions(m[1])
		if !proto.Equal(m[0], m[1]) {
			t.Fatalf("parsed text differs from the descriptor:\nparsed %v\nours   %v", m[0], m[1])
		}
	}
	framed, err := p.AppendEncode(nil, 42, pgChange(t))
	if err != nil {
		t.Fatal(err)
	}
	id, index, payload, err := DecodeProtobufFrame(framed)
	if err != nil || id != 42 || len(index) != 1 || index[0] != 0 {
		t.Fatalf("frame: id %d index %v err %v", id, index, err)
	}
	if !bytes.Equal(framed[:6], []byte{0, 0, 0, 0, 42, 0}) {
		t.Errorf("header % x, want 00 00000042 00 (magic, id, index [0] as one byte)", framed[:6])
	}
	m := dynamicpb.NewMessage(parsed.Messages().Get(0))
	if err := proto.Unmarshal(payload, m); err != nil {
		t.Fatal(err)
	}
	js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// 1234 = 0x04d2 and 5678 = 0x162e: base64 "BNI=" and "Fi4=".
	// What a consumer sees, in proto3 JSON: unset fields (nulls, zeros)
	// absent, int64 as strings, the decimal's bytes in base64, the
	// timestamp in RFC 3339.
	want := `{"before":{"id":1001,"name":"Sally","balance":{"value":"BNI=","precision":4,"scale":2},"born":{"year":1990,"month":5,"day":17}},` +
		`"after":{"id":1001,"name":"Sally","balance":{"value":"Fi4=","precision":4,"scale":2},"born":{"year":1990,"month":5,"day":17},"seen":"2023-11-14T22:13:20.123Z"},` +
		`"source":{"version":"3.6.1.Final","connector":"postgresql","name":"dbserver1","ts_ms":"1559033904863","snapshot":"false","db":"postgres","sequence":"[\"24023119\",\"24023128\"]","ts_us":"1559033904863123","ts_ns":"1559033904863123000","schema":"public","table":"customers","txId":"555","lsn":"24023128"},` +
		`"transaction":{"id":"555:24023128","total_order":"1","data_collection_order":"1"},"op":"u","ts_ms":"1559033904961","ts_us":"1559033904961123","ts_ns":"1559033904961123000"}`
	if compact(t, js) != want {
		t.Errorf("decoded:\n%s\nwant:\n%s", compact(t, js), want)
	}
}

func TestProtobufRefusesWhatItCannotWriteExactly(t *testing.T) {
	cases := []struct {
		name string
		s    *schema.Schema
		want string
	}{
		{"array of arrays", structOf("A", "a", &schema.Schema{Type: schema.TypeArray, Items: &schema.Schema{Type: schema.TypeArray, Items: sInt32}}), "array of arrays"},
		{"name not an identifier", structOf("my-server.public.t.Envelope", "a", sInt32), "not a valid Protobuf schema"},
		{"protobuf enum", structOf("E", "e", &schema.Schema{Type: schema.TypeString, Name: "Status",
			Params: []schema.Param{{Key: "io.confluent.connect.protobuf.Enum", Value: "Status"}}}), "io.confluent.connect.protobuf.Enum"},
		{"primitive root", sString, "root schema is string"},
		{"two structs of one name", structOf("R", "a", structOf("x.Point", "x", sInt32), "b", structOf("y.Point", "x", sString)), "two different structs"},
		{"a struct named as its parent", structOf("R", "a", structOf("z.R", "q", sInt64)), "two different structs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewProtobuf(c.s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %q", err, c.want)
			}
		})
	}
	s := structOf("A", "a", &schema.Schema{Type: schema.TypeArray, Items: sOptStr})
	p, err := NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Marshal(newStruct(t, s, "a", []any{"x", nil})); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("a null array element: err %v", err)
	}
	s = structOf("D", "d", sDate)
	p, err = NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Marshal(newStruct(t, s, "d", time.Date(2017, 9, 18, 1, 0, 0, 0, time.UTC))); err == nil {
		t.Errorf("a Date with a time of day: no error (PD:263-266 refuses it)")
	}
}

func roundTrip(t *testing.T, p *Protobuf, v any) *dynamicpb.Message {
	t.Helper()
	b, err := p.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(p.Message)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// compileProto parses text as "schema.proto" with the dependency files
// written out as .proto sources (test fixtures with the field numbers of
// the published files). The text references confluent.field_meta without
// importing confluent/meta.proto, as the converter's does; the registry
// knows the file, protocompile must be told: the import is added here.
func compileProto(t *testing.T, text string) protoreflect.FileDescriptor {
	t.Helper()
	if strings.Contains(text, "confluent.field_meta") {
		text = strings.Replace(text, ";\n\n", ";\n\nimport \"confluent/meta.proto\";\n", 1)
	}
	sources := map[string]string{"schema.proto": text}
	for k, v := range depSources {
		sources[k] = v
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(sources)})}
	files, err := c.Compile(context.Background(), "schema.proto")
	if err != nil {
		t.Fatalf("protocompile: %v\n%s", err, text)
	}
	return files[0]
}

func stripOptions(m *descriptorpb.DescriptorProto) {
	for _, f := range m.Field {
		f.Options = nil
		f.JsonName = nil
	}
	for _, n := range m.NestedType {
		stripOptions(n)
	}
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := jsonCompact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// depSources are the dependency files as .proto text, written from the
// published definitions (field names and numbers only).
var depSources = map[string]string{
	"confluent/type/decimal.proto": "syntax = \"proto3\";\npackage confluent.type;\nmessage Decimal {\n  bytes value = 1;\n  uint32 precision = 2;\n  int32 scale = 3;\n}\n",
	"google/type/date.proto":       "syntax = \"proto3\";\npackage google.type;\nmessage Date {\n  int32 year = 1;\n  int32 month = 2;\n  int32 day = 3;\n}\n",
	"google/type/timeofday.proto":  "syntax = \"proto3\";\npackage google.type;\nmessage TimeOfDay {\n  int32 hours = 1;\n  int32 minutes = 2;\n  int32 seconds = 3;\n  int32 nanos = 4;\n}\n",
	"confluent/meta.proto": "syntax = \"proto3\";\npackage confluent;\nimport \"google/protobuf/descriptor.proto\";\n" +
		"message Meta {\n  string doc = 1;\n  map<string, string> params = 2;\n  repeated string tags = 3;\n}\n" +
		"extend google.protobuf.FieldOptions {\n  Meta field_meta = 1088;\n}\n",
}

// TestProtobufDependenciesMatchTheirProtoText compares the hand-built
// dependency descriptors with the same files compiled from .proto text.
func TestProtobufDependenciesMatchTheirProtoText(t *testing.T) {
	for path, text := range importTexts {
		if src, ok := depSources[path]; ok && src != text {
			t.Errorf("ImportText(%s) differs from the source the descriptors are checked against:\n%s\n%s", path, text, src)
		}
	}
	for path := range depSources {
		c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(depSources)})}
		files, err := c.Compile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		want := protodesc.ToFileDescriptorProto(files[0])
		f, err := deps.FindFileByPath(path)
		if err != nil {
			t.Fatal(err)
		}
		got := protodesc.ToFileDescriptorProto(f)
		for _, m := range append(want.MessageType, got.MessageType...) {
			stripOptions(m)
		}
		want.SourceCodeInfo = nil
		for _, x := range append(want.Extension, got.Extension...) {
			x.JsonName = nil
		}
		if !proto.Equal(want.MessageType[0], got.MessageType[0]) || len(want.Extension) != len(got.Extension) {
			t.Errorf("%s:\nbuilt    %v\ncompiled %v", path, got, want)
		}
	}
}
