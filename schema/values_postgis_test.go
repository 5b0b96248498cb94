package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Debezium 3.6.1's expectations for PostGIS (debezium-connector-postgres/
// src/test/java/io/debezium/connector/postgresql/
// AbstractRecordsProducerTest.java, v3.6.1.Final): the hex EWKB Postgres
// prints and the wkb Debezium writes are the same bytes.
const (
	// :931, 'SRID=3187;POINT(174.9479 -36.7208)'::geometry, srid 3187.
	dbzPointEWKB = "0101000020730C00001C7C613255DE6540787AA52C435C42C0"
	// :934-935, 'MULTILINESTRING((169.1321 -44.7032, 167.8974 -44.6414))'::geography, srid 4326.
	dbzMultiLineEWKB = "0105000020E610000001000000010200000002000000A779C7293A2465400B462575025A46C0C66D3480B7FC6440C3D32B65195246C0"
	// :945, 'GEOMETRYCOLLECTION EMPTY'::geometry, srid null.
	dbzEmptyCollEWKB = "010700000000000000"
	// :947-948, 'POLYGON((166.51 -46.64, …))'::geometry, srid null.
	dbzPolygonEWKB = "01030000000100000005000000B81E85EB51D0644052B81E85EB5147C0713D0AD7A350664052B81E85EB5147C0713D0AD7A35066409A999999993941C0B81E85EB51D064409A999999993941C0B81E85EB51D0644052B81E85EB5147C0"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeEWKBKeepsTheBytesAndReadsTheSRID(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		srid     int32
		hasSRID  bool
		wantErr  error
	}{
		// PostgisGeometry.fromHexEwkb: wkb is the EWKB itself, SRID flag
		// and SRID included (PostgisGeometry.java:46-57, :104-123).
		{"point with SRID (AbstractRecordsProducerTest.java:931)", dbzPointEWKB, 3187, true, nil},
		{"geography with SRID (:934-935)", dbzMultiLineEWKB, 4326, true, nil},
		{"empty collection, no SRID (:945)", dbzEmptyCollEWKB, 0, false, nil},
		{"polygon, no SRID (:947-948)", dbzPolygonEWKB, 0, false, nil},
		{"lower-case hex", "0101000020730c00001c7c613255de6540787aa52c435c42c0", 3187, true, nil},
		// Big-endian (byte order 0): the type word and SRID read big-endian
		// (PostgisGeometry.java:112). POINT Z with SRID 4326: type
		// 0xA0000001 (Z flag 0x80000000 | SRID flag | 1), SRID 0x000010E6.
		{"big-endian, Z flag, SRID", "00A0000001000010E6" + "3FF0000000000000" + "4000000000000000" + "4008000000000000", 4326, true, nil},
		// A negative SRID is a signed int32 in Java (reader.getInt()).
		{"negative SRID", "0101000020FFFFFFFF" + "0000000000000000" + "0000000000000000", -1, true, nil},
		{"odd length", "0101000020730C00001", 0, false, errEWKBHex},
		{"not hex", "01010000207X0C00001C7C613255DE6540787AA52C435C42C0", 0, false, errEWKBHex},
		{"8 bytes", "0107000000000000", 0, false, errEWKBShort},
		{"empty", "", 0, false, errEWKBShort},
		{"byte order 2", "020700000000000000", 0, false, errEWKBByteOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("pre")
			got, srid, has, err := decodeEWKB(dst, []byte(tc.in))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrInvalidEWKB) {
					t.Fatalf("err = %v, want %v (wrapping ErrInvalidEWKB)", err, tc.wantErr)
				}
				if string(got) != "pre" {
					t.Errorf("dst = %q after an error, want it unchanged", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]byte("pre"), mustHex(t, tc.in)...); !bytes.Equal(got, want) {
				t.Errorf("wkb = %x, want the EWKB unchanged %x", got[3:], want[3:])
			}
			if srid != tc.srid || has != tc.hasSRID {
				t.Errorf("srid = %d (set %v), want %d (set %v)", srid, has, tc.srid, tc.hasSRID)
			}
		})
	}
}

