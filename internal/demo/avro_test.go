package main

import (
	"encoding/binary"
	"math/big"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/internal/srtest"
)

const testValueSchema = `{"type":"record","name":"Envelope","namespace":"demo.public.orders","fields":[
  {"name":"after","type":["null",{"type":"record","name":"Value","fields":[
    {"name":"id","type":"long"},
    {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
    {"name":"status","type":["null","string"]},
    {"name":"placed","type":{"type":"long","logicalType":"timestamp-micros"}},
    {"name":"tags","type":{"type":"array","items":"string"}}]}]},
  {"name":"op","type":"string"},
  {"name":"ts_ms","type":["null","long"]}]}`

// TestAvroDecodesIntoTheJSONRecordsShape: a Confluent-framed Avro value,
// its schema looked up in the registry by id, becomes JSON with the
// schema's field order, unions unwrapped, a decimal as a number and a
// timestamp as text, which the rest of the demo reads like a JSON record.
func TestAvroDecodesIntoTheJSONRecordsShape(t *testing.T) {
	reg := srtest.New(t)
	id, err := reg.Register("demo.public.orders-value", testValueSchema)
	if err != nil {
		t.Fatal(err)
	}
	s := avro.MustParse(testValueSchema)
	// hamba encodes a union from a map of the branch's name to the value.
	value := map[string]any{
		"after": map[string]any{"demo.public.orders.Value": map[string]any{
			"id": int64(12), "amount": big.NewRat(12345, 100), "status": map[string]any{"string": "paid"},
			"placed": time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), "tags": []any{"a", "b"},
		}},
		"op": "u", "ts_ms": map[string]any{"long": int64(1700000000000)},
	}
	payload, err := avro.Marshal(s, value)
	if err != nil {
		t.Fatal(err)
	}
	framed := append([]byte{0, 0, 0, 0, 0}, payload...)
	binary.BigEndian.PutUint32(framed[1:5], uint32(id))

	d, err := newAvroDecoder(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.decode(framed)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"after":{"id":12,"amount":123.45,"status":"paid","placed":"2025-01-02T03:04:05.000006Z","tags":["a","b"]},"op":"u","ts_ms":1700000000000}`
	if string(got) != want {
		t.Errorf("decoded\n%s\nwant\n%s", got, want)
	}
	if op := opOf(got); op != "u" {
		t.Errorf("opOf = %q, want u", op)
	}
	if ts, ok := sourceTsMs([]byte(`{"source":{"ts_ms":5}}`)); !ok || ts != 5 {
		t.Errorf("sourceTsMs = %d, %v", ts, ok)
	}

	// The schema is looked up once.
	before := reg.TotalRequests()
	if _, err := d.decode(framed); err != nil {
		t.Fatal(err)
	}
	if n := reg.TotalRequests() - before; n != 0 {
		t.Errorf("%d registry requests for a known schema id, want 0", n)
	}
	if _, err := d.decode([]byte(`{"op":"c"}`)); err == nil {
		t.Error("JSON decoded as Avro without an error")
	}
}
