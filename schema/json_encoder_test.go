package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// customers is a table with a primary key (id) and one column of each
// common kind.
var customers = &Relation{
	OID: 16385, Schema: "public", Table: "customers", ReplicaIdentity: 'd',
	Columns: []Column{
		{Name: "id", TypeOID: oidInt8, TypeMod: -1, Key: true},
		{Name: "name", TypeOID: oidText, TypeMod: -1},
		{Name: "balance", TypeOID: oidNumeric, TypeMod: 655366},
		{Name: "updated", TypeOID: oidTimestamptz, TypeMod: -1},
		{Name: "active", TypeOID: oidBool, TypeMod: -1},
		{Name: "doc", TypeOID: oidJSONB, TypeMod: -1},
	},
	KeyIndexes: []int{0},
}

// customersFull is the same table with REPLICA IDENTITY FULL.
var customersFull = func() *Relation {
	r := *customers
	r.ReplicaIdentity = 'f'
	return &r
}()

// keyless has no primary key and REPLICA IDENTITY DEFAULT.
var keyless = &Relation{
	OID: 16390, Schema: "public", Table: "events", ReplicaIdentity: 'd',
	Columns: []Column{{Name: "msg", TypeOID: oidText, TypeMod: -1}},
}

// composite has a two-column key that is not the leading columns.
var composite = &Relation{
	OID: 16400, Schema: "Sales \"EU\"", Table: "order lines", ReplicaIdentity: 'd',
	Columns: []Column{
		{Name: "note", TypeOID: oidText, TypeMod: -1},
		{Name: "order_id", TypeOID: oidInt4, TypeMod: -1, Key: true},
		{Name: "line", TypeOID: oidInt2, TypeMod: -1, Key: true},
		{Name: "big", TypeOID: oidText, TypeMod: -1},
	},
	KeyIndexes: []int{1, 2},
}

var testTx = &Tx{
	Xid: 556, CommitLSN: 24023128, EndLSN: 24023200,
	CommitTime:    time.Date(2024, 1, 2, 3, 4, 5, 678_900_000, time.UTC),
	PrevCommitLSN: 24022000,
}

const testTsMs = 1704164646000

// testNow is the processing time of the records in tests, with a
// sub-millisecond part so that ts_us and ts_ns show their precision.
var testNow = time.UnixMilli(testTsMs).Add(123456 * time.Nanosecond)

func row(id, name, balance, updated, active, doc Value) Tuple {
	return Tuple{id, name, balance, updated, active, doc}
}

var (
	rowAlice = row(text("1"), text("Alice"), text("12.50"), text("2024-01-02 03:04:05.123456+00"), text("t"), text(`{"tier": "gold"}`))
	rowAnne  = row(text("1"), text("Anne Marie"), text("0.00"), text("2024-01-02 04:04:05+01"), text("f"), toast)
	keyOnly  = row(text("1"), null, null, null, null, null)
)

func TestJSONEncodeInsertExact(t *testing.T) {
	e := NewJSONEncoder(testJSONConfig)
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000, Seq: 2, TableSeq: 1, TxOrder: 3, TxTableOrder: 2}
	key, ok, err := e.AppendKey(nil, e.Plan(ch.Relation), ch)
	if err != nil || !ok {
		t.Fatalf("AppendKey: %v, %v", ok, err)
	}
	if want := `{"id":1}`; string(key) != want {
		t.Errorf("key = %s, want %s", key, want)
	}
	val, err := e.AppendValue(nil, e.Plan(ch.Relation), ch, testNow)
	if err != nil {
		t.Fatal(err)
	}
	// balance is numeric(10,2): a Connect Decimal, base64 of the unscaled 1250.
	// Debezium 3.6.1's shape: source with ts_us/ts_ns of the commit time
	// after sequence (SchemaFactory.java:151-163) and origin, origin_lsn
	// last (PostgresSourceInfoStructMaker.java:22-31); transaction before
	// op, then the processing time in ms, µs and ns (SchemaFactory.java:436-441);
	// the transaction id is "<xid>:<the event's lsn>"
	// (PostgresTransactionMonitor.java:53-57, TransactionMetadataIT.java:276-284).
	want := `{"before":null,` +
		`"after":{"id":1,"name":"Alice","balance":"BOI=","updated":"2024-01-02T03:04:05.123456Z","active":true,"doc":"{\"tier\": \"gold\"}"},` +
		`"source":{"version":"mooncdc-test","connector":"postgresql","name":"srv","ts_ms":1704164645678,"snapshot":"false","db":"appdb",` +
		`"sequence":"[\"24022000\",\"24023000\"]","ts_us":1704164645678900,"ts_ns":1704164645678900000,` +
		`"schema":"public","table":"customers","txId":556,"lsn":24023000,"xmin":null,"origin":null,"origin_lsn":null},` +
		`"transaction":{"id":"556:24023000","total_order":3,"data_collection_order":2},` +
		`"op":"c","ts_ms":1704164646000,"ts_us":1704164646000123,"ts_ns":1704164646000123456}`
	if string(val) != want {
		t.Errorf("value\n got  %s\n want %s", val, want)
	}
}