// postgisRelation is Debezium's postgis_table and postgis_array_table
// (postgis_create_tables.ddl, v3.6.1.Final) in one relation, the types as
// the catalog describes them (typdelim ':' for both PostGIS types).
func postgisRelation() *Relation {
	geom := &TypeInfo{OID: 91001, Name: "geometry", Kind: 'b', Mod: -1, Delim: ':'}
	geog := &TypeInfo{OID: 91002, Name: "geography", Kind: 'b', Mod: -1, Delim: ':'}
	garr := &TypeInfo{OID: 91003, Name: "_geometry", Kind: 'b', Mod: -1, Delim: ',', Elem: geom}
	return &Relation{OID: 7, Schema: "public", Table: "postgis", ReplicaIdentity: 'd', KeyIndexes: []int{0}, Columns: []Column{
		{Name: "pk", TypeOID: oidInt4, TypeMod: -1, NotNull: true, Key: true},
		{Name: "p", TypeOID: geom.OID, TypeMod: -1, Type: geom},
		{Name: "ml", TypeOID: geog.OID, TypeMod: -1, Type: geog},
		{Name: "ga", TypeOID: garr.OID, TypeMod: -1, Type: garr},
		{Name: "gann", TypeOID: garr.OID, TypeMod: -1, Type: garr, NotNull: true},
		{Name: "pnn", TypeOID: geom.OID, TypeMod: -1, Type: geom, NotNull: true},
		{Name: "gnn", TypeOID: geog.OID, TypeMod: -1, Type: geog, NotNull: true},
	}}
}

func geomValue(t *testing.T, ewkb string, srid any) map[string]any {
	return map[string]any{"wkb": base64.StdEncoding.EncodeToString(mustHex(t, ewkb)), "srid": srid}
}

// TestPostGISValuesAsDebezium encodes Debezium's PostGIS rows through
// plain JSON, JSON with schemas and Avro: the values of
// schemaAndValuesForPostgisTypes() and schemaAndValuesForPostgisArrayTypes()
// (AbstractRecordsProducerTest.java:924-954), and their schemas.
func TestPostGISValuesAsDebezium(t *testing.T) {
	rel := postgisRelation()
	arr := "{" + dbzEmptyCollEWKB + ":" + dbzPolygonEWKB + "}" // PostGIS's array_out, typdelim ':'
	r := encodeRow(t, testJSONConfig, rel, Tuple{text("1"), text(dbzPointEWKB), text(dbzMultiLineEWKB), text(arr), text(arr),
		text(dbzEmptyCollEWKB), text(dbzMultiLineEWKB)})
	elems := []any{geomValue(t, dbzEmptyCollEWKB, nil), geomValue(t, dbzPolygonEWKB, nil)}
	want := map[string]any{
		"pk":   float64(1),
		"p":    geomValue(t, dbzPointEWKB, float64(3187)),
		"ml":   geomValue(t, dbzMultiLineEWKB, float64(4326)),
		"ga":   elems,
		"gann": elems,
		"pnn":  geomValue(t, dbzEmptyCollEWKB, nil),
		"gnn":  geomValue(t, dbzMultiLineEWKB, float64(4326)),
	}
	if !reflect.DeepEqual(r.plain, want) {
		t.Errorf("plain JSON after = %v\nwant %v", r.plain, want)
	}
	if !reflect.DeepEqual(r.payload, want) {
		t.Errorf("JSON with schemas after = %v\nwant %v", r.payload, want)
	}

	// Schemas: Geometry.builder() is optional in itself
	// (Geometry.java:36-44), Geography.builder() is not
	// (Geography.java:33-40); the array items are the optional struct
	// (PostgresValueConverter.java:310-311), the array required when the
	// column is NOT NULL (AbstractRecordsProducerTest.java:953).
	structSchema := func(name, doc string, optional bool) map[string]any {
		return map[string]any{"type": "struct", "name": name, "version": float64(1), "doc": doc, "optional": optional,
			"fields": []any{
				map[string]any{"field": "wkb", "type": "bytes", "optional": false},
				map[string]any{"field": "srid", "type": "int32", "optional": true},
			}}
	}
	geomS := structSchema("io.debezium.data.geometry.Geometry", "Geometry", true)
	for field, w := range map[string]map[string]any{
		"p":    withField(geomS, "p"),
		"ml":   withField(structSchema("io.debezium.data.geometry.Geography", "Geography", true), "ml"),
		"ga":   {"type": "array", "optional": true, "field": "ga", "items": geomS},
		"gann": {"type": "array", "optional": false, "field": "gann", "items": geomS},
		"pnn":  withField(geomS, "pnn"), // NOT NULL, optional all the same
		"gnn":  withField(structSchema("io.debezium.data.geometry.Geography", "Geography", false), "gnn"),
	} {
		if got := r.afterField(field); !reflect.DeepEqual(got, w) {
			t.Errorf("%s schema = %v\nwant %v", field, got, w)
		}
	}

	// Avro: a record {wkb bytes, srid [null, int]} (AvroData of the
	// struct), the values as the JSON's.
	avroGeom := func(v any) (wkb []byte, srid any) {
		m, _ := v.(map[string]any)
		if len(m) == 1 { // hamba names an optional record's union branch by its full name
			for _, in := range m {
				m, _ = in.(map[string]any)
			}
		}
		wkb, _ = m["wkb"].([]byte)
		return wkb, unwrapAvro(m["srid"])
	}
	for field, w := range map[string]struct {
		ewkb string
		srid any
	}{"p": {dbzPointEWKB, 3187}, "ml": {dbzMultiLineEWKB, 4326}, "pnn": {dbzEmptyCollEWKB, nil}, "gnn": {dbzMultiLineEWKB, 4326}} {
		if wkb, srid := avroGeom(r.avro[field]); !bytes.Equal(wkb, mustHex(t, w.ewkb)) || srid != w.srid {
			t.Errorf("Avro %s = %#v, want wkb %s srid %v", field, r.avro[field], w.ewkb, w.srid)
		}
	}
	for _, field := range []string{"ga", "gann"} {
		ga, _ := unwrapAvro(r.avro[field]).([]any)
		if len(ga) != 2 {
			t.Fatalf("Avro %s = %#v, want 2 elements", field, r.avro[field])
		}
		for i, w := range []string{dbzEmptyCollEWKB, dbzPolygonEWKB} {
			if wkb, srid := avroGeom(ga[i]); !bytes.Equal(wkb, mustHex(t, w)) || srid != nil {
				t.Errorf("Avro %s[%d] = %#v, want wkb %s srid null", field, i, ga[i], w)
			}
		}
	}
	for _, frag := range []string{
		`{"name":"p","type":["null",{"type":"record","name":"Geometry","namespace":"io.debezium.data.geometry","fields":[{"name":"wkb","type":"bytes"},{"name":"srid","type":["null","int"],"default":null}],"connect.doc":"Geometry","connect.version":1,"connect.name":"io.debezium.data.geometry.Geometry"}],"default":null}`,
		// The second use of a record is a reference to its name.
		`{"name":"gnn","type":"io.debezium.data.geometry.Geography"}`,
		`{"name":"gann","type":{"type":"array","items":["null","io.debezium.data.geometry.Geometry"]}}`,
	} {
		if !bytes.Contains([]byte(r.avsc), []byte(frag)) {
			t.Errorf("Avro schema lacks %s:\n%s", frag, r.avsc)
		}
	}
}

