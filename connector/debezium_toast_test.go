package connector_test

// TestUnchangedToastedValuesAreDebeziumsPlaceholders ports Debezium's
// shouldHandleToasted*Column tests (debezium-connector-postgres/src/test/
// java/io/debezium/connector/postgresql/RecordsStreamProducerIT.java at
// v3.6.1.Final, cited per table): a row with one large value stored out of
// line (SET STORAGE EXTENDED), then an update that leaves it alone; the
// update's after image must hold the placeholder in the shape Debezium
// gives it for that type (DecoderDifferences.java:20-56). Debezium
// re-creates one test_toast_table per test; here each is its own table.
// Its random values are replaced by deterministic ones of the same size
// and kind (md5 text, which compresses no better than random text).

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector/config"
)

const dzPlaceholder = "__debezium_unavailable_value" // DecoderDifferences.java:20

// dzPlaceholderBytes is TOASTED_VALUE_NUMBER_STRING (DecoderDifferences.java:21):
// the placeholder's bytes, as Debezium fills an integer array with them.
func dzPlaceholderBytes() []any {
	var out []any
	for _, b := range []byte(dzPlaceholder) {
		out = append(out, dzN(int64(b)))
	}
	return out
}

type dzToastCase struct {
	table, column, ddl, insert, update string
	pipe                               string
	want                               any
	cite                               string
	// full: REPLICA IDENTITY FULL, where before and after both hold the
	// value itself (the ...ForReplicaIdentityFullTable tests).
	full bool
}

