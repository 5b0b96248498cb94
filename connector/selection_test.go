package connector_test

import (
	"context"
	"slices"
	"testing"
)

// TestTablesExcludeLeavesTablesOut: postgres.tables_exclude (Debezium's
// table.exclude.list) keeps a table out of the publication mooncdc
// creates, out of the snapshot and out of the stream, and also a table
// that an existing publication publishes.
func TestTablesExcludeLeavesTablesOut(t *testing.T) {
	t.Run("created publication", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE audit_log (id int PRIMARY KEY)`)
		e.exec(`INSERT INTO orders VALUES (1); INSERT INTO audit_log VALUES (1)`)
		cfg := e.config("tx", "public.*")
		cfg.Postgres.TablesExclude = []string{"public.audit_*"}
		r := start(t, cfg)
		r.waitHandedOver(t)
		e.exec(`INSERT INTO orders VALUES (2); INSERT INTO audit_log VALUES (2)`)
		if evs := consume(t, e.kafka, 2, "tx.public.orders"); len(evs) != 2 {
			t.Fatalf("orders: %d records, want 2", len(evs))
		}
		var published []string
		conn, err := e.pg.Connect(context.Background(), "postgres")
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
		if got := topicsWithPrefix(t, e.kafka, "tx.public."); !slices.Equal(got, []string{"tx.public.orders"}) {
			t.Errorf("topics %v, want only tx.public.orders", got)
		}
		if _, ok := r.p.TablePhases()["public.audit_log"]; ok {
			t.Errorf("the excluded table has a phase: %v", r.p.TablePhases())
		}
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("existing publication", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE audit_log (id int PRIMARY KEY)`)
		e.exec(`CREATE PUBLICATION mooncdc_txp FOR ALL TABLES`)
		e.exec(`INSERT INTO orders VALUES (1); INSERT INTO audit_log VALUES (1)`)
		cfg := e.config("txp")
		cfg.Postgres.TablesExclude = []string{"public.audit_log"}
		r := start(t, cfg)
		r.waitHandedOver(t)
		e.exec(`INSERT INTO audit_log VALUES (2); INSERT INTO orders VALUES (2)`)
		if evs := consume(t, e.kafka, 2, "txp.public.orders"); len(evs) != 2 {
			t.Fatalf("orders: %d records, want 2", len(evs))
		}
		if got := topicsWithPrefix(t, e.kafka, "txp.public."); !slices.Equal(got, []string{"txp.public.orders"}) {
			t.Errorf("topics %v, want only txp.public.orders", got)
		}
		if err := r.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}
