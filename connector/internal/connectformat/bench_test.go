package connectformat

import "testing"

// The per-record cost of each format, for an update of a five-column row
// in a Debezium envelope (pgChange): CPU per record; `make bench` puts it
// beside the plain JSON run once the formats are wired.
func BenchmarkEncode(b *testing.B) {
	v := pgChange(b)
	p, err := NewProtobuf(pgEnvelope)
	if err != nil {
		b.Fatal(err)
	}
	j, err := NewJSONSchema(pgEnvelope)
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	run := func(name string, f func([]byte) ([]byte, error)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := f(buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				buf = out
			}
			b.ReportMetric(float64(len(buf)), "bytes/record")
		})
	}
	run("protobuf", func(d []byte) ([]byte, error) { return p.AppendEncode(d, 1, v) })
	run("jsonschema", func(d []byte) ([]byte, error) { return j.AppendEncode(d, 1, v) })
	run("cloudevents", func(d []byte) ([]byte, error) {
		out, _, err := AppendCloudEvent(d, pgEnvelope, v, CloudEventsOptions{})
		return out, err
	})
	run("cloudevents-dataschema", func(d []byte) ([]byte, error) {
		out, _, err := AppendCloudEvent(d, pgEnvelope, v, CloudEventsOptions{DataSchemas: true})
		return out, err
	})
	b.Run("protobuf-schema", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := NewProtobuf(pgEnvelope); err != nil {
				b.Fatal(err)
			}
		}
	})
}
