package schema

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/hamba/avro/v2"
)

// FuzzVectorText: pgvector's text parsers never panic; a failed parse
// leaves the caller's buffer as it was; what they accept is finite, reads
// back the same from the shortest text of its values (so nothing was cut
// or guessed), and has ascending 1-based sparse indices within the
// dimensions; both encoders write it (valid JSON; Avro that decodes with
// the column's schema to the same numbers); the HashMap order is a
// permutation.
func FuzzVectorText(f *testing.F) {
	for _, s := range []string{"[1,2,3]", "[101,102,103]", "{1:201,9:209}/3000", "{1: 301, 9: 309}/3000", "{}/5",
		"[0.099975586,-65504,6e-05]", "[1e39]", "[NaN]", "[]", "{1:1}/32768", "{2:1,1:2}/3", " [ 1 , 2 ] ", "{1:1:1}/2",
		"[1,,2]", "{16:1,32:2,48:3,64:4,80:5,96:6,112:7,128:8,144:9}/200", "[0x1p3]", "{1:1}/3/4", "[-0]"} {
		f.Add([]byte(s))
	}
	enc := NewAvroEncoder(Config{Name: "f"})
	js := NewJSONEncoder(Config{Name: "f"})
	f.Fuzz(func(t *testing.T, s []byte) {
		for _, bits := range []int{64, 32} {
			pre := []float64{42}
			got, err := parseVector(s, bits, pre)
			if err != nil {
				if len(got) != 1 || got[0] != 42 {
					t.Fatalf("%q: buffer changed on error: %v", s, got)
				}
				continue
			}
			got = got[1:]
			text := []byte{'['}
			for i, v := range got {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%q: non-finite element %v", s, v)
				}
				if i > 0 {
					text = append(text, ',')
				}
				text = strconv.AppendFloat(text, v, 'g', -1, bits)
			}
			text = append(text, ']')
			back, err := parseVector(text, bits, nil)
			if err != nil || !slices.Equal(back, got) {
				t.Fatalf("%q (%d bits): %v reads back from %s as %v, %v", s, bits, got, text, back, err)
			}
		}
		pre := []sparseEntry{{7, 7}}
		dims, entries, err := parseSparseVector(s, pre)
		if err != nil {
			if len(entries) != 1 || entries[0] != pre[0] {
				t.Fatalf("%q: buffer changed on error: %v", s, entries)
			}
		} else {
			entries = entries[1:]
			for i, e := range entries {
				if e.Index < 1 || e.Index > dims || i > 0 && e.Index <= entries[i-1].Index || math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
					t.Fatalf("%q: entry %d %+v of %d dimensions", s, i, e, dims)
				}
			}
			ordered := slices.Clone(entries)
			javaShortHashMapOrder(ordered)
			sorted := slices.Clone(ordered)
			slices.SortFunc(sorted, func(a, b sparseEntry) int { return int(a.Index) - int(b.Index) })
			if !slices.Equal(sorted, entries) {
				t.Fatalf("%q: HashMap order %v is not a permutation of %v", s, ordered, entries)
			}
		}
		// Both encoders, for each type: valid JSON, and Avro that decodes
		// with the column's schema.
		for _, name := range []string{"vector", "halfvec", "sparsevec"} {
			ct := &colType{}
			mapVector(ct, name)
			ct.schema = ct.schema.withOptional(true)
			out, jerr := js.appendColumn(nil, ct, Value{Kind: ValueText, Data: s})
			if jerr == nil && !json.Valid(out) {
				t.Fatalf("%s %q: invalid JSON %s", name, s, out)
			}
			w := avro.NewWriter(nil, 64)
			enc.w = w
			aerr := enc.writeColumn(ct, ct.schema, Value{Kind: ValueText, Data: s})
			if (aerr == nil) != (jerr == nil) {
				t.Fatalf("%s %q: JSON error %v, Avro error %v", name, s, jerr, aerr)
			}
			if aerr != nil {
				continue
			}
			sch, err := avro.Parse(renderAvro(&Schema{Type: TypeStruct, Name: "f.R", Fields: []Field{{"c", ct.schema}}}))
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := avro.Unmarshal(sch, w.Buffer(), &v); err != nil {
				t.Fatalf("%s %q: Avro does not decode: %v", name, s, err)
			}
		}
	})
}