// TestJSONEnvelopeGolden checks whole records, key and value, against
// testdata/json/*.golden (go test -run Golden -update rewrites them).
func TestJSONEnvelopeGolden(t *testing.T) {
	noTx := &Tx{Xid: 560, CommitLSN: 30000000, CommitTime: time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC)}
	tests := []struct {
		name string
		ch   *Change
	}{
		{"insert", &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000, TxOrder: 1, TxTableOrder: 1}},
		{"insert_nulls", &Change{Op: OpCreate, Relation: customers, After: row(text("2"), null, null, null, null, null), Tx: testTx, LSN: 24023001, Seq: 1, TableSeq: 1}},
		{"update_default_identity", &Change{Op: OpUpdate, Relation: customers, After: rowAnne, Tx: testTx, LSN: 24023100, Seq: 3}},
		{"update_full_identity", &Change{Op: OpUpdate, Relation: customersFull, Before: rowAlice, After: rowAnne, Tx: testTx, LSN: 24023100}},
		{"update_key_change", &Change{Op: OpUpdate, Relation: customers, Before: keyOnly,
			After: row(text("7"), text("Alice"), text("12.50"), null, text("t"), null), Tx: testTx, LSN: 24023100}},
		{"delete_default_identity", &Change{Op: OpDelete, Relation: customers, Before: keyOnly, Tx: testTx, LSN: 24023200}},
		{"delete_full_identity", &Change{Op: OpDelete, Relation: customersFull, Before: rowAlice, Tx: testTx, LSN: 24023200}},
		{"delete_keyless_nothing", &Change{Op: OpDelete, Relation: keyless, Tx: testTx, LSN: 24023200}},
		{"insert_keyless", &Change{Op: OpCreate, Relation: keyless, After: Tuple{text("hi")}, Tx: noTx, LSN: 29999000}},
		{"truncate", &Change{Op: OpTruncate, Relation: customers, Tx: testTx, LSN: 24023300, Seq: 4, TableSeq: 2, TxOrder: 5, TxTableOrder: 3}},
		{"read_snapshot", &Change{Op: OpRead, Relation: customers, After: rowAlice, LSN: 24000000, Snapshot: "true"}},
		{"read_snapshot_last", &Change{Op: OpRead, Relation: customers, After: rowAlice, LSN: 24000000, Snapshot: "last"}},
		{"read_snapshot_no_lsn", &Change{Op: OpRead, Relation: customers, After: rowAlice, Snapshot: "true"}},
		{"composite_key_quoted_names", &Change{Op: OpUpdate, Relation: composite,
			After: Tuple{text("n"), text("42"), text("3"), toast}, Tx: noTx, LSN: 30000001}},
		{"message_transactional", &Change{Op: OpMessage, Tx: testTx, LSN: 24023150, Seq: 5, TxOrder: 6, TxTableOrder: 1,
			Message: &Message{Transactional: true, Prefix: "audit", Content: []byte("bar")}}},
		{"message_non_transactional", &Change{Op: OpMessage, LSN: 24023160,
			Message: &Message{Prefix: "hb", Content: nil}}},
	}
	e := NewJSONEncoder(testJSONConfig)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, ok, err := e.AppendKey(nil, e.Plan(tt.ch.Relation), tt.ch)
			if err != nil {
				t.Fatalf("AppendKey: %v", err)
			}
			val, err := e.AppendValue(nil, e.Plan(tt.ch.Relation), tt.ch, testNow)
			if err != nil {
				t.Fatalf("AppendValue: %v", err)
			}
			if !json.Valid(val) || (ok && !json.Valid(key)) {
				t.Fatalf("invalid JSON:\n%s\n%s", key, val)
			}
			var got bytes.Buffer
			got.WriteString("key: ")
			if ok {
				got.Write(key)
			} else {
				got.WriteString("(none)")
			}
			got.WriteString("\nvalue: ")
			got.Write(val)
			got.WriteString("\n")
			checkGolden(t, filepath.Join("testdata", "json", tt.name+".golden"), got.Bytes())
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs\n got  %s\n want %s", path, got, want)
	}
}

