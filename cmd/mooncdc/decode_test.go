package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// decodeTestSchemas stand in for a registry: ids 1 to len-1 (0 is unknown).
var decodeTestSchemas = []string{
	"",
	tailKeySchema,
	tailValueSchema,
	`{"type":"record","name":"All","fields":[
		{"name":"b","type":"boolean"},
		{"name":"i","type":"int"},
		{"name":"f","type":"float"},
		{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
		{"name":"m","type":{"type":"map","values":["null","long"]}},
		{"name":"fx","type":{"type":"fixed","name":"F3","size":3}},
		{"name":"dec","type":{"type":"fixed","name":"D4","size":4,"logicalType":"decimal","precision":8,"scale":3}},
		{"name":"t","type":{"type":"int","logicalType":"time-millis"}},
		{"name":"tu","type":{"type":"long","logicalType":"time-micros"}},
		{"name":"lt","type":{"type":"long","logicalType":"local-timestamp-millis"}},
		{"name":"u","type":["null",{"type":"string","logicalType":"uuid"}]},
		{"name":"arr","type":["null",{"type":"array","items":"All"}]},
		{"name":"mp","type":["null",{"type":"map","values":"int"}]}]}`,
}

func decodeTestLookup(t testing.TB) schemaLookup {
	parsed := make([]avro.Schema, len(decodeTestSchemas))
	for id, text := range decodeTestSchemas[1:] {
		s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
		if err != nil {
			t.Fatalf("schema %d: %v", id+1, err)
		}
		parsed[id+1] = s
	}
	return func(id int) (avro.Schema, error) {
		if id <= 0 || id >= len(parsed) {
			return nil, errors.New("not in the Schema Registry")
		}
		return parsed[id], nil
	}
}

