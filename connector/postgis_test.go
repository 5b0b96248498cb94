package connector_test

// TestPostGISColumnsAsDebezium checks PostGIS's geometry and geography
// columns, and their arrays, against Debezium 3.6.1's own tests
// (debezium-connector-postgres/src/test/java/io/debezium/connector/
// postgresql/, v3.6.1.Final): the tables of postgis_create_tables.ddl
// with PostGIS in its own schema (init_postgis.ddl, used by
// RecordsSnapshotProducerIT.java:73-75 and RecordsStreamProducerIT.java:
// 489-490) and in public (PublicGeometryIT.java:48-53), the statements
// INSERT_POSTGIS_TYPES_STMT and INSERT_POSTGIS_ARRAY_TYPES_STMT
// (AbstractRecordsProducerTest.java:190-208) and the values
// schemaAndValuesForPostgisTypes() and schemaAndValuesForPostgisArrayTypes()
// expect (:924-954), as JsonConverter prints them (wkb as base64). Rows of
// NULLs, NULL elements and empty arrays, a key-only delete of NOT NULL
// columns and a table created while streaming follow the rules of
// PostgresValueConverter.java cited at each expectation. Each statement
// runs once before the pipelines start (snapshot path) and once after the
// copy (streaming path). JSON plain and Avro must carry the same values
// (checkSchemaRecords, checkAvroRecords), the Avro schema being what
// AvroData makes of the Connect schema (withAvroFromConnect).
//
// PostGIS is not in the version matrix (Makefile VERSION_TESTS): npm's
// PostgreSQL builds have no PostGIS. The test requires the extension
// (pgtest.RequireExtension): without it, it fails with the install command.

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

const arptPostgis = "AbstractRecordsProducerTest.java"

// The hex EWKB Debezium's expectations hold (AbstractRecordsProducerTest.java).
const (
	gisPoint    = "0101000020730C00001C7C613255DE6540787AA52C435C42C0" // :931, srid 3187
	gisMultiLn  = "0105000020E610000001000000010200000002000000A779C7293A2465400B462575025A46C0C66D3480B7FC6440C3D32B65195246C0"
	gisEmpty    = "010700000000000000" // :945, srid null; also the fallback (PostgisGeometry.java:24)
	gisPolygon  = "01030000000100000005000000B81E85EB51D0644052B81E85EB5147C0713D0AD7A350664052B81E85EB5147C0713D0AD7A35066409A999999993941C0B81E85EB51D064409A999999993941C0B81E85EB51D0644052B81E85EB5147C0"
	gisPointWKT = "'SRID=3187;POINT(174.9479 -36.7208)'"
	gisMultiWKT = "'MULTILINESTRING((169.1321 -44.7032, 167.8974 -44.6414))'"
	gisPolyWKT  = "'POLYGON((166.51 -46.64, 178.52 -46.64, 178.52 -34.45, 166.51 -34.45, 166.51 -46.64))'"
)

// gisDDL is postgis_create_tables.ddl with the types' schema prefix q
// ("postgis." or ""), plus postgis_nn (NOT NULL columns, for the key-only
// delete).
func gisDDL(q string) string {
	return strings.NewReplacer("Q.", q).Replace(`
CREATE TABLE public.postgis_table (pk SERIAL, p Q.GEOMETRY(POINT,3187), ml Q.GEOGRAPHY(MULTILINESTRING), PRIMARY KEY(pk));
CREATE TABLE public.postgis_array_table (pk SERIAL, ga Q.GEOMETRY[], gann Q.GEOMETRY[] NOT NULL, PRIMARY KEY(pk));
CREATE TABLE public.postgis_nn (pk SERIAL, g Q.GEOMETRY NOT NULL, gg Q.GEOGRAPHY NOT NULL, ga Q.GEOMETRY[] NOT NULL, PRIMARY KEY(pk));
`)
}

// gisStatement is one statement and what Debezium writes for its row.
type gisStatement struct {
	table, sql string
	want       []dbzWant
}

