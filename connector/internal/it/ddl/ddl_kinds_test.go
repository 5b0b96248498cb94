package ddl

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// ddlKind is one kind of DDL of issue 15.4, run on its own table between
// writes to it (in the DDL's transaction and after it).
type ddlKind struct {
	table  string // the table the DDL changes ("" for a CREATE)
	create string // the table before the DDL
	ddl    string
	after  string // writes after the DDL, in the same transaction as it
	later  string // writes in a transaction of their own after that
	// renamed is the table's name after the DDL; gone is set when the
	// DDL drops it.
	renamed string
	gone    bool
}

var ddlKinds = []ddlKind{
	{table: "add_col", create: `CREATE TABLE add_col (id int PRIMARY KEY, v text)`,
		ddl:   `ALTER TABLE add_col ADD COLUMN n int`,
		after: `INSERT INTO add_col VALUES (100, 'new', 7)`, later: `UPDATE add_col SET n = 8 WHERE id = 1`},
	{table: "drop_col", create: `CREATE TABLE drop_col (id int PRIMARY KEY, v text, extra text)`,
		ddl:   `ALTER TABLE drop_col DROP COLUMN extra`,
		after: `INSERT INTO drop_col VALUES (100, 'new')`, later: `UPDATE drop_col SET v = 'u' WHERE id = 1`},
	{table: "col_type", create: `CREATE TABLE col_type (id int PRIMARY KEY, n int)`,
		ddl:   `ALTER TABLE col_type ALTER COLUMN n TYPE bigint`,
		after: `INSERT INTO col_type VALUES (100, 5000000000)`, later: `UPDATE col_type SET n = 6000000000 WHERE id = 1`},
	{table: "set_not_null", create: `CREATE TABLE set_not_null (id int PRIMARY KEY, v text)`,
		ddl:   `UPDATE set_not_null SET v = 'x' WHERE v IS NULL; ALTER TABLE set_not_null ALTER COLUMN v SET NOT NULL`,
		after: `INSERT INTO set_not_null VALUES (100, 'new')`, later: `UPDATE set_not_null SET v = 'u' WHERE id = 1`},
	{table: "drop_not_null", create: `CREATE TABLE drop_not_null (id int PRIMARY KEY, v text NOT NULL)`,
		ddl:   `ALTER TABLE drop_not_null ALTER COLUMN v DROP NOT NULL`,
		after: `INSERT INTO drop_not_null VALUES (100, NULL)`, later: `UPDATE drop_not_null SET v = NULL WHERE id = 1`},
	{table: "ren_col", create: `CREATE TABLE ren_col (id int PRIMARY KEY, v text)`,
		ddl:   `ALTER TABLE ren_col RENAME COLUMN v TO w`,
		after: `INSERT INTO ren_col VALUES (100, 'new')`, later: `UPDATE ren_col SET w = 'u' WHERE id = 1`},
	{table: "ren_tab", create: `CREATE TABLE ren_tab (id int PRIMARY KEY, v text)`,
		ddl:   `ALTER TABLE ren_tab RENAME TO ren_tab2`,
		after: `INSERT INTO ren_tab2 VALUES (100, 'new')`, later: `UPDATE ren_tab2 SET v = 'u' WHERE id = 1`, renamed: "ren_tab2"},
	{table: "drop_tab", create: `CREATE TABLE drop_tab (id int PRIMARY KEY, v text)`,
		ddl: `DROP TABLE drop_tab`, gone: true},
	{table: "trunc", create: `CREATE TABLE trunc (id int PRIMARY KEY, v text)`,
		ddl:   `TRUNCATE trunc`,
		after: `INSERT INTO trunc VALUES (100, 'new')`, later: `INSERT INTO trunc VALUES (101, 'later')`},
	{table: "ident", create: `CREATE TABLE ident (id int PRIMARY KEY, v text)`,
		ddl:   `ALTER TABLE ident REPLICA IDENTITY FULL`,
		after: `INSERT INTO ident VALUES (100, 'new')`, later: `UPDATE ident SET v = 'u' WHERE id = 1; DELETE FROM ident WHERE id = 2`},
	{table: "enum_tab", create: `CREATE TYPE mood AS ENUM ('sad', 'ok'); CREATE TABLE enum_tab (id int PRIMARY KEY, m mood)`,
		// ALTER TYPE … ADD VALUE: the new value cannot be used in its own
		// transaction, so the writes come in the next ones.
		ddl:   `ALTER TYPE mood ADD VALUE 'happy'`,
		later: `INSERT INTO enum_tab VALUES (100, 'happy'); UPDATE enum_tab SET m = 'happy' WHERE id = 1`},
	{create: `SELECT 1`, ddl: `CREATE TABLE created (id int PRIMARY KEY, v text)`,
		after: `INSERT INTO created VALUES (1, 'in the create''s transaction')`, later: `INSERT INTO created VALUES (2, 'later')`,
		renamed: "created"},
}

