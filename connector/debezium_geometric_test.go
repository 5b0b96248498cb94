package connector_test

import (
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector/config"
)

// Debezium 3.6.1's geometric columns (box, circle, line, lseg, path,
// polygon) over a domain and in a key-only delete, beyond the snapshot and
// stream of a table that exists before the pipeline starts
// (TestTypesMatchDebeziumsOwnTests's dzalias pipe):
//
//   - shouldStreamValuesForAliasLikeBaseTypes (RecordsStreamProducerIT.java:3108-3253,
//     v3.6.1.Final): the domains and the columns are created while streaming
//     (:3119-3185), with decimal.handling.mode double and
//     include.unknown.datatypes (:3111-3112); the inserted row is
//     schemasAndValuesForDomainAliasTypes(true) (:3252,
//     AbstractRecordsProducerTest.java:1007-1083): every geometric column,
//     base and domain, required BYTES holding pgjdbc's text.
//   - testProcessNotNullColumns' not_null_table (RecordsStreamProducerIT.java:461-485)
//     deleted under REPLICA IDENTITY DEFAULT: the 32 fallbacks Debezium
//     asserts (:399-407, :425-455), cbox … cpolygon the empty bytes.
//   - the alias row deleted under REPLICA IDENTITY DEFAULT: the old tuple has
//     the key only, and Debezium fills each NOT NULL column with its
//     converter's fallback (JdbcValueConverters.java:1414-1421): for these
//     columns convertBinary (PostgresValueConverter.java:565-567) →
//     convertBinaryToBytes with BYTE_ZERO (JdbcValueConverters.java:821-822,
//     NumberConversions.java:36: new byte[0]), the empty bytes.

// dbzNotNullTableDDL is not_null_table (postgres_create_tables.ddl:59-68,
// v3.6.1.Final), verbatim.
const dbzNotNullTableDDL = `CREATE TABLE not_null_table (pk serial,
    val numeric(20,8), created_at timestamp not null, created_at_tz timestamptz not null, ctime time not null,
    ctime_tz timetz not null, cdate date not null, cmoney money not null, cbits bit(3) not null,
    csmallint smallint not null, cinteger integer not null, cbigint bigint not null, creal real not null,
    cbool bool not null, cfloat8 float8 not null, cnumeric numeric(6,2) not null, cvarchar varchar(5) not null,
    cbox box not null, ccircle circle not null, cinterval interval not null, cline line not null, clseg lseg not null,
    cpath path not null, cpoint point not null, cpolygon polygon not null, cchar char not null, ctext text not null,
    cjson json not null, cxml xml not null, cuuid uuid not null, cvarbit varbit(3) not null, cinet inet not null,
    ccidr cidr not null, cmacaddr macaddr not null,
    PRIMARY KEY(pk));`

// dbzNotNullFallbacks: the before image Debezium's testProcessNotNullColumns
// asserts (RecordsStreamProducerIT.java:461-485, include.unknown.datatypes,
// time.precision.mode adaptive) in shouldProcessNotNullColumnsAdaptiveDateTypes
// (:399-407) and shouldProcessNotNullColumnsFallbacksReplicaIdentity
// (:425-455), as JsonConverter writes the Java values: new byte[0] and
// BigDecimal 0.00 under Decimal scale 2 (unscaled 0: BigInteger.ZERO.toByteArray()
// is {0}) in base64, Point.createValue(0, 0) with its WKB (Point.java:58-66,
// :104-110). Debezium asserts them on an UPDATE's before, which pgoutput
// does not send under REPLICA IDENTITY DEFAULT (the assertions sit under
// "if (before != null)"); a DELETE's key-only old tuple reaches the same
// fallbacks (JdbcValueConverters.java:1414-1421), which is what is checked.
func dbzNotNullFallbacks() []dbzWant {
	c := func(line string) string { return "RecordsStreamProducerIT.java:" + line }
	zeroPointWKB, _ := hex.DecodeString("010100000000000000000000000000000000000000")
	var w []dbzWant
	add := func(line, field string, v any) { w = append(w, dbzWant{field: field, value: v, cite: c(line)}) }
	add("401", "created_at", dzN(0))
	add("402", "created_at_tz", "1970-01-01T00:00:00Z")
	add("403", "ctime", dzN(0))
	add("404", "ctime_tz", "00:00:00Z")
	add("405", "cdate", dzN(0))
	add("406", "cmoney", dzB64(0))
	add("407", "cbits", "")
	add("430", "csmallint", dzN(0))
	add("431", "cinteger", dzN(0))
	add("432", "cbigint", dzN(0))
	add("433", "creal", dzF(0))
	add("434", "cbool", false)
	add("435", "cfloat8", dzF(0))
	add("436", "cnumeric", dzB64(0))
	add("437", "cvarchar", "")
	add("438", "cbox", "")
	add("439", "ccircle", "")
	add("440", "cinterval", dzN(0))
	add("441", "cline", "")
	add("442", "clseg", "")
	add("443", "cpath", "")
	add("444", "cpoint", dzMap("x", dzF(0), "y", dzF(0), "wkb", dzB64(zeroPointWKB...), "srid", nil))
	add("445", "cpolygon", "")
	add("446", "cchar", "")
	add("447", "ctext", "")
	add("448", "cjson", "")
	add("449", "cxml", "")
	add("450", "cuuid", "")
	add("451", "cvarbit", "")
	add("452", "cinet", "")
	add("453", "ccidr", "")
	add("454", "cmacaddr", "")
	return w
}

