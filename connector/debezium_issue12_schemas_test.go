package connector_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/mooncdc/mooncdc/internal/avrodata"
	"github.com/mooncdc/mooncdc/internal/connecttest"
)

// The key and row schemas TestIssue12TypesAsDebezium361 (and
// TestEveryType for toast_full) expects, in place
// of goldens written from mooncdc's own output (issue 12). The Connect
// schemas are the ones Debezium's tests assert for the same tables,
// statements and modes (debezium-connector-postgres/src/test/java/io/
// debezium/connector/postgresql/, v3.6.1.Final); the Avro schemas are what
// Confluent's AvroData.fromConnectSchema makes of them
// (avro-data/src/main/java/io/confluent/connect/avro/AvroData.java at
// schema-registry 794611bd):
//
//	optional T          ["null", T], field default null (:1114, :1240-1245)
//	a default           connect.default on the type, the field's default (:1022-1027, :1240-1243)
//	Decimal             bytes, logicalType decimal, scale, precision 64 when
//	                    connect.decimal.precision is absent (:900-911, :281,
//	                    :1092), connect.version/parameters/name (:1012-1030)
//	map, string keys    Avro map of the value schema (:918-924)
//	array               Avro array of the item schema (:914-916)
//
// A field's spec is dbzSchemaIs's ("type?" optional, then name and
// parameters); every field of the row must be listed, so that a column
// Debezium leaves out fails when it is there.

// tyRowSchemas is one table's expected key and row fields.
type tyRowSchemas struct {
	connect map[string]string // field -> dbzSchemaIs spec
	avro    map[string]string // field -> the Avro field without its name, as JSON
	cite    map[string]string // field -> where the expectation comes from
	key     []string          // the key's fields (their specs as in connect)
}

// Avro fields AvroData makes of the Connect schemas below.
const (
	tyAvroPK          = `{"type":{"type":"int","connect.default":0},"default":0}`
	tyAvroOptString   = `{"type":["null","string"],"default":null}`
	tyAvroOptBytes    = `{"type":["null","bytes"],"default":null}`
	tyAvroBytes       = `{"type":"bytes"}`
	tyAvroOptStrMap   = `{"type":"map","values":["null","string"]}`
	tyAvroOptDecimal1 = `{"type":["null",{"type":"bytes","scale":1,"precision":64,"connect.version":1,` +
		`"connect.parameters":{"scale":"1"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}],"default":null}`
)

