package snapshot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// TestTablesExcludeLeavesTablesOut: postgres.tables_exclude (Debezium's
// table.exclude.list) keeps a table out of the publication mooncdc
// creates, out of the snapshot and out of the stream, and also a table
// that an existing publication publishes.
func TestTablesExcludeLeavesTablesOut(t *testing.T) {
	t.Run("created publication", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(`CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE audit_log (id int PRIMARY KEY)`)
		e.Exec(`INSERT INTO orders VALUES (1); INSERT INTO audit_log VALUES (1)`)
		cfg := e.Config("tx", "public.*")
		cfg.Postgres.TablesExclude = []string{"public.audit_*"}
		r := ittest.Start(t, cfg)
		r.WaitHandedOver(t)
		e.Exec(`INSERT INTO orders VALUES (2); INSERT INTO audit_log VALUES (2)`)
		if evs := ittest.Consume(t, e.Kafka, 2, "tx.public.orders"); len(evs) != 2 {
			t.Fatalf("orders: %d records, want 2", len(evs))
		}
		var published []string
		conn, err := e.PG.Connect(context.Background(), "postgres")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		rows, err := conn.Query(context.Background(), `SELECT tablename FROM pg_publication_tables WHERE pubname = 'mooncdc_tx' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			_ = rows.Scan(&n)
			published = append(published, n)
		}
		if !slices.Equal(published, []string{"orders"}) {
			t.Errorf("publication holds %v, want [orders]", published)
		}
		if got := ittest.TopicsWithPrefix(t, e.Kafka, "tx.public."); !slices.Equal(got, []string{"tx.public.orders"}) {
			t.Errorf("topics %v, want only tx.public.orders", got)
		}
		if _, ok := r.P.TablePhases()["public.audit_log"]; ok {
			t.Errorf("the excluded table has a phase: %v", r.P.TablePhases())
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("existing publication", func(t *testing.T) {
		e := ittest.NewEnv(t)
		e.Exec(`CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE audit_log (id int PRIMARY KEY)`)
		e.Exec(`CREATE PUBLICATION mooncdc_txp FOR ALL TABLES`)
		e.Exec(`INSERT INTO orders VALUES (1); INSERT INTO audit_log VALUES (1)`)
		cfg := e.Config("txp")
		cfg.Postgres.TablesExclude = []string{"public.audit_log"}
		r := ittest.Start(t, cfg)
		r.WaitHandedOver(t)
		e.Exec(`INSERT INTO audit_log VALUES (2); INSERT INTO orders VALUES (2)`)
		if evs := ittest.Consume(t, e.Kafka, 2, "txp.public.orders"); len(evs) != 2 {
			t.Fatalf("orders: %d records, want 2", len(evs))
		}
		if got := ittest.TopicsWithPrefix(t, e.Kafka, "txp.public."); !slices.Equal(got, []string{"txp.public.orders"}) {
			t.Errorf("topics %v, want only txp.public.orders", got)
		}
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTableEntriesWithWhereAndColumns: a postgres.tables entry with where
// and columns makes the publication mooncdc creates publish that row filter
// and column list (Postgres 15+), and the snapshot copies the same rows and
// columns the stream sends: a row that leaves the filter by an update is a
// delete, as pgoutput sends it (issue 14.6).
func TestTableEntriesWithWhereAndColumns(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, status text, secret text)`)
	e.Exec(`INSERT INTO orders VALUES (1, 'paid', 's'), (200, 'paid', 's')`)
	cfg := e.Config("rf", "public.orders")
	cfg.Postgres.TableFilters = map[string]config.TableFilter{
		"public.orders": {Table: "public.orders", Where: "id < 100", Columns: []string{"id", "status"}},
	}
	if e.ServerVersionNum() < 150000 {
		// Postgres 14 has neither: the pipeline refuses the entry with the
		// cause rather than copy and stream every row and column.
		if err := ittest.RunToEnd(t, cfg); err == nil || !strings.Contains(err.Error(), "need PostgreSQL 15 or later") {
			t.Fatalf("on PostgreSQL 14: %v, want an error naming PostgreSQL 15", err)
		}
		return
	}
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO orders VALUES (300, 'paid', 's'), (4, 'paid', 's')`)
	e.Exec(`UPDATE orders SET status = 'sent' WHERE id = 4`)
	e.Exec(`UPDATE orders SET id = 104 WHERE id = 4`)        // leaves the filter
	evs := ittest.Consume(t, e.Kafka, 5, "rf.public.orders") // read 1, create 4, update 4, delete 4, tombstone
	var got []string
	for _, ev := range evs {
		if ev.Tombstone {
			got = append(got, "tombstone")
			continue
		}
		img := ev.After
		if ev.Op == "d" {
			img = ev.Before
		}
		if _, ok := img["secret"]; ok {
			t.Errorf("secret is sent: %v", img)
		}
		got = append(got, fmt.Sprint(ev.Op, " ", img["id"], " ", img["status"]))
	}
	want := []string{"r 1 paid", "c 4 paid", "u 4 sent", "d 4 <nil>", "tombstone"}
	if !slices.Equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	// A row filter on a column outside the replica identity would make
	// Postgres refuse the application's UPDATEs: run refuses it instead,
	// and creates nothing.
	e2 := ittest.NewEnv(t)
	e2.Exec(`CREATE TABLE orders (id int PRIMARY KEY, status text)`)
	cfg2 := e2.Config("rf2", "public.orders")
	cfg2.Postgres.TableFilters = map[string]config.TableFilter{"public.orders": {Table: "public.orders", Where: "status <> 'draft'"}}
	err := ittest.RunToEnd(t, cfg2)
	if code := connector.ExitCode(err); code == connector.ExitOK || err == nil || !strings.Contains(err.Error(), "REPLICA IDENTITY FULL") {
		t.Fatalf("run = %v (exit %d), want the refusal with the fix", err, code)
	}
	e2.Exec(`UPDATE orders SET status = 'x'`) // the application's writes still work
	if n := e2.Count(`SELECT count(*) FROM pg_publication WHERE pubname = 'mooncdc_rf2'`); n != 0 {
		t.Errorf("the publication was created anyway")
	}
}
