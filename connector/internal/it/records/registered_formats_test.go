package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/jsclients"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// The values below are Debezium's for the column types used, at
// v3.6.1.Final: ARPT = debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/AbstractRecordsProducerTest.java
// (:240 int4 123456 an OPTIONAL_INT32, :241 int8 1234567890123 an
// OPTIONAL_INT64, :248 boolean true an OPTIONAL_BOOLEAN, :428 text "some
// text" an OPTIONAL_STRING).

// TestProtobufAndJSONSchemaReadByKafkajsAcrossASchemaChange: with
// format.key and format.value protobuf, and json_schema with a transforms
// chain (InsertField$Value), two snapshot rows, an insert, an update, a
// column added, an insert with it and a delete with its tombstone are
// registered under <topic>-key/<topic>-value (the value's second version
// after the column is added, the key's one) and read by kafkajs with
// @kafkajs/confluent-schema-registry (internal/jsclients), which fetches
// each schema by the record's id, references included, and decodes the
// record with protobufjs or Ajv: the values of the rows as ARPT expects
// them, the envelope's op and snapshot marker, the chain's field.
//
// srtest checks no compatibility of Protobuf or JSON schemas and refuses a
// new version unless the level is NONE (srtest's doc.go): the registry
// runs at NONE, so that the added column registers. (A real registry
// accepts the Protobuf change under BACKWARD: a new field; the JSON
// Schema one it refuses under BACKWARD with the converter's default open
// objects: docs/transforms.md#formats.)
func TestProtobufAndJSONSchemaReadByKafkajsAcrossASchemaChange(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t, srtest.WithCompatibility(srtest.None))
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, i int, bi bigint, b boolean, t text)`)
	e.Exec(`INSERT INTO items VALUES (1, 123456, 1234567890123, true, 'some text'), (2, -1, -2, false, 'snap2')`)

	formats := []string{config.FormatProtobuf, config.FormatJSONSchema}
	names := map[string]string{config.FormatProtobuf: "pb", config.FormatJSONSchema: "js"}
	var runs []*ittest.Running
	for _, f := range formats {
		cfg := e.Config(names[f], "public.items")
		cfg.Heartbeat.Records = false
		cfg.Format.Key, cfg.Format.Value = f, f
		cfg.Format.SchemaRegistry.URL = reg.URL()
		if f == config.FormatJSONSchema {
			// The chain runs before the converter: the value written is
			// the transformed one, under its derived schema.
			cfg.Transforms = map[string]string{"transforms": "addRegion",
				"transforms.addRegion.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
				"transforms.addRegion.static.field": "region",
				"transforms.addRegion.static.value": "EU"}
		}
		runs = append(runs, ittest.StartStreaming(t, cfg))
	}
	for _, r := range runs {
		r.WaitHandedOver(t)
	}
	e.Exec(`INSERT INTO items VALUES (3, 7, 8, true, 'new')`)
	e.Exec(`UPDATE items SET t = 'changed' WHERE id = 3`)
	e.Exec(`ALTER TABLE items ADD COLUMN note text`)
	e.Exec(`INSERT INTO items VALUES (4, 0, 0, false, 'after', 'noted')`)
	e.Exec(`DELETE FROM items WHERE id = 4`)

	type want struct {
		op, snapshot string
		id           int
		after        map[string]any // the row as JSON numbers; nil: after is null
	}
	wants := []want{
		{"r", "first", 1, map[string]any{"id": 1, "i": 123456, "bi": int64(1234567890123), "b": true, "t": "some text"}},
		{"r", "last", 2, map[string]any{"id": 2, "i": -1, "bi": int64(-2), "b": false, "t": "snap2"}},
		{"c", "false", 3, map[string]any{"id": 3, "i": 7, "bi": int64(8), "b": true, "t": "new"}},
		{"u", "false", 3, map[string]any{"id": 3, "i": 7, "bi": int64(8), "b": true, "t": "changed"}},
		{"c", "false", 4, map[string]any{"id": 4, "i": 0, "bi": int64(0), "b": false, "t": "after", "note": "noted"}},
		{"d", "false", 4, nil},
	}
	n := len(wants) + 1 // and the tombstone
	var topics []jsclients.Topic
	for _, f := range formats {
		topic := names[f] + ".public.items"
		tp := jsclients.Topic{Name: topic, Count: n, Key: jsclients.Registry, Value: jsclients.Registry}
		if f == config.FormatJSONSchema {
			// Ajv's strict mode refuses the connect.* keywords
			// (connectformat's doc.go, finding 3).
			tp.RegistryOptions = map[string]any{"JSON": map[string]any{"strict": false}}
		}
		topics = append(topics, tp)
	}
	byTopic := map[string][]jsclients.Record{}
	for _, r := range jsclients.ReadT(t, jsclients.Request{Broker: e.Kafka, Registry: reg.URL(), Topics: topics}) {
		byTopic[r.Topic] = append(byTopic[r.Topic], r)
	}
	for _, f := range formats {
		topic := names[f] + ".public.items"
		if v := reg.Versions(topic + "-value"); len(v) != 2 {
			t.Errorf("%s-value: versions %v, want 2 (the column added)", topic, v)
		}
		if v := reg.Versions(topic + "-key"); len(v) != 1 {
			t.Errorf("%s-key: versions %v, want 1", topic, v)
		}
	}
	for _, f := range formats {
		read := byTopic[names[f]+".public.items"]
		if len(read) != n {
			t.Fatalf("%s: the client read %d records, want %d", f, len(read), n)
		}
		if !read[n-1].Value.Null || read[n-1].Key.Null {
			t.Errorf("%s: the tombstone reads as key %s value %s", f, read[n-1].Key.Decoded, read[n-1].Value.Decoded)
		}
		for i, w := range wants {
			r := read[i]
			t.Run(fmt.Sprintf("%s %d %s", f, i, w.op), func(t *testing.T) {
				if r.Key.Error != "" || r.Value.Error != "" {
					t.Fatalf("the client could not decode: key %q value %q", r.Key.Error, r.Value.Error)
				}
				var key map[string]any
				var value struct {
					Op     string
					Source map[string]any
					After  map[string]any
					Region *string
				}
				for _, d := range []struct {
					b []byte
					v any
				}{{r.Key.Decoded, &key}, {r.Value.Decoded, &value}} {
					dec := json.NewDecoder(bytes.NewReader(d.b))
					dec.UseNumber() // 1234567890123, not 1.234567890123e+12
					if err := dec.Decode(d.v); err != nil {
						t.Fatal(err)
					}
				}
				if got := fmt.Sprint(key["id"]); got != fmt.Sprint(w.id) {
					t.Errorf("key %s, want id %d", r.Key.Decoded, w.id)
				}
				if value.Op != w.op || fmt.Sprint(value.Source["snapshot"]) != w.snapshot || value.Source["table"] != "items" {
					t.Errorf("op %q snapshot %v table %v, want %s %s items: %s", value.Op, value.Source["snapshot"], value.Source["table"], w.op, w.snapshot, r.Value.Decoded)
				}
				if f == config.FormatJSONSchema && (value.Region == nil || *value.Region != "EU") {
					t.Errorf("the chain's region: %v in %s", value.Region, r.Value.Decoded)
				}
				if w.after == nil {
					if len(value.After) != 0 {
						t.Errorf("after %v, want null", value.After)
					}
					return
				}
				if len(value.After) != len(w.after) {
					t.Errorf("after %v, want the fields %v", value.After, w.after)
				}
				for k, v := range w.after {
					want := fmt.Sprint(v) // protobufjs reads int64 as a string, Ajv as a number
					if got := fmt.Sprint(value.After[k]); got != want {
						t.Errorf("after.%s = %v, want %s (%s)", k, value.After[k], want, r.Value.Decoded)
					}
				}
			})
		}
	}
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}

// TestProtobufWellKnownImportsReadByKafkajs: with time.precision.mode
// connect a date is Connect's Date and a timestamp Connect's Timestamp
// (Debezium's shouldProcessNotNullColumnsConnectDateTypes,
// debezium-connector-postgres/src/test/java/io/debezium/connector/postgresql/RecordsStreamProducerIT.java:368-380
// at v3.6.1.Final: java.util.Date values, milliseconds), which ProtobufData
// writes as google.type.Date and google.protobuf.Timestamp, imported by
// the value's .proto text. mooncdc registers each import as a reference
// under the subject of its path, so kafkajs's registry client, which
// resolves every import through the registry, loads the schema and reads
// a copied and a streamed row: 2016-11-04 and 2016-11-04 13:51:30.123456
// (ARPT:106-108 inserts them; ARPT:660 expects the date, ARPT:657 and :693
// the Connect Timestamp's milliseconds) as year/month/day and as seconds
// and nanoseconds of the millisecond timestamp.
func TestProtobufWellKnownImportsReadByKafkajs(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.times (id int PRIMARY KEY, d date, ts timestamp)`)
	e.Exec(`INSERT INTO times VALUES (1, '2016-11-04', '2016-11-04 13:51:30.123456')`)
	cfg := e.Config("pbt", "public.times")
	cfg.Heartbeat.Records = false
	cfg.Format.Key, cfg.Format.Value = config.FormatJSON, config.FormatProtobuf
	cfg.Format.TimePrecisionMode = "connect"
	cfg.Format.SchemaRegistry.URL = reg.URL()
	r := ittest.StartStreaming(t, cfg)
	r.WaitHandedOver(t)
	e.Exec(`INSERT INTO times VALUES (2, '2016-11-04', '2016-11-04 13:51:30.123456')`)

	read := jsclients.ReadT(t, jsclients.Request{Broker: e.Kafka, Registry: reg.URL(),
		Topics: []jsclients.Topic{{Name: "pbt.public.times", Count: 2, Value: jsclients.Registry}}})
	for _, subject := range []string{"google/type/date.proto", "google/protobuf/timestamp.proto"} {
		if v := reg.Versions(subject); len(v) != 1 {
			t.Errorf("reference subject %s: versions %v", subject, v)
		}
	}
	if len(read) != 2 {
		t.Fatalf("read %d records", len(read))
	}
	for i, rec := range read {
		if rec.Value.Error != "" {
			t.Fatalf("record %d: the client could not decode: %s", i, rec.Value.Error)
		}
		var v struct {
			After struct {
				ID int
				D  struct{ Year, Month, Day int }
				TS struct {
					Seconds string
					Nanos   int
				}
			}
		}
		if err := json.Unmarshal(rec.Value.Decoded, &v); err != nil {
			t.Fatal(err)
		}
		a := v.After
		// 2016-11-04T13:51:30.123Z is 1478267490 s and 123 ms: Connect's
		// Timestamp keeps milliseconds.
		if a.ID != i+1 || a.D.Year != 2016 || a.D.Month != 11 || a.D.Day != 4 || a.TS.Seconds != "1478267490" || a.TS.Nanos != 123000000 {
			t.Errorf("record %d: %s", i, rec.Value.Decoded)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