// TestJSONKeyNeverGuessesToast: an update that leaves a large key value
// unchanged sends it as unchanged TOAST; the key must come from the old
// image, and without one it is an error, never a placeholder key.
func TestJSONKeyNeverGuessesToast(t *testing.T) {
	rel := &Relation{Schema: "public", Table: "docs", Columns: []Column{
		{Name: "path", TypeOID: oidText, Key: true}, {Name: "body", TypeOID: oidText}}, KeyIndexes: []int{0}}
	e := NewJSONEncoder(testJSONConfig)

	ch := &Change{Op: OpUpdate, Relation: rel, Before: Tuple{text("/a"), null}, After: Tuple{toast, text("x")}}
	key, ok, err := e.AppendKey(nil, e.Plan(ch.Relation), ch)
	if err != nil || !ok || string(key) != `{"path":"/a"}` {
		t.Errorf("with old image: %s, %v, %v; want {\"path\":\"/a\"}", key, ok, err)
	}

	ch = &Change{Op: OpUpdate, Relation: rel, After: Tuple{toast, text("x")}}
	key, ok, err = e.AppendKey([]byte("keep"), e.Plan(ch.Relation), ch)
	if !errors.Is(err, ErrUnchangedToastKey) || ok || string(key) != "keep" {
		t.Errorf("without old image: %q, %v, %v; want ErrUnchangedToastKey and dst unchanged", key, ok, err)
	}
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Column != "path" {
		t.Errorf("error %v does not name the column", err)
	}
}

func TestJSONMalformedChangesAreErrors(t *testing.T) {
	e := NewJSONEncoder(testJSONConfig)
	tests := []struct {
		name string
		ch   *Change
	}{
		{"unknown op", &Change{Op: 'x', Relation: customers, After: rowAlice}},
		{"no relation", &Change{Op: OpCreate, After: rowAlice}},
		{"short tuple", &Change{Op: OpCreate, Relation: customers, After: Tuple{text("1")}}},
		{"long before", &Change{Op: OpDelete, Relation: keyless, Before: Tuple{text("1"), text("2")}}},
		{"message without body", &Change{Op: OpMessage}},
		{"bad key index", &Change{Op: OpCreate, Relation: &Relation{Columns: []Column{{Name: "a"}}, KeyIndexes: []int{3}}, After: Tuple{text("1")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := e.Plan(tt.ch.Relation)
			k, _, kerr := e.AppendKey([]byte("k"), p, tt.ch)
			v, verr := e.AppendValue([]byte("v"), p, tt.ch, time.UnixMilli(1))
			if kerr == nil && verr == nil {
				t.Errorf("no error for a malformed change")
			}
			if string(k) != "k" && kerr != nil || string(v) != "v" && verr != nil {
				t.Errorf("dst changed on error: %q %q", k, v)
			}
		})
	}
}

// TestJSONPlanFollowsRelationPointer: a changed table arrives as a new
// *Relation with a plan of its own; the encoder uses the new columns, and
// a change given the plan of another relation (a stale one) is an error,
// never a record of the wrong shape.
func TestJSONPlanFollowsRelationPointer(t *testing.T) {
	e := NewJSONEncoder(testJSONConfig)
	v1 := &Relation{Schema: "public", Table: "t", Columns: []Column{{Name: "a", TypeOID: oidInt4}}}
	v2 := &Relation{Schema: "public", Table: "t", Columns: []Column{{Name: "a", TypeOID: oidText}, {Name: "b", TypeOID: oidInt4}}}
	for range 2 {
		out, err := e.AppendValue(nil, e.Plan(v1), &Change{Op: OpCreate, Relation: v1, After: Tuple{text("5")}}, time.UnixMilli(1))
		if err != nil || !bytes.Contains(out, []byte(`"after":{"a":5}`)) {
			t.Fatalf("v1: %s, %v", out, err)
		}
		out, err = e.AppendValue(nil, e.Plan(v2), &Change{Op: OpCreate, Relation: v2, After: Tuple{text("5"), text("6")}}, time.UnixMilli(1))
		if err != nil || !bytes.Contains(out, []byte(`"after":{"a":"5","b":6}`)) {
			t.Fatalf("v2: %s, %v", out, err)
		}
	}
	ch := &Change{Op: OpCreate, Relation: v2, After: Tuple{text("5"), text("6")}}
	if out, err := e.AppendValue([]byte("v"), e.Plan(v1), ch, time.UnixMilli(1)); !errors.Is(err, errPlanMismatch) || string(out) != "v" {
		t.Errorf("value with v1's plan: %q, %v; want errPlanMismatch", out, err)
	}
	ch = &Change{Op: OpCreate, Relation: customers, After: rowAlice}
	if out, ok, err := e.AppendKey([]byte("k"), nil, ch); !errors.Is(err, errPlanMismatch) || ok || string(out) != "k" {
		t.Errorf("key without a plan: %q, %v, %v; want errPlanMismatch", out, ok, err)
	}
}

// TestJSONEncodeZeroAllocs protects the throughput budget: encoding a
// typical row into buffers with capacity allocates nothing once the
// relation's plan is made.
func TestJSONEncodeZeroAllocs(t *testing.T) {
	e := NewJSONEncoder(testJSONConfig)
	ch := &Change{Op: OpUpdate, Relation: customers, Before: keyOnly, After: rowAlice, Tx: testTx, LSN: 24023000}
	p := e.Plan(customers)
	kb, vb := make([]byte, 0, 256), make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		var err error
		if kb, _, err = e.AppendKey(kb[:0], p, ch); err != nil {
			t.Fatal(err)
		}
		if vb, err = e.AppendValue(vb[:0], p, ch, testNow); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("AppendKey+AppendValue allocate %.1f times per row, want 0", allocs)
	}
}