func withField(s map[string]any, name string) map[string]any {
	out := map[string]any{"field": name}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// TestPostGISNullsAndFallbacks: NULL columns and NULL elements stay null;
// in a key-only old image (REPLICA IDENTITY DEFAULT delete) a NOT NULL
// geometry or geography gets Debezium's fallback GEOMETRYCOLLECTION EMPTY
// (PostgresValueConverter.java:1023-1024, :1048-1049) and a NOT NULL
// geometry[] the empty list (:1132), while nullable ones stay null.
func TestPostGISNullsAndFallbacks(t *testing.T) {
	rel := postgisRelation()
	r := encodeRow(t, testJSONConfig, rel, Tuple{text("1"), null, null, text("{NULL:" + dbzPointEWKB + "}"), text("{}"),
		text(dbzPointEWKB), text(dbzPointEWKB)})
	want := map[string]any{"pk": float64(1), "p": nil, "ml": nil,
		"ga": []any{nil, geomValue(t, dbzPointEWKB, float64(3187))}, "gann": []any{},
		"pnn": geomValue(t, dbzPointEWKB, float64(3187)), "gnn": geomValue(t, dbzPointEWKB, float64(3187))}
	if !reflect.DeepEqual(r.plain, want) {
		t.Errorf("plain JSON after = %v\nwant %v", r.plain, want)
	}

	del := &Change{Op: OpDelete, Relation: rel, Before: Tuple{text("1"), null, null, null, null, null, null}}
	out, err := NewJSONEncoder(testJSONConfig).AppendValue(nil, NewPlan(testJSONConfig, del.Relation), del, time.UnixMilli(1))
	if err != nil {
		t.Fatal(err)
	}
	empty := `{"wkb":"AQcAAAAAAAAA","srid":null}` // base64 of 010700000000000000
	for _, frag := range []string{`"p":null`, `"ml":null`, `"ga":null`, `"gann":[]`, `"pnn":` + empty, `"gnn":` + empty} {
		if !bytes.Contains(out, []byte(frag)) {
			t.Errorf("delete before: %s lacks %s", out, frag)
		}
	}
}

// TestPostGISValueThatIsNotEWKBIsAValueError: a value mooncdc cannot
// decode exactly is a ValueError wrapping ErrInvalidEWKB (the table is
// parked), in a column and as an array element, in JSON and Avro.
func TestPostGISValueThatIsNotEWKBIsAValueError(t *testing.T) {
	rel := postgisRelation()
	for _, after := range []Tuple{
		{text("1"), text("POINT(1 2)"), null, null, text("{}"), text(dbzPointEWKB), text(dbzPointEWKB)},
		{text("1"), null, text("0101"), null, text("{}"), text(dbzPointEWKB), text(dbzPointEWKB)},
		{text("1"), null, null, text("{" + dbzPointEWKB + ":zz}"), text("{}"), text(dbzPointEWKB), text(dbzPointEWKB)},
	} {
		ch := &Change{Op: OpCreate, Relation: rel, After: after}
		_, err := NewJSONEncoder(testJSONConfig).AppendValue(nil, NewPlan(testJSONConfig, ch.Relation), ch, time.UnixMilli(1))
		var ve *ValueError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidEWKB) {
			t.Errorf("JSON of %v: err = %v, want a ValueError wrapping ErrInvalidEWKB", after, err)
		} else if msg := ve.Error(); !strings.Contains(msg, "(type geometry,") && !strings.Contains(msg, "(type geography,") &&
			!strings.Contains(msg, "(type _geometry,") {
			t.Errorf("error %q does not name the column's type", msg)
		}
		if err := avroEncodeErr(t, rel, ch); !errors.Is(err, ErrInvalidEWKB) {
			t.Errorf("Avro of %v: err = %v, want ErrInvalidEWKB", after, err)
		}
	}
}

