package transforms

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/avrodata"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// The chain under test, as a Debezium user writes it (Kafka Connect's keys
// verbatim). On public.orders, after mooncdc's flat envelope (rewrite:
// deletes carry __deleted "true", ExtractNewRecordStateTest.java:130-157
// at Debezium v3.6.1.Final):
//   - onlyStock: Debezium's Filter keeps a record whose CEL condition holds
//     (Filter's ScriptingTransformation); only on orders (TopicNameMatches);
//   - addRegion: InsertField$Value appends region, an optional string, with
//     the static value (InsertField.java:229 the schema, :202-203 the value,
//     apache/kafka connect/transforms/src/main/java/org/apache/kafka/connect/transforms
//     at 1eb7644349c, the revision cited below too); on every topic but
//     other (negate);
//   - rename: ReplaceField$Value renames customer to buyer and drops note,
//     the others in order (ReplaceField.java:150-160);
//   - castQty: Cast$Value qty to string, Java's toString (Cast.java:388-400);
//   - placedDay: TimestampConverter$Value placed (a Connect Timestamp under
//     time.precision.mode connect) to a string of its UTC day
//     (TimestampConverter.java:138-160, :307-314);
//   - key: ValueToKey id,region: the key an unnamed struct of those value
//     fields with their schemas (ValueToKey.java:97-111);
//   - copyBuyer: HeaderFrom$Value copies buyer into the header buyer
//     (HeaderFrom.java:91-93), written by the SimpleHeaderConverter as the
//     string itself (SimpleHeaderConverter.java:79-84, Values.java:719-725).
//
// The stages after onlyStock run on orders only: other's records pass
// as mooncdc writes them.
var chain = map[string]string{
	"transforms":                        "onlyStock,addRegion,rename,castQty,placedDay,key,copyBuyer",
	"transforms.onlyStock.type":         "io.debezium.transforms.Filter",
	"transforms.onlyStock.language":     "cel",
	"transforms.onlyStock.condition":    "value.qty != 0",
	"transforms.onlyStock.predicate":    "isOrders",
	"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
	"transforms.addRegion.static.field": "region",
	"transforms.addRegion.static.value": "EU",
	"transforms.addRegion.predicate":    "isOther",
	"transforms.addRegion.negate":       "true",
	"transforms.rename.type":            "org.apache.kafka.connect.transforms.ReplaceField$Value",
	"transforms.rename.renames":         "customer:buyer",
	"transforms.rename.exclude":         "note",
	"transforms.rename.predicate":       "isOrders",
	"transforms.castQty.type":           "org.apache.kafka.connect.transforms.Cast$Value",
	"transforms.castQty.spec":           "qty:string",
	"transforms.castQty.predicate":      "isOrders",
	"transforms.placedDay.type":         "org.apache.kafka.connect.transforms.TimestampConverter$Value",
	"transforms.placedDay.field":        "placed",
	"transforms.placedDay.target.type":  "string",
	"transforms.placedDay.format":       "yyyy-MM-dd",
	"transforms.placedDay.predicate":    "isOrders",
	"transforms.key.type":               "org.apache.kafka.connect.transforms.ValueToKey",
	"transforms.key.fields":             "id,region",
	"transforms.key.predicate":          "isOrders",
	"transforms.copyBuyer.type":         "org.apache.kafka.connect.transforms.HeaderFrom$Value",
	"transforms.copyBuyer.fields":       "buyer",
	"transforms.copyBuyer.headers":      "buyer",
	"transforms.copyBuyer.operation":    "copy",
	"transforms.copyBuyer.predicate":    "isOrders",
	"predicates":                        "isOrders,isOther",
	"predicates.isOrders.type":          "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
	"predicates.isOrders.pattern":       `.*\.orders`,
	"predicates.isOther.type":           "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
	"predicates.isOther.pattern":        `.*\.other`,
}