// dbzAliasColumns are the alias table's columns and types, from its DDL
// (dbzExtraDDL, RecordsSnapshotProducerIT.java:857-892).
func dbzAliasColumns(t *testing.T) [][2]string {
	t.Helper()
	i := strings.Index(dbzExtraDDL, "CREATE TABLE alias_table (pk SERIAL, ")
	ddl := dbzExtraDDL[i+len("CREATE TABLE alias_table (pk SERIAL, "):]
	ddl = ddl[:strings.Index(ddl, ", PRIMARY KEY(pk));")]
	var cols [][2]string
	for _, c := range strings.Split(ddl, ", ") {
		name, typ, ok := strings.Cut(strings.TrimSuffix(c, " NOT NULL"), " ")
		if !ok {
			t.Fatalf("alias table column %q", c)
		}
		cols = append(cols, [2]string{name, typ})
	}
	if len(cols) != 64 {
		t.Fatalf("%d alias table columns, want 64", len(cols))
	}
	return cols
}

func TestGeometricColumnsAsDebeziumInStreamedDomainsAndKeyOnlyDeletes(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE alias_table (pk SERIAL, PRIMARY KEY (pk))`) // RecordsStreamProducerIT.java:3109
	e.Exec(dbzNotNullTableDDL)
	// testProcessNotNullColumns (RecordsStreamProducerIT.java:461-466):
	// include.unknown.datatypes, the default modes.
	nn := e.Config("dznotnull", "public.not_null_table")
	nn.Snapshot.Mode = config.SnapshotNever
	nn.Format.IncludeUnknownDatatypes = true
	nn.Format.JSONSchemas = true
	rn := ittest.StartStreaming(t, nn)
	rn.WaitHandedOver(t)
	cfg := e.Config("dzgeo", "public.alias_table")
	cfg.Snapshot.Mode = config.SnapshotNever  // :3113
	cfg.Format.DecimalHandlingMode = "double" // :3111
	cfg.Format.IncludeUnknownDatatypes = true // :3112
	cfg.Format.JSONSchemas = true
	r := ittest.StartStreaming(t, cfg)
	r.WaitHandedOver(t)

	var domains []string
	for _, l := range strings.Split(dbzExtraDDL, "\n") {
		if strings.HasPrefix(l, "CREATE DOMAIN ") && !strings.Contains(l, "varbit2b") {
			domains = append(domains, l)
		}
	}
	e.Exec(strings.Join(domains, "\n")) // :3120-3151
	var add []string
	for _, c := range dbzAliasColumns(t) {
		add = append(add, "ADD COLUMN "+c[0]+" "+c[1]+" NOT NULL")
	}
	e.Exec("ALTER TABLE alias_table " + strings.Join(add, ", ")) // :3153-3185
	e.Exec(dbzExtraStatements[0].sql)                            // :3187-3250 (the same row)
	e.Exec(`DELETE FROM alias_table WHERE pk = 1`)

	// RecordsStreamProducerIT.java:470-475, :480, then the delete.
	e.Exec(`INSERT INTO not_null_table VALUES (default, 30, '2019-02-10 11:34:58', '2019-02-10 11:35:00', ` +
		`'10:20:11', '10:20:12', '2019-02-01', '$20', B'101', 32766, 2147483646, 9223372036854775806, 3.14, ` +
		`true, 3.14768, 1234.56, 'Test', '(0,0),(1,1)', '<(0,0),1>', '01:02:03', '{0,1,2}', '((0,0),(1,1))', ` +
		`'((0,0),(0,1),(0,2))', '(1,1)', '((0,0),(0,1),(1,1))', 'a', 'hello world', '{"key": 123}', ` +
		`'<doc><item>abc</item></doc>', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', B'101', '192.168.1.100', ` +
		`'192.168.1', '08:00:2b:01:02:03');`)
	e.Exec(`UPDATE not_null_table SET val=40`)
	e.Exec(`DELETE FROM not_null_table WHERE pk = 1`)
	nrecs := tyReadExactly(t, e.Kafka, "dznotnull.public.not_null_table", 4) // insert, update, delete, tombstone
	if err := rn.Stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	_, ndeleted := dbzDecode(t, "dznotnull", "not_null_table", nrecs)
	checked := 0
	for _, w := range dbzNotNullFallbacks() {
		checked++
		dbzCheck(t, "dznotnull key-only delete before "+w.field+" ("+w.cite+")", ndeleted[1], w)
	}

	recs := tyReadExactly(t, e.Kafka, "dzgeo.public.alias_table", 3) // insert, delete, tombstone
	if err := r.Stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	rows, deleted := dbzDecode(t, "dzgeo", "alias_table", recs)
	geometric := regexp.MustCompile(`^(box|circle|line|lseg|path|polygon)_`)
	for _, w := range dbzDomainAlias() {
		checked++
		dbzCheck(t, "dzgeo streamed after "+w.field+" ("+w.cite+")", rows[1], w)
		if geometric.MatchString(w.field) {
			checked++
			dbzCheck(t, "dzgeo key-only delete before "+w.field+" (JdbcValueConverters.java:821-822, :1414-1421)", deleted[1],
				dbzWant{field: w.field, schema: "bytes", value: ""})
		}
	}
	t.Logf("%d field expectations checked", checked)
}