func decodeFrame(t testing.TB, id int, v any) []byte {
	t.Helper()
	s, err := avro.ParseWithCache(decodeTestSchemas[id], "", &avro.SchemaCache{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := avro.Marshal(s, v)
	if err != nil {
		t.Fatalf("encode for schema %d: %v", id, err)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
}

func decodeAllValue(inner any) map[string]any {
	return map[string]any{
		"b": true, "i": -3, "f": float32(math.Inf(-1)), "e": "GREEN",
		"m":   map[string]any{"z": map[string]any{"long": int64(1)}, "a": nil},
		"fx":  [3]byte{0xfb, 0xff, 0},
		"dec": big.NewRat(-1234, 1000),
		"t":   10*time.Hour + 4*time.Minute + 5*time.Second + 6*time.Millisecond,
		"tu":  25 * time.Hour, // not a time of day: shown as its number
		"lt":  time.Date(2025, 1, 2, 10, 4, 5, 0, time.UTC),
		"u":   "4b7d3a3e-8f3e-4b1f-9a56-0c6f0b1e2a11",
		"arr": inner,
		"mp":  nil,
	}
}

func TestDecodePayload(t *testing.T) {
	lookup := decodeTestLookup(t)
	tests := []struct {
		name    string
		b       []byte
		lookup  schemaLookup
		want    string
		problem string // in the error; "" for none
	}{
		{name: "null", b: nil, want: `null`},
		{name: "json compacted", b: []byte(" {\"a\" : [1, 2.50, \"<&>\"],\n \"b\": null}\n"), want: `{"a":[1,2.50,"<&>"],"b":null}`},
		{name: "json scalar", b: []byte(`"text"`), want: `"text"`},
		{name: "empty", b: []byte{}, want: `{"raw_base64":""}`, problem: "neither"},
		{name: "text", b: []byte("hello"), want: `{"raw_base64":"aGVsbG8="}`, problem: "neither Confluent-framed Avro nor JSON"},
		{name: "framed, no registry", b: decodeFrame(t, 1, map[string]any{"id": int64(7)}), want: `{"raw_base64":"AAAAAAEO"}`, problem: "set format.schema_registry.url"},
		{name: "framed, unknown id", b: []byte{0, 0, 0, 0, 9, 14}, lookup: lookup, want: `{"raw_base64":"AAAAAAkO"}`, problem: "schema id 9: not in the Schema Registry"},
		{name: "short frame", b: []byte{0, 0, 0, 1}, lookup: lookup, want: `{"raw_base64":"AAAAAQ=="}`, problem: "neither"},
		{name: "avro key", b: decodeFrame(t, 1, map[string]any{"id": int64(-7)}), lookup: lookup, want: `{"id":-7}`},
		{name: "avro truncated", b: []byte{0, 0, 0, 0, 2, 2}, lookup: lookup, want: `{"raw_base64":"AAAAAAIC"}`, problem: "decode Avro with schema id 2"},
		{name: "avro left over", b: append(decodeFrame(t, 1, map[string]any{"id": int64(7)}), 1), lookup: lookup, want: `{"raw_base64":"AAAAAAEOAQ=="}`, problem: "left over"},
		{
			name: "avro envelope", lookup: lookup,
			b: decodeFrame(t, 2, map[string]any{"op": "u", "ts_ms": nil,
				"before": map[string]any{"shop.public.orders.Value": map[string]any{"id": int64(1), "name": nil, "price": big.NewRat(-5, 100),
					"created": time.UnixMilli(0).UTC(), "day": nil, "data": []byte{}, "score": math.NaN(), "tags": []any{}}},
				"after": map[string]any{"shop.public.orders.Value": map[string]any{"id": int64(1), "name": "n", "price": big.NewRat(100000, 1),
					"created": time.UnixMilli(-1).UTC(), "day": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "data": []byte("<>"), "score": math.Inf(1), "tags": []any{"x"}}},
			}),
			want: `{"before":{"id":1,"name":null,"price":-0.05,"created":"1970-01-01T00:00:00Z","day":null,"data":"","score":"NaN","tags":[]},` +
				`"after":{"id":1,"name":"n","price":100000.00,"created":"1969-12-31T23:59:59.999Z","day":"1969-12-31","data":"PD4=","score":"Infinity","tags":["x"]},` +
				`"op":"u","ts_ms":null}`,
		},
		{
			name: "avro types", lookup: lookup,
			b: decodeFrame(t, 3, decodeAllValue(map[string]any{"array": []any{decodeAllValue(nil)}})),
			want: `{"b":true,"i":-3,"f":"-Infinity","e":"GREEN","m":{"a":null,"z":1},"fx":"+/8A","dec":-1.234,"t":"10:04:05.006","tu":90000000000,` +
				`"lt":"2025-01-02T10:04:05","u":"4b7d3a3e-8f3e-4b1f-9a56-0c6f0b1e2a11","arr":[` +
				`{"b":true,"i":-3,"f":"-Infinity","e":"GREEN","m":{"a":null,"z":1},"fx":"+/8A","dec":-1.234,"t":"10:04:05.006","tu":90000000000,` +
				`"lt":"2025-01-02T10:04:05","u":"4b7d3a3e-8f3e-4b1f-9a56-0c6f0b1e2a11","arr":null,"mp":null}],"mp":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodePayload(tt.b, tt.lookup)
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			switch {
			case tt.problem == "" && err != nil:
				t.Errorf("unexpected problem: %v", err)
			case tt.problem != "" && (err == nil || !strings.Contains(err.Error(), tt.problem)):
				t.Errorf("problem %v, want one containing %q", err, tt.problem)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON: %s", got)
			}
		})
	}
}

func TestDecodeRecordJSON(t *testing.T) {
	r := &kgo.Record{
		Topic: "shop.public.orders", Partition: 3, Offset: 41,
		Timestamp: time.Date(2025, 1, 2, 11, 4, 5, 7_000_000, time.FixedZone("CET", 3600)),
		Headers:   []kgo.RecordHeader{{Key: "mooncdc.lsn", Value: []byte("9")}, {Key: "x", Value: []byte("1")}, {Key: "x", Value: []byte("2")}},
		Key:       []byte(`{"id": 1}`),
		Value:     []byte{1, 2},
	}
	line, problem := recordJSON(r, nil, false)
	want := `{"topic":"shop.public.orders","partition":3,"offset":41,"timestamp":"2025-01-02T10:04:05.007Z","headers":{"mooncdc.lsn":"9","x":"2"},` +
		`"key":{"id":1},"value":{"raw_base64":"AQI="}}` + "\n"
	if string(line) != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
	if problem == nil || !strings.HasPrefix(problem.Error(), "value: ") {
		t.Errorf("problem %v, want one about the value", problem)
	}

	pretty, _ := recordJSON(r, nil, true)
	if !strings.HasPrefix(string(pretty), "{\n  \"topic\": \"shop.public.orders\",\n") || !strings.Contains(string(pretty), "\n  \"key\": {\n    \"id\": 1\n  },\n") {
		t.Errorf("pretty:\n%s", pretty)
	}
}

// FuzzDecodeRecord feeds arbitrary keys and values, with a registry of a
// few schemas, through the decoding tail does: it must neither panic nor
// print anything but one line of valid JSON per record.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"id":1}`), []byte(`{"op":"c"}`))
	f.Add([]byte{}, []byte(nil))
	f.Add(decodeFrame(f, 1, map[string]any{"id": int64(7)}), decodeFrame(f, 3, decodeAllValue(map[string]any{"array": []any{decodeAllValue(nil)}})))
	f.Add([]byte{0, 0, 0, 0, 2, 2, 2}, []byte{0, 0, 0, 0, 3, 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	lookup := decodeTestLookup(f)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := &kgo.Record{Topic: "t", Key: key, Value: value, Timestamp: time.UnixMilli(0)}
		line, _ := recordJSON(r, lookup, false)
		if line == nil || strings.Count(string(line), "\n") != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("not one line: %q", line)
		}
		if !json.Valid(line) {
			t.Fatalf("not valid JSON: %s", line)
		}
	})
}
