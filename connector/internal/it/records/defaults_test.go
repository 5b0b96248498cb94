package records

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/srtest"
)

// Debezium's default-value tests at v3.6.1.Final, in
// debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/:
// PostgresDefaultValueConverterIT.java (DV below) and
// RecordsStreamProducerIT.java (RSP). Their tables, and what each column's
// schema default and value must be.
var debeziumDefaultTables = []string{
	`CREATE SCHEMA s1`,
	// DV:306-323, the table of shouldSetTheNullValueInSnapshot/Streaming.
	`CREATE TABLE s1.a (pk SERIAL, dint integer DEFAULT NULL::integer,
		dvc1 varchar(64) DEFAULT NULL::character varying,
		dvc2 varchar(64) DEFAULT 'NULL',
		dvc3 varchar(64) DEFAULT 'MYVALUE',
		dvc4 varchar(64) DEFAULT 'NULL'::character varying,
		dvc5 varchar(64) DEFAULT 'NULL::character varying',
		dvc6 varchar(64) DEFAULT NULL,
		dt1 timestamp DEFAULT CURRENT_TIMESTAMP,
		dt2 date DEFAULT CURRENT_DATE,
		dt3 time DEFAULT CURRENT_TIME,
		PRIMARY KEY(pk))`,
	// DV:133-139 (DBZ-7562).
	`CREATE TABLE s1.dbz7562 (pk SERIAL, cost numeric(12,0) not null default 0.0, PRIMARY KEY(pk))`,
	// DV:255-263 (dbz#1334).
	`CREATE TYPE s1."Status" AS ENUM ('DRAFT', 'SUBMITTED', 'APPROVED', 'REJECTED')`,
	`CREATE TABLE s1.rtang_test2 (id int primary key, status s1."Status" NOT NULL DEFAULT 'DRAFT')`,
	// DV:96-101 (DBZ-5340); a primary key added so the table is captured
	// (Debezium's test makes it REPLICA IDENTITY FULL instead).
	`CREATE SCHEMA s2`,
	`CREATE OR REPLACE FUNCTION s2.tst_generate_random_uuid() returns uuid as 'select gen_random_uuid()' language sql`,
	`CREATE TABLE s1.dbz5340 (id uuid default s2.tst_generate_random_uuid() not null primary key, data text)`,
}

// wantDefaults are the schema defaults of each table's value columns, as
// JSON ("" for none).
var wantDefaults = map[string]map[string]string{
	"a": {
		"pk":   "0",                        // RSP:641-642: a serial's nextval(…) default is 0
		"dint": "", "dvc1": "", "dvc6": "", // DV:339-340, :345
		"dvc2": `"NULL"`, "dvc3": `"MYVALUE"`, // DV:341-342
		"dvc4": `"NULL"`, "dvc5": `"NULL::character varying"`, // DV:343-344
		"dt1": "0", "dt2": "0", "dt3": "0", // DV:346-348: CURRENT_* are the epoch
	},
	// DV:164-167: Decimal scale 0, default BigDecimal 0 (unscaled bytes
	// [0], base64 "AA==" in JsonConverter's form).
	"dbz7562":     {"pk": "0", "cost": `"AA=="`},
	"rtang_test2": {"id": "", "status": `"DRAFT"`},                              // DV:284-285
	"dbz5340":     {"id": `"00000000-0000-0000-0000-000000000000"`, "data": ""}, // DV:126-127
}

