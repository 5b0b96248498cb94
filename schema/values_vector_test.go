package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/internal/avrodata"
)

// Expectations come from Debezium 3.6.1 (v3.6.1.Final): VectorDatabaseIT.java
// (debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql)
// and Vectors.java, SchemaFactory.java (debezium-connector-common).

func TestParseVectorAsVectorsFromVectorString(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits int
		want []float64
		err  error
	}{
		{"[1,2,3]", 64, []float64{1, 2, 3}, nil},                          // VectorDatabaseIT.java:42, :69
		{"[10,20,30]", 64, []float64{10, 20, 30}, nil},                    // :59, :78
		{"[101,102,103]", 32, []float64{101, 102, 103}, nil},              // :42, :70 (List.of(101.0f, ...))
		{" [ 1.5 , -2e-3 ,+4E2 ] ", 64, []float64{1.5, -0.002, 400}, nil}, // Vectors.java:27, :37: trimmed
		{"[0.1]", 64, []float64{0.1}, nil},                                // Double.parseDouble("0.1"), not float32(0.1)
		{"[0.1]", 32, []float64{float64(float32(0.1))}, nil},              // Float.parseFloat
		{"[]", 64, nil, errVectorElement},                                 // Double.parseDouble("") throws
		{"[1,,2]", 64, nil, errVectorElement},
		{"1,2", 64, nil, errVectorSyntax}, // Vectors.java:28-31: Debezium writes null
		{"[1,2", 64, nil, errVectorSyntax},
		{"[NaN]", 64, nil, errVectorElement}, // Java reads it; pgvector never prints it
		{"[Infinity]", 64, nil, errVectorElement},
		{"[inf]", 64, nil, errVectorElement},
		{"[0x1p3]", 64, nil, errVectorElement},
		{"[1d]", 64, nil, errVectorElement},
		{"[1e400]", 64, nil, errVectorElement},
		{"[1e39]", 32, nil, errHalfvecRange}, // Float.parseFloat gives Infinity
		{"[1e308]", 64, []float64{1e308}, nil},
	} {
		got, err := parseVector([]byte(c.in), c.bits, nil)
		if !errors.Is(err, c.err) || c.err == nil && !slices.Equal(got, c.want) {
			t.Errorf("parseVector(%q, %d) = %v, %v; want %v, %v", c.in, c.bits, got, err, c.want, c.err)
		}
	}
}

func TestParseSparseVectorAsVectorsFromSparseVectorString(t *testing.T) {
	type e = sparseEntry
	for _, c := range []struct {
		in   string
		dims int16
		want []sparseEntry
		err  error
	}{
		{"{1:201,9:209}/3000", 3000, []e{{1, 201}, {9, 209}}, nil},    // VectorDatabaseIT.java:42, :71-72
		{"{1: 301, 9: 309}/3000", 3000, []e{{1, 301}, {9, 309}}, nil}, // :59, :80-81
		{"{}/5", 5, nil, nil},      // Vectors.java:61-66: an empty map (DBZ#1671)
		{" { } / 5 ", 5, nil, nil}, // trimmed
		{"{1:0.5}/32767", 32767, []e{{1, 0.5}}, nil},
		{"{1:1}/32768", 0, nil, errSparseInt16}, // Short.parseShort throws: Debezium stops
		{"{40000:1}/100000", 0, nil, errSparseInt16},
		{"{1:1}", 0, nil, errSparseSyntax},     // Vectors.java:46-50
		{"{1:1}/3/4", 0, nil, errSparseSyntax}, // two '/'
		{"1:1/3", 0, nil, errSparseSyntax},     // Vectors.java:55-58
		{"{1:1:2}/3", 0, nil, errSparseSyntax}, // Vectors.java:71-74
		{"{1}/3", 0, nil, errSparseSyntax},
		{"{2:1,1:2}/3", 0, nil, errSparseSyntax}, // pgvector prints indices ascending
		{"{1:1,1:2}/3", 0, nil, errSparseSyntax},
		{"{0:1}/3", 0, nil, errSparseSyntax}, // 1-based
		{"{4:1}/3", 0, nil, errSparseSyntax}, // beyond the dimensions
		{"{1:NaN}/3", 0, nil, errVectorElement},
		{"{1:1}/x", 0, nil, errSparseSyntax},
		{"", 0, nil, errSparseAbsent}, // a key-only old image's absent column (absent.go)
	} {
		dims, got, err := parseSparseVector([]byte(c.in), nil)
		if !errors.Is(err, c.err) || c.err == nil && (dims != c.dims || !slices.Equal(got, c.want)) {
			t.Errorf("parseSparseVector(%q) = %d, %v, %v; want %d, %v, %v", c.in, dims, got, err, c.dims, c.want, c.err)
		}
	}
}