// debeziumRowSchemas returns the expected schemas of table, with
// include_unknown_datatypes on or off.
func debeziumRowSchemas(table string, include bool) tyRowSchemas {
	const rspi = "RecordsStreamProducerIT.java"
	const arpt = "AbstractRecordsProducerTest.java"
	pk := "int32 default=0"
	pkCite := "PostgresSchemaIT.java:92 (a serial pk: int32, default 0), " + rspi + ":3839"
	s := tyRowSchemas{connect: map[string]string{"pk": pk}, avro: map[string]string{"pk": tyAvroPK},
		cite: map[string]string{"pk": pkCite}, key: []string{"pk"}}
	add := func(field, spec, avro, cite string) {
		s.connect[field], s.avro[field], s.cite[field] = spec, avro, cite
	}
	switch table {
	case "toast_full":
		// TestEveryType's (id int PRIMARY KEY, note text, big text): a
		// NOT NULL int4 is a required int32, no default
		// (JdbcValueConverters.java:186-188; TableSchemaBuilder.java
		// :422-424 makes only nullable columns optional).
		s = tyRowSchemas{connect: map[string]string{}, avro: map[string]string{}, cite: map[string]string{}, key: []string{"id"}}
		add("id", "int32", `{"type":"int"}`, "JdbcValueConverters.java:186-188, TableSchemaBuilder.java:422-424")
		add("note", "string?", tyAvroOptString, arpt+":428 (a TEXT column: OPTIONAL_STRING_SCHEMA)")
		add("big", "string?", tyAvroOptString, arpt+":428")
	case "salary":
		// money_fraction_digits 1, decimal precise (testStreamMoneyPreciseDecimalFraction).
		add("name", "string?", tyAvroOptString, rspi+":3840")
		add("salary", "bytes? org.apache.kafka.connect.data.Decimal scale=1", tyAvroOptDecimal1, rspi+":3841 (Decimal.builder(1).optional())")
	case "hstore_table_mul":
		// hstore_handling_mode map.
		add("hs", "map?", `{"type":["null",`+tyAvroOptStrMap+`],"default":null}`, arpt+":379-383, :361 (map(STRING, optional STRING).optional())")
		add("hsarr", "array?|map?", `{"type":["null",{"type":"array","items":["null",`+tyAvroOptStrMap+`]}],"default":null}`,
			arpt+":362 (array(hstoreMapSchema()).optional())")
	case "circle_table":
		if include {
			add("ccircle", "bytes?", tyAvroOptBytes, arpt+":463 (schemaAndValueForUnknownColumnBytes)")
		} // else left out: an unknown type without include.unknown.datatypes (RecordsSnapshotProducerIT.java:1225-1226)
	case "alias_table":
		if include {
			// The NOT NULL geometric columns and their domains: required
			// bytes (schemasAndValuesForDomainAliasTypes).
			for g, line := range map[string]int{"box": 1051, "circle": 1053, "line": 1055, "lseg": 1057, "path": 1059, "polygon": 1063} {
				add(g+"_base", "bytes", tyAvroBytes, fmt.Sprintf("%s:%d", arpt, line))
				add(g+"_alias", "bytes", tyAvroBytes, fmt.Sprintf("%s:%d", arpt, line+1))
			}
		}
		// box_arr (box[]) is left out in both modes: a mooncdc-only
		// expectation. Debezium's tests have no box[] column, and its
		// schema builder would give include.unknown.datatypes an array of
		// bytes (PostgresValueConverter.java:353-363); not established
		// here, so not claimed as Debezium's.
		add("text_col", "string?", tyAvroOptString, arpt+":428 (a TEXT column: OPTIONAL_STRING_SCHEMA)")
	}
	return s
}

