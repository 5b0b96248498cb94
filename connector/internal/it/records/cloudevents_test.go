package records

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/jsclients"
)

// Debezium's expectations cited below are at v3.6.1.Final:
// CECT = debezium-connect-plugins/src/test/java/io/debezium/converters/CloudEventsConverterTest.java
// (shouldConvertToCloudEventsInJson, which CloudEventsConverterIT of the
// Postgres connector runs on its records), CEC = …/main/java/io/debezium/converters/CloudEventsConverter.java,
// PCM = debezium-connector-postgres/src/main/java/io/debezium/connector/postgresql/converters/PostgresCloudEventsMaker.java.

// TestCloudEventsValuesReadByTheSDKAcrossASchemaChange: with
// format.value cloudevents (and json_schemas, as CECT.java:53-57
// configures the converter) two snapshot rows, an insert, an update, a
// column added, an insert with it and a delete are each one structured
// JSON CloudEvent that the CloudEvents JS SDK (9.0.0, internal/jsclients)
// parses and validates, with what CECT.java:103-131 asserts of every
// event and the values of the rows; the delete's tombstone stays a
// tombstone and the transaction records are null (CEC.java:264-272).
func TestCloudEventsValuesReadByTheSDKAcrossASchemaChange(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO items VALUES (1, 'snap1'), (2, 'snap2')`)
	cfg := e.Config("ce", "public.items")
	cfg.Heartbeat.Records = false
	cfg.Format.Value = config.FormatCloudEvents
	cfg.Format.JSONSchemas = true
	cfg.Format.ProvideTransactionMetadata = true
	r := ittest.StartStreaming(t, cfg)
	r.WaitHandedOver(t)
	e.Exec(`INSERT INTO items VALUES (3, 'new')`)
	e.Exec(`UPDATE items SET name = 'changed' WHERE id = 3`)
	e.Exec(`ALTER TABLE items ADD COLUMN note text`)
	e.Exec(`INSERT INTO items VALUES (4, 'after', 'noted')`)
	e.Exec(`DELETE FROM items WHERE id = 4`)

	type want struct {
		op, snapshot string
		id           int
		after        map[string]any // nil: after is null (the delete)
		tx           bool           // streamed: the transaction attributes are set
	}
	wants := []want{
		{"r", "first", 1, map[string]any{"id": 1.0, "name": "snap1"}, false},
		{"r", "last", 2, map[string]any{"id": 2.0, "name": "snap2"}, false},
		{"c", "false", 3, map[string]any{"id": 3.0, "name": "new"}, true},
		{"u", "false", 3, map[string]any{"id": 3.0, "name": "changed"}, true},
		{"c", "false", 4, map[string]any{"id": 4.0, "name": "after", "note": "noted"}, true},
		{"d", "false", 4, nil, true},
	}
	const topic = "ce.public.items"
	n := len(wants) + 1 // and the delete's tombstone
	raw := ittest.ReadRaw(t, e.Kafka, n, topic)
	if raw[n-1].Value != nil || !strings.HasSuffix(string(raw[n-1].Key), `"payload":{"id":4}}`) {
		t.Errorf("the last record is not the delete's tombstone: key %s, value %q", raw[n-1].Key, raw[n-1].Value)
	}
	// Four transactions with changes, a BEGIN and an END each.
	for _, rec := range ittest.ReadRaw(t, e.Kafka, 8, "ce.transaction") {
		if rec.Value != nil {
			t.Errorf("a transaction record's value %s: CloudEventsConverter writes null for it", rec.Value)
		}
	}

	read := jsclients.ReadT(t, jsclients.Request{Broker: e.Kafka, Topics: []jsclients.Topic{{Name: topic, Count: n, Value: jsclients.CloudEvent}}})
	if len(read) != n {
		t.Fatalf("the client read %d records, want %d", len(read), n)
	}
	if !read[n-1].Value.Null {
		t.Errorf("the tombstone reads as %s", read[n-1].Value.Decoded)
	}
	// PCM.java:41-46; a row mooncdc copies has a null source.txId.
	idRE := regexp.MustCompile(`^name:ce;lsn:[0-9]+;txId:([0-9]+|null);sequence:\[.*\]$`)
	for i, w := range wants {
		d := read[i].Value
		t.Run(fmt.Sprintf("%d %s", i, w.op), func(t *testing.T) {
			// The SDK: every check passes but the extension name Debezium
			// keeps in upper case (CEC.java:685-705), iodebeziumtxId; no
			// content-type header, as Debezium writes none, so the Kafka
			// binding finds no event (connectformat's findings 6 and 7).
			if d.RestError != nil {
				t.Errorf("the SDK refuses the event: %s", *d.RestError)
			}
			if strings.Join(d.Refused, ",") != "iodebeziumtxId" {
				t.Errorf("the SDK refuses the attributes %v, want [iodebeziumtxId]", d.Refused)
			}
			if d.BindingError == nil || !strings.Contains(*d.BindingError, "No CloudEvent detected") {
				t.Errorf("Kafka binding: %v", d.BindingError)
			}
			var ev map[string]json.RawMessage
			if err := json.Unmarshal(d.Decoded, &ev); err != nil {
				t.Fatalf("%v: %s", err, d.Decoded)
			}
			str := func(name string) string {
				var s string
				_ = json.Unmarshal(ev[name], &s)
				return s
			}
			// CECT.java:104-117.
			for _, name := range []string{"id", "source", "specversion", "type", "datacontenttype", "time", "data", "iodebeziumop", "iodebeziumtsms"} {
				if len(ev[name]) == 0 || string(ev[name]) == "null" {
					t.Errorf("%s is missing", name)
				}
			}
			for _, name := range []string{"dataschema", "traceparent"} {
				if _, ok := ev[name]; ok {
					t.Errorf("%s = %s, want none", name, ev[name])
				}
			}
			if typ := str("type"); typ != "io.debezium.connector.postgresql.DataChangeEvent" {
				t.Errorf("type %q", typ)
			}
			if src := str("source"); src != "/debezium/postgresql/ce" {
				t.Errorf("source %q", src)
			}
			if id := str("id"); !idRE.MatchString(id) {
				t.Errorf("id %q, want name:ce;lsn:…;txId:…;sequence:[…]", id)
			}
			if w.tx && strings.Contains(str("id"), "txId:null") {
				t.Errorf("id %q: a streamed change has its transaction id", str("id"))
			}
			if str("specversion") != "1.0" || str("datacontenttype") != "application/json" || str("iodebeziumop") != w.op ||
				str("iodebeziumsnapshot") != w.snapshot || str("iodebeziumtable") != "items" {
				t.Errorf("attributes: specversion %s, datacontenttype %s, op %s (want %s), snapshot %s (want %s), table %s",
					ev["specversion"], ev["datacontenttype"], ev["iodebeziumop"], w.op, ev["iodebeziumsnapshot"], w.snapshot, ev["iodebeziumtable"])
			}
			// CECT.java:118-123: with transaction metadata, the three tx attributes.
			for _, name := range []string{"iodebeziumtxid", "iodebeziumtxtotalorder", "iodebeziumtxdatacollectionorder"} {
				if set := len(ev[name]) > 0 && string(ev[name]) != "null"; set != w.tx {
					t.Errorf("%s = %s, want set %v", name, ev[name], w.tx)
				}
			}
			// CECT.java:124-131: data is {schema, payload}, the schema
			// named io.debezium.connector.*.Data.
			var data struct {
				Schema struct {
					Name   string `json:"name"`
					Fields []struct {
						Field  string `json:"field"`
						Fields []struct {
							Field string `json:"field"`
						} `json:"fields"`
					} `json:"fields"`
				} `json:"schema"`
				Payload struct {
					Before map[string]any `json:"before"`
					After  map[string]any `json:"after"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(ev["data"], &data); err != nil {
				t.Fatalf("data: %v: %s", err, ev["data"])
			}
			if data.Schema.Name != "io.debezium.connector.postgresql.Data" {
				t.Errorf("data schema name %q", data.Schema.Name)
			}
			if !equalJSON(data.Payload.After, w.after) {
				t.Errorf("data.payload.after %v, want %v", data.Payload.After, w.after)
			}
			if w.op == "d" && (data.Payload.Before == nil || data.Payload.Before["id"] != 4.0) {
				t.Errorf("the delete's before %v, want the row", data.Payload.Before)
			}
			// The schema change: the rows after it carry the new column
			// in data's schema, those before it do not.
			var cols []string
			for _, f := range data.Schema.Fields {
				if f.Field == "after" {
					for _, c := range f.Fields {
						cols = append(cols, c.Field)
					}
				}
			}
			wantCols := "id,name"
			if i >= 4 {
				wantCols = "id,name,note"
			}
			if strings.Join(cols, ",") != wantCols {
				t.Errorf("data schema's after has %v, want %s", cols, wantCols)
			}
		})
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

func equalJSON(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
