package records

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
)

// TestRoutesMergeTablesWithUniqueKeys: kafka.routes with a key_field is
// Debezium's ByLogicalTableRouter (debezium-connect-plugins/src/main/java/io/debezium/transforms/ByLogicalTableRouter.java,
// v3.6.1.Final): the records of the matching tables go to one topic, their
// schemas are named after it (<topic>.Key/.Value/.Envelope, :321-340,
// :369-395), and each key gains __dbz__physicalTableIdentifier, the
// original topic (:342-367), in snapshot rows and changes alike. Without
// a key_field a route renames the topic only. Merged tables are not a
// topic clash.
func TestRoutesMergeTablesWithUniqueKeys(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders_2023 (id int PRIMARY KEY, v text); CREATE TABLE orders_2024 (id int PRIMARY KEY, v text);
		CREATE TABLE customers (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO orders_2023 VALUES (1, 'a'); INSERT INTO orders_2024 VALUES (1, 'b'); INSERT INTO customers VALUES (1)`)
	cfg := e.Config("rt", "public.*")
	cfg.Format.JSONSchemas = true
	cfg.Kafka.Routes = []config.RouteRule{
		{Regex: `rt\.public\.orders_(.*)`, Topic: "rt.public.orders", KeyField: "__dbz__physicalTableIdentifier"},
		{Regex: `rt\.public\.customers`, Topic: "crm.customers"},
	}
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO orders_2024 VALUES (2, 'c'); DELETE FROM orders_2023 WHERE id = 1`)
	recs := ittest.ReadRaw(t, e.Kafka, 5, "rt.public.orders") // 2 snapshot rows, insert, delete, tombstone
	keys := map[string]int{}
	for _, rec := range recs {
		ev := ittest.Decode(t, []*kgo.Record{rec})[0]
		keys[fmt.Sprint(ev.Key["__dbz__physicalTableIdentifier"], "/", ev.Key["id"])]++
		if rec.Value != nil && !strings.Contains(string(rec.Value), `"name":"rt.public.orders.Envelope"`) ||
			rec.Value != nil && !strings.Contains(string(rec.Value), `"name":"rt.public.orders.Value"`) {
			t.Errorf("value schema not named after the routed topic: %.300s", rec.Value)
		}
		if !strings.Contains(string(rec.Key), `"name":"rt.public.orders.Key"`) ||
			!strings.Contains(string(rec.Key), `{"type":"string","optional":false,"field":"__dbz__physicalTableIdentifier"}`) {
			t.Errorf("key schema: %s", rec.Key)
		}
	}
	want := map[string]int{"rt.public.orders_2023/1": 3, "rt.public.orders_2024/1": 1, "rt.public.orders_2024/2": 1}
	for k, n := range want {
		if keys[k] != n {
			t.Errorf("key %s: %d records, want %d (all: %v)", k, keys[k], n, keys)
		}
	}
	cust := ittest.ReadRaw(t, e.Kafka, 1, "crm.customers")
	if !strings.Contains(string(cust[0].Value), `"name":"rt.public.customers.Value"`) || strings.Contains(string(cust[0].Key), "__dbz__") {
		t.Errorf("a rename-only route changed the schema or key: %s / %.200s", cust[0].Key, cust[0].Value)
	}
	if got := ittest.TopicsWithPrefix(t, e.Kafka, "rt.public."); strings.Join(got, ",") != "rt.public.orders" {
		t.Errorf("topics %v, want only rt.public.orders", got)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionedTableWithKeyColumnsMaskAndRoute: a partitioned table
// captured through its root takes message_key_columns, a column mask and
// a route like any table, in the snapshot and the stream; a row moving
// between partitions is a delete, a tombstone and a create under the
// configured key (issue 14.2).
func TestPartitionedTableWithKeyColumnsMaskAndRoute(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.m (id int, region text, secret text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE public.m_eu PARTITION OF public.m FOR VALUES IN ('eu')`)
	e.Exec(`CREATE TABLE public.m_us PARTITION OF public.m FOR VALUES IN ('us')`)
	e.Exec(`INSERT INTO m VALUES (1, 'eu', 's1'), (2, 'us', 's2')`)
	cfg := e.Config("pt", "public.m")
	cfg.Format.MessageKeyColumns = map[string][]string{"public.m": {"region", "id"}}
	cfg.Format.ColumnMask = []config.ColumnMaskRule{{Columns: []string{"public.m.secret"}, Chars: 3}}
	cfg.Kafka.Routes = []config.RouteRule{{Regex: `pt\.public\.m`, Topic: "pt.m"}}
	r := ittest.Start(t, cfg)
	e.Exec(`UPDATE m SET region = 'us' WHERE id = 1`) // moves m_eu → m_us
	recs := ittest.ReadRaw(t, e.Kafka, 5, "pt.m")
	var got []string
	for _, rec := range recs {
		ev := ittest.Decode(t, []*kgo.Record{rec})[0]
		op := ev.Op
		if ev.Tombstone {
			op = "tombstone"
		}
		got = append(got, op+" "+string(rec.Key))
		if !ev.Tombstone && ev.Op != "d" && ev.After["secret"] != "***" {
			t.Errorf("secret not masked: %v", ev.After)
		}
	}
	want := []string{`r {"region":"eu","id":1}`, `r {"region":"us","id":2}`,
		`d {"region":"eu","id":1}`, `tombstone {"region":"eu","id":1}`, `c {"region":"us","id":1}`}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("records on pt.m:\n got %v\nwant %v", got, want)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