// TestEveryDDLKindKeepsEveryRow (issue 15.4): each kind of DDL, made while
// rows are written around it, in the stream and inside a copy's private
// catch-up, with the DDL event trigger and without it, in both delivery
// modes. A consumer that rebuilds each table from its topics ends with the
// table's rows in Postgres (a renamed table from its old and new topics),
// no table is parked, another table's writes flow throughout, and the
// schema-change topic has an event for each DDL (the DDL text and the
// columns after it with the trigger; a derived ALTER without it).
func TestEveryDDLKindKeepsEveryRow(t *testing.T) {
	for _, c := range []struct {
		path    string // stream, catchup
		trigger bool
		mode    config.Delivery
	}{
		{"stream", true, config.DeliveryAtLeastOnce},
		{"stream", false, config.DeliveryExactlyOnce},
		{"catchup", true, config.DeliveryExactlyOnce},
		{"catchup", false, config.DeliveryAtLeastOnce},
	} {
		name := fmt.Sprintf("%s/trigger=%v/%s", c.path, c.trigger, c.mode)
		t.Run(name, func(t *testing.T) {
			testDDLKinds(t, c.path, c.trigger, c.mode)
		})
	}
}

func testDDLKinds(t *testing.T, path string, trigger bool, mode config.Delivery) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE busy (id int PRIMARY KEY, n int)`)
	for _, k := range ddlKinds {
		e.Exec(k.create)
		if k.table != "" {
			cols, vals := "id", "g"
			if k.table == "drop_not_null" || k.table == "set_not_null" {
				cols, vals = "id, v", "g, 'v' || g"
			}
			e.Exec(fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM generate_series(1, 5) g`, k.table, cols, vals))
		}
	}
	cfg := e.Config("kinds", "public.*")
	cfg.Kafka.Delivery = mode
	cfg.DDL.Capture = trigger
	cfg.Format.SkippedOperations = []string{"none"} // the truncate is written
	cfg.Snapshot.Workers = len(ddlKinds) + 1        // every copy waits at once in the catchup path
	p, err := connector.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var copied sync.WaitGroup
	if path == "catchup" {
		// Every table's copy waits with its rows acknowledged: the DDLs
		// and writes below land in the copies' private catch-up windows.
		for _, k := range ddlKinds {
			if k.table != "" { // created is copied after its CREATE
				copied.Add(1)
			}
		}
		var once sync.Map
		p.Hooks().Set(func(point, table string) {
			if point == connector.HookCopied && table != "public.busy" && table != "public.created" && table != "public.ren_tab2" {
				if _, dup := once.LoadOrStore(table, true); !dup {
					copied.Done()
					<-release
				}
			}
		})
	} else {
		close(release)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	if path == "catchup" {
		copied.Wait()
	} else {
		r.WaitHandedOver(t)
	}

	// Another table's writes flow throughout.
	busyCtx, stopBusy := context.WithCancel(context.Background())
	busyDone := make(chan int)
	busyConn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer busyConn.Close(context.Background())
	go func() {
		n := 0
		for busyCtx.Err() == nil {
			n++
			if _, err := busyConn.Exec(context.Background(), `INSERT INTO busy VALUES ($1, $1)`, n); err != nil {
				t.Errorf("busy insert: %v", err)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		busyDone <- n
	}()
	for _, k := range ddlKinds {
		if k.table != "" {
			e.Exec(fmt.Sprintf(`UPDATE %s SET id = id + 10 WHERE id = 5`, k.table)) // a key change before the DDL
		}
		stmt := `BEGIN; ` + k.ddl + `; `
		if k.after != "" {
			stmt += k.after + `; `
		}
		e.Exec(stmt + `COMMIT`)
		if k.later != "" {
			e.Exec(k.later)
		}
		if k.table != "" && !k.gone && k.table != "trunc" {
			tab := k.table
			if k.renamed != "" {
				tab = k.renamed
			}
			e.Exec(fmt.Sprintf(`DELETE FROM %s WHERE id = 3`, tab))
		}
	}
	if path == "catchup" {
		close(release)
	}
	// The created table, once copied, streams: without the trigger its
	// first Relation message is its CREATE (a table mooncdc adds to the
	// publication is not in it for the writes before).
	eventually.Succeeds(t, 60*time.Second, 100*time.Millisecond, func() error {
		if ph := r.P.TablePhases()["public.created"]; ph.Phase != "ready" {
			return fmt.Errorf("created is not handed over after 60s: %+v", ph)
		}
		return nil
	})
	e.Exec(`INSERT INTO created VALUES (3, 'streamed')`)
	// The dropped table's phase says so at the next discovery.
	// The dropped table's phase says so at the next discovery, and the
	// renamed table's new name takes its old name's phase (the old name is
	// dropped), with no new copy.
	eventually.Succeeds(t, 60*time.Second, 100*time.Millisecond, func() error {
		ph := r.P.TablePhases()
		if ph["public.drop_tab"].Phase == "dropped" && ph["public.ren_tab"].Phase == "dropped" && ph["public.ren_tab2"].Phase == "ready" {
			return nil
		}
		return fmt.Errorf("after 60s: drop_tab %+v, ren_tab %+v, ren_tab2 %+v; want dropped, dropped, ready",
			ph["public.drop_tab"], ph["public.ren_tab"], ph["public.ren_tab2"])
	})
	stopBusy()
	busyRows := <-busyDone

	topic := func(tab string) string { return "kinds.public." + tab }
	want := map[string]map[string]map[string]any{} // table → id → row_to_json
	check := []struct{ name, table string }{{"busy", "busy"}}
	for _, k := range ddlKinds {
		final := k.table
		if k.renamed != "" {
			final = k.renamed
		}
		if !k.gone {
			check = append(check, struct{ name, table string }{k.table, final})
		}
	}
	for _, c := range check {
		want[c.table] = e.RowsJSON(c.table)
	}
	if len(want["busy"]) != busyRows {
		t.Fatalf("busy has %d rows, the writer wrote %d", len(want["busy"]), busyRows)
	}
	eventually.Succeeds(t, 90*time.Second, 300*time.Millisecond, func() error {
		var diffs []string
		for _, c := range check {
			topics := []string{}
			if c.name != "" && c.name != c.table {
				topics = append(topics, topic(c.name))
			}
			topics = append(topics, topic(c.table))
			got := rebuildRows(t, e.Kafka, topics)
			if !sameRows(got, want[c.table]) {
				diffs = append(diffs, fmt.Sprintf("%s: rebuilt from %v\n  %v\nwant %v", c.table, topics, got, want[c.table]))
			}
		}
		if len(diffs) == 0 {
			return nil
		}
		return fmt.Errorf("tables rebuilt from Kafka differ from Postgres after 90s:\n%s\nphases %+v", strings.Join(diffs, "\n"), r.P.TablePhases())
	})
	readCtx, cancelRead := context.WithTimeout(context.Background(), 20*time.Second)
	for _, ev := range ittest.Decode(t, kafkatest.ReadAll(readCtx, t, e.Kafka, -1, topic("ren_tab2"))) {
		if ev.Op == "r" {
			t.Errorf("ren_tab2: a snapshot row %v: the renamed table was copied again", ev.After)
			break
		}
	}
	cancelRead()
	for tab, ph := range r.P.TablePhases() {
		if ph.Phase == "errored" {
			t.Errorf("table %s is parked: %s", tab, ph.LastError)
		}
	}

	// The schema-change topic: one event for each DDL on a table that
	// exists after it, in the order of the DDLs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var evs []scEvent
	for _, rec := range kafkatest.ReadAll(ctx, t, e.Kafka, -1, "kinds.schema-changes") {
		var ev scEvent
		if err := json.Unmarshal(ittest.UnwrapConnect(t, rec).Value, &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	byTable := map[string][]scEvent{}
	for _, ev := range evs {
		for _, tc := range ev.TableChanges {
			byTable[tc.ID] = append(byTable[tc.ID], ev)
		}
	}
	for _, k := range ddlKinds {
		id := `"public"."` + k.table + `"`
		if k.renamed != "" {
			id = `"public"."` + k.renamed + `"`
		}
		got := byTable[id]
		types := make([]string, len(got))
		for i, ev := range got {
			types[i] = ev.TableChanges[0].Type
		}
		// Every event's columns are the table's after its DDL (each table
		// has one), names and types in order, as the catalog has them.
		if !k.gone {
			want := e.ColumnsOf(strings.Trim(id[len(`"public".`):], `"`))
			for _, ev := range got {
				tab := ev.TableChanges[0].Table
				if tab == nil {
					t.Errorf("%s: %s event without the table", k.table, ev.TableChanges[0].Type)
					continue
				}
				var cols []string
				for _, c := range tab.Columns {
					cols = append(cols, fmt.Sprint(c["name"], " ", c["typeName"]))
				}
				if !reflect.DeepEqual(cols, want) {
					t.Errorf("%s: %s event columns %v, want %v", k.table, ev.TableChanges[0].Type, cols, want)
				}
			}
		}
		switch {
		case k.table == "trunc":
			// No event trigger fires for TRUNCATE: the truncate message
			// itself is the event, with or without the trigger.
			if len(got) != 1 || types[0] != "TRUNCATE" || got[0].DDL != "" || got[0].TableChanges[0].Table == nil {
				t.Errorf("%s: events %v, want one TRUNCATE with the table's columns and no ddl", k.table, types)
			}
			continue
		case k.renamed == "ren_tab2":
			if len(got) != 1 || types[0] != "RENAME" || got[0].TableChanges[0].PreviousID != `"public"."ren_tab"` {
				t.Errorf("%s: events %+v, want one RENAME from \"public\".\"ren_tab\"", k.table, got)
			} else if trigger && !strings.Contains(got[0].DDL, k.ddl) {
				t.Errorf("%s: event ddl %q, want %q", k.table, got[0].DDL, k.ddl)
			}
		case k.table == "" && (len(got) != 1 || types[0] != "CREATE"):
			t.Errorf("created: events %v (trigger %v), want one CREATE", types, trigger)
			continue
		case k.table == "enum_tab" || k.table == "set_not_null" || k.table == "drop_not_null" || k.table == "ident":
			// no column or key a Relation message carries changes
			// (nullability and enum labels are not in it); with the
			// trigger, the ALTER TABLE commands are reported.
			if trigger && k.table != "enum_tab" && len(got) == 0 {
				t.Errorf("%s: no schema-change event for %q", k.table, k.ddl)
			}
		case k.gone:
			if trigger && (len(got) != 1 || got[0].TableChanges[0].Type != "DROP") {
				t.Errorf("%s: events %+v, want one DROP", k.table, got)
			}
		default:
			if len(got) == 0 {
				t.Errorf("%s: no schema-change event for %q (trigger %v); events by table: %v", k.table, k.ddl, trigger, keys(byTable))
				continue
			}
			if trigger && !strings.Contains(got[0].DDL, strings.Split(k.ddl, ";")[0]) {
				t.Errorf("%s: event ddl %q, want %q", k.table, got[0].DDL, k.ddl)
			}
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// sameRows reports whether the rebuilt rows are Postgres's rows: the
// same ids, and for each the same values in the columns both have (a row
// last written before an ADD, DROP or RENAME COLUMN has the columns of
// its time).
func sameRows(got, want map[string]map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			return false
		}
		for col, v := range g {
			if wv, ok := w[col]; ok && !reflect.DeepEqual(v, wv) {
				return false
			}
		}
	}
	return true
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rebuildRows replays topics in order into the rows they leave: by id, the
// last after image, removed by a delete or a tombstone, emptied by a
// truncate.
func rebuildRows(t *testing.T, addr string, topics []string) map[string]map[string]any {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := map[string]map[string]any{}
	for _, ev := range ittest.Decode(t, kafkatest.ReadAll(ctx, t, addr, -1, topics...)) {
		switch {
		case ev.Op == "t":
			clear(out)
		case ev.Tombstone:
			delete(out, fmt.Sprint(ev.Key["id"]))
		case ev.Op == "d":
			delete(out, fmt.Sprint(ev.Before["id"]))
		case ev.After != nil:
			out[fmt.Sprint(ev.After["id"])] = ev.After
		}
	}
	return out
}
