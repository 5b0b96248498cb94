package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// connectField is the part of a JsonConverter struct field these tests read.
type connectField struct {
	Field      string            `json:"field"`
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name"`
	Version    int               `json:"version"`
	Default    any               `json:"default"`
	Parameters map[string]string `json:"parameters"`
	Fields     []connectField    `json:"fields"`
	Items      *connectField     `json:"items"`
}

func fieldNames(fs []connectField) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Field)
	}
	return out
}

func fieldByName(t *testing.T, fs []connectField, name string) connectField {
	t.Helper()
	for _, f := range fs {
		if f.Field == name {
			return f
		}
	}
	t.Fatalf("no field %q in %v", name, fieldNames(fs))
	return connectField{}
}

// Debezium 3.6.1's envelope: before, after, source and transaction as
// TableSchemaBuilder adds them (TableSchemaBuilder.java:191-196), then op,
// ts_ms, ts_us, ts_ns (SchemaFactory.java:436-439); version 2
// (Envelope.java:32).
var wantEnvelopeFields = []string{"before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"}

// Debezium 3.6.1's Postgres source block: the common fields
// (SchemaFactory.java:151-163) then Postgres' (PostgresSourceInfoStructMaker.java:22-31).
var wantSourceFields = []string{"version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
	"schema", "table", "txId", "lsn", "xmin", "origin", "origin_lsn"}

// SnapshotRecord's values, lower case, in declaration order
// (SnapshotRecord.java:16-44, SchemaFactory.java:144-149).
const wantSnapshotAllowed = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"

