package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/internal/connecttest"
)

// Debezium's sources cited below are debezium-connect-plugins/src/main/java/io/debezium/transforms/
// at v3.6.1.Final: ENRS ExtractNewRecordState.java, AENRS
// AbstractExtractNewRecordState.java, DDHS
// extractnewstate/DefaultDeleteHandlingStrategy.java; ENRSTest is
// src/test/java/io/debezium/transforms/ExtractNewRecordStateTest.java.

func mustFlat(t *testing.T, mode DeleteHandling, fields, headers []string) *FlatConfig {
	t.Helper()
	f, err := NewFlatConfig(mode, fields, DefaultFlatPrefix, headers, DefaultFlatPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFlatFieldNamesAreFieldReferences: names as FieldReference makes them
// (AENRS.java:187-202, determineStruct :207-225): an unqualified name is
// the envelope's, the transaction block's (id, total_order,
// data_collection_order) or else the source block's, named prefix+field;
// struct.field is prefix+struct_field; field:new is prefix+new
// (ENRSTest.java:296-308, 345-353, 380-391).
func TestFlatFieldNamesAreFieldReferences(t *testing.T) {
	for _, tt := range []struct {
		spec, prefix, name string
		ref                metaRef
	}{
		{"op", "__", "__op", refOp},
		{"table", "__", "__table", refTable},
		{"lsn", "__", "__lsn", refLSN},
		{"source.ts_ms", "__", "__source_ts_ms", refSourceTsMs},
		{"ts_ms", "__", "__ts_ms", refTsMs},
		{"id", "__", "__id", refTransactionID},
		{"transaction.total_order", "__", "__transaction_total_order", refTotalOrder},
		{" source.lsn:source_lsn ", "", "source_lsn", refLSN},
		{"op:OP", "prefix.", "prefix.OP", refOp},
		{"source.op", "__", "__source_op", refOp}, // falls back to the envelope's op (AENRS.java:274-279)
		{"snapshot", "__", "__snapshot", refSnapshot},
	} {
		got, err := parseFlatFields("add_fields", tt.prefix, []string{tt.spec})
		if err != nil || len(got) != 1 || got[0].Name != tt.name || got[0].ref != tt.ref {
			t.Errorf("%q: got %+v, %v; want %s (%d)", tt.spec, got, err, tt.name, tt.ref)
		}
	}
	for _, bad := range []string{"nope", "source.nope", "after", "source", "before.id", "a:b:c", "source.ts_ms.x"} {
		if _, err := parseFlatFields("add_fields", "__", []string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := NewFlatConfig(DeleteRewrite, []string{"op", "deleted"}, "__", nil, "__"); err == nil {
		t.Error("__deleted added twice accepted")
	}
	if _, err := NewFlatConfig("none", nil, "__", nil, "__"); err == nil {
		t.Error("delete_handling none accepted")
	}
}

// TestFlatRecordsPerDeleteHandling: which records each change becomes,
// per mode (DDHS.java:33-82; truncates dropped ENRS.java:124-128,
// AbstractExtractRecordStrategy.java:41-46; ENRSTest.java:81-140, 484-503, 993-1007).
func TestFlatRecordsPerDeleteHandling(t *testing.T) {
	del := &Change{Op: OpDelete, Relation: customers, Before: keyOnly}
	for _, tt := range []struct {
		mode             DeleteHandling
		tombstonesOn     bool
		value, tombstone bool
	}{
		{DeleteDrop, true, false, false},
		{DeleteTombstone, true, true, false},
		{DeleteRewrite, true, true, false},
		{DeleteRewriteWithTombstone, true, true, true},
		{DeleteRewriteWithTombstone, false, true, false}, // no tombstone to keep
		{DeleteToTombstone, true, false, true},
		{DeleteToTombstone, false, false, true},
	} {
		f := mustFlat(t, tt.mode, nil, nil)
		if v, ts := f.Records(del, tt.tombstonesOn); v != tt.value || ts != tt.tombstone {
			t.Errorf("%s (tombstones %v): delete gives value %v tombstone %v, want %v %v", tt.mode, tt.tombstonesOn, v, ts, tt.value, tt.tombstone)
		}
		for _, ch := range []*Change{{Op: OpCreate, After: rowAlice}, {Op: OpUpdate, After: rowAlice}, {Op: OpRead, After: rowAlice}} {
			if v, ts := f.Records(ch, true); !v || ts {
				t.Errorf("%s: %c gives %v %v, want one record", tt.mode, ch.Op, v, ts)
			}
		}
		for _, ch := range []*Change{{Op: OpTruncate}, {Op: OpDelete}} {
			if v, ts := f.Records(ch, true); v || ts {
				t.Errorf("%s: %c without images gives %v %v, want none", tt.mode, ch.Op, v, ts)
			}
		}
	}
}

func flatCfg(f *FlatConfig) Config {
	c := testJSONConfig
	c.Flat = f
	return c
}

// TestFlatJSONValues: the value is the row, then __deleted in the rewrite
// modes ("true" on a delete, "false" otherwise, strings: ENRSTest.java:138,
// 152), then the added fields in order (ENRS.java:198-203); a delete in
// tombstone mode is the null value with the row's schema (DDHS.java:55-60),
// which JsonConverter writes as null.
func TestFlatJSONValues(t *testing.T) {
	fields := []string{"op", "table", "lsn", "source.ts_ms", "transaction.id"}
	ins := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000}
	del := &Change{Op: OpDelete, Relation: customers, Before: keyOnly, Tx: testTx, LSN: 24023100}
	row := `"id":1,"name":"Alice","balance":"BOI=","updated":"2024-01-02T03:04:05.123456Z","active":true,"doc":"{\"tier\": \"gold\"}"`
	meta := `"__op":"c","__table":"customers","__lsn":24023000,"__source_ts_ms":1704164645678,"__transaction_id":null`
	for _, tt := range []struct {
		mode     DeleteHandling
		ins, del string
	}{
		{DeleteTombstone, `{` + row + `,` + meta + `}`, `null`},
		{DeleteRewrite, `{` + row + `,"__deleted":"false",` + meta + `}`,
			`{"id":1,"name":null,"balance":null,"updated":null,"active":null,"doc":null,"__deleted":"true",` +
				`"__op":"d","__table":"customers","__lsn":24023100,"__source_ts_ms":1704164645678,"__transaction_id":null}`},
	} {
		e := NewJSONEncoder(flatCfg(mustFlat(t, tt.mode, fields, nil)))
		got, err := e.AppendValue(nil, e.Plan(ins.Relation), ins, testNow)
		if err != nil || string(got) != tt.ins {
			t.Errorf("%s insert:\n got  %s %v\n want %s", tt.mode, got, err, tt.ins)
		}
		got, err = e.AppendValue(nil, e.Plan(del.Relation), del, testNow)
		if err != nil || string(got) != tt.del {
			t.Errorf("%s delete:\n got  %s %v\n want %s", tt.mode, got, err, tt.del)
		}
		// The key is the envelope's (ENRS.java:205-212).
		k1, _, _ := e.AppendKey(nil, e.Plan(ins.Relation), ins)
		k2, _, _ := NewJSONEncoder(testJSONConfig).AppendKey(nil, NewPlan(testJSONConfig, ins.Relation), ins)
		if string(k1) != string(k2) {
			t.Errorf("key %s, want %s", k1, k2)
		}
	}
}

// TestFlatJSONSchemas: with schemas the value schema is <prefix>.<schema>.<table>.Value,
// required (ENRS.java:282-298 rebuilds it on SchemaBuilder.struct()),
// with __deleted an optional string and each added field its source
// field's schema made optional, without a default (AENRS.java:261-266),
// and JsonConverter accepts every record; a tombstone-mode delete is
// {"schema":<the optional row schema>,"payload":null}.
func TestFlatJSONSchemas(t *testing.T) {
	f := mustFlat(t, DeleteRewrite, []string{"op", "lsn", "source.ts_ms", "snapshot", "transaction.total_order"}, nil)
	e := NewJSONSchemaEncoder(flatCfg(f))
	out, err := e.AppendValue(nil, e.Plan(customers), &Change{Op: OpRead, Relation: customers, After: rowAlice, LSN: 5, Snapshot: SnapshotFirst}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := connecttest.Validate(out); err != nil {
		t.Fatalf("JsonConverter would refuse %s: %v", out, err)
	}
	var rec struct {
		Schema  connectField   `json:"schema"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatal(err)
	}
	s := rec.Schema
	if s.Name != "srv.public.customers.Value" || s.Optional || s.Version != 0 {
		t.Errorf("value schema %s optional %v version %d", s.Name, s.Optional, s.Version)
	}
	want := []string{"id", "name", "balance", "updated", "active", "doc", "__deleted", "__op", "__lsn", "__source_ts_ms", "__snapshot", "__transaction_total_order"}
	if got := fieldNames(s.Fields); !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	for name, typ := range map[string]string{"__deleted": "string", "__op": "string", "__lsn": "int64", "__source_ts_ms": "int64", "__transaction_total_order": "int64"} {
		if fl := fieldByName(t, s.Fields, name); fl.Type != typ || !fl.Optional || fl.Name != "" {
			t.Errorf("%s = %+v, want optional %s", name, fl, typ)
		}
	}
	if snap := fieldByName(t, s.Fields, "__snapshot"); snap.Name != "io.debezium.data.Enum" || !snap.Optional || snap.Default != nil ||
		snap.Parameters["allowed"] != wantSnapshotAllowed {
		t.Errorf("__snapshot = %+v", snap)
	}
	if rec.Payload["__snapshot"] != "first" || rec.Payload["__op"] != "r" || rec.Payload["__deleted"] != "false" {
		t.Errorf("payload %v", rec.Payload)
	}
	// The copy's last row is re-marked in place (MarkSnapshot).
	marked, ok := e.MarkSnapshot(out, SnapshotFirst, SnapshotLast)
	if !ok || !strings.Contains(string(marked), `"__snapshot":"last"`) || connecttest.Validate(marked) != nil {
		t.Errorf("MarkSnapshot: %v %s", ok, marked)
	}

	e = NewJSONSchemaEncoder(flatCfg(mustFlat(t, DeleteTombstone, nil, nil)))
	out, err = e.AppendValue(nil, e.Plan(customers), &Change{Op: OpDelete, Relation: customers, Before: keyOnly, LSN: 7}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if err := connecttest.Validate(out); err != nil {
		t.Fatalf("JsonConverter would refuse %s: %v", out, err)
	}
	var null struct {
		Schema  connectField    `json:"schema"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(out, &null); err != nil || string(null.Payload) != "null" || !null.Schema.Optional ||
		null.Schema.Name != "srv.public.customers.Value" {
		t.Errorf("tombstone-mode delete %s", out)
	}
}

// TestFlatAvro: the registered value schema is the row's record with the
// added fields (each ["null", T] with default null), the body decodes
// against it, and a tombstone-mode delete is no value at all (a Kafka
// tombstone: AvroConverter serializes a null value as null).
func TestFlatAvro(t *testing.T) {
	f := mustFlat(t, DeleteRewriteWithTombstone, []string{"op", "table", "lsn", "source.ts_ms"}, nil)
	e := NewAvroEncoder(flatCfg(f))
	p, ids := e.Plan(customers), NoAvroIDs
	_, vs, err := e.Schemas(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Register(p, &ids, true, true, func(bool, string) (int, error) { return 7, nil }); err != nil {
		t.Fatal(err)
	}
	sch, err := avro.Parse(vs)
	if err != nil {
		t.Fatal(err)
	}
	if rs := sch.(*avro.RecordSchema); rs.FullName() != "srv.public.customers.Value" {
		t.Errorf("value schema %s", rs.FullName())
	}
	for _, tt := range []struct {
		ch   *Change
		want map[string]any
	}{
		{&Change{Op: OpUpdate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000},
			map[string]any{"__deleted": "false", "__op": "u", "__table": "customers", "__lsn": int64(24023000), "__source_ts_ms": int64(1704164645678)}},
		{&Change{Op: OpDelete, Relation: customers, Before: keyOnly, Tx: testTx, LSN: 24023100},
			map[string]any{"__deleted": "true", "__op": "d", "__table": "customers", "__lsn": int64(24023100), "__source_ts_ms": int64(1704164645678)}},
	} {
		out, err := e.AppendValue(nil, p, ids, tt.ch, testNow)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := avro.Unmarshal(sch, out[5:], &got); err != nil {
			t.Fatalf("%c: %v", tt.ch.Op, err)
		}
		for k, v := range tt.want {
			if u, ok := got[k].(map[string]any); ok { // a union decodes as {type: value}
				for _, x := range u {
					got[k] = x
				}
			}
			if got[k] != v {
				t.Errorf("%c: %s = %#v, want %#v", tt.ch.Op, k, got[k], v)
			}
		}
	}
	e = NewAvroEncoder(flatCfg(mustFlat(t, DeleteTombstone, nil, nil)))
	p, ids = e.Plan(customers), NoAvroIDs
	_ = e.Register(p, &ids, true, true, func(bool, string) (int, error) { return 8, nil })
	out, err := e.AppendValue(make([]byte, 0, 16), p, ids, &Change{Op: OpDelete, Relation: customers, Before: keyOnly, LSN: 1}, testNow)
	if err != nil || out != nil {
		t.Errorf("tombstone-mode delete: %v %v, want a nil value", out, err)
	}
}

// TestFlatHeaderText: header values as SimpleHeaderConverter writes them,
// a string's bytes and a number's decimal (ENRSTest.java:310-318, 385-391),
// null when the field is (ENRSTest.java:406-412).
func TestFlatHeaderText(t *testing.T) {
	f := mustFlat(t, DeleteTombstone, nil, []string{"op", "lsn", "id", "source.ts_ms"})
	m := NewMetaWriter(testJSONConfig)
	ch := &Change{Op: OpUpdate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 1234}
	var got []string
	for _, h := range f.Headers {
		v, null := m.AppendHeader(nil, h, ch, testNow)
		if null {
			got = append(got, h.Name+"=<null>")
		} else {
			got = append(got, h.Name+"="+string(v))
		}
	}
	want := []string{"__op=u", "__lsn=1234", "__id=<null>", "__source_ts_ms=1704164645678"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("headers %v, want %v", got, want)
	}
	if v, ok := f.TombstoneHeader(0); !ok || v != "d" {
		t.Errorf("tombstone op header %q %v, want d", v, ok)
	}
	if _, ok := f.TombstoneHeader(1); ok {
		t.Error("a tombstone carries only the op header (AENRS.java:139-146)")
	}
}

// TestFlatEncodingAllocatesNothing: on a warm plan, a flat value and its
// headers cost no allocation, as the envelope's do (the hot path).
func TestFlatEncodingAllocatesNothing(t *testing.T) {
	f := mustFlat(t, DeleteRewrite, []string{"op", "table", "lsn", "source.ts_ms", "sequence", "transaction.id"}, []string{"op", "lsn", "db"})
	ch := &Change{Op: OpUpdate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000, TxOrder: 1, TxTableOrder: 1}
	je := NewJSONSchemaEncoder(flatCfg(f))
	ae := NewAvroEncoder(flatCfg(f))
	p, ids := ae.Plan(customers), NoAvroIDs
	if err := ae.Register(p, &ids, true, true, func(bool, string) (int, error) { return 1, nil }); err != nil {
		t.Fatal(err)
	}
	m := NewMetaWriter(flatCfg(f))
	buf := make([]byte, 0, 4096)
	hb := make([]byte, 0, 64)
	for name, enc := range map[string]func(){
		"json": func() { buf, _ = je.AppendValue(buf[:0], p, ch, testNow) },
		"avro": func() { buf, _ = ae.AppendValue(buf[:0], p, ids, ch, testNow) },
		"headers": func() {
			for _, h := range f.Headers {
				hb, _ = m.AppendHeader(hb[:0], h, ch, testNow)
			}
		},
	} {
		enc()
		if n := testing.AllocsPerRun(100, enc); n != 0 {
			t.Errorf("%s: %.1f allocations per record", name, n)
		}
	}
}
