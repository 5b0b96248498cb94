package schema

import "testing"

// BenchmarkJSONEncodeInsert encodes the key and value of an insert into
// public.customers (int8, text, numeric, timestamptz, bool, jsonb), reusing
// the buffers as the producer's record pool does.
func BenchmarkJSONEncodeInsert(b *testing.B) {
	e := NewJSONEncoder(testJSONConfig)
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000}
	p := e.Plan(ch.Relation) // a caller keeps the plan of a relation
	kb, vb := make([]byte, 0, 256), make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if kb, _, err = e.AppendKey(kb[:0], p, ch); err != nil {
			b.Fatal(err)
		}
		if vb, err = e.AppendValue(vb[:0], p, ch, testNow); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kb) + len(vb)))
}

// BenchmarkJSONEncodeSnapshotRow encodes a snapshot row (op r), as a
// table copy does row after row: the source block is the same for each.
func BenchmarkJSONEncodeSnapshotRow(b *testing.B) {
	e := NewJSONEncoder(testJSONConfig)
	ch := &Change{Op: OpRead, Relation: customers, After: rowAlice, LSN: 24000000, Snapshot: "true", SourceTime: testNow}
	p := e.Plan(ch.Relation) // a caller keeps the plan of a relation
	kb, vb := make([]byte, 0, 256), make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if kb, _, err = e.AppendKey(kb[:0], p, ch); err != nil {
			b.Fatal(err)
		}
		if vb, err = e.AppendValue(vb[:0], p, ch, testNow); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kb) + len(vb)))
}

// BenchmarkJSONEncodeUpdateFull is an update with REPLICA IDENTITY FULL:
// both images, twice the column work.
func BenchmarkJSONEncodeUpdateFull(b *testing.B) {
	e := NewJSONEncoder(testJSONConfig)
	ch := &Change{Op: OpUpdate, Relation: customersFull, Before: rowAlice, After: rowAnne, Tx: testTx, LSN: 24023000}
	p := e.Plan(ch.Relation) // a caller keeps the plan of a relation
	kb, vb := make([]byte, 0, 256), make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if kb, _, err = e.AppendKey(kb[:0], p, ch); err != nil {
			b.Fatal(err)
		}
		if vb, err = e.AppendValue(vb[:0], p, ch, testNow); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kb) + len(vb)))
}

func BenchmarkParseTimestamptz(b *testing.B) {
	s := []byte("2024-01-02 03:04:05.123456+00")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseTimestamptz(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSONString(b *testing.B) {
	s := []byte("The quick brown fox jumps over the lazy dog; \"quoted\" and naïve café.")
	dst := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		dst = appendJSONString(dst[:0], s)
	}
}

func BenchmarkAppendValueFloat8(b *testing.B) {
	e := NewJSONEncoder(testJSONConfig)
	cfg := testJSONConfig.withDefaults()
	c := mapColumn(&cfg, Column{Name: "f", TypeOID: oidFloat8, TypeMod: -1})
	v := text("1.2345678901234567e-05")
	dst := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = e.appendColumn(dst[:0], c, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAvroEncodeInsert is BenchmarkJSONEncodeInsert in Avro: the same
// row, key and value, Confluent wire format.
func BenchmarkAvroEncodeInsert(b *testing.B) {
	e := NewAvroEncoder(testJSONConfig)
	p, ids := e.Plan(customers), NoAvroIDs
	if err := e.Register(p, &ids, true, true, func(bool, string) (int, error) { return 1, nil }); err != nil {
		b.Fatal(err)
	}
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000}
	kb, vb := make([]byte, 0, 256), make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if kb, _, err = e.AppendKey(kb[:0], p, ids, ch); err != nil {
			b.Fatal(err)
		}
		if vb, err = e.AppendValue(vb[:0], p, ids, ch, testNow); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kb) + len(vb)))
}

// BenchmarkJSONSchemasEncodeInsert is the JSON encoder with Kafka Connect
// schemas: the precomputed schema block is copied into every record.
func BenchmarkJSONSchemasEncodeInsert(b *testing.B) {
	e := NewJSONSchemaEncoder(testJSONConfig)
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 24023000}
	p := e.Plan(ch.Relation) // a caller keeps the plan of a relation
	kb, vb := make([]byte, 0, 512), make([]byte, 0, 8192)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if kb, _, err = e.AppendKey(kb[:0], p, ch); err != nil {
			b.Fatal(err)
		}
		if vb, err = e.AppendValue(vb[:0], p, ch, testNow); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kb) + len(vb)))
}

// BenchmarkNewPlan makes the plan of a relation, as a new Relation message
// or a table's copy does: for plain JSON (no part of its own), JSON with
// schemas (the heads) and Avro (the schemas, checked).
func BenchmarkNewPlan(b *testing.B) {
	for _, f := range []struct {
		name    string
		formats PlanFormats
	}{{"json", PlanJSON}, {"json_schemas", PlanJSONSchemas}, {"avro", PlanAvro}} {
		b.Run(f.name, func(b *testing.B) {
			cfg := testJSONConfig
			cfg.PlanFormats = f.formats
			b.ReportAllocs()
			for b.Loop() {
				NewPlan(cfg, customers)
			}
		})
	}
}