// The orders below are worked out by hand from java.util.HashMap (JDK 17+):
// new HashMap<>(n) has capacity tableSizeFor(n); Short's hash is its
// value; a put past 3/4 of the capacity doubles it; a ninth entry in one
// bucket of a table under 64 doubles it (treeifyBin); iteration goes
// bucket by bucket, each in insertion order.
func TestJavaShortHashMapOrder(t *testing.T) {
	for _, c := range []struct{ in, want []int16 }{
		{[]int16{1, 9}, []int16{1, 9}},               // capacity 2 → 4: both in bucket 1
		{[]int16{5, 16}, []int16{16, 5}},             // capacity 4: 16→0, 5→1
		{[]int16{1, 2, 3, 17}, []int16{1, 17, 2, 3}}, // capacity 4 → 8: 17→1
		{[]int16{1, 2, 3}, []int16{1, 2, 3}},         // capacity 4, 3 ≤ 3: no resize
		// Nine keys in bucket 0 of 16: treeifyBin resizes to 32.
		{[]int16{16, 32, 48, 64, 80, 96, 112, 128, 144}, []int16{32, 64, 96, 128, 16, 48, 80, 112, 144}},
		// Eight in one bucket: no resize, capacity 8 (tableSizeFor(8)) → 16 at the seventh.
		{[]int16{16, 32, 48, 64, 80, 96, 112, 128}, []int16{16, 32, 48, 64, 80, 96, 112, 128}},
		{[]int16{7}, []int16{7}},
	} {
		entries := make([]sparseEntry, len(c.in))
		for i, k := range c.in {
			entries[i] = sparseEntry{k, float64(i)}
		}
		javaShortHashMapOrder(entries)
		got := make([]int16, len(entries))
		for i, p := range entries {
			got[i] = p.Index
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("order of %v = %v, want %v", c.in, got, c.want)
		}
	}
}

// vectorRow is a relation with the three types, nullable and NOT NULL, and
// an array of vectors.
func vectorRel() *Relation {
	vec := func(name string) *TypeInfo { return &TypeInfo{OID: 90001, Name: name, Kind: 'b', Mod: -1} }
	return &Relation{OID: 1, Schema: "public", Table: "v", Columns: []Column{
		{Name: "pk", TypeOID: oidInt4, TypeMod: -1, Key: true, NotNull: true},
		{Name: "f_vector", TypeOID: 90001, TypeMod: 3, Type: vec("vector")},
		{Name: "f_halfvec", TypeOID: 90002, TypeMod: 3, Type: vec("halfvec")},
		{Name: "f_sparsevec", TypeOID: 90003, TypeMod: 3000, Type: vec("sparsevec")},
		{Name: "f_sparse_nn", TypeOID: 90003, TypeMod: -1, Type: vec("sparsevec"), NotNull: true},
		{Name: "f_vectors", TypeOID: 90004, TypeMod: -1, Type: &TypeInfo{OID: 90004, Name: "_vector", Kind: 'b', Mod: -1, Elem: vec("vector")}},
	}}
}

// TestVectorSchemasAreDebeziums: the Connect schemas of SchemaFactory.java:385-405,
// as JsonConverter writes them.
func TestVectorSchemasAreDebeziums(t *testing.T) {
	rel := vectorRel()
	want := map[string]string{
		"f_vector":    `{"type":"array","items":{"type":"double","optional":false},"optional":true,"name":"io.debezium.data.DoubleVector","version":1,"field":"f_vector"}`,
		"f_halfvec":   `{"type":"array","items":{"type":"float","optional":false},"optional":true,"name":"io.debezium.data.FloatVector","version":1,"field":"f_halfvec"}`,
		"f_sparsevec": `{"type":"struct","fields":[{"type":"int16","optional":false,"field":"dimensions"},{"type":"map","keys":{"type":"int16","optional":false},"values":{"type":"double","optional":false},"optional":false,"field":"vector"}],"optional":true,"name":"io.debezium.data.SparseDoubleVector","version":1,"doc":"Sparse double vector","field":"f_sparsevec"}`,
		"f_sparse_nn": `{"type":"struct","fields":[{"type":"int16","optional":false,"field":"dimensions"},{"type":"map","keys":{"type":"int16","optional":false},"values":{"type":"double","optional":false},"optional":false,"field":"vector"}],"optional":false,"name":"io.debezium.data.SparseDoubleVector","version":1,"doc":"Sparse double vector","field":"f_sparse_nn"}`,
		// PostgresValueConverter.java:357-360: items are the builder's schema, required.
		"f_vectors": `{"type":"array","items":{"type":"array","items":{"type":"double","optional":false},"optional":false,"name":"io.debezium.data.DoubleVector","version":1},"optional":true,"field":"f_vectors"}`,
	}
	cfg := &Config{}
	for _, c := range rel.Columns[1:] {
		got := string(appendConnectJSON(nil, mapColumn(cfg, c).schema, c.Name))
		if got != want[c.Name] {
			t.Errorf("%s:\n got %s\nwant %s", c.Name, got, want[c.Name])
		}
	}
}