// TestColumnDefaultsAreInTheSchemasAsDebeziumReadsThem runs Debezium's
// default-value statements and checks the defaults of the record schemas
// (JSON with schemas and Avro), in the snapshot and in the stream, and the
// values.
func TestColumnDefaultsAreInTheSchemasAsDebeziumReadsThem(t *testing.T) {
	for _, format := range []string{"json with schemas", "avro"} {
		t.Run(format, func(t *testing.T) {
			e := ittest.NewEnv(t)
			for _, s := range debeziumDefaultTables {
				e.Exec(s)
			}
			insert := func() {
				e.Exec(`INSERT INTO s1.a (pk) VALUES (DEFAULT)`) // DV:307
				e.Exec(`INSERT INTO s1.dbz7562 default values`)  // DV:139
				e.Exec(`INSERT INTO s1.rtang_test2 (id) VALUES ((SELECT count(*) + 1 FROM s1.rtang_test2))`)
				e.Exec(`INSERT INTO s1.dbz5340 (data) values ('test')`) // DV:115
			}
			insert() // snapshot rows
			topics := []string{"dv.s1.a", "dv.s1.dbz7562", "dv.s1.rtang_test2", "dv.s1.dbz5340"}
			cfg := e.Config("dv", "s1.*")
			var reg *srtest.Registry
			if format == "avro" {
				reg = srtest.New(t)
				cfg = ittest.AvroConfig(e, reg, "dv", "s1.*")
			} else {
				cfg.Format.JSONSchemas = true
			}
			r := ittest.Start(t, cfg)
			r.WaitHandedOver(t)
			insert() // streamed rows
			for _, topic := range topics {
				table := topic[len("dv.s1."):]
				if reg != nil {
					recs := ittest.ReadAvro(t, reg, e.Kafka, 2, topic)
					text, _ := reg.SchemaByID(recs[0].ValueID)
					checkAvroDefaults(t, table, text)
					for _, rec := range recs {
						checkDefaultValues(t, table, ittest.After(t, rec))
					}
					continue
				}
				for _, rec := range ittest.ReadRaw(t, e.Kafka, 2, topic) {
					checkConnectDefaults(t, table, rec.Value)
					checkDefaultValues(t, table, ittest.Decode(t, []*kgo.Record{rec})[0].After)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestNullInAColumnWithADefaultIsWrittenAsTheDefault: Kafka Connect's
// JsonConverter writes a null field that has a schema default as the
// default (apache/kafka connect/json/.../JsonConverter.java:583-592,
// replace.null.with.default, default true: JsonConverterConfig.java:49-50),
// and Confluent's AvroData does the same (AvroData.java:648-649,
// ignore.default.for.nullables default false). format.replace_null_with_default
// false keeps the null. A delete's key-only before image gets the default
// for its absent columns the same way.
func TestNullInAColumnWithADefaultIsWrittenAsTheDefault(t *testing.T) {
	for _, replace := range []bool{true, false} {
		t.Run(fmt.Sprint("replace=", replace), func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE public.n (id int PRIMARY KEY, v varchar(10) DEFAULT 'MYVALUE', w int NOT NULL DEFAULT 7, x int)`)
			cfg := e.Config("nd", "public.n")
			cfg.Format.JSONSchemas = true
			cfg.Format.ReplaceNullWithDefault = replace
			r := ittest.Start(t, cfg)
			r.WaitHandedOver(t)
			e.Exec(`INSERT INTO n VALUES (1, NULL, 3, NULL)`)
			e.Exec(`DELETE FROM n WHERE id = 1`)
			evs := ittest.Consume(t, e.Kafka, 2, "nd.public.n")
			wantV := any(nil)
			if replace {
				wantV = "MYVALUE"
			}
			if got := evs[0].After["v"]; got != wantV {
				t.Errorf("after.v = %#v, want %#v", got, wantV)
			}
			if got := evs[0].After["x"]; got != nil {
				t.Errorf("after.x (no default) = %#v, want null", got)
			}
			// The delete's before holds only id: v gets the default when
			// nulls are replaced, w (required) gets it always.
			if got := evs[1].Before["v"]; got != wantV {
				t.Errorf("before.v = %#v, want %#v", got, wantV)
			}
			if got := fmt.Sprint(evs[1].Before["w"]); got != "7" {
				t.Errorf("before.w = %s, want the default 7", got)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkConnectDefaults checks the defaults of the after struct's fields in
// a JsonConverter value, and that the key's fields have the same.
func checkConnectDefaults(t *testing.T, table string, value []byte) {
	t.Helper()
	type field struct {
		Field   string          `json:"field"`
		Default json.RawMessage `json:"default"`
		Fields  []field         `json:"fields"`
	}
	var env struct {
		Schema field `json:"schema"`
	}
	if err := json.Unmarshal(value, &env); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	seen := 0
	for _, f := range env.Schema.Fields {
		if f.Field != "after" {
			continue
		}
		for _, c := range f.Fields {
			want, ok := wantDefaults[table][c.Field]
			if !ok {
				continue
			}
			seen++
			if string(c.Default) != want {
				t.Errorf("%s.%s: schema default %s, want %q", table, c.Field, c.Default, want)
			}
		}
	}
	if seen != len(wantDefaults[table]) {
		t.Errorf("%s: checked %d columns of %d", table, seen, len(wantDefaults[table]))
	}
}

// checkAvroDefaults checks the value schema's Avro field defaults, which
// Confluent's AvroData writes from the Connect defaults (AvroData.java:1241-1243
// and the connect.default property, :1022-1027).
func checkAvroDefaults(t *testing.T, table, text string) {
	t.Helper()
	var s struct {
		Fields []struct {
			Name string `json:"name"`
			Type any    `json:"type"`
		} `json:"fields"`
	}
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	var value []any
	for _, f := range s.Fields {
		if f.Name == "before" { // ["null", {record}]; after names the record
			value, _ = f.Type.([]any)
		}
	}
	if len(value) != 2 {
		t.Fatalf("%s: before is %v", table, value)
	}
	rec, _ := value[1].(map[string]any)
	fields, _ := rec["fields"].([]any)
	seen := 0
	for _, f := range fields {
		fm := f.(map[string]any)
		name := fm["name"].(string)
		want, ok := wantDefaults[table][name]
		if !ok {
			continue
		}
		seen++
		def, has := fm["default"]
		switch {
		case want == "":
			if has && def != nil {
				t.Errorf("%s.%s: Avro default %v, want none (null)", table, name, def)
			}
		case name == "cost":
			// Decimal bytes: the ISO-8859-1 string of [0].
			if def != "\x00" {
				t.Errorf("%s.%s: Avro default %q, want \"\\u0000\"", table, name, def)
			}
		default:
			if got, _ := json.Marshal(def); string(got) != want {
				t.Errorf("%s.%s: Avro default %s, want %s", table, name, got, want)
			}
		}
	}
	if seen != len(wantDefaults[table]) {
		t.Errorf("%s: checked %d columns of %d", table, seen, len(wantDefaults[table]))
	}
}

// checkDefaultValues checks the values the defaults gave the rows
// (DV:328-337, :123-124, :281).
func checkDefaultValues(t *testing.T, table string, after map[string]any) {
	t.Helper()
	want := map[string]map[string]any{
		"a": {"dint": nil, "dvc1": nil, "dvc2": "NULL", "dvc3": "MYVALUE", "dvc4": "NULL",
			"dvc5": "NULL::character varying", "dvc6": nil},
		"rtang_test2": {"status": "DRAFT"},
		"dbz5340":     {"data": "test"},
	}[table]
	for col, w := range want {
		if got := after[col]; got != w {
			t.Errorf("%s: after.%s = %#v, want %#v", table, col, got, w)
		}
	}
	if table == "a" {
		for _, col := range []string{"dt1", "dt2", "dt3"} {
			if after[col] == nil {
				t.Errorf("a: after.%s is null, want the time the row was written", col)
			}
		}
	}
}

// TestTsvectorAsDebezium: Debezium's TsVectorDataTypeIT
// (debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/TsVectorDataTypeIT.java,
// v3.6.1.Final): the statements of :40-43 and :60-61, a snapshot row and a
// streamed one, each a string named io.debezium.data.Tsvector with
// Postgres' text (:66-72).
func TestTsvectorAsDebezium(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE SCHEMA tsvector`)
	e.Exec(`CREATE TABLE tsvector.text_search_test (id SERIAL PRIMARY KEY, title TEXT, content TEXT, search_vector tsvector)`)
	e.Exec(`INSERT INTO tsvector.text_search_test (title, content, search_vector) VALUES ('TC1 - Direct TSV', 'This is a test for direct tsvector insert', to_tsvector('english', 'This is a test for direct tsvector insert'))`)
	cfg := e.Config("test_server", "tsvector.*")
	cfg.Format.JSONSchemas = true
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO tsvector.text_search_test (title, content, search_vector) VALUES ('TC1 - Direct TSV', 'This is a test for direct tsvector insert second case', to_tsvector('english', 'This is a test for direct tsvector insert second case'))`)
	recs := ittest.ReadRaw(t, e.Kafka, 2, "test_server.tsvector.text_search_test")
	want := []string{"'direct':6 'insert':8 'test':4 'tsvector':7", "'case':10 'direct':6 'insert':8 'second':9 'test':4 'tsvector':7"}
	for i, rec := range recs {
		if !strings.Contains(string(rec.Value), `{"type":"string","optional":true,"name":"io.debezium.data.Tsvector","version":1,"field":"search_vector"}`) {
			t.Errorf("record %d: search_vector's schema is not io.debezium.data.Tsvector: %s", i, rec.Value)
		}
		if got := ittest.Decode(t, []*kgo.Record{rec})[0].After["search_vector"]; got != want[i] {
			t.Errorf("record %d: search_vector %v, want %q", i, got, want[i])
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestArraysDebeziumHasNoSchemaForAreLeftOut: money[], name[], interval[],
// varbit[], xml[] and point[] have no schema in Debezium 3.6.1
// (PostgresValueConverter.java:289-298, "These array types still need to
// be implemented"), so TableSchemaBuilder leaves the columns out
// (TableSchemaBuilder.java:454-456), with include.unknown.datatypes too.
func TestArraysDebeziumHasNoSchemaForAreLeftOut(t *testing.T) {
	for _, include := range []bool{false, true} {
		t.Run(fmt.Sprint("include_unknown_datatypes=", include), func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE arr (id int PRIMARY KEY, m money[], n name[], i interval[], v varbit[], x xml[], p point[], ok int[])`)
			e.Exec(`INSERT INTO arr VALUES (1, '{1.5}', '{a}', '{1 day}', '{101}', '{<a/>}', '{"(1,2)"}', '{1}')`)
			cfg := e.Config("ua", "public.arr")
			cfg.Format.JSONSchemas = true
			cfg.Format.IncludeUnknownDatatypes = include
			r := ittest.Start(t, cfg)
			e.Exec(`INSERT INTO arr VALUES (2, '{2.5}', '{b}', '{2 days}', '{1}', '{<b/>}', '{"(3,4)"}', '{2}')`)
			for _, ev := range ittest.Consume(t, e.Kafka, 2, "ua.public.arr") {
				for _, col := range []string{"m", "n", "i", "v", "x", "p"} {
					if _, ok := ev.After[col]; ok {
						t.Errorf("column %s is in the record: %v", col, ev.After)
					}
				}
				if ev.After["ok"] == nil {
					t.Errorf("int[] column missing: %v", ev.After)
				}
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
