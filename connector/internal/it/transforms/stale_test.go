package transforms

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// routeAndKey routes public.orders' EU rows to a topic of their own and
// keys every record by id and region: a RegexRouter-like
// ContentBasedRouter limited to the table's topic by topic.regex, and
// ValueToKey (skipping tombstones, which have no value to copy from:
// ValueToKey.applySchemaless requires a map, ValueToKey.java:83-84 at
// apache/kafka 1eb7644349c). Kafka Connect runs the chain on every record
// of a source task, a delete's tombstone included
// (AbstractWorkerSourceTask.sendRecords, AbstractWorkerSourceTask.java:396-405):
// a row's records, and so the keys a re-copy must find, are where the
// chain put them.
func routeAndKey(name, router string) map[string]string {
	return map[string]string{
		"transforms":                       "toEU,key",
		"transforms.toEU.type":             "io.debezium.transforms.ContentBasedRouter",
		"transforms.toEU.language":         "cel",
		"transforms.toEU.topic.regex":      name + `\.public\.orders`,
		"transforms.toEU.topic.expression": router,
		"transforms.key.type":              "org.apache.kafka.connect.transforms.ValueToKey",
		"transforms.key.fields":            "id,region",
		"transforms.key.predicate":         "isTombstone",
		"transforms.key.negate":            "true",
		"predicates":                       "isTombstone",
		"predicates.isTombstone.type":      "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
	}
}

// compacted is what a consumer that compacts topic by key ends with: key
// to value, as written.
func compacted(t *testing.T, addr, topic string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := map[string]string{}
	for _, r := range kafkatest.ReadAll(ctx, t, addr, -1, topic) {
		if r.Value == nil {
			delete(got, string(r.Key))
		} else {
			got[string(r.Key)] = string(r.Value)
		}
	}
	return got
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range maps.Keys(m) {
		ks = append(ks, k)
	}
	return ks
}

