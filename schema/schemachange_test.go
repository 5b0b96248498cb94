package schema

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/internal/connecttest"
)

func int32p(v int32) *int32 { return &v }
func strp(s string) *string { return &s }

var testSchemaChange = &SchemaChange{
	Type: SchemaChangeAlter, DDL: "ALTER TABLE orders ADD COLUMN note varchar(40) DEFAULT 'x'",
	Table: DDLTable{Schema: "public", Table: "orders", PrimaryKey: []string{"id"}, Columns: []DDLColumn{
		{Name: "id", TypeName: "int4", Position: 1},
		{Name: "amount", TypeName: "numeric", Length: int32p(10), Scale: int32p(2), Position: 2, Optional: true},
		{Name: "note", TypeName: "varchar", Length: int32p(40), Position: 3, Optional: true, Default: strp("'x'::character varying")},
	}},
	Xid: 771, LSN: 24023200, CommitTime: time.UnixMilli(1704164645678), Now: time.UnixMilli(1704164645700),
}

// TestSchemaChangeRecords: the plain JSON of an ALTER, a DROP, a RENAME
// and a derived TRUNCATE (ddl null: no statement is known), in
// the field order of Debezium's schema change value and its Table and
// Column (SchemaFactory.java:221-285 at v3.6.1.Final; the subset of
// fields the catalog gives), keyed by the table; with schemas,
// JsonConverter accepts them; Avro decodes through the rendered schema to
// the same values.
func TestSchemaChangeRecords(t *testing.T) {
	cfg := testJSONConfig
	drop := *testSchemaChange
	drop.Type, drop.DDL, drop.Table = SchemaChangeDrop, "DROP TABLE orders", DDLTable{Schema: "public", Table: "orders", Dropped: true}
	want := map[string]string{
		SchemaChangeAlter: `{"source":{"version":"` + cfg.Version + `","connector":"postgresql","name":"` + cfg.Name + `","ts_ms":1704164645678,"db":"appdb","schema":"public","table":"orders","txId":771,"lsn":24023200},` +
			`"ts_ms":1704164645700,"databaseName":"appdb","schemaName":"public","ddl":"ALTER TABLE orders ADD COLUMN note varchar(40) DEFAULT 'x'",` +
			`"tableChanges":[{"type":"ALTER","id":"\"public\".\"orders\"","previousId":null,"table":{"primaryKeyColumnNames":["id"],"columns":[` +
			`{"name":"id","typeName":"int4","length":null,"scale":null,"position":1,"optional":false,"defaultValueExpression":null},` +
			`{"name":"amount","typeName":"numeric","length":10,"scale":2,"position":2,"optional":true,"defaultValueExpression":null},` +
			`{"name":"note","typeName":"varchar","length":40,"scale":null,"position":3,"optional":true,"defaultValueExpression":"'x'::character varying"}]}}]}`,
		SchemaChangeDrop: `{"source":{"version":"` + cfg.Version + `","connector":"postgresql","name":"` + cfg.Name + `","ts_ms":1704164645678,"db":"appdb","schema":"public","table":"orders","txId":771,"lsn":24023200},` +
			`"ts_ms":1704164645700,"databaseName":"appdb","schemaName":"public","ddl":"DROP TABLE orders",` +
			`"tableChanges":[{"type":"DROP","id":"\"public\".\"orders\"","previousId":null,"table":null}]}`,
		SchemaChangeTruncate: `{"source":{"version":"` + cfg.Version + `","connector":"postgresql","name":"` + cfg.Name + `","ts_ms":1704164645678,"db":"appdb","schema":"public","table":"orders","txId":771,"lsn":24023200},` +
			`"ts_ms":1704164645700,"databaseName":"appdb","schemaName":"public","ddl":null,` +
			`"tableChanges":[{"type":"TRUNCATE","id":"\"public\".\"orders\"","previousId":null,"table":{"primaryKeyColumnNames":["id"],"columns":[` +
			`{"name":"id","typeName":"int4","length":null,"scale":null,"position":1,"optional":false,"defaultValueExpression":null},` +
			`{"name":"amount","typeName":"numeric","length":10,"scale":2,"position":2,"optional":true,"defaultValueExpression":null},` +
			`{"name":"note","typeName":"varchar","length":40,"scale":null,"position":3,"optional":true,"defaultValueExpression":"'x'::character varying"}]}}]}`,
		SchemaChangeRename: `{"source":{"version":"` + cfg.Version + `","connector":"postgresql","name":"` + cfg.Name + `","ts_ms":1704164645678,"db":"appdb","schema":"public","table":"orders2","txId":771,"lsn":24023200},` +
			`"ts_ms":1704164645700,"databaseName":"appdb","schemaName":"public","ddl":"ALTER TABLE orders RENAME TO orders2",` +
			`"tableChanges":[{"type":"RENAME","id":"\"public\".\"orders2\"","previousId":"\"public\".\"orders\"","table":{"primaryKeyColumnNames":[],"columns":[` +
			`{"name":"id","typeName":"int4","length":null,"scale":null,"position":1,"optional":false,"defaultValueExpression":null}]}}]}`,
	}
	truncate := *testSchemaChange
	truncate.Type, truncate.DDL = SchemaChangeTruncate, "" // derived: ddl null
	rename := *testSchemaChange
	rename.Type, rename.DDL, rename.PreviousSchema, rename.PreviousTable = SchemaChangeRename, "ALTER TABLE orders RENAME TO orders2", "public", "orders"
	rename.Table = DDLTable{Schema: "public", Table: "orders2", PrimaryKey: []string{}, Columns: testSchemaChange.Table.Columns[:1]}
	plain, withSchemas, av := NewJSONEncoder(cfg), NewJSONSchemaEncoder(cfg), NewAvroEncoder(cfg)
	keySchema, valueSchema := SchemaChangeAvroSchemas()
	if err := av.RegisterSchemaChange(true, true, func(isKey bool, _ string) (int, error) { return 7, nil }); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*SchemaChange{testSchemaChange, &drop, &rename, &truncate} {
		k, _ := plain.AppendSchemaChangeKey(nil, sc)
		v, _ := plain.AppendSchemaChangeValue(nil, sc)
		if string(k) != `{"databaseName":"appdb","schemaName":"public","tableName":"`+sc.Table.Table+`"}` || string(v) != want[sc.Type] {
			t.Errorf("%s:\n got  %s\n %s\n want %s", sc.Type, k, v, want[sc.Type])
		}
		for _, f := range []func([]byte, *SchemaChange) ([]byte, error){withSchemas.AppendSchemaChangeKey, withSchemas.AppendSchemaChangeValue} {
			b, _ := f(nil, sc)
			if err := connecttest.Validate(b); err != nil {
				t.Errorf("%s: JsonConverter would refuse %s: %v", sc.Type, b, err)
			}
		}
		// Avro: the same values as the plain JSON.
		for _, c := range []struct {
			schema string
			enc    func([]byte, *SchemaChange) ([]byte, error)
			json   []byte
		}{{keySchema, av.AppendSchemaChangeKey, k}, {valueSchema, av.AppendSchemaChangeValue, v}} {
			b, err := c.enc(nil, sc)
			if err != nil {
				t.Fatal(err)
			}
			s, err := avro.ParseWithCache(c.schema, "", &avro.SchemaCache{})
			if err != nil {
				t.Fatalf("schema: %v\n%s", err, c.schema)
			}
			var got any
			if err := avro.Unmarshal(s, b[5:], &got); err != nil {
				t.Fatalf("%s: Avro does not decode: %v", sc.Type, err)
			}
			var wantV any
			if err := json.Unmarshal(c.json, &wantV); err != nil {
				t.Fatal(err)
			}
			if g, w := normalizeAvro(got), wantV; !reflect.DeepEqual(g, w) {
				t.Errorf("%s: Avro decodes to\n %v\nwant\n %v", sc.Type, g, w)
			}
		}
	}
}

