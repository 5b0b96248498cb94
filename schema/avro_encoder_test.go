package schema

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// avroDecode decodes a Confluent-framed payload written by e with the
// schema e reports, checking the header.
func avroDecode(t *testing.T, schemaText string, wantID int, b []byte) map[string]any {
	t.Helper()
	if len(b) < 5 || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != wantID {
		t.Fatalf("header % x, want magic 0 and id %d", b[:min(5, len(b))], wantID)
	}
	s, err := avro.ParseWithCache(schemaText, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatalf("schema does not parse: %v\n%s", err, schemaText)
	}
	var v map[string]any
	if err := avro.Unmarshal(s, b[5:], &v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

// testIDs are the ids registered has the registry give a relation's key
// and value schemas; the caller keeps them (AvroIDs).
var testIDs = AvroIDs{Key: 7, Value: 8}

func registered(t *testing.T, e *AvroEncoder, rel *Relation) (key, value string) {
	t.Helper()
	ids := NoAvroIDs
	err := e.Register(e.Plan(rel), &ids, true, true, func(isKey bool, s string) (int, error) {
		if isKey {
			key = s
			return 7, nil
		}
		value = s
		return 8, nil
	})
	if err != nil || ids.Value != testIDs.Value || key != "" && ids.Key != testIDs.Key {
		t.Fatal(ids, err)
	}
	return key, value
}

// TestAvroRoundTripDecodesWithHamba: an update with both images decodes
// with the encoder's own schema to the values it was given, and the
// union branches, logical types and source block are where Debezium's
// AvroConverter puts them.
func TestAvroRoundTripDecodesWithHamba(t *testing.T) {
	e := NewAvroEncoder(testJSONConfig)
	keySchema, valueSchema := registered(t, e, customersFull)
	ch := &Change{Op: OpUpdate, Relation: customersFull, Before: rowAlice, After: rowAnne, Tx: testTx, LSN: 24023100, Seq: 2, TableSeq: 1, TxOrder: 3, TxTableOrder: 2}
	kb, ok, err := e.AppendKey(nil, e.Plan(ch.Relation), testIDs, ch)
	if err != nil || !ok {
		t.Fatalf("key: %v %v", ok, err)
	}
	if k := avroDecode(t, keySchema, 7, kb); k["id"] != int64(1) {
		t.Errorf("key = %v", k)
	}
	vb, err := e.AppendValue(nil, e.Plan(ch.Relation), testIDs, ch, testNow)
	if err != nil {
		t.Fatal(err)
	}
	v := avroDecode(t, valueSchema, 8, vb)
	unwrap := func(x any) map[string]any {
		m, _ := x.(map[string]any)
		if len(m) == 1 {
			for _, in := range m {
				if im, ok := in.(map[string]any); ok {
					return im
				}
			}
		}
		return m
	}
	before, after := unwrap(v["before"]), unwrap(v["after"])
	// hamba gives the value of a ["null", T] union as is.
	if after["name"] != "Anne Marie" {
		t.Errorf("after.name = %#v", after["name"])
	}
	// balance numeric(10,2) 12.50: the decimal logical type reads back as
	// the exact value.
	if r, ok := before["balance"].(*big.Rat); !ok || r.Cmp(big.NewRat(25, 2)) != 0 {
		t.Errorf("before.balance = %#v", before["balance"])
	}
	// The unchanged TOASTed doc of the after image is the old value: it did
	// not change, and REPLICA IDENTITY FULL sent it.
	if after["doc"] != `{"tier": "gold"}` {
		t.Errorf("after.doc = %#v", after["doc"])
	}
	src := v["source"].(map[string]any)
	if src["snapshot"] != "false" || src["sequence"] != `["24022000","24023100"]` || src["lsn"] != int64(24023100) || src["txId"] != int64(556) {
		t.Errorf("source = %v", src)
	}
	// source.ts_* are the commit time (AbstractSourceInfoStructMaker.java:48-51),
	// the envelope's the processing time (Envelope.java:313-317).
	if src["ts_ms"] != int64(1704164645678) || src["ts_us"] != int64(1704164645678900) || src["ts_ns"] != int64(1704164645678900000) {
		t.Errorf("source ts = %v %v %v", src["ts_ms"], src["ts_us"], src["ts_ns"])
	}
	if src["origin"] != nil || src["origin_lsn"] != nil {
		t.Errorf("source origin = %v %v", src["origin"], src["origin_lsn"])
	}
	if v["op"] != "u" || v["ts_ms"] != int64(1704164646000) || v["ts_us"] != int64(1704164646000123) || v["ts_ns"] != int64(1704164646000123456) {
		t.Errorf("op, ts = %v %v %v %v", v["op"], v["ts_ms"], v["ts_us"], v["ts_ns"])
	}
	tx, _ := json.Marshal(v["transaction"])
	if string(tx) != `{"event.block":{"data_collection_order":2,"id":"556:24023100","total_order":3}}` {
		t.Errorf("transaction = %s", tx)
	}
}

// TestMarkSnapshotEqualsEncodingWithTheMarker: a held-back snapshot row
// re-marked from one source.snapshot marker to another is byte for byte
// the record encoded with the new marker, in both formats, whatever the
// lengths of the two markers, and a row whose text holds the marker's
// letters is not touched.
func TestMarkSnapshotEqualsEncodingWithTheMarker(t *testing.T) {
	avroEnc := NewAvroEncoder(testJSONConfig)
	registered(t, avroEnc, customers)
	type marker interface {
		MarkSnapshot(value []byte, from, to string) ([]byte, bool)
	}
	type encoder struct {
		marker
		appendValue func(*Change) ([]byte, error)
	}
	p := NewPlan(testJSONConfig, customers)
	jsonEnc, schemasEnc := NewJSONEncoder(testJSONConfig), NewJSONSchemaEncoder(testJSONConfig)
	encs := map[string]encoder{
		"avro":         {avroEnc, func(ch *Change) ([]byte, error) { return avroEnc.AppendValue(nil, p, testIDs, ch, testNow) }},
		"json":         {jsonEnc, func(ch *Change) ([]byte, error) { return jsonEnc.AppendValue(nil, p, ch, testNow) }},
		"json_schemas": {schemasEnc, func(ch *Change) ([]byte, error) { return schemasEnc.AppendValue(nil, p, ch, testNow) }},
	}
	r := row(text("1"), text("true"), text("1.00"), null, text("t"), text(`"first"`))
	read := func(marker string) *Change {
		return &Change{Op: OpRead, Relation: customers, After: r, LSN: 1, Snapshot: marker}
	}
	for name, e := range encs {
		for _, from := range []string{SnapshotTrue, SnapshotFirst, SnapshotFirstInDataCollection} {
			for _, to := range []string{SnapshotLast, SnapshotLastInDataCollection, SnapshotFirst} {
				vb, err := e.appendValue(read(from))
				if err != nil {
					t.Fatal(err)
				}
				got, ok := e.MarkSnapshot(vb, from, to)
				if !ok {
					t.Fatalf("%s: MarkSnapshot(%s→%s) found no snapshot field", name, from, to)
				}
				want, _ := e.appendValue(read(to))
				if !bytes.Equal(got, want) {
					t.Errorf("%s: %s→%s\n got  %q\n want %q", name, from, to, got, want)
				}
			}
		}
		vb, _ := e.appendValue(read(SnapshotTrue))
		if _, ok := e.MarkSnapshot(vb, SnapshotFirst, SnapshotLast); ok {
			t.Errorf("%s: MarkSnapshot found a marker the record does not have", name)
		}
	}
}

// TestAvroNamesAreAdjusted: names Avro does not allow become valid ones,
// as Debezium's avro schema name adjustment does.
func TestAvroNamesAreAdjusted(t *testing.T) {
	for in, want := range map[string]string{
		"srv.public.orders.Value":      "srv.public.orders.Value",
		"srv.Sales \"EU\".order lines": "srv.Sales__EU_.order_lines",
		"1srv.2x.y-z":                  "_srv._x.y_z",
		"":                             "_",
	} {
		if got := AvroName(in); got != want {
			t.Errorf("AvroName(%q) = %q, want %q", in, got, want)
		}
	}
	e := NewAvroEncoder(testJSONConfig)
	_, value := registered(t, e, composite)
	if _, err := avro.ParseWithCache(value, "", &avro.SchemaCache{}); err != nil {
		t.Fatalf("adjusted schema does not parse: %v", err)
	}
}

// TestAvroSchemaCollisionIsATableError: two columns whose names adjust to
// the same field make an invalid schema; Register says so, naming the
// table, before anything reaches the registry.
func TestAvroSchemaCollisionIsATableError(t *testing.T) {
	rel := &Relation{Schema: "public", Table: "t", Columns: []Column{
		{Name: "a b", TypeOID: oidText, TypeMod: -1}, {Name: "a-b", TypeOID: oidText, TypeMod: -1},
	}}
	e := NewAvroEncoder(testJSONConfig)
	called := false
	ids := NoAvroIDs
	err := e.Register(e.Plan(rel), &ids, true, true, func(bool, string) (int, error) { called = true; return 1, nil })
	if err == nil || called || !bytes.Contains([]byte(err.Error()), []byte("public.t")) {
		t.Fatalf("err = %v, registry called = %v", err, called)
	}
}

// TestAvroEncodeZeroAllocs: like the JSON encoder, a typical row costs no
// allocation once its plan is made.
func TestAvroEncodeZeroAllocs(t *testing.T) {
	e := NewAvroEncoder(testJSONConfig)
	registered(t, e, customers)
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000}
	p := e.Plan(customers)
	kb, vb := make([]byte, 0, 256), make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		kb, _, _ = e.AppendKey(kb[:0], p, testIDs, ch)
		vb, _ = e.AppendValue(vb[:0], p, testIDs, ch, testNow)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per record, want 0", allocs)
	}
}

