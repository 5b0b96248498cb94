package snapshot

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestPartitionedTableIsCapturedThroughItsRoot: a partitioned table selected
// by its root's name is copied and streamed as one table on one topic, in
// both delivery modes, with the default postgres.publish_via_partition_root;
// a row that moves between partitions is a delete and a create on that
// topic, in order. (Before: no record at all, and a warning about ownership
// every discovery.)
func TestPartitionedTableIsCapturedThroughItsRoot(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			e := ittest.NewEnv(t)
			e.Exec(`CREATE TABLE public.m (id int, region text, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
			e.Exec(`CREATE TABLE public.m_eu PARTITION OF public.m FOR VALUES IN ('eu')`)
			e.Exec(`CREATE TABLE public.m_us PARTITION OF public.m FOR VALUES IN ('us')`)
			e.Exec(`INSERT INTO m SELECT i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END, 'snap' FROM generate_series(1, 100) i`)
			e.Exec(`ANALYZE m_eu, m_us`)
			cfg := e.Config("part", "public.m")
			cfg.Kafka.Delivery = mode
			r := ittest.Start(t, cfg)
			if ph := r.P.TablePhases(); len(ph) != 1 || ph["public.m"].Phase == "" {
				t.Fatalf("phases: want public.m alone, got %+v", ph)
			}

			e.Exec(`INSERT INTO m VALUES (101, 'eu', 'new'), (102, 'us', 'new')`)
			e.Exec(`UPDATE m SET v = 'changed' WHERE id = 2`)         // within m_eu
			e.Exec(`UPDATE m SET region = 'us' WHERE id = 4`)         // moves m_eu → m_us
			e.Exec(`DELETE FROM m WHERE id = 3`)                      // from m_us
			e.Exec(`SELECT pg_logical_emit_message(true, 'end', '')`) // the last transaction

			ittest.Consume(t, e.Kafka, 1, "part.message")
			// 100 reads, 2 creates, 1 update, delete+tombstone+create, delete+tombstone.
			evs := ittest.Consume(t, e.Kafka, 100+2+1+3+2, "part.public.m")
			if err := r.Stop(t); err != nil {
				t.Fatalf("clean stop: %v", err)
			}
			reads := 0
			var changes []string
			for _, ev := range evs {
				switch {
				case ev.Tombstone:
					changes = append(changes, "tombstone "+ittest.KeyString(ev.Key))
				case ev.Op == "r":
					reads++
					if ev.Source.Table != "m" {
						t.Errorf("snapshot row names table %q, want m", ev.Source.Table)
					}
				default:
					if ev.Source.Table != "m" {
						t.Errorf("change names table %q, want m", ev.Source.Table)
					}
					changes = append(changes, ev.Op+" "+ittest.KeyString(ev.Key))
				}
			}
			if reads != 100 {
				t.Errorf("snapshot rows: got %d, want 100", reads)
			}
			want := []string{
				"c id=101,region=eu", "c id=102,region=us", "u id=2,region=eu",
				"d id=4,region=eu", "tombstone id=4,region=eu", "c id=4,region=us",
				"d id=3,region=us", "tombstone id=3,region=us",
			}
			if !slices.Equal(changes, want) {
				t.Errorf("changes on part.public.m:\n got %v\nwant %v", changes, want)
			}
			if got := ittest.TopicsWithPrefix(t, e.Kafka, "part.public."); !slices.Equal(got, []string{"part.public.m"}) {
				t.Errorf("data topics: got %v, want [part.public.m] (no topic per partition)", got)
			}
		})
	}
}

// TestKeylessTableIsLeftOutAndApplicationWritesGoOn: a table without a
// primary key or replica identity that postgres.tables selects is not put
// in the publication mooncdc creates (Postgres would then refuse its
// UPDATE and DELETE): the application's updates go on while mooncdc runs,
// the error is logged once with the fix, the other tables stream, and once
// the table has a replica identity the next discovery adds and copies it.
func TestKeylessTableIsLeftOutAndApplicationWritesGoOn(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.k (a int, b text)`)
	e.Exec(`INSERT INTO k SELECT i, 'x' FROM generate_series(1, 10) i`)
	e.Exec(`CREATE TABLE public.ok (id int PRIMARY KEY, v text)`)
	cfg := e.Config("kl", "public.*")
	cfg.Snapshot.DiscoveryInterval = time.Second

	// The application updates and deletes in k all along.
	var appErr atomic.Value
	var appWrites atomic.Int64
	stopApp := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stopApp:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if err := e.PG.Exec(context.Background(), "postgres", `UPDATE k SET b = $1 WHERE a = 1`, fmt.Sprint(i)); err != nil {
				appErr.Store(err)
				return
			}
			appWrites.Add(1)
		}
	}()
	defer func() { close(stopApp); wg.Wait() }()

	core, logs := observer.New(zap.InfoLevel)
	p, err := connector.New(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	if ph := p.TablePhases(); ph["public.k"].Phase != "" || ph["public.ok"].Phase == "" {
		t.Fatalf("phases: want public.ok and no public.k, got %+v", ph)
	}
	e.Exec(`INSERT INTO ok VALUES (1, 'a')`)
	ittest.Consume(t, e.Kafka, 1, "kl.public.ok")
	// A few discoveries pass; the application's writes never fail.
	time.Sleep(2500 * time.Millisecond)
	if err, _ := appErr.Load().(error); err != nil {
		t.Fatalf("the application's UPDATE failed while mooncdc ran: %v", err)
	}
	if appWrites.Load() == 0 {
		t.Fatal("the application made no write")
	}
	if err := e.PG.Exec(context.Background(), "postgres", `DELETE FROM k WHERE a = 10`); err != nil {
		t.Fatalf("the application's DELETE failed: %v", err)
	}
	errs := logs.FilterMessageSnippet("table not captured: it has no primary key or replica identity").Filter(func(l observer.LoggedEntry) bool {
		return fmt.Sprint(l.ContextMap()["table"]) == "public.k"
	})
	if errs.Len() != 1 {
		t.Fatalf("want the error logged once for public.k, got %d: %v", errs.Len(), logs.All())
	}
	if msg := errs.All()[0].Message; !strings.Contains(msg, `ALTER TABLE "public"."k" REPLICA IDENTITY FULL`) || errs.All()[0].Level != zap.ErrorLevel {
		t.Errorf("the error does not name the fix at level error: %q", msg)
	}
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	sel, _ := cfg.TableSelection()
	left, err := pgsource.UnpublishedKeyless(context.Background(), conn, "mooncdc_kl", sel)
	if err != nil || !slices.Equal(left, []config.TableName{{Schema: "public", Table: "k"}}) {
		t.Fatalf("UnpublishedKeyless = %v, %v; want [public.k]", left, err)
	}

	// Fixed: discovery adds it, and it is copied and streamed.
	e.Exec(`ALTER TABLE k REPLICA IDENTITY FULL`)
	r.WaitTable(t, "public.k")
	e.Exec(`UPDATE k SET b = 'fixed' WHERE a = 2`)
	eventually.Succeeds(t, 30*time.Second, 200*time.Millisecond, func() error {
		if evs := ittest.Consume(t, e.Kafka, -1, "kl.public.k"); !hasUpdate(evs, "fixed") {
			return fmt.Errorf("no update record for k after its fix: %+v", evs)
		}
		return nil
	})
	if left, err := pgsource.UnpublishedKeyless(context.Background(), conn, "mooncdc_kl", sel); err != nil || len(left) != 0 {
		t.Fatalf("after the fix UnpublishedKeyless = %v, %v; want none", left, err)
	}
}