// normalizeAvro turns hamba's decoding (unions as {"type": v}, ints of
// every width) into JSON's shapes.
func normalizeAvro(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, u := range x {
				switch k {
				case "string", "int", "long", "boolean", "array":
					return normalizeAvro(u)
				}
				if len(k) > 3 && (k[:3] == "io." || k == "io.debezium.connector.schema.Table") {
					return normalizeAvro(u)
				}
			}
		}
		out := map[string]any{}
		for k, u := range x {
			out[k] = normalizeAvro(u)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, u := range x {
			out[i] = normalizeAvro(u)
		}
		return out
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

// FuzzParseDDLMessage: any message content with the DDL prefix gives a
// message or an error, never a panic.
func FuzzParseDDLMessage(f *testing.F) {
	f.Add([]byte(`{"tag":"ALTER TABLE","ddl":"ALTER TABLE t ADD c int","tables":[{"schema":"public","table":"t","primary_key":["id"],"columns":[{"name":"id","type":"int4","position":1,"optional":false}]}]}`))
	f.Add([]byte(`{"tag":"DROP TABLE","ddl":"DROP TABLE t","tables":[{"schema":"public","table":"t","dropped":true}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseDDLMessage(b)
		if err == nil && m.Tag == "" {
			t.Fatal("a message without a tag")
		}
	})
}

// TestDDLTableRelation: the event trigger's message gives the new shape as
// pgoutput will send it (generated columns left out, the primary key as
// key, oids and modifiers as the catalog has them), or says it cannot
// (a dropped table, or a message of an older trigger without oids).
func TestDDLTableRelation(t *testing.T) {
	m, err := ParseDDLMessage([]byte(`{"tag":"ALTER TABLE","ddl":"ALTER TABLE t ADD COLUMN g int GENERATED ALWAYS AS (id * 2) STORED",
		"tables":[{"schema":"public","table":"t","oid":16390,"primary_key":["id"],"columns":[
		{"name":"id","type":"int4","type_oid":23,"typmod":-1,"position":1,"optional":false,"default":null,"generated":false},
		{"name":"v","type":"varchar","type_oid":1043,"typmod":44,"length":40,"position":2,"optional":true,"default":"'x'::character varying","generated":false},
		{"name":"g","type":"int4","type_oid":23,"typmod":-1,"position":3,"optional":true,"default":"(id * 2)","generated":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rel, ok := m.Tables[0].Relation()
	if !ok {
		t.Fatal("no relation")
	}
	want := &Relation{OID: 16390, Schema: "public", Table: "t", ReplicaIdentity: 'd', KeyIndexes: []int{0}, Columns: []Column{
		{Name: "id", TypeOID: 23, TypeMod: -1, Key: true, NotNull: true},
		{Name: "v", TypeOID: 1043, TypeMod: 44, Default: "'x'::character varying", HasDefault: true},
	}}
	if !reflect.DeepEqual(rel, want) {
		t.Fatalf("relation %+v, want %+v", rel, want)
	}
	for _, tt := range []DDLTable{
		{Schema: "public", Table: "t", Dropped: true},
		{Schema: "public", Table: "t", Columns: []DDLColumn{{Name: "id", TypeName: "int4"}}},         // no oid
		{Schema: "public", Table: "t", OID: 1, Columns: []DDLColumn{{Name: "id", TypeName: "int4"}}}, // no type oid
	} {
		if _, ok := tt.Relation(); ok {
			t.Errorf("%+v gave a relation", tt)
		}
	}
}
