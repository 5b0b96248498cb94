package transforms

import (
	"encoding/json"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
)

// TestTheChainRunsAfterTheOutboxRouter: with format.envelope outbox the
// chain sees the EventRouter's records, as a Debezium chain with the
// router first: the outbox row copied by the snapshot and the one
// streamed become events on outbox.event.<aggregatetype>, keyed by
// aggregateid, valued by the expanded payload
// (debezium-connect-plugins/src/main/java/io/debezium/transforms/outbox/EventRouterDelegate.java:162-181,
// 232-246 at v3.6.1.Final), to which InsertField$Value appends region
// (InsertField.java:202-203, 229 at apache/kafka 1eb7644349c); the `id`
// header (ERD:159-160) is there for HasHeaderKey to see, which gates the
// transform.
func TestTheChainRunsAfterTheOutboxRouter(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.outbox (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL,
		aggregateid varchar(255) NOT NULL, type varchar(255), payload jsonb)`)
	e.Exec(`INSERT INTO outbox VALUES ('00000000-0000-4000-8000-000000000001', 'Order', 'o1', 'OrderCreated', '{"n":1}')`)
	cfg := e.Config("to", "public.outbox")
	cfg.Heartbeat.Records = false
	cfg.Format.Envelope = config.EnvelopeOutbox
	cfg.Format.Outbox.Table = "public.outbox"
	cfg.Format.Outbox.TableExpandJSONPayload = true
	cfg.Transforms = map[string]string{
		"transforms":                        "addRegion",
		"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.addRegion.static.field": "region",
		"transforms.addRegion.static.value": "EU",
		"transforms.addRegion.predicate":    "hasID",
		"predicates":                        "hasID",
		"predicates.hasID.type":             "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
		"predicates.hasID.name":             "id",
	}
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO outbox VALUES ('00000000-0000-4000-8000-000000000002', 'Order', 'o2', 'OrderCreated', '{"n":2}')`)
	recs := ittest.ReadRaw(t, e.Kafka, 2, "outbox.event.Order")
	for i, want := range []struct{ key, value, id string }{
		{`"o1"`, `{"n":1,"region":"EU"}`, "00000000-0000-4000-8000-000000000001"},
		{`"o2"`, `{"n":2,"region":"EU"}`, "00000000-0000-4000-8000-000000000002"},
	} {
		if string(recs[i].Key) != want.key || string(recs[i].Value) != want.value {
			t.Errorf("event %d: key %s value %s, want %s %s", i, recs[i].Key, recs[i].Value, want.key, want.value)
		}
		if id, ok := ittest.Header(recs[i], "id"); !ok || id != want.id {
			t.Errorf("event %d: id header %q, want %s", i, id, want.id)
		}
		if !json.Valid(recs[i].Value) {
			t.Errorf("event %d: value is not JSON", i)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
