package connector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/avrodata"
	"github.com/mooncdc/mooncdc/schema"
)

// TestAvroSchemasAreWhatAvroConverterWrites holds every Avro schema mooncdc
// registers for the tables of TestTypesMatchDebeziumsOwnTests, in each
// mode those tables run with there, against what Confluent's
// AvroConverter (AvroData.fromConnectSchema, its default options) derives
// from the Connect schema mooncdc writes in JSON-with-schemas mode for the
// same table, printed as Avro's Schema.toString prints it: record names
// and namespaces, field order, unions, defaults, logical types and every
// connect.* property, in order (internal/avrodata, an independent
// implementation citing AvroData.java). The key and value schemas of
// logical decoding messages, the transaction metadata topic and the
// schema change topic are held the same way.
func TestAvroSchemasAreWhatAvroConverterWrites(t *testing.T) {
	e := ittest.NewEnv(t)
	createDebeziumTables(e)
	// Column defaults of every kind the schemas carry (none of Debezium's
	// tables has a float, bytes, temporal or decimal default): AvroData
	// converts each for connect.default and the field's default.
	e.Exec(`CREATE TYPE avrodata_mood AS ENUM ('sad', 'ok');
CREATE TABLE avrodata_defaults (id int PRIMARY KEY, si smallint DEFAULT 7, si_nn smallint NOT NULL DEFAULT -3,
    i int DEFAULT 42, bi bigint DEFAULT 10000000000, r real DEFAULT 1.1, r_nn real NOT NULL DEFAULT 2.5, d double precision DEFAULT 0.1,
    b boolean DEFAULT true, t text DEFAULT 'x"y', vc varchar(10) DEFAULT 'v', ba bytea DEFAULT '\x00ff80'::bytea,
    n numeric(7,2) DEFAULT 12.34, n_nn numeric(7,2) NOT NULL DEFAULT -0.5, nv numeric DEFAULT 3.5, m money DEFAULT 1.25,
    dt date DEFAULT '2020-01-02', tm time DEFAULT '01:02:03.456', tmtz timetz DEFAULT '01:02:03+02',
    ts timestamp DEFAULT '2020-01-02 03:04:05.678', tstz timestamptz DEFAULT '2020-01-02 03:04:05+00',
    iv interval DEFAULT '1 day', u uuid DEFAULT '1b4e28ba-2fa1-11d2-883f-0016d3cca427', j jsonb DEFAULT '{}',
    mood avrodata_mood DEFAULT 'ok', bits bit(3) DEFAULT B'101', ia int[] DEFAULT '{1,2}')`)
	e.Exec(`CREATE PUBLICATION avrodata_all FOR ALL TABLES`)
	ctx := context.Background()
	conn, err := e.PG.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// Beyond the modes of TestTypesMatchDebeziumsOwnTests: Connect's own
	// temporal types (time.precision.mode connect, the only mode with Avro
	// logical types), and the flat envelope with added fields.
	pipes := dbzPipes()
	all := dbzTables()
	for _, p := range dbzPipes() {
		if p.name == "dzdflt" || p.name == "dzalt" || p.name == "dzdbl" {
			pipes = append(pipes, dbzPipe{p.name + "def", []string{"avrodata_defaults"}, p.mod})
		}
	}
	pipes = append(pipes,
		dbzPipe{"dzconnectdef", []string{"avrodata_defaults"}, func(c *config.Config) { c.Format.TimePrecisionMode = "connect" }},
		// Routes (a key field added, schema names after the routed
		// topic) and column mappers (schema parameters changed).
		dbzPipe{"dzroute", []string{"string_table", "text_table"}, func(c *config.Config) {
			c.Kafka.Routes = []config.RouteRule{{Regex: `dzroute\.public\.(string|text)_table`, Topic: "dzroute.public.merged", KeyField: "__dbz__physicalTableIdentifier"}}
			c.Format.ColumnMask = []config.ColumnMaskRule{{Columns: []string{"public.string_table.vc"}, Chars: 5}}
			c.Format.ColumnTruncate = []config.ColumnTruncateRule{{Columns: []string{"public.string_table.t"}, Length: 3}}
			c.Format.ColumnHash = []config.ColumnHashRule{{Columns: []string{"public.text_table.u"}, Algorithm: "SHA-256", Salt: "s"}}
		}},
		dbzPipe{"dzconnect", []string{dzTemporalTable, "time_table", "array_table"}, func(c *config.Config) {
			c.Format.TimePrecisionMode = "connect"
			c.Format.IncludeUnknownDatatypes = true
		}},
		dbzPipe{"dzflat", all, func(c *config.Config) {
			c.Format.IncludeUnknownDatatypes = true
			c.Format.Envelope = config.EnvelopeFlat
			c.Format.Flat.AddFields = []string{"op", "table", "lsn", "source.ts_ms", "transaction.id", "snapshot"}
		}})
	checked := 0
	var seen strings.Builder // every schema checked
	for _, p := range pipes {
		qualified := make([]string, len(p.tables))
		for i, tb := range p.tables {
			qualified[i] = dbzQualified(tb)
		}
		cfg := e.Config(p.name, qualified...)
		cfg.Format.JSONSchemas = true
		p.mod(&cfg)
		pipe, err := connector.New(cfg, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		sc := connector.EncoderConfigForTest(pipe)
		sc.PlanFormats = 0 // both formats' parts: the test compares them
		jsonEnc, avroEnc := schema.NewJSONSchemaEncoder(sc), schema.NewAvroEncoder(sc)
		for _, name := range qualified {
			rel, err := connector.DescribeTableForTest(ctx, conn, name, "avrodata_all")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sp := schema.NewPlan(sc, rel)
			ck, cv := jsonEnc.Schemas(sp)
			ak, av, err := avroEnc.Schemas(sp)
			if err != nil {
				t.Fatalf("%s/%s: Avro schemas: %v", p.name, name, err)
			}
			what := p.name + "/" + name
			checkAvroData(t, what+" key", ck, ak)
			checkAvroData(t, what+" value", cv, av)
			seen.WriteString(ak)
			seen.WriteString(av)
			checked++
		}
		if p.name == "dzdflt" {
			ck, cv := jsonEnc.Schemas(nil)
			ak, av, _ := avroEnc.Schemas(nil)
			checkAvroData(t, "message key", ck, ak)
			checkAvroData(t, "message value", cv, av)
		}
	}
	kc, ka, vc, va := connector.HeartbeatSchemasForTest()
	checkAvroData(t, "heartbeat key", []byte(kc), ka)
	checkAvroData(t, "heartbeat value", []byte(vc), va)
	// The comparison covers each rule it is meant to.
	for _, rule := range []string{`"logicalType":"decimal"`, `"logicalType":"date"`, `"logicalType":"time-millis"`,
		`"logicalType":"timestamp-millis"`, `"connect.type":"int16"`, `"type":"map"`, `"type":"array"`, `"connect.doc":`,
		`"connect.parameters":`, `"connect.default":`,
		`"connect.decimal.precision":"7"},"connect.default":`, `"default":1.1`, `"io.debezium.data.VariableScaleDecimal"`,
		`{"name":"__dbz__physicalTableIdentifier","type":"string"}`, `"namespace":"dzroute.public.merged"`, `"io.debezium.data.geometry.Point"`} {
		if !strings.Contains(seen.String(), rule) {
			t.Errorf("no schema checked has %s", rule)
		}
	}
	checkAdjustedNames(t, e, conn)
	if checked < 20 {
		t.Fatalf("only %d tables checked", checked)
	}
}

// checkAdjustedNames: a table or column name that Avro does not allow
// makes AvroData refuse the Connect schema (scrub.invalid.names is off,
// AvroData.java:1168-1170, and Debezium's schema.name.adjustment.mode and
// field.name.adjustment.mode are none, CommonConnectorConfig.java:877-896),
// so Debezium's AvroConverter fails the task. mooncdc writes the schema
// with each character Avro does not allow, in each dotted part of a name
// and in a field name, replaced by '_' (docs/types.md "Differences from
// Debezium"); otherwise it is AvroData's.
func checkAdjustedNames(t *testing.T, e *ittest.Env, conn *pgx.Conn) {
	t.Helper()
	e.Exec(`CREATE TABLE "Odd-Name" (id int PRIMARY KEY, "my col" int, "1st" text)`)
	cfg := e.Config("dzodd", `public."Odd-Name"`)
	cfg.Format.JSONSchemas = true
	pipe, err := connector.New(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	sc := connector.EncoderConfigForTest(pipe)
	sc.PlanFormats = 0 // both formats' parts: the test compares them
	rel, err := connector.DescribeTableForTest(context.Background(), conn, "public.Odd-Name", "avrodata_all")
	if err != nil {
		t.Fatal(err)
	}
	sp := schema.NewPlan(sc, rel)
	ck, cv := schema.NewJSONSchemaEncoder(sc).Schemas(sp)
	ak, av, err := schema.NewAvroEncoder(sc).Schemas(sp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avrodata.FromConnectJSON(cv); err == nil {
		t.Error("AvroData accepts the Connect schema of \"Odd-Name\"; the README difference is moot")
	}
	adjust := func(name string) string {
		b := []byte(name)
		for i, c := range b {
			first := i == 0 || b[i-1] == '.'
			ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9' || c == '.' && !first
			if !ok {
				b[i] = '_'
			}
		}
		return string(b)
	}
	names := regexp.MustCompile(`"(name|field)":"([^"\\]*)"`)
	adjusted := func(connect []byte) []byte {
		return names.ReplaceAllFunc(connect, func(m []byte) []byte {
			sub := names.FindSubmatch(m)
			return []byte(`"` + string(sub[1]) + `":"` + adjust(string(sub[2])) + `"`)
		})
	}
	checkAvroData(t, "Odd-Name key, names adjusted", adjusted(ck), ak)
	checkAvroData(t, "Odd-Name value, names adjusted", adjusted(cv), av)
	if !strings.Contains(av, `"name":"my_col"`) || !strings.Contains(av, `"name":"_st"`) || !strings.Contains(av, `"namespace":"dzodd.public.Odd_Name"`) {
		t.Errorf("the names are not adjusted: %s", av)
	}
}

// checkAvroData compares mooncdc's Avro schema got with what AvroData
// derives from the Connect schema connect: first as values (so that a
// difference is reported by path), then token by token in order (the
// order of fields, union branches and JSON properties as Schema.toString
// writes them).
func checkAvroData(t *testing.T, what string, connect []byte, got string) {
	t.Helper()
	if connect == nil {
		if got != "" {
			t.Errorf("%s: Avro schema %s but no Connect schema", what, got)
		}
		return
	}
	want, err := avrodata.FromConnectJSON(connect)
	if err != nil {
		t.Errorf("%s: AvroData refuses the Connect schema: %v\n%s", what, err, connect)
		return
	}
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: expected schema does not parse: %v", what, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("%s: mooncdc's Avro schema is not JSON: %v\n%s", what, err, got)
		return
	}
	if diff := jsonDiff("", w, g); diff != "" {
		t.Errorf("%s: mooncdc's Avro schema differs from AvroData's:\n%s\nAvroData: %s\nmooncdc:  %s", what, diff, want, got)
		return
	}
	wt, gt := jsonTokens(t, want), jsonTokens(t, got)
	if !reflect.DeepEqual(wt, gt) {
		i := 0
		for i < len(wt) && i < len(gt) && reflect.DeepEqual(wt[i], gt[i]) {
			i++
		}
		t.Errorf("%s: same schema, other order, from token %d (AvroData %v, mooncdc %v):\nAvroData: %s\nmooncdc:  %s",
			what, i, wt[i:min(i+4, len(wt))], gt[i:min(i+4, len(gt))], want, got)
	}
}

// jsonDiff describes the differences between two decoded JSON values.
func jsonDiff(path string, w, g any) string {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want %s, got %s\n", path, short(w), short(g))
		}
		var b strings.Builder
		for k, x := range wv {
			y, ok := gv[k]
			if !ok {
				fmt.Fprintf(&b, "%s.%s: missing (want %s)\n", path, k, short(x))
				continue
			}
			b.WriteString(jsonDiff(path+"."+k, x, y))
		}
		for k, y := range gv {
			if _, ok := wv[k]; !ok {
				fmt.Fprintf(&b, "%s.%s: unexpected %s\n", path, k, short(y))
			}
		}
		return b.String()
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			return fmt.Sprintf("%s: want %s, got %s\n", path, short(w), short(g))
		}
		var b strings.Builder
		for i := range wv {
			b.WriteString(jsonDiff(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i]))
		}
		return b.String()
	}
	if !reflect.DeepEqual(w, g) {
		return fmt.Sprintf("%s: want %s, got %s\n", path, short(w), short(g))
	}
	return ""
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// jsonTokens is the token sequence of a JSON text (strings decoded, so
// that escaping does not count).
func jsonTokens(t *testing.T, s string) []any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var out []any
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		out = append(out, tok)
	}
	return out
}
