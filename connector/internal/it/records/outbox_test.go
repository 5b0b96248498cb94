package records

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// Debezium's sources cited below are debezium-connect-plugins/src/main/java/io/debezium/transforms/outbox/
// at v3.6.1.Final: ERD EventRouterDelegate.java, ERCD
// EventRouterConfigDefinition.java; ERT is
// src/test/java/io/debezium/transforms/outbox/EventRouterTest.java.

// outboxTable is the outbox table of Debezium's documentation
// (outbox-event-router.adoc), with a timestamp and a type column.
const outboxTable = `CREATE TABLE public.outbox (id uuid PRIMARY KEY, aggregatetype varchar(255) NOT NULL,
	aggregateid varchar(255) NOT NULL, type varchar(255), payload jsonb, created timestamp(3))`

func outboxInsert(e *ittest.Env, n int, typ, agg, payload string) {
	e.T.Helper()
	p := any(payload)
	if payload == "" {
		p = nil
	}
	e.Exec(`INSERT INTO outbox VALUES ($1, $2, $3, $4, $5, '2026-01-02 03:04:05.678')`,
		uuidOf(n), typ, agg, typ+"Created", p)
}

func uuidOf(n int) string { return "00000000-0000-4000-8000-00000000000" + string(rune('0'+n)) }

