package connector_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/connecttest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/offsets"
)

// The expectations of this file come from Debezium 3.6.1 (v3.6.1.Final):
// debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/VectorDatabaseIT.java
// (tables, statements and expected values, cited by line), the schemas of
// debezium-connector-common/src/main/java/io/debezium/schema/SchemaFactory.java:385-405,
// and for arrays of vectors PostgresValueConverter.java:357-360.

// pgvectorSetup is VectorDatabaseIT's schema (init_pgvector.ddl:5-7, the
// extension is created by Pgvector) and table (VectorDatabaseIT.java:41),
// with a second table for NOT NULL, arrays of each type and empty values.
const pgvectorSetup = `
CREATE TABLE pgvector.table_vector (pk SERIAL, f_vector pgvector.vector(3), f_halfvec pgvector.halfvec(3), f_sparsevec pgvector.sparsevec(3000), PRIMARY KEY(pk));
CREATE TABLE pgvector.table_vector_arrays (pk SERIAL PRIMARY KEY, f_vector pgvector.vector(2) NOT NULL,
	f_vectors pgvector.vector[], f_halfvecs pgvector.halfvec[], f_sparsevecs pgvector.sparsevec[]);
`

// pgvectorRows are inserted once before the pipelines start (snapshot)
// and once while they stream.
var pgvectorRows = [2][]string{{
	// VectorDatabaseIT.java:42
	`INSERT INTO pgvector.table_vector (f_vector, f_halfvec, f_sparsevec) VALUES ('[1,2,3]', '[101,102,103]', '{1: 201, 9: 209}/3000')`,
	`INSERT INTO pgvector.table_vector (f_vector, f_halfvec, f_sparsevec) VALUES (NULL, NULL, NULL)`,
	`INSERT INTO pgvector.table_vector_arrays (f_vector, f_vectors, f_halfvecs, f_sparsevecs) VALUES ('[0.5,-1.25]',
		ARRAY['[1,2]', '[3,4]']::pgvector.vector[], ARRAY['[1.5]']::pgvector.halfvec[], ARRAY['{}/5', '{2:1.5,5:-2}/5']::pgvector.sparsevec[])`,
	`INSERT INTO pgvector.table_vector_arrays (f_vector, f_vectors, f_halfvecs, f_sparsevecs) VALUES ('[0,1e-05]', '{}', '{}', NULL)`,
}, {
	// VectorDatabaseIT.java:59
	`INSERT INTO pgvector.table_vector (f_vector, f_halfvec, f_sparsevec) VALUES ('[10,20,30]', '[110,120,130]', '{1: 301, 9: 309}/3000')`,
	`INSERT INTO pgvector.table_vector (f_vector, f_halfvec, f_sparsevec) VALUES (NULL, NULL, NULL)`,
	`INSERT INTO pgvector.table_vector_arrays (f_vector, f_vectors, f_halfvecs, f_sparsevecs) VALUES ('[0.5,-1.25]',
		ARRAY['[1,2]', '[3,4]']::pgvector.vector[], ARRAY['[1.5]']::pgvector.halfvec[], ARRAY['{}/5', '{2:1.5,5:-2}/5']::pgvector.sparsevec[])`,
	`INSERT INTO pgvector.table_vector_arrays (f_vector, f_vectors, f_halfvecs, f_sparsevecs) VALUES ('[0,1e-05]', '{}', '{}', NULL)`,
}}