// checkConnectRow checks a JSON-with-schemas key or value schema: the
// key's fields, or the after image's, must be exactly want's.
func checkConnectRow(t *testing.T, what string, raw json.RawMessage, want tyRowSchemas, isKey bool) {
	t.Helper()
	s, err := connecttest.ParseSchema(raw)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	fields := s.Fields
	if !isKey {
		fields = nil
		for _, f := range s.Fields {
			if f.Name == "after" {
				fields = f.Schema.Fields
			}
		}
	}
	names := wantNames(want, isKey)
	var got []string
	for _, f := range fields {
		got = append(got, f.Name)
		spec, ok := want.connect[f.Name]
		if !ok {
			continue
		}
		if err := dbzSchemaIs(f.Schema, spec); err != nil {
			t.Errorf("%s: field %s: %v (want %q, %s)", what, f.Name, err, spec, want.cite[f.Name])
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, names) {
		t.Errorf("%s: fields %v, want %v", what, got, names)
	}
}

func wantNames(want tyRowSchemas, isKey bool) []string {
	var names []string
	if isKey {
		names = slices.Clone(want.key)
	} else {
		for f := range want.connect {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	return names
}

// checkAvroRow checks a registered Avro key or value schema: the key
// record's fields, or the row record's (the type of "before", where it is
// defined), must be exactly want's, each field as AvroData writes it.
func checkAvroRow(t *testing.T, what, text string, want tyRowSchemas, isKey bool) {
	t.Helper()
	type record struct {
		Fields []map[string]any `json:"fields"`
	}
	var top record
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	fields := top.Fields
	if !isKey {
		fields = nil
		for _, f := range top.Fields {
			if f["name"] != "before" {
				continue
			}
			u, _ := f["type"].([]any)
			if len(u) != 2 {
				t.Fatalf("%s: before is %v, want [null, the row record]", what, f["type"])
			}
			b, _ := json.Marshal(u[1])
			var row record
			if err := json.Unmarshal(b, &row); err != nil {
				t.Fatal(err)
			}
			fields = row.Fields
		}
	}
	names := wantNames(want, isKey)
	var got []string
	for _, f := range fields {
		name, _ := f["name"].(string)
		got = append(got, name)
		w, ok := want.avro[name]
		if !ok {
			continue
		}
		delete(f, "name")
		var wv map[string]any
		if err := json.Unmarshal([]byte(w), &wv); err != nil {
			t.Fatalf("expectation for %s: %v", name, err)
		}
		if !reflect.DeepEqual(f, wv) {
			gb, _ := json.Marshal(f)
			t.Errorf("%s: field %s\n got  %s\n want %s (AvroData of %q, %s)", what, name, gb, w, want.connect[name], want.cite[name])
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, names) {
		t.Errorf("%s: fields %v, want %v", what, got, names)
	}
}

// everyTypeSchemas is TestEveryType's every_type (types_test.go
// typesSetup) in the default modes: each column's Connect schema as
// Debezium's tests assert it for a column of the same type
// (AbstractRecordsProducerTest.java unless named), or, where no Debezium
// test has the type, as PostgresValueConverter.java / JdbcValueConverters
// .java build it (cited; the comment says so).
func everyTypeSchemas() tyRowSchemas {
	const arpt = "AbstractRecordsProducerTest.java"
	const rspi = "RecordsStreamProducerIT.java"
	const pvc = "PostgresValueConverter.java"
	const dec = "org.apache.kafka.connect.data.Decimal"
	s := tyRowSchemas{connect: map[string]string{}, cite: map[string]string{}, key: []string{"id"}}
	for _, c := range []struct{ field, spec, cite string }{
		{"id", "int32", "JdbcValueConverters.java:186-188, TableSchemaBuilder.java:422-424 (NOT NULL: required)"},
		{"b", "boolean?", arpt + ":248"},
		{"i2", "int16?", arpt + ":239"}, {"i4", "int32?", arpt + ":240"}, {"i8", "int64?", arpt + ":241"},
		{"f4", "float?", arpt + ":242"}, {"f8", "double?", arpt + ":243"},
		{"n10_2", "bytes? " + dec + " scale=2 connect.decimal.precision=10", arpt + ":269 (DECIMAL(3,2))"},
		{"n", "struct? io.debezium.data.VariableScaleDecimal", arpt + ":271 (DECIMAL)"},
		{"n5", "bytes? " + dec + " scale=0 connect.decimal.precision=5", arpt + ":270 (DECIMAL(4))"},
		{"m", "bytes? " + dec + " scale=2", arpt + ":778 (money)"},
		{"c3", "string?", arpt + ":427 (CHAR(3))"}, {"vc10", "string?", arpt + ":424 (VARCHAR(2))"}, {"t", "string?", arpt + ":428"},
		{"bpc", "string?", pvc + ":228-229 (BPCHAR; no Debezium test has a bare bpchar column)"},
		{"nm", "string?", "JdbcValueConverters.java:214-218 (name is a VARCHAR to the driver; no Debezium test has a name column)"},
		{"ci", "string?", arpt + ":431 (CITEXT)"},
		{"ba", "bytes?", arpt + ":429"},
		{"u", "string? io.debezium.data.Uuid", arpt + ":541"},
		{"j", "string? io.debezium.data.Json", arpt + ":538"}, {"jb", "string? io.debezium.data.Json", arpt + ":539"},
		{"x", "string? io.debezium.data.Xml", arpt + ":540"},
		{"d", "int32? io.debezium.time.Date", arpt + ":696"},
		{"tm", "int64? io.debezium.time.MicroTime", arpt + ":697"},
		{"tm3", "int32? io.debezium.time.Time", arpt + ":698 (TIME(3))"},
		{"ttz", "string? io.debezium.time.ZonedTime", arpt + ":700"},
		{"ts", "int64? io.debezium.time.MicroTimestamp", arpt + ":691"},
		{"ts3", "int64? io.debezium.time.Timestamp", arpt + ":693 (TIMESTAMP(3))"},
		{"tstz", "string? io.debezium.time.ZonedTimestamp", arpt + ":695"},
		{"iv", "int64? io.debezium.time.MicroDuration", arpt + ":702"},
		{"ip", "string?", arpt + ":503 (INET)"}, {"net", "string?", arpt + ":507 (CIDR)"}, {"mac", "string?", arpt + ":511"},
		{"mac8", "string?", "PostgresSchemaIT.java:143-155 (MACADDR8)"},
		{"bit1", "boolean?", arpt + ":634 (BIT(1))"},
		{"bit4", "bytes? io.debezium.data.Bits length=4", arpt + ":636 (BIT(2): Bits.builder(2))"},
		{"vb8", "bytes? io.debezium.data.Bits length=8", arpt + ":640 (BIT VARYING(24): Bits.builder(24))"},
		{"e", "string? io.debezium.data.Enum allowed=sad,ok,happy", rspi + ":3289 (Enum.builder of the labels)"},
		{"price", "bytes? " + dec + " scale=2 connect.decimal.precision=8", rspi + ":3074-3094 (a numeric(8,2) domain: SpecialValueDecimal.builder(mode, 8, 2))"},
		{"lbl", "string?", rspi + ":3144 (a domain over text is its base type)"},
		{"a_i4", "array?|int32?", arpt + ":845"}, {"a_t", "array?|string?", arpt + ":849"},
		{"a_n", "array?|struct? io.debezium.data.VariableScaleDecimal", arpt + ":866"},
		{"a_vc", "array?|string?", arpt + ":853"},
		{"a_u", "array?|string? io.debezium.data.Uuid", arpt + ":891"},
		{"a_d", "array?|int32? io.debezium.time.Date", arpt + ":855"},
		{"a_b", "array?|boolean?", pvc + ":270-271 (BOOL_ARRAY; no Debezium test has a bool[] column)"},
		{"a_e", "array?|string io.debezium.data.Enum allowed=sad,ok,happy", rspi + ":3367 (array(Enum.builder(…)): required items)"},
		{"r_i4", "string?", arpt + ":627"}, {"r_i8", "string?", arpt + ":629"}, {"r_n", "string?", arpt + ":628"},
		{"r_ts", "string?", arpt + ":616"}, {"r_tstz", "string?", arpt + ":620"}, {"r_d", "string?", arpt + ":626"},
		{"hs", "string? io.debezium.data.Json", arpt + ":389 (hstore.handling.mode json)"},
		{"pt", "struct? io.debezium.data.geometry.Point", arpt + ":545-546"},
		{"tsv", "string? io.debezium.data.Tsvector", pvc + ":240-241 (TSVECTOR; Debezium's TsVectorDataTypeIT needs PostgreSQL 16)"},
		{"o", "int64?", arpt + ":249 (OID)"},
		{"lt", "string? io.debezium.data.Ltree", arpt + ":992"},
	} {
		s.connect[c.field], s.cite[c.field] = c.spec, c.cite
	}
	return s
}

// withAvroFromConnect fills want.avro with what AvroData makes of the
// Connect value schema raw (a JSON-with-schemas record's, itself checked
// against want.connect): internal/avrodata's fromConnectSchema of the
// whole envelope, field by field of the row record (the type of before,
// where it is defined, as checkAvroRow reads mooncdc's).
func withAvroFromConnect(t *testing.T, want tyRowSchemas, raw json.RawMessage) tyRowSchemas {
	t.Helper()
	text, err := avrodata.FromConnectJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Fields []struct {
			Name string          `json:"name"`
			Type json.RawMessage `json:"type"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(text), &top); err != nil {
		t.Fatal(err)
	}
	want.avro = map[string]string{}
	for _, f := range top.Fields {
		var u []json.RawMessage
		if f.Name != "before" || json.Unmarshal(f.Type, &u) != nil || len(u) != 2 {
			continue
		}
		var row struct {
			Fields []map[string]json.RawMessage `json:"fields"`
		}
		if err := json.Unmarshal(u[1], &row); err != nil {
			t.Fatal(err)
		}
		for _, af := range row.Fields {
			var name string
			_ = json.Unmarshal(af["name"], &name)
			delete(af, "name")
			b, err := json.Marshal(af)
			if err != nil {
				t.Fatal(err)
			}
			want.avro[name] = string(b)
		}
	}
	return want
}
