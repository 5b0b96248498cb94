package schema

import (
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"
)

// Debezium's expectations below are from debezium-connector-postgres,
// v3.6.1.Final; the Postgres text is what Postgres prints for the
// statements those tests run.

func TestAppendJavaDoubleLikeDoubleToString(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1, "1.0"},
		{-1, "-1.0"},
		{10, "10.0"},
		{100, "100.0"},
		{0.1, "0.1"},
		{0.001, "0.001"},       // the smallest plain value
		{0.0009, "9.0E-4"},     // below 10^-3: scientific
		{1e-4, "1.0E-4"},       //
		{9999999, "9999999.0"}, // the largest plain range
		{1e7, "1.0E7"},         // 10^7: scientific
		{1234567.5, "1234567.5"},
		{12345678.9, "1.23456789E7"},
		{3.141592653589793, "3.141592653589793"},
		{1e23, "1.0E23"},
		{2.5e-5, "2.5E-5"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{5e-324, "4.9E-324"}, // Java takes the closer 2-digit decimal
		{1e-323, "9.9E-324"},
		{math.SmallestNonzeroFloat64 * 3, "1.5E-323"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
	}
	for _, tc := range tests {
		if got := string(appendJavaDouble([]byte("x"), tc.f)); got != "x"+tc.want {
			t.Errorf("appendJavaDouble(%v) = %q, want %q", tc.f, got[1:], tc.want)
		}
	}
}

