package connector_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector"
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
//   - the same row deleted under REPLICA IDENTITY DEFAULT: the old tuple has
//     the key only, and Debezium fills each NOT NULL column with its
//     converter's fallback (JdbcValueConverters.java:1414-1421): for these
//     columns convertBinary (PostgresValueConverter.java:565-567) →
//     convertBinaryToBytes with BYTE_ZERO (JdbcValueConverters.java:821-822,
//     NumberConversions.java:36: new byte[0]), the empty bytes.

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
	e := newEnv(t)
	e.exec(`CREATE TABLE alias_table (pk SERIAL, PRIMARY KEY (pk))`) // RecordsStreamProducerIT.java:3109
	cfg := e.config("dzgeo", "public.alias_table")
	cfg.Snapshot.Mode = connector.SnapshotNever // :3113
	cfg.Format.DecimalHandlingMode = "double"   // :3111
	cfg.Format.IncludeUnknownDatatypes = true   // :3112
	cfg.Format.JSONSchemas = true
	r := startStreaming(t, cfg)
	r.waitHandedOver(t)

	var domains []string
	for _, l := range strings.Split(dbzExtraDDL, "\n") {
		if strings.HasPrefix(l, "CREATE DOMAIN ") && !strings.Contains(l, "varbit2b") {
			domains = append(domains, l)
		}
	}
	e.exec(strings.Join(domains, "\n")) // :3120-3151
	var add []string
	for _, c := range dbzAliasColumns(t) {
		add = append(add, "ADD COLUMN "+c[0]+" "+c[1]+" NOT NULL")
	}
	e.exec("ALTER TABLE alias_table " + strings.Join(add, ", ")) // :3153-3185
	e.exec(dbzExtraStatements[0].sql)                            // :3187-3250 (the same row)
	e.exec(`DELETE FROM alias_table WHERE pk = 1`)

	recs := tyReadExactly(t, e.kafka, "dzgeo.public.alias_table", 3) // insert, delete, tombstone
	if err := r.stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	rows, deleted := dbzDecode(t, "dzgeo", "alias_table", recs)
	checked := 0
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