// wantOrders are the records of public.orders, in order: snapshot row 1
// (row 2 has qty 0: dropped), the insert of 3, the update of 1, after
// ALTER TABLE … ADD COLUMN vip the insert of 4, the delete of 3 (REPLICA
// IDENTITY FULL: its whole old row). Fields in order: the row's (with vip
// once added), __deleted, region; customer renamed buyer, note dropped.
var wantOrders = []struct {
	key, value string
	buyer      string
}{
	{`{"id":1,"region":"EU"}`, `{"id":1,"buyer":"ann","qty":"2","placed":"2024-03-05","__deleted":"false","region":"EU"}`, "ann"},
	{`{"id":3,"region":"EU"}`, `{"id":3,"buyer":"cy","qty":"5","placed":"2024-03-07","__deleted":"false","region":"EU"}`, "cy"},
	{`{"id":1,"region":"EU"}`, `{"id":1,"buyer":"ann","qty":"3","placed":"2024-03-05","__deleted":"false","region":"EU"}`, "ann"},
	{`{"id":4,"region":"EU"}`, `{"id":4,"buyer":"dee","qty":"1","placed":"2024-03-08","vip":true,"__deleted":"false","region":"EU"}`, "dee"},
	{`{"id":3,"region":"EU"}`, `{"id":3,"buyer":"cy","qty":"5","placed":"2024-03-07","vip":null,"__deleted":"true","region":"EU"}`, "cy"},
}

// run starts a pipeline with the chain on a fresh database, copies the
// snapshot rows, streams the changes with a schema change between them,
// and returns the records of orders and of other.
func run(t *testing.T, e *ittest.Env, cfg config.Config) (orders, other []*kgo.Record) {
	t.Helper()
	cfg.Heartbeat.Records = false
	cfg.Format.Envelope = config.EnvelopeFlat
	cfg.Format.Flat.DeleteHandling = "rewrite"
	cfg.Format.TimePrecisionMode = "connect"
	cfg.Transforms = chain
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO orders VALUES (3, 'cy', 5, '2024-03-07 12:30:00', 'y')`)
	e.Exec(`UPDATE orders SET qty = 3 WHERE id = 1`)
	e.Exec(`ALTER TABLE orders ADD COLUMN vip boolean`)
	e.Exec(`INSERT INTO orders VALUES (4, 'dee', 1, '2024-03-08 00:00:00', NULL, true)`)
	e.Exec(`DELETE FROM orders WHERE id = 3`)
	e.Exec(`INSERT INTO other VALUES (2, 0)`)
	orders = ittest.ReadRaw(t, e.Kafka, len(wantOrders), cfg.Name+".public.orders")
	other = ittest.ReadRaw(t, e.Kafka, 2, cfg.Name+".public.other")
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
	return orders, other
}

func newDB(t *testing.T) *ittest.Env {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, qty int NOT NULL, placed timestamp NOT NULL, note text);
		ALTER TABLE orders REPLICA IDENTITY FULL;
		CREATE TABLE other (id int PRIMARY KEY, qty int)`)
	e.Exec(`INSERT INTO orders VALUES (1, 'ann', 2, '2024-03-05 10:00:00', 'x'), (2, 'bob', 0, '2024-03-06 00:00:00', NULL);
		INSERT INTO other VALUES (1, 0)`)
	return e
}