func dzToastCases() []dzToastCase {
	text := tyMd5Chain(313)[:10000] // randomAlphanumeric(10000)
	digits := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'f' {
			return '0' + (r-'a')%10
		}
		return r
	}, text) // randomNumeric(10000)
	list := func(n int, f func(i int) string) string {
		parts := make([]string, 0, n)
		for i := 1; i < n; i++ {
			parts = append(parts, f(i))
		}
		return strings.Join(parts, ",")
	}
	arrayCase := func(table, colDDL, values, cite string, want any) dzToastCase {
		return dzToastCase{table: table, column: "col",
			ddl: fmt.Sprintf("CREATE TABLE %s (id SERIAL PRIMARY KEY, text TEXT); ALTER TABLE %[1]s ADD COLUMN not_toast integer; "+
				"ALTER TABLE %[1]s ADD COLUMN col %s; ALTER TABLE %[1]s ALTER COLUMN col SET STORAGE EXTENDED;", table, colDDL),
			insert: fmt.Sprintf("INSERT INTO %s (not_toast, text, col) values (10, 'text', %s);", table, values),
			update: fmt.Sprintf("UPDATE %s SET not_toast = 2;", table),
			pipe:   "dztoast", want: want, cite: cite}
	}
	one := dzList(dzPlaceholder)
	fullCase := func(c dzToastCase, cite string, value any) dzToastCase {
		c.ddl = strings.ReplaceAll(c.ddl, c.table, c.table+"_full") + " ALTER TABLE " + c.table + "_full REPLICA IDENTITY FULL;"
		c.insert = strings.ReplaceAll(c.insert, c.table, c.table+"_full")
		c.update = strings.ReplaceAll(c.update, c.table, c.table+"_full")
		c.table += "_full"
		c.cite, c.want, c.full = cite, value, true
		return c
	}
	seq := func(n int) []any {
		out := make([]any, 0, n)
		for i := 1; i < n; i++ {
			out = append(out, dzN(int64(i)))
		}
		return out
	}
	dates := make([]any, 0, 100000)
	for i := 1; i < 100000; i++ {
		dates = append(dates, dzN(19338)) // 2022-12-12
	}
	var uuids []any
	for i := 1; i < 10001; i++ {
		h := md5Hex(itoa(i))
		uuids = append(uuids, h[0:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:32])
	}
	cases := []dzToastCase{
		arrayCase("toast_text_array", "TEXT[] NOT NULL", "ARRAY ['"+text+"']", ":1677-1713", one),
		arrayCase("toast_varchar_array", "character varying(20000)[] NOT NULL", "ARRAY ['"+text+"']", ":1719-1755", one),
		arrayCase("toast_bpchar_array", "bpchar(20000)[] NOT NULL", "ARRAY ['"+text+"']", ":1761-1797", one),
		arrayCase("toast_date_array", "date[]", "ARRAY ["+list(100000, func(int) string { return "'2022-12-12'::date" })+"]",
			":1803-1841", dzPlaceholderBytes()),
		arrayCase("toast_bytea_array", "bytea[]", "ARRAY ['"+digits+"'::bytea]", ":1847-1888",
			dzList(base64.StdEncoding.EncodeToString([]byte(dzPlaceholder)))),
		arrayCase("toast_int_array", "int[]", "ARRAY ["+list(10000, func(i int) string { return itoa(i) })+"]",
			":1922-1957", dzPlaceholderBytes()),
		arrayCase("toast_bigint_array", "bigint[]", "ARRAY ["+list(10000, func(i int) string { return itoa(i) })+"]",
			":1963-1998", dzPlaceholderBytes()),
		arrayCase("toast_json_array", "json[]", `ARRAY [ '{"key": "`+text+`" }'::json ]`, ":2004-2044", one),
		arrayCase("toast_uuid_array", "uuid[]", "ARRAY ["+list(10001, func(i int) string { return "md5('" + itoa(i) + "')::uuid" })+"]::uuid[]",
			":2091-2133", dzList("b68a35a7-17ad-35b3-af2a-ae46edb4545a")),
		{table: "toast_bytea_hex", column: "bytea_",
			ddl: "CREATE TABLE toast_bytea_hex (id SERIAL PRIMARY KEY); ALTER TABLE toast_bytea_hex ADD COLUMN not_toast integer; " +
				"ALTER TABLE toast_bytea_hex ADD COLUMN bytea_ bytea; ALTER TABLE toast_bytea_hex ALTER COLUMN bytea_ SET STORAGE EXTENDED;",
			insert: "INSERT INTO toast_bytea_hex (not_toast, bytea_) values (10,  '" + digits + "'::bytea);",
			update: "UPDATE toast_bytea_hex SET not_toast = 2;",
			pipe:   "dztoasthex", want: dzPlaceholder, cite: ":1893-1917 (binary.handling.mode hex)"},
		{table: "toast_hstore_map", column: "col",
			ddl:    "CREATE TABLE toast_hstore_map (id SERIAL PRIMARY KEY, text TEXT); ALTER TABLE toast_hstore_map ADD COLUMN col hstore;",
			insert: "INSERT INTO toast_hstore_map (id, col) values (10, 'a=>" + tyMd5Chain(3125) + "');",
			update: "UPDATE toast_hstore_map SET text = 'text';",
			pipe:   "dztoastmap", want: dzMap(dzPlaceholder, dzPlaceholder), cite: ":2050-2085 (hstore.handling.mode map)"},
	}
	return append(cases,
		fullCase(cases[0], ":2139-2185", dzList(text)),
		fullCase(cases[1], ":2189-2235", dzList(text)),
		fullCase(cases[3], ":2239-2292", dates),
		fullCase(cases[4], ":2296-2348", dzList(base64.StdEncoding.EncodeToString([]byte(digits)))),
		fullCase(cases[5], ":2352-2400", seq(10000)),
		fullCase(cases[6], ":2404-2452", seq(10000)),
		fullCase(cases[8], ":2456-2505", uuids),
	)
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestUnchangedToastedValuesAreDebeziumsPlaceholders(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec("CREATE EXTENSION IF NOT EXISTS hstore;")
	cases := dzToastCases()
	tables := map[string][]string{}
	for _, c := range cases {
		e.Exec(c.ddl)
		tables[c.pipe] = append(tables[c.pipe], "public."+c.table)
	}
	mods := map[string]func(*config.Config){
		"dztoast":    func(*config.Config) {},
		"dztoasthex": func(c *config.Config) { c.Format.BinaryHandlingMode = "hex" },
		"dztoastmap": func(c *config.Config) { c.Format.HstoreHandlingMode = "map" },
	}
	var runs []*ittest.Running
	for name, mod := range mods {
		cfg := e.Config(name, tables[name]...)
		cfg.Snapshot.Mode = config.SnapshotNever
		cfg.Format.JSONSchemas = true
		cfg.Kafka.MaxRecordBytes = 8 << 20 // the REPLICA IDENTITY FULL date[]: 1.2 MB

		mod(&cfg)
		runs = append(runs, ittest.StartStreaming(t, cfg))
	}
	for _, c := range cases {
		e.Exec(c.insert)
		e.Exec(c.update)
	}
	for _, c := range cases {
		recs := tyReadExactly(t, e.Kafka, c.pipe+".public."+c.table, 2)
		rows, _ := dbzDecode(t, c.pipe, c.table, recs)
		row := rows[2] // no "pk" column: by position, the insert then the update
		w := dbzWant{field: c.column, value: c.want, cite: "RecordsStreamProducerIT.java" + c.cite}
		dbzCheck(t, fmt.Sprintf("%s update (%s) %s", c.table, w.cite, w.field), row, w)
		if c.full {
			var env struct {
				Payload struct {
					Before map[string]any `json:"before"`
				} `json:"payload"`
			}
			if err := tyUnmarshalNumbers(recs[1].Value, &env); err != nil {
				t.Fatal(err)
			}
			dbzCheck(t, fmt.Sprintf("%s update before (%s) %s", c.table, w.cite, w.field), dbzRow{values: env.Payload.Before}, w)
		}
	}
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatalf("clean stop: %v", err)
		}
	}
}