// pgvectorWant is each table's after images by pk, as JsonConverter
// writes Debezium's values: doubles and floats as Double/Float.toString,
// the INT16-keyed map as [key, value] pairs.
var pgvectorWant = map[string]map[int]string{
	"table_vector": {
		// VectorDatabaseIT.java:69-72
		1: `{"pk":1,"f_vector":[1.0,2.0,3.0],"f_halfvec":[101.0,102.0,103.0],"f_sparsevec":{"dimensions":3000,"vector":[[1,201.0],[9,209.0]]}}`,
		2: `{"pk":2,"f_vector":null,"f_halfvec":null,"f_sparsevec":null}`,
		// VectorDatabaseIT.java:78-81
		3: `{"pk":3,"f_vector":[10.0,20.0,30.0],"f_halfvec":[110.0,120.0,130.0],"f_sparsevec":{"dimensions":3000,"vector":[[1,301.0],[9,309.0]]}}`,
		4: `{"pk":4,"f_vector":null,"f_halfvec":null,"f_sparsevec":null}`,
	},
	"table_vector_arrays": {
		// java.util.HashMap<Short, Double> of {2, 5} (capacity 2 → 4): 5 in bucket 1, 2 in bucket 2.
		1: `{"pk":1,"f_vector":[0.5,-1.25],"f_vectors":[[1.0,2.0],[3.0,4.0]],"f_halfvecs":[[1.5]],"f_sparsevecs":[{"dimensions":5,"vector":[]},{"dimensions":5,"vector":[[5,-2.0],[2,1.5]]}]}`,
		2: `{"pk":2,"f_vector":[0.0,1.0E-5],"f_vectors":[],"f_halfvecs":[],"f_sparsevecs":null}`,
		3: `{"pk":3,"f_vector":[0.5,-1.25],"f_vectors":[[1.0,2.0],[3.0,4.0]],"f_halfvecs":[[1.5]],"f_sparsevecs":[{"dimensions":5,"vector":[]},{"dimensions":5,"vector":[[5,-2.0],[2,1.5]]}]}`,
		4: `{"pk":4,"f_vector":[0.0,1.0E-5],"f_vectors":[],"f_halfvecs":[],"f_sparsevecs":null}`,
	},
	// VectorDatabaseIT.java:96, :104: created and written while streaming.
	"table_vector_str": {
		1: `{"pk":1,"f_vector":[1.0,2.0,3.0],"f_halfvec":[101.0,102.0,103.0],"f_sparsevec":{"dimensions":3000,"vector":[[1,201.0],[9,209.0]]}}`,
	},
}

// pgvectorDeleteBefore is the before image of a delete of
// table_vector_arrays' row 1 under REPLICA IDENTITY DEFAULT: the old tuple
// holds the key only, and Debezium gives the NOT NULL vector its
// converter's fallback, the empty list (PostgresValueConverter.java:682,
// JdbcValueConverters.java:1414-1421); the optional columns are null.
const pgvectorDeleteBefore = `{"pk":1,"f_vector":[],"f_vectors":null,"f_halfvecs":null,"f_sparsevecs":null}`

// pgvectorFieldSchemas are the Connect schemas of the columns, as
// JsonConverter writes them (SchemaFactory.java:385-405: arrays of
// FLOAT64 and FLOAT32, the struct with its doc; the vectors optional as
// their columns are, PostgresValueConverter.java:357-360 for the arrays).
var pgvectorFieldSchemas = map[string]string{
	"f_vector": `{"type":"array","items":{"type":"double","optional":false},"optional":true,"name":"io.debezium.data.DoubleVector","version":1,"field":"f_vector"}`,
	// NOT NULL: a required schema (the column's optionality, as for every type).
	"table_vector_arrays.f_vector": `{"type":"array","items":{"type":"double","optional":false},"optional":false,"name":"io.debezium.data.DoubleVector","version":1,"field":"f_vector"}`,
	"f_halfvec":                    `{"type":"array","items":{"type":"float","optional":false},"optional":true,"name":"io.debezium.data.FloatVector","version":1,"field":"f_halfvec"}`,
	"f_sparsevec":                  `{"type":"struct","fields":[{"type":"int16","optional":false,"field":"dimensions"},{"type":"map","keys":{"type":"int16","optional":false},"values":{"type":"double","optional":false},"optional":false,"field":"vector"}],"optional":true,"name":"io.debezium.data.SparseDoubleVector","version":1,"doc":"Sparse double vector","field":"f_sparsevec"}`,
	"f_vectors":                    `{"type":"array","items":{"type":"array","items":{"type":"double","optional":false},"optional":false,"name":"io.debezium.data.DoubleVector","version":1},"optional":true,"field":"f_vectors"}`,
	"f_halfvecs":                   `{"type":"array","items":{"type":"array","items":{"type":"float","optional":false},"optional":false,"name":"io.debezium.data.FloatVector","version":1},"optional":true,"field":"f_halfvecs"}`,
	"f_sparsevecs":                 `{"type":"array","items":{"type":"struct","fields":[{"type":"int16","optional":false,"field":"dimensions"},{"type":"map","keys":{"type":"int16","optional":false},"values":{"type":"double","optional":false},"optional":false,"field":"vector"}],"optional":false,"name":"io.debezium.data.SparseDoubleVector","version":1,"doc":"Sparse double vector"},"optional":true,"field":"f_sparsevecs"}`,
}