// payload returns the JSON of b, or of its payload with schemas.
func payload(t *testing.T, b []byte, schemas bool) (schemaJSON json.RawMessage, data json.RawMessage) {
	t.Helper()
	if !schemas {
		return nil, b
	}
	var env struct {
		Schema  json.RawMessage `json:"schema"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Schema == nil {
		t.Fatalf("not {schema, payload}: %s (%v)", b, err)
	}
	return env.Schema, env.Payload
}

// TestTransformChainOverSnapshotAndStreamInJSON: the chain's records in
// JSON without and with schemas (JsonConverter), snapshot and stream,
// across an added column. With schemas, the schemas are the ones the SMTs
// build: the value keeps the row's name (SchemaUtil.copySchemaBasics,
// SchemaUtil.java:36-45), qty and placed become required strings
// (Cast.java:180-200 keeps optionality; TimestampConverter's string
// target, TimestampConverter.java:138-145), region an optional string;
// the key is the unnamed struct ValueToKey builds. The records of the
// other table pass unchanged: its qty 0 rows are kept (onlyStock's
// predicate), no region (addRegion's negated predicate).
func TestTransformChainOverSnapshotAndStreamInJSON(t *testing.T) {
	for _, schemas := range []bool{false, true} {
		name := "schemas-off"
		if schemas {
			name = "schemas-on"
		}
		t.Run(name, func(t *testing.T) {
			e := newDB(t)
			cfg := e.Config("tf", "public.orders", "public.other")
			cfg.Format.JSONSchemas = schemas
			orders, other := run(t, e, cfg)
			for i, rec := range orders {
				w := wantOrders[i]
				ks, k := payload(t, rec.Key, schemas)
				vs, v := payload(t, rec.Value, schemas)
				if string(k) != w.key || string(v) != w.value {
					t.Errorf("orders record %d:\n got key %s value %s\nwant key %s value %s", i, k, v, w.key, w.value)
				}
				if h, ok := ittest.Header(rec, "buyer"); !ok || h != w.buyer {
					t.Errorf("orders record %d: header buyer %q (%v), want %q", i, h, ok, w.buyer)
				}
				if h, ok := ittest.Header(rec, "__debezium.context.connectorLogicalName"); !ok || h != "tf" {
					t.Errorf("orders record %d: context header %q, want tf (DebeziumHeaderProducer.java:64)", i, h)
				}
				if _, ok := ittest.Header(rec, "mooncdc.lsn"); !ok {
					t.Errorf("orders record %d: no mooncdc.lsn header", i)
				}
				if !schemas {
					continue
				}
				if want := `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"region"}],"optional":false}`; string(ks) != want {
					t.Errorf("orders record %d key schema:\n got %s\nwant %s", i, ks, want)
				}
				fields := `{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"buyer"},` +
					`{"type":"string","optional":false,"field":"qty"},{"type":"string","optional":false,"field":"placed"},`
				if i >= 3 {
					fields += `{"type":"boolean","optional":true,"field":"vip"},`
				}
				fields += `{"type":"string","optional":true,"field":"__deleted"},{"type":"string","optional":true,"field":"region"}`
				if want := `{"type":"struct","fields":[` + fields + `],"optional":false,"name":"tf.public.orders.Value"}`; string(vs) != want {
					t.Errorf("orders record %d value schema:\n got %s\nwant %s", i, vs, want)
				}
			}
			for i, want := range []string{`{"id":1,"qty":0,"__deleted":"false"}`, `{"id":2,"qty":0,"__deleted":"false"}`} {
				if _, v := payload(t, other[i].Value, schemas); string(v) != want {
					t.Errorf("other record %d: %s, want %s (untransformed)", i, v, want)
				}
				if _, ok := ittest.Header(other[i], "buyer"); ok {
					t.Errorf("other record %d has a buyer header", i)
				}
			}
		})
	}
}

// TestTransformChainOverSnapshotAndStreamInAvro: the same chain with
// Avro keys and values. The values decode, with the schemas registered
// under the orders topic's subjects, to the same data as in JSON; each
// registered schema is the one Confluent's AvroData makes of the record's
// Connect schema (internal/avrodata, an independent implementation, given
// the schema the JSON converter writes for the same record): the unnamed
// key io.confluent.connect.avro.ConnectDefault, the added column a new
// value schema version.
func TestTransformChainOverSnapshotAndStreamInAvro(t *testing.T) {
	reg := srtest.New(t)
	e := newDB(t)
	orders, _ := run(t, e, ittest.AvroConfig(e, reg, "ta", "public.orders", "public.other"))
	wantValues := []map[string]any{
		{"id": 1, "buyer": "ann", "qty": "2", "placed": "2024-03-05", "__deleted": "false", "region": "EU"},
		{"id": 3, "buyer": "cy", "qty": "5", "placed": "2024-03-07", "__deleted": "false", "region": "EU"},
		{"id": 1, "buyer": "ann", "qty": "3", "placed": "2024-03-05", "__deleted": "false", "region": "EU"},
		{"id": 4, "buyer": "dee", "qty": "1", "placed": "2024-03-08", "vip": true, "__deleted": "false", "region": "EU"},
		{"id": 3, "buyer": "cy", "qty": "5", "placed": "2024-03-07", "vip": nil, "__deleted": "true", "region": "EU"},
	}
	valueIDs := map[int]bool{}
	for i, rec := range orders {
		keyID, key := ittest.DecodeAvro(t, reg, rec.Key)
		valueID, value := ittest.DecodeAvro(t, reg, rec.Value)
		valueIDs[valueID] = true
		if !reflect.DeepEqual(normalize(value), normalize(wantValues[i])) {
			t.Errorf("orders record %d: %v, want %v", i, value, wantValues[i])
		}
		if key["id"] != int(wantValues[i]["id"].(int)) || key["region"] != "EU" {
			t.Errorf("orders record %d key %v", i, key)
		}
		if h, ok := ittest.Header(rec, "buyer"); !ok || h != wantValues[i]["buyer"] {
			t.Errorf("orders record %d: header buyer %q", i, h)
		}
		// The registered schemas against AvroData's, for the Connect
		// schemas the JSON converter writes for the same records.
		keyConnect := `{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":true,"field":"region"}],"optional":false}`
		valueFields := `{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"buyer"},` +
			`{"type":"string","optional":false,"field":"qty"},{"type":"string","optional":false,"field":"placed"},`
		if i >= 3 {
			valueFields += `{"type":"boolean","optional":true,"field":"vip"},`
		}
		valueConnect := `{"type":"struct","fields":[` + valueFields + `{"type":"string","optional":true,"field":"__deleted"},` +
			`{"type":"string","optional":true,"field":"region"}],"optional":false,"name":"ta.public.orders.Value"}`
		for _, c := range []struct {
			id      int
			connect string
		}{{keyID, keyConnect}, {valueID, valueConnect}} {
			want, err := avrodata.FromConnectJSON([]byte(c.connect))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := reg.SchemaByID(c.id); got != want {
				t.Errorf("orders record %d: registered schema %d\n got %s\nwant %s (AvroData)", i, c.id, got, want)
			}
		}
	}
	if len(valueIDs) != 2 {
		t.Errorf("value schema ids %v: want two, before and after the added column", valueIDs)
	}
	if v := reg.Versions("ta.public.orders-value"); len(v) != 2 {
		t.Errorf("subject ta.public.orders-value has versions %v, want 2", v)
	}
	if v := reg.Versions("ta.public.orders-key"); len(v) != 1 {
		t.Errorf("subject ta.public.orders-key has versions %v, want 1", v)
	}
	for _, s := range reg.Subjects() {
		if strings.Contains(s, "Envelope") {
			t.Errorf("subject %s: the plan's own schemas were registered", s)
		}
	}
}