func TestAppendJavaGeometricLikePgjdbcGetValue(t *testing.T) {
	tests := []struct {
		oid      uint32
		pg, want string
	}{
		// AbstractRecordsProducerTest.java:1007-1013 (the values of
		// RecordsStreamProducerIT.java:3237-3244 / RecordsSnapshotProducerIT's
		// alias table, inserted as '(0,0),(1,1)', '10,4,10', '(0,0),(0,1)',
		// '((0,0),(0,1))', '((0,0),(0,1),(0,2))', '((0,0),(0,1),(1,0),(0,0))').
		{oidBox, "(1,1),(0,0)", "(1.0,1.0),(0.0,0.0)"},
		{oidCircle, "<(10,4),10>", "<(10.0,4.0),10.0>"},
		{oidLine, "{-1,0,0}", "{-1.0,0.0,0.0}"},
		{oidLseg, "[(0,0),(0,1)]", "[(0.0,0.0),(0.0,1.0)]"},
		{oidPath, "((0,0),(0,1),(0,2))", "((0.0,0.0),(0.0,1.0),(0.0,2.0))"},
		{oidPolygon, "((0,0),(0,1),(1,0),(0,0))", "((0.0,0.0),(0.0,1.0),(1.0,0.0),(0.0,0.0))"},
		// AbstractRecordsProducerTest.java:128 and :463: '((10, 20),10)'::circle.
		{oidCircle, "<(10,20),10>", "<(10.0,20.0),10.0>"},
		// An open path keeps its brackets (PGpath.getValue).
		{oidPath, "[(0,0),(1.5,-2.25)]", "[(0.0,0.0),(1.5,-2.25)]"},
		{oidPath, "((1,2))", "((1.0,2.0))"},
		{oidPolygon, "((1e+100,-1e-05),(NaN,Infinity))", "((1.0E100,-1.0E-5),(NaN,Infinity))"},
		{oidLine, "{1,-1,0}", "{1.0,-1.0,0.0}"},
		{oidBox, "(12345678,0.0001),(-0,-Infinity)", "(1.2345678E7,1.0E-4),(-0.0,-Infinity)"},
	}
	for _, tc := range tests {
		got, err := appendJavaGeometric([]byte("x"), tc.oid, []byte(tc.pg))
		if err != nil || string(got) != "x"+tc.want {
			t.Errorf("%s %q = %q, %v; want %q", TypeName(tc.oid), tc.pg, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		oid uint32
		pg  string
	}{
		{oidBox, ""}, {oidBox, "(1,1)"}, {oidBox, "(1,1),(0,0),"}, {oidBox, "((1,1),(0,0))"}, {oidBox, "(1,1), (0,0)"},
		{oidCircle, "<(1,1)>"}, {oidCircle, "((1,1),2)"}, {oidCircle, "<(1,1),2,3>"},
		{oidLine, "{1,2}"}, {oidLine, "{1,2,3"}, {oidLine, "{a,b,c}"},
		{oidLseg, "[(0,0)]"}, {oidLseg, "((0,0),(1,1))"},
		{oidPath, "()"}, {oidPath, "[]"}, {oidPath, "[(0,0),(1,1))"}, {oidPath, "((0,0),)"},
		{oidPolygon, "(0,0)"}, {oidPolygon, "((0,0)"}, {oidPolygon, "((0,0)),"},
		{oidBox, "(1 ,1),(0,0)"}, {oidBox, "(0x1,1),(0,0)"}, {oidBox, "(+1,1),(0,0)"},
	} {
		got, err := appendJavaGeometric([]byte("x"), tc.oid, []byte(tc.pg))
		if !errors.Is(err, errSyntax) || string(got) != "x" {
			t.Errorf("%s %q = %q, %v; want errSyntax and dst unchanged", TypeName(tc.oid), tc.pg, got, err)
		}
	}
	if _, err := appendJavaGeometric(nil, oidLine, []byte("{1e999,0,0}")); !errors.Is(err, errRange) {
		t.Errorf("1e999: %v, want errRange", err)
	}
}

// TestGeometricTypesLeftOutUnlessIncludeUnknownDatatypes: box, circle,
// line, lseg, path, polygon and their arrays are left out of the records
// (schema and value, key and value) by default, as Debezium 3.6.1 leaves
// out a column it has no schema for; with include_unknown_datatypes they
// are binary.handling.mode's optional schema holding pgjdbc's text:
// RecordsSnapshotProducerIT.java:1218-1290 (circle_table,
// postgres_create_tables.ddl:57) expects OPTIONAL_BYTES_SCHEMA
// "<(10.0,20.0),10.0>", base64 "PCgxMC4wLDIwLjApLDEwLjA+", base64-url-safe
// "PCgxMC4wLDIwLjApLDEwLjA-", hex "3c2831302e302c32302e30292c31302e303e"
// (AbstractRecordsProducerTest.java:462-476).
func TestGeometricTypesLeftOutUnlessIncludeUnknownDatatypes(t *testing.T) {
	cols := []Column{{Name: "pk", TypeOID: oidInt4, TypeMod: -1, Key: true, NotNull: true}}
	vals := Tuple{text("1")}
	pg := map[string]string{"cbox": "(1,1),(0,0)", "ccircle": "<(10,20),10>", "cline": "{-1,0,0}",
		"clseg": "[(0,0),(0,1)]", "cpath": "((0,0),(0,1),(0,2))", "cpolygon": "((0,0),(0,1),(1,0),(0,0))"}
	java := map[string]string{"cbox": "(1.0,1.0),(0.0,0.0)", "ccircle": "<(10.0,20.0),10.0>", "cline": "{-1.0,0.0,0.0}",
		"clseg": "[(0.0,0.0),(0.0,1.0)]", "cpath": "((0.0,0.0),(0.0,1.0),(0.0,2.0))",
		"cpolygon": "((0.0,0.0),(0.0,1.0),(1.0,0.0),(0.0,0.0))"}
	for _, c := range []struct {
		name string
		oid  uint32
	}{{"cbox", oidBox}, {"ccircle", oidCircle}, {"cline", oidLine}, {"clseg", oidLseg}, {"cpath", oidPath}, {"cpolygon", oidPolygon}} {
		cols = append(cols, Column{Name: c.name, TypeOID: c.oid, TypeMod: -1})
		vals = append(vals, text(pg[c.name]))
	}
	cols = append(cols, Column{Name: "abox", TypeOID: 1020, TypeMod: -1}, Column{Name: "acircle", TypeOID: 719, TypeMod: -1},
		Column{Name: "t", TypeOID: oidText, TypeMod: -1})
	vals = append(vals, text(`{(1,1),(0,0);(2,2),(1,1)}`), text(`{"<(1,1),2>"}`), text("kept"))
	rel := &Relation{Schema: "public", Table: "geo", Columns: cols, KeyIndexes: []int{0}}

	r := encodeRow(t, testJSONConfig, rel, vals)
	for _, m := range []map[string]any{r.plain, r.payload, r.avro} {
		if len(m) != 2 || m["t"] != "kept" || m["pk"] == nil {
			t.Errorf("default: after = %v, want only pk and t", m)
		}
	}
	for _, name := range []string{"cbox", "ccircle", "cline", "clseg", "cpath", "cpolygon", "abox", "acircle"} {
		if r.afterField(name) != nil || strings.Contains(r.avsc, `"`+name+`"`) {
			t.Errorf("default: %s is in the schema", name)
		}
	}

	for _, mode := range []struct {
		binary, typ string
		enc         func([]byte) string
		circle      string // Debezium's expected ccircle, as JSON carries it
	}{
		// JSON writes BYTES as base64 of "<(10.0,20.0),10.0>".
		{"bytes", "bytes", base64.StdEncoding.EncodeToString, "PCgxMC4wLDIwLjApLDEwLjA+"},
		{"base64", "string", base64.StdEncoding.EncodeToString, "PCgxMC4wLDIwLjApLDEwLjA+"},
		{"base64-url-safe", "string", base64.URLEncoding.EncodeToString, "PCgxMC4wLDIwLjApLDEwLjA-"},
		{"hex", "string", hexString, "3c2831302e302c32302e30292c31302e303e"},
	} {
		cfg := testJSONConfig
		cfg.IncludeUnknownDatatypes, cfg.BinaryMode = true, mode.binary
		r := encodeRow(t, cfg, rel, vals)
		for name, want := range java {
			w := mode.enc([]byte(want))
			if r.plain[name] != w || r.payload[name] != w {
				t.Errorf("%s: %s = %v / %v, want %q (%q)", mode.binary, name, r.plain[name], r.payload[name], w, want)
			}
			f := r.afterField(name)
			if f["type"] != mode.typ || f["optional"] != true || f["name"] != nil {
				t.Errorf("%s: %s schema %v, want optional %s", mode.binary, name, f, mode.typ)
			}
			av := unwrapAvro(r.avro[name])
			if b, ok := av.([]byte); ok {
				av = base64.StdEncoding.EncodeToString(b)
			}
			if av != w {
				t.Errorf("%s: Avro %s = %#v, want %q", mode.binary, name, r.avro[name], w)
			}
		}
		if r.plain["ccircle"] != mode.circle {
			t.Errorf("%s: ccircle = %v, want Debezium's %q", mode.binary, r.plain["ccircle"], mode.circle)
		}
		if _, ok := r.plain["abox"]; ok {
			t.Errorf("%s: box[] is in the record", mode.binary)
		}
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(digits[c>>4])
		sb.WriteByte(digits[c&15])
	}
	return sb.String()
}