func hasUpdate(evs []ittest.Event, b string) bool {
	for _, ev := range evs {
		if ev.Op == "u" && ev.After["b"] == b {
			return true
		}
	}
	return false
}

// TestTablesSharingATopicAreRefused: two tables whose names sanitize to the
// same topic (public."a b" and public.a_b) are a configuration error at
// start (exit 2) naming both, instead of silently sharing the topic; a
// table created later that would take a captured table's topic is left
// out, with an error, and its rows never reach the other's topic.
func TestTablesSharingATopicAreRefused(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.a_b (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE public."a b" (id int PRIMARY KEY, v text)`)
	p, err := connector.New(e.Config("clash", "public.*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = p.Run(ctx)
	if connector.ExitCode(err) != connector.ExitConfig || !strings.Contains(err.Error(), `tables public."a b"`) && !strings.Contains(err.Error(), "public.a b") ||
		!strings.Contains(err.Error(), "public.a_b") || !strings.Contains(err.Error(), `topic "clash.public.a_b"`) {
		t.Fatalf("two tables, one topic: %v (exit %d), want a config error naming both", err, connector.ExitCode(err))
	}

	// Later: a_b is captured, then "a b" appears.
	e.Exec(`DROP TABLE public."a b"`)
	cfg := e.Config("clash2", "public.*")
	cfg.Snapshot.DiscoveryInterval = time.Second
	core, logs := observer.New(zap.InfoLevel)
	p, err = connector.New(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	e.Exec(`CREATE TABLE public."a b" (id int PRIMARY KEY, v text)`)
	eventually.Succeeds(t, 30*time.Second, 50*time.Millisecond, func() error {
		if logs.FilterMessageSnippet("new table not captured").Len() == 0 {
			return fmt.Errorf("no error for the clashing table; phases %+v", p.TablePhases())
		}
		return nil
	})
	e.Exec(`INSERT INTO public."a b" VALUES (1, 'intruder')`)
	e.Exec(`INSERT INTO public.a_b VALUES (2, 'own')`)
	ittest.Consume(t, e.Kafka, 1, "clash2.public.a_b")
	time.Sleep(time.Second)
	evs := ittest.Consume(t, e.Kafka, -1, "clash2.public.a_b")
	for _, ev := range evs {
		if ev.After["v"] == "intruder" || ev.Source.Table != "a_b" {
			t.Errorf("a record of another table in clash2.public.a_b: %+v", ev)
		}
	}
	if _, ok := p.TablePhases()["public.a b"]; ok {
		t.Errorf("the clashing table got a phase: %+v", p.TablePhases())
	}
}

// TestSnapshotHasTheColumnsAndRowsTheStreamHas protects a publication the
// user created with a column list and a row filter (Postgres 15+) and, on
// Postgres 18, a published generated column: snapshot records carry the
// columns and rows that pgoutput streams, not the whole table (a column
// left out of the list must not leak through the snapshot). On 14 the
// publication has neither, and every non-generated column is copied.
func TestSnapshotHasTheColumnsAndRowsTheStreamHas(t *testing.T) {
	e := ittest.NewEnv(t)
	version := e.ServerVersionNum()
	e.Exec(`CREATE TABLE public.pc (id int PRIMARY KEY, a int, secret text, gen int GENERATED ALWAYS AS (a * 2) STORED)`)
	e.Exec(`INSERT INTO pc VALUES (1, 5, 's1'), (2, 50, 's2'), (3, 500, 's3')`)
	pub := `CREATE PUBLICATION mooncdc_pubcols FOR TABLE public.pc`
	wantCols, wantReads, wantCreates := []string{"a", "id", "secret"}, []float64{1, 2, 3}, []float64{4, 5}
	switch {
	case version >= 180000:
		pub, wantCols, wantReads, wantCreates = pub+` (id, a, gen) WHERE (a > 10)`, []string{"a", "gen", "id"}, []float64{2, 3}, []float64{5}
	case version >= 150000:
		pub, wantCols, wantReads, wantCreates = pub+` (id, a) WHERE (a > 10)`, []string{"a", "id"}, []float64{2, 3}, []float64{5}
	}
	e.Exec(pub)
	cfg := e.Config("pubcols")
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO pc VALUES (4, 7, 's4'), (5, 70, 's5')`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'end', '')`)
	ittest.Consume(t, e.Kafka, 1, "pubcols.message")
	evs := ittest.Consume(t, e.Kafka, len(wantReads)+len(wantCreates), "pubcols.public.pc")
	if err := r.Stop(t); err != nil {
		t.Fatalf("clean stop: %v", err)
	}
	var reads, creates []float64
	for _, ev := range evs {
		if got := slices.Sorted(maps.Keys(ev.After)); !slices.Equal(got, wantCols) {
			t.Errorf("op %s record of id %v has columns %v, want %v (those the stream has)", ev.Op, ev.After["id"], got, wantCols)
		}
		if g, ok := ev.After["gen"]; ok && g != ev.After["a"].(float64)*2 {
			t.Errorf("id %v: gen = %v, want a*2", ev.After["id"], g)
		}
		switch ev.Op {
		case "r":
			reads = append(reads, ev.After["id"].(float64))
		case "c":
			creates = append(creates, ev.After["id"].(float64))
		}
	}
	slices.Sort(reads)
	if !slices.Equal(reads, wantReads) || !slices.Equal(creates, wantCreates) {
		t.Errorf("snapshot ids %v, streamed ids %v; want %v and %v (the row filter's rows)", reads, creates, wantReads, wantCreates)
	}
}