// normalize makes a decoded Avro record comparable with a literal: ints
// as int (hamba decodes int as int), nil kept.
func normalize(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch x := v.(type) {
		case int32:
			v = int(x)
		case int64:
			v = int(x)
		}
		out[k] = v
	}
	return out
}

// TestTheChainSeesTheSnapshotMarkersBeforeItRuns: Debezium marks a
// snapshot's rows before the chain sees them: the first row "first", the
// last "last", the others "true" (RelationalSnapshotChangeEventSource.java:1274-1291
// at v3.6.1.Final; TestSnapshotMarkersAsDebeziumOverTablesCopiedInParallel
// holds the plain path to it). A Filter that drops the last row leaves no
// record marked "last": the row before it stays "true" (the marker is not
// moved to the last record written). InsertField still runs on the rows
// kept.
func TestTheChainSeesTheSnapshotMarkersBeforeItRuns(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 3)`)
	cfg := e.Config("tm", "public.t")
	cfg.Heartbeat.Records = false
	cfg.Transforms = map[string]string{
		"transforms":                        "dropLast,addRegion",
		"transforms.dropLast.type":          "io.debezium.transforms.Filter",
		"transforms.dropLast.language":      "cel",
		"transforms.dropLast.condition":     "value.op != 'r' || value.after.id != 3",
		"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.addRegion.static.field": "region",
		"transforms.addRegion.static.value": "EU",
	}
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO t VALUES (4)`)
	recs := ittest.ReadRaw(t, e.Kafka, 3, "tm.public.t")
	var got []string
	for _, rec := range recs {
		got = append(got, marker(t, rec.Value))
	}
	if want := []string{"1 first EU", "2 true EU", "4 false EU"}; !reflect.DeepEqual(got, want) {
		t.Errorf("records (id, source.snapshot, region): %q, want %q", got, want)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	// Kept, the last row is made again with "last" through the chain.
	e.Exec(`CREATE TABLE u (id int PRIMARY KEY); INSERT INTO u SELECT generate_series(1, 3)`)
	cfg = e.Config("tn", "public.u")
	cfg.Heartbeat.Records = false
	cfg.Transforms = map[string]string{"transforms": "addRegion",
		"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.addRegion.static.field": "region", "transforms.addRegion.static.value": "EU"}
	r = ittest.Start(t, cfg)
	got = nil
	for _, rec := range ittest.ReadRaw(t, e.Kafka, 3, "tn.public.u") {
		got = append(got, marker(t, rec.Value))
	}
	if want := []string{"1 first EU", "2 true EU", "3 last EU"}; !reflect.DeepEqual(got, want) {
		t.Errorf("records (id, source.snapshot, region): %q, want %q", got, want)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// marker is a record value's after.id, source.snapshot and region.
func marker(t *testing.T, value []byte) string {
	t.Helper()
	var v struct {
		After  struct{ ID int } `json:"after"`
		Source struct {
			Snapshot string `json:"snapshot"`
		} `json:"source"`
		Region string `json:"region"`
	}
	if err := json.Unmarshal(value, &v); err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{strconv.Itoa(v.After.ID), v.Source.Snapshot, v.Region}, " ")
}
