package schema

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestPlanSharedByEncodersOnGoroutines: one relation's plan serves the
// encoders of several goroutines at once (a table copied on several
// connections), and each writes the bytes an encoder alone writes. The
// plan includes a hash mapper (column.mask.hash.v2), whose digest state
// is per call, not per plan: run under -race, a shared digest is a data
// race, and without -race it mixes two rows' hashes.
func TestPlanSharedByEncodersOnGoroutines(t *testing.T) {
	cfg := testJSONConfig
	cfg.ShapeColumn = func(_, _, column string) (bool, *ColumnRewrite) {
		if column == "name" {
			return true, &ColumnRewrite{Kind: RewriteHash, Algorithm: "SHA-256", Salt: "s", Version: 2}
		}
		return true, nil
	}
	p := NewPlan(cfg, customers)
	rowOf := func(i int) *Change {
		return &Change{Op: OpRead, Relation: customers, LSN: 1, Snapshot: SnapshotTrue, SourceTime: testNow,
			After: row(text(fmt.Sprint(i)), text(fmt.Sprintf("name %d", i)), text("12.50"), null, text("t"), null)}
	}
	type record struct{ key, value []byte }
	encode := func(json *JSONEncoder, avro *AvroEncoder, ch *Change) (out [2]record, err error) {
		if out[0].key, _, err = json.AppendKey(nil, p, ch); err == nil {
			out[0].value, err = json.AppendValue(nil, p, ch, testNow)
		}
		if err == nil {
			if out[1].key, _, err = avro.AppendKey(nil, p, testIDs, ch); err == nil {
				out[1].value, err = avro.AppendValue(nil, p, testIDs, ch, testNow)
			}
		}
		return out, err
	}
	const rows, workers = 200, 4
	want := make([][2]record, rows)
	j, a := NewJSONSchemaEncoder(cfg), NewAvroEncoder(cfg)
	for i := range rows {
		var err error
		if want[i], err = encode(j, a, rowOf(i)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Contains(want[1][0].value, []byte(`"name":"`)) || bytes.Contains(want[1][0].value, []byte(`"name 1"`)) {
		t.Fatalf("the name is not hashed: %s", want[1][0].value)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			j, a := NewJSONSchemaEncoder(cfg), NewAvroEncoder(cfg)
			for n := range rows {
				i := (n + w*rows/workers) % rows
				got, err := encode(j, a, rowOf(i))
				if err == nil {
					for f := range got {
						if !bytes.Equal(got[f].key, want[i][f].key) || !bytes.Equal(got[f].value, want[i][f].value) {
							err = fmt.Errorf("worker %d, row %d, format %d:\n got %q\nwant %q", w, i, f, got[f].value, want[i][f].value)
						}
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestNewPlanBuildsEveryFormatsParts: a plan holds the JSON schema heads
// and the Avro schemas, built with it (nothing is filled in later, when
// encoders share it), and an encoder for either format reads them from it.
func TestNewPlanBuildsEveryFormatsParts(t *testing.T) {
	p := NewPlan(testJSONConfig, customers)
	if p.jsonKeyHead == nil || p.jsonValueHead == nil || p.avroKey == "" || p.avroValue == "" || p.avroErr != nil {
		t.Fatalf("plan parts missing: key head %q, value head %d bytes, avro key %q, value %d bytes, err %v",
			p.jsonKeyHead, len(p.jsonValueHead), p.avroKey, len(p.avroValue), p.avroErr)
	}
	k, v := NewJSONSchemaEncoder(testJSONConfig).Schemas(p)
	if string(k) != string(p.jsonKeyHead[len(`{"schema":`):len(p.jsonKeyHead)-len(`,"payload":`)]) || len(v) == 0 {
		t.Errorf("JSON schemas %s %s", k, v)
	}
	if k, v := NewJSONEncoder(testJSONConfig).Schemas(p); k != nil || v != nil {
		t.Errorf("plain JSON has no schemas: %s %s", k, v)
	}
	ak, av, err := NewAvroEncoder(testJSONConfig).Schemas(p)
	if ak != p.avroKey || av != p.avroValue || err != nil {
		t.Errorf("Avro schemas %s %s %v", ak, av, err)
	}
	// The plain encoder writes no schema head although the plan has one.
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 1}
	if key, _, _ := NewJSONEncoder(testJSONConfig).AppendKey(nil, p, ch); string(key) != `{"id":1}` {
		t.Errorf("plain JSON key %s", key)
	}
	if r := p.Relax(customersFull); r.Relation() != customersFull || r == p {
		t.Errorf("Relax made no plan of the other relation")
	}
}

// TestPlanFormatsBuildOnlyTheirParts: a plan made for some formats
// (Config.PlanFormats) has only their parts; plain JSON needs none and
// writes the bytes of a full plan, and an encoder of another format
// refuses the plan rather than writing a record without its schema.
func TestPlanFormatsBuildOnlyTheirParts(t *testing.T) {
	cfg := testJSONConfig
	cfg.PlanFormats = PlanJSON
	p, full := NewPlan(cfg, customers), NewPlan(testJSONConfig, customers)
	if p.jsonValueHead != nil || p.avroValue != "" {
		t.Fatalf("a plain JSON plan has other formats' parts: %q %q", p.jsonValueHead, p.avroValue)
	}
	ch := &Change{Op: OpCreate, Relation: customers, After: rowAlice, Tx: testTx, LSN: 1}
	j := NewJSONEncoder(cfg)
	got, err := j.AppendValue(nil, p, ch, testNow)
	want, _ := NewJSONEncoder(testJSONConfig).AppendValue(nil, full, ch, testNow)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("plain JSON with its own plan: %s %v, want %s", got, err, want)
	}
	if _, err := NewJSONSchemaEncoder(cfg).AppendValue(nil, p, ch, testNow); !errors.Is(err, errPlanFormat) {
		t.Errorf("JSON with schemas on a plain JSON plan: %v, want errPlanFormat", err)
	}
	ids := NoAvroIDs
	if err := NewAvroEncoder(cfg).Register(p, &ids, true, true, func(bool, string) (int, error) { return 1, nil }); !errors.Is(err, errPlanFormat) {
		t.Errorf("Avro Register on a plain JSON plan: %v, want errPlanFormat", err)
	}
	if _, _, err := NewAvroEncoder(cfg).Schemas(p); !errors.Is(err, errPlanFormat) {
		t.Errorf("Avro Schemas of a plain JSON plan: %v, want errPlanFormat", err)
	}
	cfg.PlanFormats = PlanJSON | PlanAvro
	if p := NewPlan(cfg, customers); p.avroValue != full.avroValue || p.jsonValueHead != nil {
		t.Errorf("a JSON and Avro plan: Avro %v, JSON schema head %q", p.avroValue == full.avroValue, p.jsonValueHead)
	}
}
