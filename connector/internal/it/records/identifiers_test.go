package records

import (
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
)

// TestIdentifiersOfAnyShapeAreCopiedAndStreamed: schema, table and column
// names with dots, quotes, spaces, upper case and non-ASCII letters are
// copied and streamed, on topics sanitized per character as Debezium does.
// The quoted table, its column and its expected value are Debezium's own
// (debezium-connector-postgres, v3.6.1.Final):
// src/test/resources/postgres_create_tables.ddl:72-74 (the DDL),
// src/test/java/io/debezium/connector/postgresql/AbstractRecordsProducerTest.java:210-211
// (INSERT_QUOTED_TYPES_STMT) and :957 (the field `Quoted_" . Text_Column`,
// an optional string, "some text"). Before, a name with a '.' parked its
// table after a "does not exist" copy error.
func TestIdentifiersOfAnyShapeAreCopiedAndStreamed(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE SCHEMA "Quoted_"" . Schema"`)
	e.Exec(`CREATE TABLE "Quoted_"" . Schema"."Quoted_"" . Table" (pk SERIAL, "Quoted_"" . Text_Column" TEXT, PRIMARY KEY(pk))`)
	e.Exec(`INSERT INTO "Quoted_"" . Schema"."Quoted_"" . Table" ("Quoted_"" . Text_Column") VALUES ('some text')`)
	e.Exec(`CREATE TABLE public."Ordér" ("Id" int PRIMARY KEY, "Ünïcode Çolumn" text)`)
	e.Exec(`INSERT INTO public."Ordér" VALUES (1, 'snap')`)
	e.Exec(`CREATE SCHEMA "my.schema"`)
	e.Exec(`CREATE TABLE "my.schema"."t.1" (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO "my.schema"."t.1" VALUES (1, 'snap')`)
	cfg := e.Config("ids", `"Quoted_"" . Schema".*`, `public."Ordér"`, `"my.schema"."t.1"`)
	r := ittest.Start(t, cfg)

	e.Exec(`INSERT INTO "Quoted_"" . Schema"."Quoted_"" . Table" ("Quoted_"" . Text_Column") VALUES ('some text')`)
	e.Exec(`UPDATE public."Ordér" SET "Ünïcode Çolumn" = 'streamed' WHERE "Id" = 1`)
	e.Exec(`INSERT INTO "my.schema"."t.1" VALUES (2, 'streamed')`)

	for _, tc := range []struct {
		topic, schema, table, column string
		ops                          []string
		values                       []any
	}{
		{"ids.Quoted___._Schema.Quoted___._Table", `Quoted_" . Schema`, `Quoted_" . Table`, `Quoted_" . Text_Column`,
			[]string{"r", "c"}, []any{"some text", "some text"}},
		// 'é' is one character, so one '_' (AbstractTopicNamingStrategy.java:158-166).
		{"ids.public.Ord_r", "public", "Ordér", "Ünïcode Çolumn", []string{"r", "u"}, []any{"snap", "streamed"}},
		{"ids.my.schema.t.1", "my.schema", "t.1", "v", []string{"r", "c"}, []any{"snap", "streamed"}},
	} {
		evs := ittest.Consume(t, e.Kafka, len(tc.ops), tc.topic)
		for i, ev := range evs {
			if ev.Op != tc.ops[i] || ev.After[tc.column] != tc.values[i] {
				t.Errorf("%s record %d: op %q %s=%v, want %q %v", tc.topic, i, ev.Op, tc.column, ev.After[tc.column], tc.ops[i], tc.values[i])
			}
			if ev.Source.Schema != tc.schema || ev.Source.Table != tc.table {
				t.Errorf("%s record %d: source %q.%q, want the unsanitized %q.%q", tc.topic, i, ev.Source.Schema, ev.Source.Table, tc.schema, tc.table)
			}
		}
	}
	for name, ph := range r.P.TablePhases() {
		if ph.Phase != "ready" && ph.Phase != "catchup" {
			t.Errorf("table %s is %s: %s", name, ph.Phase, ph.LastError)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
}