// TestVectorAvroSchemasFollowAvroData: the Avro schema of a row with every
// vector type, a sparsevec twice (MapEntry defined once, then referred to),
// is what AvroData derives from the Connect schema.
func TestVectorAvroSchemasFollowAvroData(t *testing.T) {
	rel := vectorRel()
	cfg := &Config{}
	var fields []Field
	for _, c := range rel.Columns {
		fields = append(fields, Field{c.Name, mapColumn(cfg, c).schema})
	}
	s := &Schema{Type: TypeStruct, Name: "srv.public.v.Value", Optional: true, Fields: fields}
	connect := appendConnectJSON(nil, s, "")
	want, err := avrodata.FromConnectJSON(connect)
	if err != nil {
		t.Fatalf("%v\n%s", err, connect)
	}
	got := renderAvro(s)
	if !reflect.DeepEqual(avroTokens(t, want), avroTokens(t, got)) {
		t.Errorf("mooncdc's Avro schema is not AvroData's:\nAvroData: %s\nmooncdc:  %s", want, got)
	}
	if err := checkAvro("v", got); err != nil {
		t.Fatal(err)
	}
}

// TestVectorValuesAsJSONConverterWrites: VectorDatabaseIT.java:69-72's values
// as JsonConverter writes them: doubles as Double.toString, the INT16-keyed
// map as [key, value] pairs (JsonConverter.convertToJson for a map whose
// keys are not strings).
func TestVectorValuesAsJSONConverterWrites(t *testing.T) {
	e := NewJSONEncoder(Config{Name: "srv"})
	cfg := &Config{}
	rel := vectorRel()
	for _, c := range []struct {
		col, in, want string
		err           error
	}{
		{"f_vector", "[1,2,3]", `[1.0,2.0,3.0]`, nil},
		{"f_vector", "[0.1,-1e-05,12345678]", `[0.1,-1.0E-5,1.2345678E7]`, nil},
		{"f_halfvec", "[101,102,103]", `[101.0,102.0,103.0]`, nil},
		{"f_halfvec", "[0.099975586,-65504,6e-05]", `[0.099975586,-65504.0,6.0E-5]`, nil},
		{"f_sparsevec", "{1:201,9:209}/3000", `{"dimensions":3000,"vector":[[1,201.0],[9,209.0]]}`, nil},
		{"f_sparsevec", "{5:1,16:2}/20", `{"dimensions":20,"vector":[[16,2.0],[5,1.0]]}`, nil},
		{"f_sparsevec", "{}/5", `{"dimensions":5,"vector":[]}`, nil},
		{"f_vectors", `{"[1,2]","[3,4]"}`, `[[1.0,2.0],[3.0,4.0]]`, nil},
		{"f_vectors", `{}`, `[]`, nil},
		{"f_vectors", `{"[1,2]",NULL}`, ``, errNullVectorElement},
		{"f_vector", "[1,NaN]", ``, errVectorElement},
		{"f_sparsevec", "{1:1}/40000", ``, errSparseInt16},
	} {
		i := slices.IndexFunc(rel.Columns, func(x Column) bool { return x.Name == c.col })
		got, err := e.appendColumn(nil, mapColumn(cfg, rel.Columns[i]), Value{Kind: ValueText, Data: []byte(c.in)})
		if !errors.Is(err, c.err) || c.err == nil && string(got) != c.want {
			t.Errorf("%s %q = %s, %v; want %s, %v", c.col, c.in, got, err, c.want, c.err)
		}
		if c.err == nil && !json.Valid(got) {
			t.Errorf("%s %q: not JSON: %s", c.col, c.in, got)
		}
	}
}

// TestKeyOnlyDeleteOfANotNullVector: a NOT NULL vector or halfvec absent
// from a key-only old image is Debezium's fallback, the empty list
// (PostgresValueConverter.java:682, :696); a NOT NULL sparsevec has none
// that fits its struct (:710), so it is an error that says to set
// REPLICA IDENTITY FULL.
func TestKeyOnlyDeleteOfANotNullVector(t *testing.T) {
	vec := func(name string) *TypeInfo { return &TypeInfo{OID: 90001, Name: name, Kind: 'b', Mod: -1} }
	for _, c := range []struct {
		name, want string
		err        error
	}{{"vector", `[]`, nil}, {"halfvec", `[]`, nil}, {"sparsevec", ``, errSparseAbsent}} {
		rel := &Relation{OID: 8, Schema: "public", Table: "v", ReplicaIdentity: 'd', Columns: []Column{
			{Name: "pk", TypeOID: oidInt4, TypeMod: -1, Key: true, NotNull: true},
			{Name: "v", TypeOID: 90001, TypeMod: -1, Type: vec(c.name), NotNull: true},
		}, KeyIndexes: []int{0}}
		ch := &Change{Op: OpDelete, Relation: rel, Before: Tuple{text("1"), null}, Tx: testTx, LSN: 1}
		out, err := NewJSONEncoder(Config{Name: "srv"}).AppendValue(nil, NewPlan(Config{Name: "srv"}, ch.Relation), ch, testNow)
		if !errors.Is(err, c.err) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.err)
		}
		if c.err == nil && !strings.Contains(string(out), `"before":{"pk":1,"v":`+c.want+`}`) {
			t.Errorf("%s: %s, want before.v %s", c.name, out, c.want)
		}
	}
}