// avroEncodeErr encodes ch with Avro and returns the error.
func avroEncodeErr(t *testing.T, rel *Relation, ch *Change) error {
	t.Helper()
	e := NewAvroEncoder(testJSONConfig)
	registered(t, e, rel)
	_, err := e.AppendValue(nil, e.Plan(ch.Relation), testIDs, ch, time.UnixMilli(1))
	return err
}

// FuzzDecodeEWKB: any text either decodes to exactly its hex bytes with
// the SRID the type word announces, or is an ErrInvalidEWKB error that
// leaves dst as it was.
func FuzzDecodeEWKB(f *testing.F) {
	for _, s := range []string{dbzPointEWKB, dbzMultiLineEWKB, dbzEmptyCollEWKB, dbzPolygonEWKB, "", "0", "00A0000001000010E6", "020700000000000000"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		wkb, srid, has, err := decodeEWKB([]byte("pre"), s)
		if err != nil {
			if !errors.Is(err, ErrInvalidEWKB) || string(wkb) != "pre" {
				t.Fatalf("%q: err %v, dst %q", s, err, wkb)
			}
			return
		}
		want, herr := hex.DecodeString(string(s))
		if herr != nil || !bytes.Equal(wkb[3:], want) || len(want) < 9 || want[0] > 1 {
			t.Fatalf("%q: decoded %x (hex error %v)", s, wkb[3:], herr)
		}
		typ := want[1:5]
		flag := typ[3]&0x20 != 0
		if want[0] == 0 {
			flag = typ[0]&0x20 != 0
		}
		if has != flag || (!has && srid != 0) {
			t.Fatalf("%q: srid %d set %v, flag %v", s, srid, has, flag)
		}
	})
}

// TestUnchangedToastedGeometry: a large geometry an update did not touch
// (unchanged TOAST) cannot carry Debezium's placeholder string in its
// struct, and Debezium writes null for it (convertGeometry delivers
// nothing for the marker object: PostgresValueConverter.java:1022-1045,
// JdbcValueConverters.java:1373-1383): a silent loss. mooncdc makes it
// ErrUnchangedToastType naming REPLICA IDENTITY FULL, under which the old
// row's value is written.
func TestUnchangedToastedGeometry(t *testing.T) {
	rel := postgisRelation()
	after := Tuple{text("1"), toast, null, null, text("{}"), text(dbzPointEWKB), text(dbzPointEWKB)}
	ch := &Change{Op: OpUpdate, Relation: rel, After: after}
	if _, err := NewJSONEncoder(testJSONConfig).AppendValue(nil, NewPlan(testJSONConfig, ch.Relation), ch, time.UnixMilli(1)); !errors.Is(err, ErrUnchangedToastType) {
		t.Errorf("JSON: err = %v, want ErrUnchangedToastType", err)
	}
	if err := avroEncodeErr(t, rel, ch); !errors.Is(err, ErrUnchangedToastType) {
		t.Errorf("Avro: err = %v, want ErrUnchangedToastType", err)
	}
	full := *rel
	full.ReplicaIdentity = 'f'
	old := Tuple{text("1"), text(dbzPolygonEWKB), null, null, text("{}"), text(dbzPointEWKB), text(dbzPointEWKB)}
	out, err := NewJSONEncoder(testJSONConfig).AppendValue(nil, NewPlan(testJSONConfig, &full), &Change{Op: OpUpdate, Relation: &full, Before: old, After: after}, time.UnixMilli(1))
	want := `"after":{"pk":1,"p":{"wkb":"` + base64.StdEncoding.EncodeToString(mustHex(t, dbzPolygonEWKB)) + `","srid":null}`
	if err != nil || !bytes.Contains(out, []byte(want)) {
		t.Errorf("REPLICA IDENTITY FULL: %s %v, want %s", out, err, want)
	}
}