// TestEnvelopeConnectSchemaIsDebezium361: the JsonConverter schema of a
// table's value has Debezium 3.6.1's fields, order, versions and
// source.snapshot enum.
func TestEnvelopeConnectSchemaIsDebezium361(t *testing.T) {
	e := NewJSONSchemaEncoder(testJSONConfig)
	out, err := e.AppendValue(nil, e.Plan(customers), &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 1}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Schema connectField `json:"schema"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatal(err)
	}
	env := rec.Schema
	if got := fieldNames(env.Fields); !reflect.DeepEqual(got, wantEnvelopeFields) {
		t.Errorf("envelope fields = %v, want %v", got, wantEnvelopeFields)
	}
	if env.Version != 2 {
		t.Errorf("envelope version = %d, want 2", env.Version)
	}
	for _, ts := range []string{"ts_ms", "ts_us", "ts_ns"} {
		if f := fieldByName(t, env.Fields, ts); f.Type != "int64" || !f.Optional {
			t.Errorf("envelope %s = %+v, want optional int64", ts, f)
		}
	}
	src := fieldByName(t, env.Fields, "source")
	if got := fieldNames(src.Fields); !reflect.DeepEqual(got, wantSourceFields) {
		t.Errorf("source fields = %v, want %v", got, wantSourceFields)
	}
	if src.Version != 1 || src.Name != "io.debezium.connector.postgresql.Source" {
		t.Errorf("source = %s version %d, want io.debezium.connector.postgresql.Source version 1", src.Name, src.Version)
	}
	snap := fieldByName(t, src.Fields, "snapshot")
	if snap.Name != "io.debezium.data.Enum" || snap.Version != 1 || !snap.Optional || snap.Default != "false" ||
		snap.Parameters["allowed"] != wantSnapshotAllowed {
		t.Errorf("source.snapshot = %+v", snap)
	}
	for _, f := range []string{"ts_us", "ts_ns", "origin_lsn"} {
		if s := fieldByName(t, src.Fields, f); s.Type != "int64" || !s.Optional {
			t.Errorf("source.%s = %+v, want optional int64", f, s)
		}
	}
	if s := fieldByName(t, src.Fields, "origin"); s.Type != "string" || !s.Optional {
		t.Errorf("source.origin = %+v, want optional string", s)
	}
	tx := fieldByName(t, env.Fields, "transaction")
	if tx.Name != "event.block" || tx.Version != 1 || !tx.Optional ||
		!reflect.DeepEqual(fieldNames(tx.Fields), []string{"id", "total_order", "data_collection_order"}) {
		t.Errorf("transaction = %+v", tx)
	}
}

// TestEnvelopeAvroSchemaIsDebezium361: the Avro value schema has the same
// field order, connect.version 2 on the envelope and 1 on the source, and
// source.snapshot as AvroData writes an optional enum with a default: its
// type first, the default on the field.
func TestEnvelopeAvroSchemaIsDebezium361(t *testing.T) {
	_, value, err := NewAvroEncoder(testJSONConfig).Schemas(NewPlan(testJSONConfig, customers))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Fields []struct {
			Name    string          `json:"name"`
			Type    json.RawMessage `json:"type"`
			Default any             `json:"default"`
		} `json:"fields"`
		Version int `json:"connect.version"`
	}
	if err := json.Unmarshal([]byte(value), &env); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range env.Fields {
		names = append(names, f.Name)
	}
	if !reflect.DeepEqual(names, wantEnvelopeFields) {
		t.Errorf("envelope fields = %v, want %v", names, wantEnvelopeFields)
	}
	if env.Version != 2 {
		t.Errorf("envelope connect.version = %d, want 2", env.Version)
	}
	var src struct {
		Fields []struct {
			Name    string          `json:"name"`
			Type    json.RawMessage `json:"type"`
			Default any             `json:"default"`
		} `json:"fields"`
		Version int `json:"connect.version"`
	}
	if err := json.Unmarshal(env.Fields[2].Type, &src); err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, f := range src.Fields {
		names = append(names, f.Name)
	}
	if !reflect.DeepEqual(names, wantSourceFields) || src.Version != 1 {
		t.Errorf("source fields = %v version %d, want %v version 1", names, src.Version, wantSourceFields)
	}
	snap := src.Fields[4]
	want := `[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"` + wantSnapshotAllowed +
		`"},"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"]`
	if string(snap.Type) != want || snap.Default != "false" {
		t.Errorf("source.snapshot = %s default %v\n want %s default false", snap.Type, snap.Default, want)
	}
}

// TestEnumArrayItemsRequired: an enum array's items are required, as
// Debezium builds them (PostgresValueConverter.java:349-351), while other
// arrays' items stay optional; an Avro record cannot hold a NULL item.
func TestEnumArrayItemsRequired(t *testing.T) {
	mood := &TypeInfo{OID: 90001, Name: "mood", Kind: 'e', Mod: -1, Labels: []string{"sad", "ok"}}
	rel := &Relation{OID: 1, Schema: "public", Table: "t", Columns: []Column{
		{Name: "moods", TypeOID: 90002, TypeMod: -1, Type: &TypeInfo{OID: 90002, Name: "_mood", Kind: 'b', Mod: -1, Elem: mood}},
		{Name: "ints", TypeOID: 1007, TypeMod: -1},
	}}
	out, err := NewJSONSchemaEncoder(testJSONConfig).AppendValue(nil, NewPlan(testJSONConfig, rel), &Change{Op: OpCreate, Relation: rel,
		After: Tuple{text("{sad,ok}"), text("{1,NULL}")}}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Schema connectField `json:"schema"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatal(err)
	}
	after := fieldByName(t, rec.Schema.Fields, "after")
	if it := fieldByName(t, after.Fields, "moods").Items; it == nil || it.Optional || it.Name != "io.debezium.data.Enum" {
		t.Errorf("moods items = %+v, want a required io.debezium.data.Enum", it)
	}
	if it := fieldByName(t, after.Fields, "ints").Items; it == nil || !it.Optional {
		t.Errorf("ints items = %+v, want optional", it)
	}
	_, value, err := NewAvroEncoder(testJSONConfig).Schemas(NewPlan(testJSONConfig, rel))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(value, `"items":{"type":"string","connect.version":1,"connect.parameters":{"allowed":"sad,ok"},"connect.name":"io.debezium.data.Enum"}`) {
		t.Errorf("Avro moods items are not a required Enum string: %s", value)
	}
	a := NewAvroEncoder(testJSONConfig)
	p, ids := a.Plan(rel), NoAvroIDs
	if err := a.Register(p, &ids, false, true, func(bool, string) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AppendValue(nil, p, ids, &Change{Op: OpCreate, Relation: rel, After: Tuple{text("{sad,NULL}"), null}}, testNow); err == nil {
		t.Error("a NULL enum array item was written into a required Avro item")
	}
}

// TestMessageSchemasVersionOne: the logical message key, value and
// message block are version 1 (PostgresSchemaFactory.java:33-67).
func TestMessageSchemasVersionOne(t *testing.T) {
	e := NewJSONSchemaEncoder(testJSONConfig)
	ch := &Change{Op: OpMessage, LSN: 1, Message: &Message{Prefix: "p", Content: []byte("c")}}
	k, _, err := e.AppendKey(nil, e.Plan(ch.Relation), ch)
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.AppendValue(nil, e.Plan(ch.Relation), ch, testNow)
	if err != nil {
		t.Fatal(err)
	}
	var key, value struct {
		Schema connectField `json:"schema"`
	}
	if err := json.Unmarshal(k, &key); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v, &value); err != nil {
		t.Fatal(err)
	}
	if key.Schema.Version != 1 || value.Schema.Version != 1 || fieldByName(t, value.Schema.Fields, "message").Version != 1 {
		t.Errorf("versions: key %d value %d message %d, want 1", key.Schema.Version, value.Schema.Version,
			fieldByName(t, value.Schema.Fields, "message").Version)
	}
}