// staleEnv copies orders (1 EU, 2 US, 3 EU, 4 US) through the chain, stops,
// loses the slot, deletes rows 1 and 2, moves row 3 to US and inserts 5
// (EU) while no slot keeps the changes: the restart re-copies the table
// with the blocking copy (on_slot_loss: resnapshot, the table asked to be
// copied again before the loss), logging to logs.
func staleEnv(t *testing.T, name string, delivery config.Delivery, router string) (e *ittest.Env, r *ittest.Running, logs *observer.ObservedLogs) {
	e = ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, region text NOT NULL)`)
	e.Exec(`INSERT INTO orders VALUES (1, 'EU'), (2, 'US'), (3, 'EU'), (4, 'US')`)
	cfg := e.Config(name, "public.orders")
	cfg.Heartbeat.Records = false
	cfg.Kafka.Delivery = delivery
	cfg.Format.Envelope = config.EnvelopeFlat
	cfg.OnSlotLoss = config.SlotLossResnapshot
	cfg.Transforms = routeAndKey(name, router)
	r = ittest.Start(t, cfg)
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	// A re-copy asked for while stopped: the table is not streamed when
	// the slot turns out lost, so the repair takes the blocking copy (a
	// ready table's would be an incremental snapshot, whose stale keys
	// the TestIncrementalSnapshot… tests below cover).
	ittest.Resnapshot(t, name, e, r, "public.orders")
	e.DropSlot("mooncdc_" + name)
	e.Exec(`DELETE FROM orders WHERE id IN (1, 2); UPDATE orders SET region = 'US' WHERE id = 3; INSERT INTO orders VALUES (5, 'EU')`)
	core, logs := observer.New(zapcore.InfoLevel)
	p, err := connector.New(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	r = ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	return e, r, logs
}

// TestResnapshotTombstonesStaleKeysWhereTheChainPutThem: after a re-copy,
// the compacted view of every topic the chain routes the table to holds
// exactly the table's rows, keyed as the chain keys them: the deleted EU
// row's key is tombstoned in the routed topic, the deleted US row's in
// the table's own, each with the key bytes the chain wrote; the row that
// moved from EU to US (a new key, another topic) is gone from the EU topic.
func TestResnapshotTombstonesStaleKeysWhereTheChainPutThem(t *testing.T) {
	for _, delivery := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(delivery), func(t *testing.T) {
			name := map[config.Delivery]string{config.DeliveryAtLeastOnce: "st", config.DeliveryExactlyOnce: "sx"}[delivery]
			e, r, _ := staleEnv(t, name, delivery, `value.region == "EU" ? "`+name+`_eu_orders" : dyn(null)`)
			eventually.Succeeds(t, 30*time.Second, 200*time.Millisecond, func() error {
				euTopic, ownTopic := name+"_eu_orders", name+".public.orders"
				euKeys, ownKeys := keysOf(compacted(t, e.Kafka, euTopic)), keysOf(compacted(t, e.Kafka, ownTopic))
				slices.Sort(euKeys)
				slices.Sort(ownKeys)
				if w := []string{`{"id":5,"region":"EU"}`}; !slices.Equal(euKeys, w) {
					return fmt.Errorf("%s compacts to keys %v, want %v", euTopic, euKeys, w)
				}
				if w := []string{`{"id":3,"region":"US"}`, `{"id":4,"region":"US"}`}; !slices.Equal(ownKeys, w) {
					return fmt.Errorf("%s compacts to keys %v, want %v", ownTopic, ownKeys, w)
				}
				return nil
			})
			if why := r.P.Status().StaleKeys; why != nil {
				t.Errorf("/status stale_keys_not_tombstoned is %v, want none", why)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestResnapshotRefusesStaleKeysItCannotFollow: a router naming the topic
// from the row's content sends the table's records to topics a re-copy
// cannot list: nothing is tombstoned (a key read from such a topic could
// be another table's), and an error log and /status name the table, the
// transform and the fix — never a silent miss.
func TestResnapshotRefusesStaleKeysItCannotFollow(t *testing.T) {
	e, r, logs := staleEnv(t, "sr", config.DeliveryAtLeastOnce, `"sr_" + value.region`)
	found := logs.FilterMessageSnippet("stale keys are not tombstoned").FilterField(zap.String("table", "public.orders")).All()
	if len(found) == 0 {
		t.Fatalf("no error log about the stale keys of public.orders; logs: %v", logs.All())
	}
	if l := found[0]; l.Level != zapcore.ErrorLevel || !strings.Contains(l.Message, "topic.regex") ||
		!strings.Contains(fmt.Sprint(l.ContextMap()["error"]), `transform "toEU"`) {
		t.Errorf("the log %q (%v, %v) must be an error naming the transform toEU and the fix", l.Message, l.Level, l.ContextMap())
	}
	// And /status says so, by table (mooncdc status shows it beside the
	// table's last error).
	if why := r.P.Status().StaleKeys["public.orders"]; !strings.Contains(why, `transform "toEU"`) || !strings.Contains(why, "topic.regex") {
		t.Errorf("/status stale_keys_not_tombstoned for public.orders is %q, want the transform toEU and the fix", why)
	}
	// The documented refusal: row 1's key stays in sr_EU.
	if eu := compacted(t, e.Kafka, "sr_EU"); eu[`{"id":1,"region":"EU"}`] == "" {
		t.Errorf("sr_EU compacts to %v: row 1's key was tombstoned though the topics are open", keysOf(eu))
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotTombstonesStaleKeysWhereTheChainPutThem: an
// incremental re-snapshot reads, with a mark each, the table's own topic
// and the topic the chain routes its EU rows to, and tombstones a key
// either holds that the table does not have (left there by something
// else than this table's stream), with the key as written; no key of the
// table is tombstoned.
func TestIncrementalSnapshotTombstonesStaleKeysWhereTheChainPutThem(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, region text NOT NULL)`)
	e.Exec(`INSERT INTO orders VALUES (1, 'EU'), (2, 'US'), (3, 'EU'), (4, 'US')`)
	cfg := e.Config("si", "public.orders")
	cfg.Heartbeat.Records = false
	cfg.Format.Envelope = config.EnvelopeFlat
	cfg.Transforms = routeAndKey("si", `value.region == "EU" ? "si_eu_orders" : dyn(null)`)
	r := ittest.Start(t, cfg)
	ittest.ReadRaw(t, e.Kafka, 2, "si_eu_orders")
	ittest.ReadRaw(t, e.Kafka, 2, "si.public.orders")
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []*kgo.Record{
		{Topic: "si_eu_orders", Key: []byte(`{"id":99,"region":"EU"}`), Value: []byte(`{"id":99,"region":"EU"}`)},
		{Topic: "si.public.orders", Key: []byte(`{"id":98,"region":"US"}`), Value: []byte(`{"id":98,"region":"US"}`)},
	} {
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	eventually.Succeeds(t, 60*time.Second, 200*time.Millisecond, func() error {
		eu, own := keysOf(compacted(t, e.Kafka, "si_eu_orders")), keysOf(compacted(t, e.Kafka, "si.public.orders"))
		slices.Sort(eu)
		slices.Sort(own)
		if w := []string{`{"id":1,"region":"EU"}`, `{"id":3,"region":"EU"}`}; !slices.Equal(eu, w) {
			return fmt.Errorf("si_eu_orders compacts to keys %v, want %v", eu, w)
		}
		if w := []string{`{"id":2,"region":"US"}`, `{"id":4,"region":"US"}`}; !slices.Equal(own, w) {
			return fmt.Errorf("si.public.orders compacts to keys %v, want %v", own, w)
		}
		return nil
	})
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncrementalSnapshotRefusesStaleKeysItCannotFollow: an incremental
// snapshot of a table whose router names topics from the row's content
// tombstones nothing (the keys it would read may be other tables') and
// says so: an error log naming the table and the transform, and /status.
func TestIncrementalSnapshotRefusesStaleKeysItCannotFollow(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, region text NOT NULL)`)
	e.Exec(`INSERT INTO orders VALUES (1, 'EU'), (2, 'US')`)
	cfg := e.Config("so", "public.orders")
	cfg.Heartbeat.Records = false
	cfg.Format.Envelope = config.EnvelopeFlat
	cfg.Transforms = routeAndKey("so", `"so_" + value.region`)
	core, logs := observer.New(zapcore.InfoLevel)
	p, err := connector.New(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	ittest.ReadRaw(t, e.Kafka, 1, "so_EU")
	// The first copy said so already (the same chain); the snapshot says
	// it again, from its own path.
	refusals := func() int {
		return logs.FilterMessageSnippet("stale keys are not tombstoned").FilterField(zap.String("table", "public.orders")).
			FilterLevelExact(zapcore.ErrorLevel).Len()
	}
	before := refusals()
	ittest.RequestIncremental(t, e, cfg, "public.orders")
	eventually.Succeeds(t, 60*time.Second, 50*time.Millisecond, func() error {
		if n := refusals(); n <= before {
			return fmt.Errorf("%d error logs about the stale keys of public.orders, want more than the first copy's %d", n, before)
		}
		return nil
	})
	if why := r.P.Status().StaleKeys["public.orders"]; !strings.Contains(why, `transform "toEU"`) {
		t.Errorf("/status stale_keys_not_tombstoned for public.orders is %q, want the transform toEU", why)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
