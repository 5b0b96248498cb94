package ddl

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// scEvent is a schema-change record's value, as the test reads it.
type scEvent struct {
	Source struct {
		Table string `json:"table"`
		LSN   int64  `json:"lsn"`
		TxID  int64  `json:"txId"`
	} `json:"source"`
	DatabaseName string `json:"databaseName"`
	SchemaName   string `json:"schemaName"`
	DDL          string `json:"ddl"`
	TableChanges []struct {
		Type       string `json:"type"`
		ID         string `json:"id"`
		PreviousID string `json:"previousId"`
		Table      *struct {
			PrimaryKey []string         `json:"primaryKeyColumnNames"`
			Columns    []map[string]any `json:"columns"`
		} `json:"table"`
	} `json:"tableChanges"`
}

// TestDDLCaptureWritesSchemaChangeRecords: with the event trigger of
// `mooncdc setup-ddl`, an ALTER TABLE in a transaction with a row of the
// new shape, a CREATE TABLE matching postgres.tables and a DROP TABLE
// each give one record on <prefix>.schema-changes, keyed by the table,
// with the exact statement and the columns after it, before the rows of
// its transaction (its LSN is below theirs; in exactly-once mode, in the
// same Kafka transaction). A table outside the capture gives none. The
// trigger comes from setup-ddl (at-least-once) or ddl.capture (exactly-once).
func TestDDLCaptureWritesSchemaChangeRecords(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			e := ittest.NewPrivateEnv(t) // its records name the database postgres
			e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
			e.Exec(`CREATE SCHEMA other; CREATE TABLE other.ignored (id int PRIMARY KEY)`)
			cfg := e.Config("ddl", "public.*")
			cfg.Kafka.Delivery = mode
			if mode == config.DeliveryExactlyOnce {
				cfg.DDL.Capture = true // run installs the trigger
			} else { // as mooncdc setup-ddl does
				conn, err := e.PG.Connect(context.Background(), "postgres")
				if err != nil {
					t.Fatal(err)
				}
				if err := pgsource.InstallDDLCapture(context.Background(), conn); err != nil {
					t.Fatal(err)
				}
				conn.Close(context.Background())
			}
			r := ittest.Start(t, cfg)

			// A streamed row first: the ALTER's new Relation then differs from
			// a known one, and the trigger's record must not be written twice.
			e.Exec(`INSERT INTO orders VALUES (1, 'a')`)
			ittest.Consume(t, e.Kafka, 1, "ddl.public.orders")
			alter := `ALTER TABLE orders ADD COLUMN note varchar(40) DEFAULT 'x', ADD COLUMN amount numeric(10,2) NOT NULL DEFAULT 0`
			e.Exec(`BEGIN; ` + alter + `; INSERT INTO orders (id, v) VALUES (2, 'b'); COMMIT`)
			e.Exec(`ALTER TABLE other.ignored ADD COLUMN n int`)
			e.Exec(`CREATE TABLE public.added (k bigint PRIMARY KEY, t timestamptz)`)
			e.Exec(`DROP TABLE public.added`)

			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			recs := kafkatest.ReadAll(ctx, t, e.Kafka, 3, "ddl.schema-changes")
			if len(recs) != 3 {
				t.Fatalf("%d schema-change records, want 3 (ALTER, CREATE, DROP)", len(recs))
			}
			var evs []scEvent
			for _, rec := range recs {
				var ev scEvent
				if err := json.Unmarshal(rec.Value, &ev); err != nil {
					t.Fatalf("%s: %v", rec.Value, err)
				}
				evs = append(evs, ev)
			}
			if k := string(recs[0].Key); k != `{"databaseName":"postgres","schemaName":"public","tableName":"orders"}` {
				t.Errorf("key %s", k)
			}
			a := evs[0]
			if a.DDL != `BEGIN; `+alter+`; INSERT INTO orders (id, v) VALUES (2, 'b'); COMMIT` || a.DatabaseName != "postgres" || a.SchemaName != "public" ||
				len(a.TableChanges) != 1 || a.TableChanges[0].Type != "ALTER" || a.TableChanges[0].ID != `"public"."orders"` {
				t.Fatalf("ALTER event %+v", a)
			}
			tab := a.TableChanges[0].Table
			wantCols := []map[string]any{
				{"name": "id", "typeName": "int4", "length": nil, "scale": nil, "position": 1.0, "optional": false, "defaultValueExpression": nil},
				{"name": "v", "typeName": "text", "length": nil, "scale": nil, "position": 2.0, "optional": true, "defaultValueExpression": nil},
				{"name": "note", "typeName": "varchar", "length": 40.0, "scale": nil, "position": 3.0, "optional": true, "defaultValueExpression": "'x'::character varying"},
				{"name": "amount", "typeName": "numeric", "length": 10.0, "scale": 2.0, "position": 4.0, "optional": false, "defaultValueExpression": "0"},
			}
			if tab == nil || !reflect.DeepEqual(tab.PrimaryKey, []string{"id"}) || !reflect.DeepEqual(tab.Columns, wantCols) {
				t.Errorf("ALTER columns %+v, want %+v", tab, wantCols)
			}
			rows := ittest.Consume(t, e.Kafka, 2, "ddl.public.orders")
			// A logical message's LSN is the end of its WAL record
			// (decode.c queues it at buf->endptr), where the INSERT's begins.
			if row := rows[1]; row.Source.TxID == nil || *row.Source.TxID != a.Source.TxID || row.Source.LSN < a.Source.LSN {
				t.Errorf("the row of the ALTER's transaction (txId %v, lsn %d, %s) is not after its schema change (txId %d, lsn %d)",
					*row.Source.TxID, row.Source.LSN, row.Source.Sequence, a.Source.TxID, a.Source.LSN)
			}
			if c := evs[1]; c.TableChanges[0].Type != "CREATE" || c.Source.Table != "added" || c.DDL != `CREATE TABLE public.added (k bigint PRIMARY KEY, t timestamptz)` ||
				len(c.TableChanges[0].Table.Columns) != 2 {
				t.Errorf("CREATE event %+v", c)
			}
			if d := evs[2]; d.TableChanges[0].Type != "DROP" || d.TableChanges[0].Table != nil || d.DDL != `DROP TABLE public.added` {
				t.Errorf("DROP event %+v", d)
			}
			e.Exec(`INSERT INTO orders (id, v) VALUES (3, 'c')`)
			ittest.Consume(t, e.Kafka, 3, "ddl.public.orders")
			if all := kafkatest.ReadAll(ctx, t, e.Kafka, -1, "ddl.schema-changes"); len(all) != 3 {
				for _, rec := range all {
					t.Logf("%s", rec.Value)
				}
				t.Errorf("%d schema-change records, want 3: the ALTER's new Relation is announced by its trigger record only", len(all))
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSchemaChangeDerivedFromRelationsWithoutTheTrigger: without the event
// trigger (managed Postgres), a Relation message whose shape differs from
// the table's last one still gives a schema-change record, with an empty
// ddl and the columns pgoutput and the catalog give, before the first row
// of the new shape; the same shape again (a restart) gives none.
func TestSchemaChangeDerivedFromRelationsWithoutTheTrigger(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, v text)`)
	cfg := e.Config("rel", "public.orders")
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO orders VALUES (1, 'a')`)
	e.Exec(`INSERT INTO orders VALUES (2, 'b')`)
	ittest.Consume(t, e.Kafka, 2, "rel.public.orders")
	e.Exec(`ALTER TABLE orders ADD COLUMN qty numeric(8,3)`)
	e.Exec(`INSERT INTO orders VALUES (3, 'c', 1.5)`)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.Kafka, 1, "rel.schema-changes")
	if len(recs) != 1 {
		t.Fatalf("%d schema-change records, want 1", len(recs))
	}
	var ev scEvent
	if err := json.Unmarshal(recs[0].Value, &ev); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(recs[0].Value), `"ddl":null`) {
		t.Errorf("derived event without ddl null: %s", recs[0].Value)
	}
	wantCols := []map[string]any{
		{"name": "id", "typeName": "int4", "length": nil, "scale": nil, "position": 1.0, "optional": false, "defaultValueExpression": nil},
		{"name": "v", "typeName": "text", "length": nil, "scale": nil, "position": 2.0, "optional": true, "defaultValueExpression": nil},
		{"name": "qty", "typeName": "numeric", "length": 8.0, "scale": 3.0, "position": 3.0, "optional": true, "defaultValueExpression": nil},
	}
	if ev.DDL != "" || len(ev.TableChanges) != 1 || ev.TableChanges[0].Type != "ALTER" || ev.TableChanges[0].Table == nil ||
		!reflect.DeepEqual(ev.TableChanges[0].Table.Columns, wantCols) || !reflect.DeepEqual(ev.TableChanges[0].Table.PrimaryKey, []string{"id"}) {
		t.Errorf("derived event %+v\nwant columns %v", ev, wantCols)
	}
	rows := ittest.Consume(t, e.Kafka, 3, "rel.public.orders")
	if rows[2].Source.LSN < ev.Source.LSN {
		t.Errorf("the row of the new shape (lsn %d) precedes its schema change (lsn %d)", rows[2].Source.LSN, ev.Source.LSN)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	// A restart sees the same shape again: no record.
	r = ittest.Start(t, cfg)
	e.Exec(`INSERT INTO orders VALUES (4, 'd', 2)`)
	ittest.Consume(t, e.Kafka, 4, "rel.public.orders")
	if n := len(kafkatest.ReadAll(ctx, t, e.Kafka, -1, "rel.schema-changes")); n != 1 {
		t.Errorf("%d schema-change records after a restart, want 1", n)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	// A change made while mooncdc is stopped: the next run compares the
	// first Relation message with the shape the last run stored.
	e.Exec(`ALTER TABLE orders DROP COLUMN v`)
	e.Exec(`INSERT INTO orders VALUES (5, 2.5)`)
	r = ittest.Start(t, cfg)
	rows = ittest.Consume(t, e.Kafka, 5, "rel.public.orders")
	recs = kafkatest.ReadAll(ctx, t, e.Kafka, 2, "rel.schema-changes")
	if len(recs) != 2 {
		t.Fatalf("%d schema-change records after a change while stopped, want 2", len(recs))
	}
	ev = scEvent{}
	if err := json.Unmarshal(recs[1].Value, &ev); err != nil {
		t.Fatal(err)
	}
	wantCols = []map[string]any{wantCols[0], wantCols[2]}
	wantCols[1]["position"] = 2.0
	if ev.DDL != "" || len(ev.TableChanges) != 1 || ev.TableChanges[0].Type != "ALTER" || ev.TableChanges[0].Table == nil ||
		!reflect.DeepEqual(ev.TableChanges[0].Table.Columns, wantCols) {
		t.Errorf("derived event of a change while stopped %+v\nwant columns %v", ev, wantCols)
	}
	if rows[4].Source.LSN < ev.Source.LSN {
		t.Errorf("the row of the new shape (lsn %d) precedes its schema change (lsn %d)", rows[4].Source.LSN, ev.Source.LSN)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