// TestOutboxEventsRoutedWithDebeziumsSemantics: two pipelines on one
// database capture public.outbox and public.items under format.envelope
// outbox. A snapshot row and streamed inserts of the outbox table become
// one record each on outbox.event.<aggregatetype> (ERD.java:234-246,
// ERCD.java:283-292; ERT.java:373 canRouteBasedOnField), keyed by aggregateid
// (ERD.java:232-238), valued by the payload (the column's string without
// envelope fields, ERD.java:183-188, 223-226), with the event id in the
// `id` header (ERD.java:159-160); snapshot rows are events like inserts
// (ERD.java:111-123 sets aside only d and u). Deletes are ignored
// (ERD.java:111-115; ERT.java:64 canSkipDeletion), an update is skipped
// with a warning (warn) or parks the outbox table (fatal; Debezium fails
// the task, ERD.java:304-315). A null payload is a null value, or with
// route_tombstone_on_empty_payload a tombstone (ERD.java:214-222; ERT.java:863
// canMarkAnEventAsDeleted). The second pipeline writes JSON with schemas
// (each record checked by the JsonConverter validator), expands the
// payload (ERD.java:162-181; ERT.java:957 canExpandJsonPayloadIfConfigured), puts
// type in the value as eventType and in a header (ERD.java:192-212; ERT.java:625
// canSetPayloadTypeIntoTheEnvelope), and takes the record timestamp from
// created (ERD.java:253-285; ERT.java:343 canSetTimestampByUserDefinedConfiguration). Outbox
// messages are events too; other messages, a malformed outbox message
// and the other table are written as without the envelope.
func TestOutboxEventsRoutedWithDebeziumsSemantics(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(outboxTable)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text)`)
	outboxInsert(e, 1, "Order", "o1", `{"total": 1}`)

	a := e.Config("oba", "public.outbox", "public.items")
	a.Heartbeat.Records = false
	a.Format.Envelope = config.EnvelopeOutbox
	a.Format.Outbox.Table = "public.outbox"
	a.Format.Outbox.MessagePrefix = "outbox"
	b := a
	b.Name = "obb"
	b.Format.JSONSchemas = true
	b.Format.Outbox.Topic = "b.${routedByValue}.events"
	b.Format.Outbox.TableExpandJSONPayload = true
	b.Format.Outbox.RouteTombstoneOnEmptyPayload = true
	b.Format.Outbox.TableFieldsAdditionalPlacement = []string{"type:header", "type:envelope:eventType"}
	b.Format.Outbox.TableFieldEventTimestamp = "created"
	b.Format.Outbox.TableOpInvalidBehavior = "fatal"
	ra, rb := ittest.StartStreaming(t, a), ittest.StartStreaming(t, b)
	ra.WaitHandedOver(t)
	rb.WaitHandedOver(t)

	outboxInsert(e, 2, "Order", "o2", `{"total": 2, "lines": [{"sku": "a"}]}`)
	outboxInsert(e, 3, "Customer", "c1", `{"name": "Ann"}`)
	outboxInsert(e, 4, "Order", "o3", "")
	e.Exec(`SELECT pg_logical_emit_message(true, 'outbox', '{"id":"m1","aggregatetype":"Customer","aggregateid":"c2","type":"CustomerMoved","payload":{"city":"Bern"}}')`)
	e.Exec(`SELECT pg_logical_emit_message(false, 'outbox', '{"id":"m2","aggregatetype":"Customer","aggregateid":"c3","type":"CustomerLeft"}')`) // its own unit
	e.Exec(`SELECT pg_logical_emit_message(true, 'other', 'not an event')`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'outbox', '{"aggregatetype": 7}')`) // not an event: a plain message
	e.Exec(`INSERT INTO items VALUES (1, 'passes through')`)
	e.Exec(`DELETE FROM outbox WHERE id = $1`, uuidOf(1))
	outboxInsert(e, 5, "Order", "o4", `{"total": 4}`)
	// A key change is Debezium's delete and create: the create is an event.
	e.Exec(`UPDATE outbox SET id = $1, aggregateid = 'c4' WHERE id = $2`, uuidOf(6), uuidOf(3))
	e.Exec(`UPDATE outbox SET type = 'changed' WHERE id = $1`, uuidOf(2))
	e.Exec(`INSERT INTO items VALUES (2, 'after the update')`)

	// Pipeline a: defaults. The delete and the update write nothing: the
	// fourth Order record is o4.
	type rec struct{ key, value, id string }
	got := func(recs []*kgo.Record) []rec {
		var out []rec
		for _, r := range recs {
			id, _ := ittest.Header(r, "id")
			out = append(out, rec{string(r.Key), string(r.Value), id})
		}
		return out
	}
	wantA := map[string][]rec{
		"outbox.event.Order": {{`"o1"`, `"{\"total\": 1}"`, uuidOf(1)}, {`"o2"`, `"{\"lines\": [{\"sku\": \"a\"}], \"total\": 2}"`, uuidOf(2)},
			{`"o3"`, `null`, uuidOf(4)}, {`"o4"`, `"{\"total\": 4}"`, uuidOf(5)}},
		"outbox.event.Customer": {{`"c1"`, `"{\"name\": \"Ann\"}"`, uuidOf(3)}, {`"c2"`, `{"city":"Bern"}`, "m1"}, {`"c3"`, `null`, "m2"}, {`"c4"`, `"{\"name\": \"Ann\"}"`, uuidOf(6)}},
	}
	for topic, want := range wantA {
		if g := got(ittest.ReadRaw(t, e.Kafka, len(want), topic)); !equalRecs(g, want) {
			t.Errorf("%s:\n got  %v\n want %v", topic, g, want)
		}
	}
	msgs := ittest.ReadRaw(t, e.Kafka, 2, "oba.message")
	for i, prefix := range []string{"other", "outbox"} {
		if !strings.Contains(string(msgs[i].Key), `"prefix":"`+prefix+`"`) {
			t.Errorf("message %d key %s, want prefix %s", i, msgs[i].Key, prefix)
		}
	}
	items := ittest.ReadRaw(t, e.Kafka, 2, "oba.public.items")
	if !strings.Contains(string(items[1].Value), `"op":"c"`) || !strings.Contains(string(items[1].Value), "after the update") {
		t.Errorf("items record %s, want Debezium's envelope (the other table passes through)", items[1].Value)
	}

	// Pipeline b: schemas, expansion, placement, timestamps, tombstones;
	// the update parks the outbox table.
	order := ittest.ReadRaw(t, e.Kafka, 4, "b.Order.events")
	ts := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
	for i, want := range []struct{ key, value string }{
		{"o1", `{"payload":{"total":1},"eventType":"OrderCreated"}`},
		{"o2", `{"payload":{"lines":[{"sku":"a"}],"total":2},"eventType":"OrderCreated"}`},
		{"o3", ""},
		{"o4", `{"payload":{"total":4},"eventType":"OrderCreated"}`},
	} {
		r := ittest.UnwrapConnect(t, order[i])
		if string(r.Key) != `"`+want.key+`"` || string(r.Value) != want.value {
			t.Errorf("b record %d: key %s value %s, want %s %s", i, r.Key, r.Value, want.key, want.value)
		}
		if typ, _ := ittest.Header(r, "type"); typ != "OrderCreated" {
			t.Errorf("b record %d: type header %q", i, typ)
		}
		if !r.Timestamp.Equal(ts) {
			t.Errorf("b record %d: timestamp %v, want %v (created)", i, r.Timestamp, ts)
		}
	}
	if order[2].Value != nil {
		t.Errorf("empty payload: value %q, want a tombstone", order[2].Value)
	}
	var vs struct {
		Schema struct {
			Name string `json:"name"`
		} `json:"schema"`
	}
	if err := json.Unmarshal(order[1].Value, &vs); err != nil || vs.Schema.Name != "obb.public.outbox.Order.Value" {
		t.Errorf("value schema name %q (%v), want obb.public.outbox.Order.Value (ERD.java:439-449)", vs.Schema.Name, err)
	}
	cust := ittest.ReadRaw(t, e.Kafka, 3, "b.Customer.events")
	if r := ittest.UnwrapConnect(t, cust[1]); string(r.Value) != `{"payload":{"city":"Bern"},"eventType":"CustomerMoved"}` {
		t.Errorf("b message event %s", r.Value)
	}
	if cust[2].Value != nil || string(cust[2].Key) != `{"schema":{"type":"string","optional":true},"payload":"c3"}` {
		t.Errorf("b message without payload: key %s value %q, want a tombstone (route_tombstone_on_empty_payload)", cust[2].Key, cust[2].Value)
	}
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		ph := rb.P.TablePhases()["public.outbox"]
		if ph.Phase != "errored" {
			return fmt.Errorf("outbox table not parked after the update under fatal: %+v", ph)
		}
		if !strings.Contains(ph.LastError, "table_op_invalid_behavior: fatal") {
			t.Fatalf("errored phase %+v", ph)
		}
		return nil
	})
	if items := ittest.ReadRaw(t, e.Kafka, 2, "obb.public.items"); !strings.Contains(string(items[1].Value), "after the update") {
		t.Errorf("b items record %s: the stream should go on past the parked outbox table", items[1].Value)
	}
	if ph := ra.P.TablePhases()["public.outbox"]; ph.Phase != "ready" {
		t.Errorf("a's outbox table %+v, want ready (warn)", ph)
	}
	for _, r := range []*ittest.Running{ra, rb} {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOutboxEventsInAvro: with Avro keys and values, each routed topic
// gets its key and value schemas registered under <topic>-key and
// <topic>-value (TopicNameStrategy, as AvroConverter after the SMT), and
// the records decode with them: the key the aggregate id, the value the
// envelope struct with the expanded payload (snapshot row, streamed row
// and outbox message alike). An outbox message whose schema the registry
// refuses is written as a plain logical message; the stream goes on.
func TestOutboxEventsInAvro(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(outboxTable)
	outboxInsert(e, 1, "Order", "o1", `{"total": 1}`)
	cfg := ittest.AvroConfig(e, reg, "obav", "public.outbox")
	cfg.Heartbeat.Records = false
	cfg.Format.Envelope = config.EnvelopeOutbox
	cfg.Format.Outbox.Table = "public.outbox"
	cfg.Format.Outbox.MessagePrefix = "outbox"
	cfg.Format.Outbox.TableExpandJSONPayload = true
	cfg.Format.Outbox.TableFieldsAdditionalPlacement = []string{"type:envelope:eventType"}
	r := ittest.Start(t, cfg)
	outboxInsert(e, 2, "Order", "o2", `{"total": 2, "lines": [{"sku": "a"}]}`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'outbox', '{"id":"m1","aggregatetype":"Order","aggregateid":"o3","type":"OrderMoved","payload":{"total":3}}')`)
	// total as a string: the registry refuses the value schema (BACKWARD);
	// with no table to park, the message is written as a plain one.
	e.Exec(`SELECT pg_logical_emit_message(true, 'outbox', '{"id":"m2","aggregatetype":"Order","aggregateid":"o4","payload":{"total":"x"}}')`)

	recs := ittest.ReadRaw(t, e.Kafka, 3, "outbox.event.Order")
	decode := func(b []byte) any {
		t.Helper()
		id := int(binary.BigEndian.Uint32(b[1:5]))
		text, ok := reg.SchemaByID(id)
		if b[0] != 0 || !ok {
			t.Fatalf("not Confluent wire format with a registered id: % x", b[:5])
		}
		var v any
		if err := avro.Unmarshal(avro.MustParse(text), b[5:], &v); err != nil {
			t.Fatalf("decode with %s: %v", text, err)
		}
		return ittest.UnwrapUnions(v)
	}
	for i, want := range []struct {
		key, typ string
		total    float64
	}{{"o1", "OrderCreated", 1}, {"o2", "OrderCreated", 2}, {"o3", "OrderMoved", 3}} {
		if k := decode(recs[i].Key); k != want.key {
			t.Errorf("record %d key %v, want %s", i, k, want.key)
		}
		v, _ := decode(recs[i].Value).(map[string]any)
		p, _ := v["payload"].(map[string]any)
		if v["eventType"] != want.typ || p == nil || fmt.Sprint(p["total"]) != fmt.Sprint(want.total) {
			t.Errorf("record %d value %v, want eventType %s, payload.total %v", i, v, want.typ, want.total)
		}
		if id, _ := ittest.Header(recs[i], "id"); id == "" {
			t.Errorf("record %d has no id header", i)
		}
	}
	if m := ittest.ReadAvro(t, reg, e.Kafka, 1, "obav.message"); m[0].Key["prefix"] != "outbox" {
		t.Errorf("refused outbox message: %v, want it on obav.message", m[0].Key)
	}
	if !r.P.Ready() {
		t.Error("the stream stopped on a refused outbox message")
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestOutboxEventsExactlyOnce: in exactly-once delivery the outbox events
// of a transaction, rows and messages, commit with it, and a
// non-transactional outbox message is a Kafka transaction of its own, and
// a row inserted and deleted in one transaction is still its event: a
// read_committed consumer sees each event once, in commit order.
func TestOutboxEventsExactlyOnce(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(outboxTable)
	cfg := e.Config("obeo", "public.outbox")
	cfg.Heartbeat.Records = false
	cfg.Kafka.Delivery = config.DeliveryExactlyOnce
	cfg.Format.Envelope = config.EnvelopeOutbox
	cfg.Format.Outbox.Table = "public.outbox"
	cfg.Format.Outbox.MessagePrefix = "outbox"
	r := ittest.Start(t, cfg)
	e.Exec(`BEGIN; INSERT INTO outbox VALUES ('00000000-0000-4000-8000-000000000001', 'Order', 'o1', 't', '{}', NULL);
		SELECT pg_logical_emit_message(true, 'outbox', '{"id":"m1","aggregatetype":"Order","aggregateid":"o2","payload":"p"}'); COMMIT`)
	e.Exec(`SELECT pg_logical_emit_message(false, 'outbox', '{"id":"m2","aggregatetype":"Order","aggregateid":"o3","payload":"q"}')`)
	// Debezium's recommended pattern: insert and delete in one transaction.
	e.Exec(`BEGIN; INSERT INTO outbox VALUES ('00000000-0000-4000-8000-000000000004', 'Order', 'o4', 't', '{}', NULL);
		DELETE FROM outbox WHERE id = '00000000-0000-4000-8000-000000000004'; COMMIT`)
	recs := ittest.ReadRaw(t, e.Kafka, 4, "outbox.event.Order")
	var keys []string
	for _, rec := range recs {
		keys = append(keys, string(rec.Key))
	}
	if strings.Join(keys, " ") != `"o1" "o2" "o3" "o4"` {
		t.Errorf("keys %v, want o1 o2 o3 o4 once each", keys)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestOutboxEventsPlacedOnTheirPartition: with
// table_fields_additional_placement part:partition, an event goes to the
// partition its part field names (ERD.java:190-211 sets the
// SourceRecord's kafkaPartition from getInt32; ERT.java:669
// canSetPartitionWithAdditionalFields), a snapshot row, a streamed row
// and an outbox message alike, in both delivery modes; a null part leaves
// the record to the default partitioning by its key (ERD.java:233-241:
// a null partition), which is Kafka's murmur2 of the key. A partition the
// topic does not have cannot be written (Kafka's producer refuses it):
// such a message is written as a plain logical message, and such a row
// parks the outbox table with an error naming the partition; the other
// table streams on.
func TestOutboxEventsPlacedOnTheirPartition(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.outbox (id text PRIMARY KEY, aggregatetype text NOT NULL,
		aggregateid text NOT NULL, payload text, part int)`)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO outbox VALUES ('e1', 'Order', 'o1', 'p1', 3)`)
	base := e.Config("obp", "public.outbox", "public.items")
	base.Heartbeat.Records = false
	base.Kafka.TopicPartitions = 4
	base.Format.Envelope = config.EnvelopeOutbox
	base.Format.Outbox.Table = "public.outbox"
	base.Format.Outbox.MessagePrefix = "outbox"
	base.Format.Outbox.TableFieldsAdditionalPlacement = []string{"part:partition"}
	eo := base
	eo.Name = "obpeo"
	eo.Kafka.Delivery = config.DeliveryExactlyOnce
	eo.Format.Outbox.Topic = "eo.${routedByValue}"
	runs := []*ittest.Running{ittest.StartStreaming(t, base), ittest.StartStreaming(t, eo)}
	for _, r := range runs {
		r.WaitHandedOver(t)
	}

	e.Exec(`INSERT INTO outbox VALUES ('e2', 'Order', 'o2', 'p2', 2)`)
	e.Exec(`INSERT INTO outbox VALUES ('e3', 'Order', 'o3', 'p3', NULL)`)
	e.Exec(`INSERT INTO outbox VALUES ('e4', 'Order', 'o4', 'p4', 0)`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'outbox', '{"id":"m1","aggregatetype":"Order","aggregateid":"o5","payload":"p5","part":1}')`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'outbox', '{"id":"m2","aggregatetype":"Order","aggregateid":"o6","payload":"p6","part":9}')`)
	e.Exec(`INSERT INTO outbox VALUES ('e7', 'Order', 'o7', 'p7', 12)`)
	e.Exec(`INSERT INTO items VALUES (1)`)

	// The key's partition under Kafka's default partitioner.
	hashed := int32(kgo.StickyKeyPartitioner(nil).ForTopic("t").Partition(&kgo.Record{Key: []byte(`"o3"`)}, 4))
	want := map[string]int32{`"o1"`: 3, `"o2"`: 2, `"o3"`: hashed, `"o4"`: 0, `"o5"`: 1}
	for i, topic := range []string{"outbox.event.Order", "eo.Order"} {
		got := map[string]int32{}
		for _, r := range ittest.ReadRaw(t, e.Kafka, len(want), topic) {
			got[string(r.Key)] = r.Partition
		}
		for k, p := range want {
			if gp, ok := got[k]; !ok || gp != p {
				t.Errorf("%s: key %s on partition %d (found %v), want %d", topic, k, gp, ok, p)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: keys %v, want only %v (m2 and e7 name a partition the topic lacks)", topic, got, want)
		}
		r := runs[i]
		eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
			ph := r.P.TablePhases()["public.outbox"]
			if ph.Phase != "errored" {
				return fmt.Errorf("%s: outbox table not parked after the event for partition 12: %+v", topic, ph)
			}
			if !strings.Contains(ph.LastError, "names partition 12, but the topic has 4") {
				t.Errorf("%s: errored phase %+v, want the partition named", topic, ph)
			}
			return nil
		})
		prefix := []string{"obp", "obpeo"}[i]
		var msg struct {
			Message struct{ Content []byte } `json:"message"`
		}
		if m := ittest.ReadRaw(t, e.Kafka, 1, prefix+".message"); json.Unmarshal(m[0].Value, &msg) != nil || !strings.Contains(string(msg.Message.Content), `"id":"m2"`) {
			t.Errorf("%s: message %s, want m2 written as a plain message", prefix, m[0].Value)
		}
		if items := ittest.ReadRaw(t, e.Kafka, 1, prefix+".public.items"); len(items) != 1 {
			t.Errorf("%s: items not streamed on", prefix)
		}
	}
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}
