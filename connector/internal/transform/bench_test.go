package transform

import (
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// benchRecord is an update of a ten-column row in Debezium's envelope.
func benchRecord(b *testing.B) Record {
	row := structOf("id", sInt64, "region", sString, "name", sString, "qty", sInt32, "price", sFloat64,
		"active", sBool, "note", sOptStr, "created", sInt64, "code", sString, "score", sFloat32)
	src := structOf("version", sString, "connector", sString, "name", sString, "ts_ms", sInt64, "db", sString,
		"schema", sString, "table", sString, "lsn", sOptInt64)
	env := &schema.Schema{Type: schema.TypeStruct, Name: "p.public.t.Envelope", Version: 2, Fields: []schema.Field{
		{Name: "before", Schema: opt(row)}, {Name: "after", Schema: opt(row)}, {Name: "source", Schema: src},
		{Name: "op", Schema: sString}, {Name: "ts_ms", Schema: sOptInt64}}}
	mk := func(region string) *Struct {
		return &Struct{Schema: row, Values: []any{int64(42), region, "widget", int32(3), 9.5, true, nil, int64(1700000000000), "X1", float32(0.5)}}
	}
	s := &Struct{Schema: src, Values: []any{"3.6.1.Final", "postgresql", "p", int64(1700000000000), "db", "public", "t", int64(123456)}}
	v := &Struct{Schema: env, Values: []any{mk("US"), mk("EU"), s, "u", int64(1700000000001)}}
	ks := structOf("id", sInt64)
	return Record{Topic: "p.public.t", KeySchema: ks, Key: &Struct{Schema: ks, Values: []any{int64(42)}}, ValueSchema: env, Value: v,
		Headers: []Header{{Key: "trace", Value: "abc"}}}
}

// BenchmarkCondition is the per-record cost of evaluating a compiled
// condition (issue 30: "a per-record cost reported by make bench").
func BenchmarkCondition(b *testing.B) {
	for _, src := range []string{
		"value.op == 'u'",
		"value.after.region == 'EU'",
		"value.op != 'd' && value.after.region == 'EU' && value.after.qty > 2 && headers.trace == 'abc'",
	} {
		b.Run(src, func(b *testing.B) {
			c, err := CompileCondition(src)
			if err != nil {
				b.Fatal(err)
			}
			r := benchRecord(b)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				ok, err := c.Eval(&r)
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkChain is a three-transform chain on one record: a Filter,
// InsertField (static) and ReplaceField (exclude), as a deployment
// configures them.
func BenchmarkChain(b *testing.B) {
	c, err := Parse(map[string]string{
		"transforms":                  "keep,tag,drop",
		"transforms.keep.type":        dt + "Filter",
		"transforms.keep.language":    "cel",
		"transforms.keep.condition":   "value.after.region == 'EU'",
		"transforms.tag.type":         kt + "InsertField$Value",
		"transforms.tag.static.field": "origin",
		"transforms.tag.static.value": "mooncdc",
		"transforms.drop.type":        kt + "ReplaceField$Value",
		"transforms.drop.exclude":     "transaction",
	})
	if err != nil {
		b.Fatal(err)
	}
	r := benchRecord(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, keep, err := c.Apply(r); err != nil || !keep {
			b.Fatal(keep, err)
		}
	}
}
