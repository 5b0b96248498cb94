package schema

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// TestHstoreArrayInMapModeIsAnArrayOfMaps: with hstore_handling_mode map,
// an hstore[] column is an optional ARRAY of optional MAP<STRING, optional
// STRING>, each element a map (it was a value error that parked the
// table). Debezium's case: hstore_table_mul (postgres_create_tables.ddl:54)
// and INSERT_HSTORE_TYPE_WITH_MULTIPLE_VALUES_STMT
// (AbstractRecordsProducerTest.java:218-221), expected in map mode as
// SchemaBuilder.array(hstoreMapSchema()).optional() with the maps
// {key4=val4, key5=null} and {key6=val6}
// (AbstractRecordsProducerTest.java:347-363, hstoreMapSchema at :379-385;
// streamed in RecordsStreamProducerIT.java:1231-1236), all in
// debezium-connector-postgres/src/test, v3.6.1.Final.
func TestHstoreArrayInMapModeIsAnArrayOfMaps(t *testing.T) {
	cfg := testJSONConfig
	cfg.HstoreMode = "map"
	hstore := &TypeInfo{OID: 90003, Name: "hstore", Kind: 'b', Mod: -1}
	rel := &Relation{Schema: "public", Table: "hstore_table_mul", Columns: []Column{
		{Name: "hs", TypeOID: hstore.OID, TypeMod: -1, Type: hstore},
		{Name: "hsarr", TypeOID: 90004, TypeMod: -1, Type: &TypeInfo{OID: 90004, Name: "_hstore", Kind: 'b', Mod: -1, Elem: hstore}},
	}}
	// array_out of the statement's array, and a NULL element and an empty
	// hstore besides.
	const arr = `{"\"key4\"=>\"val4\", \"key5\"=>NULL","\"key6\"=>\"val6\"",NULL,""}`
	r := encodeRow(t, cfg, rel, Tuple{text(`"key1"=>"val1", "key2"=>"val2", "key3"=>"val3"`), text(arr)})

	want := []any{map[string]any{"key4": "val4", "key5": nil}, map[string]any{"key6": "val6"}, nil, map[string]any{}}
	if !reflect.DeepEqual(r.plain["hsarr"], want) {
		t.Errorf("plain JSON hsarr = %#v, want %#v", r.plain["hsarr"], want)
	}
	if !reflect.DeepEqual(r.payload["hsarr"], want) {
		t.Errorf("JSON with schemas hsarr = %#v, want %#v", r.payload["hsarr"], want)
	}
	wantSchema := map[string]any{"type": "array", "optional": true, "field": "hsarr",
		"items": map[string]any{"type": "map", "optional": true,
			"keys":   map[string]any{"type": "string", "optional": false},
			"values": map[string]any{"type": "string", "optional": true}}}
	if got := r.afterField("hsarr"); !reflect.DeepEqual(got, wantSchema) {
		t.Errorf("hsarr schema = %#v, want %#v", got, wantSchema)
	}
	gotAvro, _ := unwrapAvro(r.avro["hsarr"]).([]any)
	if len(gotAvro) != 4 {
		t.Fatalf("Avro hsarr = %#v", r.avro["hsarr"])
	}
	for i, w := range want {
		g := unwrapAvro(gotAvro[i])
		if m, ok := g.(map[string]any); ok {
			for k, v := range m {
				m[k] = unwrapAvro(v)
			}
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("Avro hsarr[%d] = %#v, want %#v", i, g, w)
		}
	}

	// The JSON writes each map in java.util.HashMap order, as Jackson
	// iterates it: key5 before key4 (the json-mode expectation of the same
	// row, AbstractRecordsProducerTest.java:395, shows that order).
	out, err := NewJSONEncoder(cfg).AppendValue(nil, NewPlan(cfg, rel), &Change{Op: OpCreate, Relation: rel, After: Tuple{null, text(arr)}}, time.UnixMilli(1))
	if err != nil || !bytes.Contains(out, []byte(`"hsarr":[{"key5":null,"key4":"val4"},{"key6":"val6"},null,{}]`)) {
		t.Errorf("%s %v", out, err)
	}

	// An element that is not hstore text is a value error, never a guess.
	if _, err := NewJSONEncoder(cfg).AppendValue(nil, NewPlan(cfg, rel), &Change{Op: OpCreate, Relation: rel, After: Tuple{null, text(`{"a=>"}`)}}, time.UnixMilli(1)); err == nil {
		t.Error("a malformed hstore element encoded without an error")
	}
}