func gisB64(h string) string {
	b, err := hex.DecodeString(h)
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// gisVal is a Geometry/Geography struct as JsonConverter prints it; srid
// 0 stands for null.
func gisVal(h string, srid int64) map[string]any {
	v := map[string]any{"wkb": gisB64(h), "srid": nil}
	if srid != 0 {
		v["srid"] = dzN(srid)
	}
	return v
}

const (
	gisGeomOpt  = "struct? io.debezium.data.geometry.Geometry"
	gisGeogOpt  = "struct? io.debezium.data.geometry.Geography"
	gisGeogReq  = "struct io.debezium.data.geometry.Geography"
	gisArrayOpt = "array?|" + gisGeomOpt
	gisArrayReq = "array|" + gisGeomOpt
)

func gisStatements(q string) []gisStatement {
	g := func(wkt string) string { return wkt + "::" + q + "geometry" }
	arr := "ARRAY[" + g("'GEOMETRYCOLLECTION EMPTY'") + ", " + g(gisPolyWKT) + "]"
	dbzArr := dzList(gisVal(gisEmpty, 0), gisVal(gisPolygon, 0))
	return []gisStatement{
		{"postgis_table", "INSERT INTO public.postgis_table (p, ml) VALUES (" + g(gisPointWKT) + ", " + gisMultiWKT + "::" + q + "geography)",
			[]dbzWant{
				{field: "p", schema: gisGeomOpt, value: gisVal(gisPoint, 3187), cite: arptPostgis + ":929-931"},
				{field: "ml", schema: gisGeogOpt, value: gisVal(gisMultiLn, 4326), cite: arptPostgis + ":932-935"},
			}},
		// NULLs in optional columns: null (JdbcValueConverters.java:1414-1416).
		{"postgis_table", "INSERT INTO public.postgis_table (p, ml) VALUES (NULL, NULL)",
			[]dbzWant{
				{field: "p", schema: gisGeomOpt, value: nil, cite: "JdbcValueConverters.java:1414-1416"},
				{field: "ml", schema: gisGeogOpt, value: nil, cite: "JdbcValueConverters.java:1414-1416"},
			}},
		{"postgis_array_table", "INSERT INTO public.postgis_array_table (ga, gann) VALUES (" + arr + ", " + arr + ")",
			[]dbzWant{
				{field: "ga", schema: gisArrayOpt, value: dbzArr, cite: arptPostgis + ":943-952"},
				{field: "gann", schema: gisArrayReq, value: dbzArr, cite: arptPostgis + ":953"},
			}},
		// A NULL array, an empty one, a NULL element: each element goes
		// through the element converter, null staying null
		// (PostgresValueConverter.java:1131-1152).
		{"postgis_array_table", "INSERT INTO public.postgis_array_table (ga, gann) VALUES (NULL, '{}')",
			[]dbzWant{
				{field: "ga", schema: gisArrayOpt, value: nil, cite: "JdbcValueConverters.java:1414-1416"},
				{field: "gann", schema: gisArrayReq, value: dzList(), cite: "PostgresValueConverter.java:1131-1152"},
			}},
		{"postgis_array_table", "INSERT INTO public.postgis_array_table (ga, gann) VALUES (ARRAY[NULL, " + g(gisPointWKT) + "], ARRAY[" + g("'GEOMETRYCOLLECTION EMPTY'") + "])",
			[]dbzWant{
				{field: "ga", schema: gisArrayOpt, value: dzList(nil, gisVal(gisPoint, 3187)), cite: "PostgresValueConverter.java:1131-1152, " + arptPostgis + ":931"},
				{field: "gann", schema: gisArrayReq, value: dzList(gisVal(gisEmpty, 0)), cite: arptPostgis + ":945"},
			}},
		{"postgis_nn", "INSERT INTO public.postgis_nn (g, gg, ga) VALUES (" + g(gisPointWKT) + ", " + gisMultiWKT + "::" + q + "geography, " + arr + ")",
			[]dbzWant{
				// Geometry.builder() is optional itself (Geometry.java:36-44):
				// NOT NULL or not, the field is optional; Geography's is not.
				{field: "g", schema: gisGeomOpt, value: gisVal(gisPoint, 3187), cite: "Geometry.java:36-44, " + arptPostgis + ":931"},
				{field: "gg", schema: gisGeogReq, value: gisVal(gisMultiLn, 4326), cite: "Geography.java:33-40, " + arptPostgis + ":935"},
				{field: "ga", schema: gisArrayReq, value: dbzArr, cite: arptPostgis + ":953"},
			}},
	}
}

// gisDeleteBefore is the before image of a REPLICA IDENTITY DEFAULT delete
// of a postgis_nn row: the NOT NULL columns Postgres does not send get
// Debezium's fallbacks, GEOMETRYCOLLECTION EMPTY (PostgresValueConverter.
// java:1023-1024, :1048-1049, JdbcValueConverters.java:1417-1420) and the
// empty list (PostgresValueConverter.java:1132).
func gisDeleteBefore() []dbzWant {
	const cite = "PostgresValueConverter.java:1023-1024, :1048-1049, :1132; JdbcValueConverters.java:1417-1420"
	return []dbzWant{
		{field: "g", schema: gisGeomOpt, value: gisVal(gisEmpty, 0), cite: cite},
		{field: "gg", schema: gisGeogReq, value: gisVal(gisEmpty, 0), cite: cite},
		{field: "ga", schema: gisArrayReq, value: dzList(), cite: cite},
	}
}

// gisRowSchemas is the expected Connect row of each table, for
// checkSchemaRecords (every field listed).
func gisRowSchemas(table string) tyRowSchemas {
	s := tyRowSchemas{connect: map[string]string{"pk": "int32 default=0"}, cite: map[string]string{"pk": "PostgresSchemaIT.java:92"}, key: []string{"pk"}}
	for _, st := range gisStatements("") {
		if st.table == table {
			for _, w := range st.want {
				s.connect[w.field], s.cite[w.field] = w.schema, w.cite
			}
		}
	}
	return s
}

func TestPostGISColumnsAsDebezium(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // it makes a database of its own
	reg := srtest.New(t)
	ctx := context.Background()
	// PostGIS in its own schema (init_postgis.ddl) in "postgres", in
	// public (PublicGeometryIT.java:50) in "pubgis".
	pgtest.RequireExtension(t, e.PG.Cluster, "postgres", "postgis", "postgis")
	if err := e.PG.CreateDatabase(ctx, "pubgis"); err != nil {
		t.Fatal(err)
	}
	pgtest.RequireExtension(t, e.PG.Cluster, "pubgis", "postgis", "")
	dbs := []struct{ db, q string }{{"postgres", "postgis."}, {"pubgis", ""}}
	execIn := func(db, sql string) {
		t.Helper()
		if err := e.PG.Exec(ctx, db, sql); err != nil {
			t.Fatalf("%s: %s: %v", db, sql, err)
		}
	}
	for _, d := range dbs {
		execIn(d.db, gisDDL(d.q))
		for _, s := range gisStatements(d.q) {
			execIn(d.db, s.sql)
		}
	}
	// A type without a mapping whose typdelim is ';' (a base type over
	// text's I/O functions): its array is split by ';' and only by it.
	execIn("postgres", `CREATE TYPE semi;
CREATE FUNCTION semi_in(cstring) RETURNS semi AS 'textin' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION semi_out(semi) RETURNS cstring AS 'textout' LANGUAGE internal IMMUTABLE STRICT;
CREATE TYPE semi (INPUT = semi_in, OUTPUT = semi_out, LIKE = text, DELIMITER = ';');
CREATE TABLE public.postgis_typdelim (pk SERIAL PRIMARY KEY, a semi[])`)
	const semiInsert = `INSERT INTO public.postgis_typdelim (a) VALUES ('{a,b;"c;d";NULL;" x "}')`
	execIn("postgres", semiInsert)

	type pipe struct{ name, db, q, format string }
	pipes := []pipe{
		{"gisjson", "postgres", "postgis.", "json"}, {"gisschemas", "postgres", "postgis.", "schemas"}, {"gisavro", "postgres", "postgis.", "avro"},
		{"gispub", "pubgis", "", "schemas"},
	}
	var runs []*ittest.Running
	for _, p := range pipes {
		cfg := e.Config(p.name, "public.postgis_*")
		cfg.Postgres.URL = e.PG.URL(p.db)
		cfg.Snapshot.Mode = config.SnapshotInitial
		cfg.Snapshot.DiscoveryInterval = time.Second
		switch p.format {
		case "schemas":
			cfg.Format.JSONSchemas = true
		case "avro":
			cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
			cfg.Format.SchemaRegistry.URL = reg.URL()
		}
		runs = append(runs, ittest.StartStreaming(t, cfg))
	}
	for _, r := range runs {
		r.WaitHandedOver(t)
	}
	execIn("postgres", semiInsert)
	for _, d := range dbs {
		for _, s := range gisStatements(d.q) {
			execIn(d.db, s.sql)
		}
		// Deletes of the postgis_nn rows (snapshot and stream), key-only.
		execIn(d.db, "DELETE FROM public.postgis_nn")
		// A table created while streaming: its relation arrives mid-stream.
		execIn(d.db, strings.NewReplacer("Q.", d.q).Replace(
			"CREATE TABLE public.postgis_late (pk SERIAL PRIMARY KEY, g Q.GEOMETRY, ga Q.GEOMETRY[])"))
	}
	for _, r := range runs {
		r.WaitTable(t, "public.postgis_late")
	}
	for _, d := range dbs {
		execIn(d.db, "INSERT INTO public.postgis_late (g, ga) VALUES ("+gisPointWKT+"::"+d.q+"geometry, ARRAY["+gisPolyWKT+"::"+d.q+"geometry, NULL])")
	}

	perTable := map[string]int{}
	for _, s := range gisStatements("") {
		perTable[s.table]++
	}
	read := map[string]map[string][]*kgo.Record{}
	for _, p := range pipes {
		read[p.name] = map[string][]*kgo.Record{}
		for tb, n := range perTable {
			n *= 2
			if tb == "postgis_nn" {
				n += 4 // two deletes and their tombstones
			}
			read[p.name][tb] = tyReadExactly(t, e.Kafka, p.name+".public."+tb, n)
		}
		read[p.name]["postgis_late"] = tyReadExactly(t, e.Kafka, p.name+".public.postgis_late", 1)
	}
	semiRecs := tyReadExactly(t, e.Kafka, "gisjson.public.postgis_typdelim", 2)
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatalf("clean stop: %v", err)
		}
	}
	for i, r := range tyDecodePlain(t, semiRecs) {
		want := []any{"a,b", "c;d", nil, " x "} // the elements of the inserted array literal
		if !dbzEqual(r.after["a"], want) {
			t.Errorf("semi[] (typdelim ';') record %d: %s, want %v", i, r.rawAfter, want)
		}
	}

	lateWant := []dbzWant{
		{field: "g", schema: gisGeomOpt, value: gisVal(gisPoint, 3187), cite: arptPostgis + ":931"},
		{field: "ga", schema: gisArrayOpt, value: dzList(gisVal(gisPolygon, 0), nil), cite: arptPostgis + ":947-948, PostgresValueConverter.java:1131-1152"},
	}
	checked := 0
	for _, p := range pipes {
		if p.format != "schemas" {
			continue
		}
		for tb := range perTable {
			rows, deleted := dbzDecode(t, p.name, tb, read[p.name][tb])
			nth := 0
			for _, s := range gisStatements(p.q) {
				if s.table != tb {
					continue
				}
				nth++
				for _, pk := range []int{nth, nth + perTable[tb]} {
					path := map[bool]string{true: "snapshot", false: "stream"}[pk == nth]
					row, ok := rows[pk]
					if !ok {
						t.Errorf("%s %s: no record for pk %d (%s)", p.name, tb, pk, path)
						continue
					}
					for _, w := range s.want {
						checked++
						dbzCheck(t, fmt.Sprintf("%s %s %s row %d (%s) %s", p.name, tb, path, pk, w.cite, w.field), row, w)
					}
					if tb != "postgis_nn" {
						continue
					}
					before, ok := deleted[pk]
					if !ok {
						t.Errorf("%s: no delete of postgis_nn row %d", p.name, pk)
						continue
					}
					for _, w := range gisDeleteBefore() {
						checked++
						dbzCheck(t, fmt.Sprintf("%s delete before of row %d (%s) %s", p.name, pk, w.cite, w.field), before, w)
					}
				}
			}
		}
		rows, _ := dbzDecode(t, p.name, "postgis_late", read[p.name]["postgis_late"])
		for _, w := range lateWant {
			checked++
			dbzCheck(t, p.name+" postgis_late stream "+w.field, rows[1], w)
		}
	}
	if checked == 0 {
		t.Fatal("no expectation was checked")
	}
	t.Logf("%d field expectations checked", checked)

	// Plain JSON and Avro: the same values as the JSON with schemas, the
	// Avro schema AvroData's of the Connect schema.
	for tb := range perTable {
		plain := tyDecodePlain(t, gisNoTombstones(read["gisjson"][tb]))
		want := gisRowSchemas(tb)
		schemaRecs := gisNoTombstones(read["gisschemas"][tb])
		var firstValue struct {
			Schema json.RawMessage `json:"schema"`
		}
		if err := json.Unmarshal(schemaRecs[0].Value, &firstValue); err != nil {
			t.Fatal(err)
		}
		want = withAvroFromConnect(t, want, firstValue.Schema)
		t.Run("schemas_"+tb, func(t *testing.T) { checkSchemaRecords(t, tb, schemaRecs, plain, &want) })
		t.Run("avro_"+tb, func(t *testing.T) { checkAvroRecords(t, reg, tb, gisNoTombstones(read["gisavro"][tb]), plain, &want) })
	}
}

// gisNoTombstones is recs without the deletes' tombstones.
func gisNoTombstones(recs []*kgo.Record) []*kgo.Record {
	var out []*kgo.Record
	for _, r := range recs {
		if len(r.Value) != 0 {
			out = append(out, r)
		}
	}
	return out
}