// TestPgvectorColumnsAreDebeziumVectors: pgvector's vector, halfvec and
// sparsevec come out as Debezium 3.6.1's DoubleVector, FloatVector and
// SparseDoubleVector in the snapshot and the stream, in plain JSON, JSON
// with schemas and Avro (the Avro schema AvroData makes of the Connect
// one), with NULLs, arrays of each, and a table created while streaming
// (VectorDatabaseIT.shouldSnapshotAndStreamData and shouldStreamData); a
// value that is not pgvector's text parks its table only, with an error
// naming the column, and the other tables go on.
//
// pgvector must be installed for the cluster's server, or
// MOONCDC_PGVECTOR_STANDIN=1 set (pgtest.Pgvector).
func TestPgvectorColumnsAreDebeziumVectors(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE SCHEMA pgvector`) // init_pgvector.ddl:5-7
	e.PG.Pgvector(t, "postgres", "pgvector")
	e.Exec(pgvectorSetup)
	// Types named like pgvector's in another schema (Debezium knows them
	// by name, TypeRegistry.java:202-210), holding any text: a value real
	// pgvector would refuse reaches the encoders.
	e.Exec(`CREATE SCHEMA badvec`)
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	if err := pgtest.CreateVectorStandin(context.Background(), conn, "badvec"); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	e.Exec(`CREATE TABLE badvec.t (pk int PRIMARY KEY, v badvec.vector)`)
	e.Exec(`INSERT INTO badvec.t VALUES (1, '[1,2]')`)
	for _, s := range pgvectorRows[0] {
		e.Exec(s)
	}

	pipes := []string{"pgvjson", "pgvschemas", "pgvavro"}
	var runs []*ittest.Running
	for _, name := range pipes {
		cfg := e.Config(name, "pgvector.*", "badvec.*")
		cfg.Snapshot.Mode = config.SnapshotInitial
		cfg.Snapshot.DiscoveryInterval = time.Second
		switch name {
		case "pgvschemas":
			cfg.Format.JSONSchemas = true
		case "pgvavro":
			cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
			cfg.Format.SchemaRegistry.URL = reg.URL()
		}
		runs = append(runs, ittest.StartStreaming(t, cfg))
	}
	for _, r := range runs {
		r.WaitHandedOver(t)
	}
	for _, s := range pgvectorRows[1] {
		e.Exec(s)
	}
	e.Exec(`DELETE FROM pgvector.table_vector_arrays WHERE pk = 1`)
	e.Exec(`INSERT INTO badvec.t VALUES (2, '[1,NaN]')`)
	e.Exec(`INSERT INTO badvec.t VALUES (3, '[3]')`)
	// VectorDatabaseIT.java:93-96: a table created while streaming.
	e.Exec(`CREATE TABLE pgvector.table_vector_str (pk SERIAL, f_vector pgvector.vector(3), f_halfvec pgvector.halfvec(3), f_sparsevec pgvector.sparsevec(3000), PRIMARY KEY(pk))`)
	for _, r := range runs {
		r.WaitTable(t, "pgvector.table_vector_str")
	}
	e.Exec(`INSERT INTO pgvector.table_vector_str (f_vector, f_halfvec, f_sparsevec) VALUES ('[1,2,3]', '[101,102,103]', '{1: 201, 9: 209}/3000')`)

	connectSchemas := map[string]json.RawMessage{} // table → the value's Connect schema
	for i, name := range pipes {
		for table, rows := range pgvectorWant {
			n := len(rows)
			if table == "table_vector_arrays" {
				n += 2 // the delete and its tombstone
			}
			recs := tyReadExactly(t, e.Kafka, name+".pgvector."+table, n)
			for j, rec := range recs {
				pk := j + 1
				image, want := "after", rows[pk]
				switch {
				case j == len(rows)+1:
					if rec.Value != nil {
						t.Errorf("%s %s: record %d is not the delete's tombstone", name, table, j)
					}
					continue
				case j == len(rows):
					image, want = "before", pgvectorDeleteBefore
				}
				if table == "table_vector_str" {
					if op := recordOp(t, reg, name, rec); op != "c" {
						t.Errorf("%s %s: op %q, want c (the row is written after the table's copy)", name, table, op)
					}
				}
				switch name {
				case "pgvjson":
					checkVectorJSON(t, name+" "+table, rec.Value, image, want)
				case "pgvschemas":
					checkVectorSchemas(t, name+" "+table, rec, image, want)
					var w struct {
						Schema json.RawMessage `json:"schema"`
					}
					_ = json.Unmarshal(rec.Value, &w)
					connectSchemas[table] = w.Schema
				case "pgvavro":
					checkVectorAvro(t, reg, name+" "+table, rec, image, want)
					// The registered schema is what AvroData makes of
					// the Connect schema the JSON record carries.
					text, _ := reg.SchemaByID(int(binary.BigEndian.Uint32(rec.Value[1:5])))
					connect := bytes.ReplaceAll(connectSchemas[table], []byte(`"pgvschemas.`), []byte(`"pgvavro.`))
					checkAvroData(t, name+" "+table+" value schema", connect, text)
				}
			}
		}
		// The bad value parks badvec.t only: its snapshot row is there,
		// nothing after it.
		ph := ittest.WaitPhase(t, runs[i], "badvec.t", func(p offsets.Table) bool { return p.Phase == "errored" })
		if !strings.Contains(ph.LastError, `"v"`) || !strings.Contains(ph.LastError, "(type vector,") ||
			!strings.Contains(ph.LastError, "not a finite decimal number") {
			t.Errorf("%s: badvec.t parked with %q, want the column and the cause", name, ph.LastError)
		}
		if recs := tyReadExactly(t, e.Kafka, name+".badvec.t", 1); len(recs) != 1 {
			t.Errorf("%s: badvec.t has %d records, want its snapshot row only", name, len(recs))
		}
	}
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatalf("clean stop: %v", err)
		}
	}
}

// recordOp is the op of a record in any of the three formats.
func recordOp(t *testing.T, reg *srtest.Registry, pipe string, rec *kgo.Record) string {
	t.Helper()
	if pipe == "pgvavro" {
		_, v := ittest.DecodeAvro(t, reg, rec.Value)
		return fmt.Sprint(v["op"])
	}
	var v struct {
		Op      string `json:"op"`
		Payload struct {
			Op string `json:"op"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(rec.Value, &v); err != nil {
		t.Fatalf("%s: %v", pipe, err)
	}
	return v.Op + v.Payload.Op
}

