package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mooncdc/mooncdc/internal/avrodata"
)

// TestAvroSchemasFollowAvroData holds the Avro schemas of the topics
// without a table (transaction metadata, schema changes, logical decoding
// messages), of outbox records, and of schemas that exercise the rules the
// tables of connector's TestAvroSchemasAreWhatAvroConverterWrites do not
// reach (int8 and int16 with properties, bytes and temporal defaults,
// optional schemas with a default, maps of records, a record used twice)
// against what Confluent's AvroData derives from their Connect schemas
// (internal/avrodata), compared token by token.
func TestAvroSchemasFollowAvroData(t *testing.T) {
	check := func(what string, s *Schema) {
		t.Helper()
		connect := appendConnectJSON(nil, s, "")
		want, err := avrodata.FromConnectJSON(connect)
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, connect)
		}
		got := renderAvro(s)
		if !json.Valid([]byte(got)) || !json.Valid([]byte(want)) {
			t.Fatalf("%s: not JSON:\nAvroData: %s\nmooncdc:  %s", what, want, got)
		}
		if !reflect.DeepEqual(avroTokens(t, want), avroTokens(t, got)) {
			t.Errorf("%s: mooncdc's Avro schema is not AvroData's:\nAvroData: %s\nmooncdc:  %s", what, want, got)
		}
	}
	check("transaction key", txKeySchema)
	check("transaction value", txValueSchema)
	check("schema change key", schemaChangeKeySchema)
	check("schema change value", schemaChangeValueSchema)
	check("message key", messageKeySchema)
	check("message value", messageValueSchema)

	js := NewJSONEncoder(Config{Name: "shop"})
	c := mustOutbox(t, OutboxOptions{ExpandJSONPayload: true, AdditionalPlacement: []string{"aggregatetype:envelope:type", "created:envelope"}})
	ev, err := js.OutboxEvent(js.Plan(outboxRel), &Change{Op: OpCreate, Relation: outboxRel,
		After: outboxRow("Order", "42", `{"total": 10.5, "n": 3, "big": 10000000000, "lines": [{"sku": "a"}, {"sku": "b", "q": 2}], "tags": ["x"], "gone": null}`)}, c)
	if err != nil {
		t.Fatal(err)
	}
	value, _ := c.Value(ev)
	check("outbox key", ev.Key.Schema)
	check("outbox value", value.Schema)

	point := &Schema{Type: TypeStruct, Name: "io.debezium.data.geometry.Point", Version: 1, Doc: "Geometry (POINT)", Fields: []Field{
		{"x", &Schema{Type: TypeFloat64}}, {"y", &Schema{Type: TypeFloat64}}}}
	check("properties and defaults", &Schema{Type: TypeStruct, Name: "srv.public.t.Value", Fields: []Field{
		{"i8", &Schema{Type: TypeInt8, Optional: true, Default: []byte(`3`), HasDefault: true}},
		{"i16", &Schema{Type: TypeInt16, Name: "x.Short", Version: 2, Doc: "d", Params: []Param{{"a", "1"}, {"b", "2"}}, Default: []byte(`7`), HasDefault: true}},
		{"b", &Schema{Type: TypeBytes, Optional: true, Default: []byte(`"AP8="`), AvroDefault: []byte(`"\u0000ÿ"`), HasDefault: true}},
		{"dec", &Schema{Type: TypeBytes, Name: "org.apache.kafka.connect.data.Decimal", Version: 1, Params: []Param{{"scale", "2"}}}},
		{"dec_p", &Schema{Type: TypeBytes, Optional: true, Name: "org.apache.kafka.connect.data.Decimal", Version: 1,
			Params: []Param{{"scale", "2"}, {"connect.decimal.precision", "5"}}}},
		{"date", &Schema{Type: TypeInt32, Name: "org.apache.kafka.connect.data.Date", Version: 1, Default: []byte(`19000`), HasDefault: true}},
		{"time", &Schema{Type: TypeInt32, Optional: true, Name: "org.apache.kafka.connect.data.Time", Version: 1}},
		{"ts", &Schema{Type: TypeInt64, Optional: true, Name: "org.apache.kafka.connect.data.Timestamp", Version: 1, Default: []byte(`0`), HasDefault: true}},
		{"s", &Schema{Type: TypeString, Optional: true, Default: []byte(`"x"`), HasDefault: true}},
		{"p1", point},
		{"p2", point.withOptional(true)},
		{"ps", &Schema{Type: TypeArray, Optional: true, Items: point}},
		{"m", &Schema{Type: TypeMap, Optional: true, Keys: &Schema{Type: TypeString}, Values: &Schema{Type: TypeString, Optional: true}}},
		{"mp", &Schema{Type: TypeMap, Keys: &Schema{Type: TypeString}, Values: point.withOptional(true)}},
		{"arr", &Schema{Type: TypeArray, Name: "x.Ints", Version: 1, Items: &Schema{Type: TypeInt16, Optional: true}}},
	}})
}

func avroTokens(t *testing.T, s string) []any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var out []any
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		out = append(out, tok)
	}
}