// TestSnapshotSourceBlockFollowsItsInputs protects the cached source block
// of snapshot rows: an encoder that wrote rows before gives, for every
// row, the bytes a fresh encoder gives, as the marker, LSN, snapshot
// time and relation change and streamed changes come between.
func TestSnapshotSourceBlockFollowsItsInputs(t *testing.T) {
	t1 := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	t2 := t1.Add(time.Millisecond)
	changes := []*Change{
		{Op: OpRead, Relation: customers, After: rowAlice, LSN: 24000000, Snapshot: "first", SourceTime: t1},
		{Op: OpRead, Relation: customers, After: rowAlice, LSN: 24000000, Snapshot: "true", SourceTime: t1},
		{Op: OpRead, Relation: customers, After: rowAnne, LSN: 24000000, Snapshot: "true", SourceTime: t1},
		{Op: OpRead, Relation: customers, After: rowAnne, LSN: 24000000, Snapshot: "true", SourceTime: t2},
		{Op: OpRead, Relation: customers, After: rowAnne, LSN: 24000001, Snapshot: "true", SourceTime: t2},
		{Op: OpRead, Relation: customersFull, After: rowAnne, LSN: 24000001, Snapshot: "true", SourceTime: t2},
		{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000},
		{Op: OpRead, Relation: customersFull, After: rowAnne, LSN: 24000001, Snapshot: "true", SourceTime: t2},
		{Op: OpRead, Relation: customersFull, After: rowAnne, LSN: 24000001, Snapshot: "true"}, // now: testNow
		{Op: OpRead, Relation: customersFull, After: rowAnne, LSN: 24000001, Snapshot: "last", SourceTime: t2},
	}
	for _, schemas := range []bool{false, true} {
		cfg := testJSONConfig
		var reused *JSONEncoder
		if schemas {
			reused = NewJSONSchemaEncoder(cfg)
		} else {
			reused = NewJSONEncoder(cfg)
		}
		for i, ch := range changes {
			got, err := reused.AppendValue(nil, reused.Plan(ch.Relation), ch, testNow)
			if err != nil {
				t.Fatal(err)
			}
			fresh := NewJSONEncoder(cfg)
			if schemas {
				fresh = NewJSONSchemaEncoder(cfg)
			}
			want, err := fresh.AppendValue(nil, fresh.Plan(ch.Relation), ch, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("schemas %v, change %d: an encoder that wrote the rows before gives\n %s\nwant\n %s", schemas, i, got, want)
			}
		}
	}
}

// TestEnvelopeTimesFollowNow: the envelope's ts_ms, ts_us and ts_ns are
// those of the now each record is encoded with, whether it repeats (a
// copy's rows share it) or not.
func TestEnvelopeTimesFollowNow(t *testing.T) {
	e := NewJSONEncoder(testJSONConfig)
	ch := &Change{Op: OpUpdate, Relation: customers, Before: keyOnly, After: rowAlice, Tx: testTx, LSN: 24023000}
	for _, now := range []time.Time{testNow, testNow, testNow.Add(1234567 * time.Nanosecond), testNow.Add(1234567 * time.Nanosecond), testNow} {
		out, err := e.AppendValue(nil, e.Plan(ch.Relation), ch, now)
		if err != nil {
			t.Fatal(err)
		}
		var v struct{ TsMs, TsUs, TsNs int64 }
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(out, &raw); err != nil {
			t.Fatal(err)
		}
		for k, dst := range map[string]*int64{"ts_ms": &v.TsMs, "ts_us": &v.TsUs, "ts_ns": &v.TsNs} {
			if err := json.Unmarshal(raw[k], dst); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
		}
		if v.TsMs != now.UnixMilli() || v.TsUs != now.UnixMicro() || v.TsNs != now.UnixNano() {
			t.Fatalf("now %v: ts_ms %d ts_us %d ts_ns %d", now, v.TsMs, v.TsUs, v.TsNs)
		}
	}
}