func decodeNumbers(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := tyUnmarshalNumbers(b, &v); err != nil {
		t.Fatalf("%s: %v in %s", what, err, b)
	}
	return v
}

// checkVectorJSON compares a plain JSON envelope's after image with want,
// number text included ("1.0", not "1").
func checkVectorJSON(t *testing.T, what string, value []byte, image, want string) {
	t.Helper()
	var env map[string]json.RawMessage
	if err := json.Unmarshal(value, &env); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got, w := decodeNumbers(t, what, env[image]), decodeNumbers(t, what, []byte(want)); !reflect.DeepEqual(got, w) {
		t.Errorf("%s: %s\n %s\nwant %s", what, image, env[image], want)
	}
}

// checkVectorSchemas checks a JSON-with-schemas record: JsonConverter
// accepts it, the payload's after is want, and the columns' schemas are
// Debezium's.
func checkVectorSchemas(t *testing.T, what string, rec *kgo.Record, image, want string) {
	t.Helper()
	if err := connecttest.Validate(rec.Value); err != nil {
		t.Errorf("%s: Kafka Connect's JsonConverter would refuse the record: %v", what, err)
	}
	var w struct {
		Schema struct {
			Fields []struct {
				Field  string            `json:"field"`
				Fields []json.RawMessage `json:"fields"`
			} `json:"fields"`
		} `json:"schema"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(rec.Value, &w); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	checkVectorJSON(t, what+" payload", w.Payload, image, want)
	table := what[strings.LastIndexByte(what, ' ')+1:]
	seen := 0
	for _, f := range w.Schema.Fields {
		if f.Field != "after" {
			continue
		}
		for _, col := range f.Fields {
			var name struct {
				Field string `json:"field"`
			}
			_ = json.Unmarshal(col, &name)
			ws, ok := pgvectorFieldSchemas[table+"."+name.Field]
			if !ok {
				ws, ok = pgvectorFieldSchemas[name.Field]
			}
			if ok {
				seen++
				if !reflect.DeepEqual(decodeNumbers(t, what, col), decodeNumbers(t, what, []byte(ws))) {
					t.Errorf("%s: schema of %s\n %s\nwant %s", what, name.Field, col, ws)
				}
			}
		}
	}
	if seen < 3 {
		t.Errorf("%s: %d vector columns in the after schema, want 3 or more", what, seen)
	}
}

// checkVectorAvro decodes an Avro record with the schema the registry
// holds for it, checks that schema is the one AvroData makes of the JSON
// record's Connect schema, and compares the after image with want: Avro
// floats for FloatVector, the map as MapEntry {key, value} records.
func checkVectorAvro(t *testing.T, reg *srtest.Registry, what string, rec *kgo.Record, image, want string) {
	t.Helper()
	_, value := ittest.DecodeAvro(t, reg, rec.Value)
	if op := value["op"]; op != "r" && op != "c" && (op != "d" || image != "before") {
		t.Errorf("%s: op %v", what, op)
	}
	after, _ := value[image].(map[string]any)
	w := decodeNumbers(t, what, []byte(want)).(map[string]any)
	for col, wv := range w {
		if got := avroAsJSONShape(after[col]); !reflect.DeepEqual(got, jsonAsFloats(wv)) {
			t.Errorf("%s: Avro %s = %#v, want %s", what, col, after[col], want)
		}
	}
	id := int(binary.BigEndian.Uint32(rec.Value[1:5]))
	text, _ := reg.SchemaByID(id)
	for col := range pgvectorFieldSchemas {
		if strings.Contains(want, `"`+col+`"`) && !strings.Contains(text, `"name":"`+col+`"`) {
			t.Errorf("%s: the Avro schema has no field %s: %s", what, col, text)
		}
	}
	if !strings.Contains(text, `"name":"MapEntry","namespace":"io.confluent.connect.avro"`) {
		t.Errorf("%s: the Avro schema has no AvroData MapEntry for the INT16-keyed map: %s", what, text)
	}
}

// avroAsJSONShape turns a decoded Avro value into the shape of the JSON
// one: MapEntry records into [key, value] pairs, numbers into float64
// (float32 exactly widened), ints into float64.
func avroAsJSONShape(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = avroAsJSONShape(x[i])
		}
		return out
	case map[string]any:
		if k, ok := x["key"]; ok && len(x) == 2 {
			return []any{avroAsJSONShape(k), avroAsJSONShape(x["value"])}
		}
		out := map[string]any{}
		for k, e := range x {
			out[k] = avroAsJSONShape(e)
		}
		return out
	case float32:
		return float64(x)
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	}
	return v
}

// jsonAsFloats turns json.Numbers into float64 (a FloatVector element's
// text such as "1.5" into the float32 value widened: every expected halfvec
// element here is exact in float32).
func jsonAsFloats(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = jsonAsFloats(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = jsonAsFloats(e)
		}
		return out
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			panic(fmt.Sprint(x, err))
		}
		return f
	}
	return v
}
