package ddl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/connectformat"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/offsets"
)

// TestIncompatibleDDLParksOnlyThatTableInProtobufAndJSONSchema: with
// format.key and format.value protobuf or json_schema and
// schema_evolution park, a column added to public.a is checked at its DDL
// against <topic>-value as the first row would register it; the registry
// refuses it (srtest refuses every new PROTOBUF or JSON version under
// BACKWARD, its default, naming NONE as the fix: a real registry's
// reason differs, the path is the same), so public.a parks at the DDL
// with the subject, the DDL and the registry's reason in its status, no
// row of the new shape is written, and public.b streams on. Set to NONE
// and copied again, the table registers its second version and streams.
func TestIncompatibleDDLParksOnlyThatTableInProtobufAndJSONSchema(t *testing.T) {
	for _, format := range []string{config.FormatProtobuf, config.FormatJSONSchema} {
		t.Run(format, func(t *testing.T) {
			e := ittest.NewEnv(t)
			reg := srtest.New(t)
			e.Exec(`CREATE TABLE public.a (id int PRIMARY KEY, v int)`)
			e.Exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
			e.Exec(`INSERT INTO a VALUES (1, 1), (2, 2)`)
			name := map[string]string{config.FormatProtobuf: "pbpark", config.FormatJSONSchema: "jspark"}[format]
			cfg := e.Config(name, "public.a", "public.b")
			cfg.Format.Key, cfg.Format.Value = format, format
			cfg.Format.SchemaRegistry.URL = reg.URL()
			cfg.DDL.Capture = true
			cfg.Heartbeat.Records = false
			r := ittest.Start(t, cfg)

			e.Exec(`INSERT INTO a VALUES (3, 3)`)
			e.Exec(`INSERT INTO b VALUES (1, 'one')`)
			alter := `ALTER TABLE a ADD COLUMN note text`
			e.Exec(`BEGIN; INSERT INTO a VALUES (4, 4); ` + alter + `; INSERT INTO a VALUES (5, 5, 'five'); COMMIT`)
			e.Exec(`INSERT INTO b VALUES (2, 'two')`)

			ph := ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "errored" })
			if ph.Retry != "resnapshot" || !strings.Contains(ph.LastError, name+".public.a-value") ||
				!strings.Contains(ph.LastError, alter) || !strings.Contains(ph.LastError, "NONE") {
				t.Fatalf("errored phase = %+v: want the subject, the DDL and the registry's reason", ph)
			}
			ittest.ReadRaw(t, e.Kafka, 2, name+".public.b") // b streams on
			// Exactly the rows before the DDL: 1, 2 copied, 3 and 4 streamed.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			recs := kafkatest.ReadAll(ctx, t, e.Kafka, -1, name+".public.a")
			if len(recs) != 4 {
				t.Fatalf("%d records of public.a, want the 4 before the DDL", len(recs))
			}
			if v := reg.Versions(name + ".public.a-value"); len(v) != 1 {
				t.Fatalf("value subject versions %v: the refused schema was registered", v)
			}

			reg.SetCompatibility(name+".public.a-value", srtest.None)
			ittest.Resnapshot(t, name, e, r, "public.a")
			ittest.WaitPhase(t, r, "public.a", func(p offsets.Table) bool { return p.Phase == "ready" || p.Phase == "catchup" })
			e.Exec(`INSERT INTO a VALUES (6, 6, 'six')`)
			last := ittest.ReadRaw(t, e.Kafka, 4+5+1, name+".public.a")[4+5] // the copy of 5 rows, then 6
			var id int
			var err error
			if format == config.FormatProtobuf {
				id, _, _, err = connectformat.DecodeProtobufFrame(last.Value)
			} else {
				id, _, err = connectformat.DecodeJSONFrame(last.Value)
			}
			if v := reg.Versions(name + ".public.a-value"); err != nil || len(v) != 2 {
				t.Fatalf("after NONE and the copy: versions %v (%v)", v, err)
			}
			if text, _ := reg.SchemaByID(id); !strings.Contains(text, "note") {
				t.Errorf("the row after the copy has schema %d without the column:\n%s", id, text)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
