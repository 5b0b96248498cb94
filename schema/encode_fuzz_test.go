package schema

import (
	"github.com/mooncdc/mooncdc/internal/connecttest"

	"encoding/json"
	"errors"
	"sort"
	"testing"
	"time"
)

// everyTypeRelation has one nullable column per mapped type: every
// fixed-OID type, its array, and the catalog-described kinds (enum,
// hstore, citext, ltree, an unknown type).
func everyTypeRelation() *Relation {
	oids := make([]int, 0, len(typeNames))
	for oid := range typeNames {
		oids = append(oids, int(oid))
	}
	sort.Ints(oids)
	rel := &Relation{Schema: "public", Table: "every", Columns: []Column{{Name: "id", TypeOID: oidInt4, TypeMod: -1, Key: true, NotNull: true}}, KeyIndexes: []int{0}}
	add := func(name string, oid uint32, mod int32, ti *TypeInfo) {
		rel.Columns = append(rel.Columns, Column{Name: name, TypeOID: oid, TypeMod: mod, Type: ti})
	}
	for _, oid := range oids {
		add(typeNames[uint32(oid)], uint32(oid), -1, nil)
	}
	for arr, elem := range builtinArrays {
		add("_"+typeNames[elem], arr, -1, nil)
	}
	add("numeric_10_2", oidNumeric, 10<<16|2+4, nil)
	add("time_3", oidTime, 3, nil)
	add("bit_1", oidBit, 1, nil)
	add("bit_8", oidBit, 8, nil)
	enum := &TypeInfo{OID: 90001, Name: "mood", Kind: 'e', Mod: -1, Labels: []string{"sad", "ok"}}
	add("enum", enum.OID, -1, enum)
	add("_enum", 90002, -1, &TypeInfo{OID: 90002, Name: "_mood", Kind: 'b', Mod: -1, Elem: enum})
	hstore := &TypeInfo{OID: 90003, Name: "hstore", Kind: 'b', Mod: -1}
	add("hstore", hstore.OID, -1, hstore)
	add("_hstore", 90007, -1, &TypeInfo{OID: 90007, Name: "_hstore", Kind: 'b', Mod: -1, Elem: hstore})
	add("citext", 90004, -1, &TypeInfo{OID: 90004, Name: "citext", Kind: 'b', Mod: -1})
	add("ltree", 90005, -1, &TypeInfo{OID: 90005, Name: "ltree", Kind: 'b', Mod: -1})
	add("unknown", 90006, -1, &TypeInfo{OID: 90006, Name: "geometry", Kind: 'b', Mod: -1})
	return rel
}

// FuzzEncodeEveryType feeds arbitrary text to a column of every mapped
// type, through plain JSON, JSON with schemas and Avro, in the default
// modes and in every other mode: a value that does not parse is a
// *ValueError naming its column, never a panic, and what encodes is valid
// JSON (or decodable Avro framing).
func FuzzEncodeEveryType(f *testing.F) {
	rel := everyTypeRelation()
	cfgs := []Config{
		testJSONConfig,
		{Name: "srv", Database: "db", DecimalMode: "double", BinaryMode: "hex", TimePrecisionMode: "connect",
			IntervalMode: "string", HstoreMode: "map", IncludeUnknownDatatypes: true},
		{Name: "srv", Database: "db", DecimalMode: "string", BinaryMode: "base64-url-safe",
			TimePrecisionMode: "adaptive_time_microseconds", UnavailableValue: "hex:00ff"},
	}
	type encoder func(ch *Change) ([]byte, error)
	var encs []encoder
	var jsonOut []bool
	for _, cfg := range cfgs {
		a, p, ids := NewAvroEncoder(cfg), NewPlan(cfg, rel), NoAvroIDs
		if err := a.Register(p, &ids, true, true, func(bool, string) (int, error) { return 1, nil }); err != nil {
			f.Fatal(err)
		}
		j, js := NewJSONEncoder(cfg), NewJSONSchemaEncoder(cfg)
		encs = append(encs,
			func(ch *Change) ([]byte, error) { return j.AppendValue(nil, p, ch, time.UnixMilli(1)) },
			func(ch *Change) ([]byte, error) { return js.AppendValue(nil, p, ch, time.UnixMilli(1)) },
			func(ch *Change) ([]byte, error) { return a.AppendValue(nil, p, ids, ch, time.UnixMilli(1)) })
		jsonOut = append(jsonOut, true, true, false)
	}
	seeds := []string{"", "1", "-1", "NaN", "Infinity", "t", "12.50", `\x00ff`, "2024-01-02", "03:04:05.5",
		"2024-01-02 03:04:05+01", "1 year 2 mons -3 days 04:05:06", "{1,NULL,\"a b\"}", "{{1},{2}}", `"a"=>"1", "b"=>NULL`,
		"(1.5,-2)", "(1,1),(0,0)", "<(1,2),3>", "101", `{"\"a\"=>\"1\"",NULL,""}`, "[1,10)", "$1,234.56", "-$0.01", "infinity", "\xff\xfe"}
	// Each column gets a rotating third of the seeds: every column and
	// every seed are covered at a third of the cost.
	for col := range len(rel.Columns) - 1 {
		for k := 0; k < len(seeds); k += 3 {
			f.Add(uint16(col), []byte(seeds[(col+k)%len(seeds)]))
		}
	}
	f.Fuzz(func(t *testing.T, col uint16, data []byte) {
		i := 1 + int(col)%(len(rel.Columns)-1)
		after := make(Tuple, len(rel.Columns))
		after[0] = Value{Kind: ValueText, Data: []byte("1")}
		after[i] = Value{Kind: ValueText, Data: data}
		ch := &Change{Op: OpCreate, Relation: rel, After: after}
		for n, enc := range encs {
			out, err := enc(ch)
			if err != nil {
				var ve *ValueError
				if !errors.As(err, &ve) || ve.Column != rel.Columns[i].Name || ve.Table != "public.every" {
					t.Fatalf("encoder %d, column %s: error %v is not a ValueError naming the column", n, rel.Columns[i].Name, err)
				}
				continue
			}
			if jsonOut[n] && !json.Valid(out) {
				t.Fatalf("encoder %d, column %s: invalid JSON %q", n, rel.Columns[i].Name, out)
			}
			// JSON with schemas, in every mode set: what JsonConverter reads.
			if n%3 == 1 {
				if err := connecttest.Validate(out); err != nil {
					t.Fatalf("encoder %d (config %d), column %s = %q: JsonConverter would refuse the record: %v", n, n/3, rel.Columns[i].Name, data, err)
				}
			}
			if !jsonOut[n] && (len(out) < 5 || out[0] != 0) {
				t.Fatalf("encoder %d: bad Avro framing % x", n, out)
			}
		}
	})
}