// TestUnregisteredSchemaIsAnError: encoding before Register is an error,
// never a record with a wrong id.
func TestUnregisteredSchemaIsAnError(t *testing.T) {
	e := NewAvroEncoder(testJSONConfig)
	if _, err := e.AppendValue(nil, e.Plan(customers), NoAvroIDs, &Change{Op: OpCreate, Relation: customers, After: rowAlice}, time.UnixMilli(1)); err == nil {
		t.Fatal("no error")
	}
}

// TestUnknownTypeIsTextWithAWarning: a type without a mapping is sent as
// its text, and the hook hears of the column once per relation.
func TestUnknownTypeIsTextWithAWarning(t *testing.T) {
	var warned []string
	cfg := testJSONConfig
	cfg.OnUnknownType = func(table, column, typ string) { warned = append(warned, table+"."+column+":"+typ) }
	rel := &Relation{Schema: "public", Table: "shapes", Columns: []Column{
		{Name: "g", TypeOID: 91000, TypeMod: -1, Type: &TypeInfo{OID: 91000, Name: "cube", Kind: 'b', Mod: -1}},
		// An array of a type without a mapping: each element's text, split
		// by the element type's typdelim (here ':'), and the warning too.
		{Name: "ga", TypeOID: 91001, TypeMod: -1, Type: &TypeInfo{OID: 91001, Name: "_shape", Kind: 'b', Mod: -1,
			Elem: &TypeInfo{OID: 91002, Name: "shape", Kind: 'b', Mod: -1, Delim: ':'}}},
	}}
	e := NewJSONEncoder(cfg)
	p := e.Plan(rel) // once per relation
	for range 3 {
		out, err := e.AppendValue(nil, p, &Change{Op: OpCreate, Relation: rel, After: Tuple{text("(1, 2)"), text(`{a,b:"c:d":NULL}`)}}, time.UnixMilli(1))
		if err != nil || !bytes.Contains(out, []byte(`"after":{"g":"(1, 2)","ga":["a,b","c:d",null]}`)) {
			t.Fatalf("%s %v", out, err)
		}
	}
	if len(warned) != 2 || warned[0] != "public.shapes.g:cube" || warned[1] != "public.shapes.ga:_shape" {
		t.Errorf("warnings = %q", warned)
	}
}
