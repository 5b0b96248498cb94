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
// format.value cloudevents, with json_schemas (as CECT.java:53-57
// configures the converter) and without, two snapshot rows, an insert, an update, a
// column added, an insert with it and a delete are each one structured
// JSON CloudEvent that the CloudEvents JS SDK (9.0.0, internal/jsclients)
// parses and validates, with what CECT.java:103-131 asserts of every
// event and the values of the rows; the delete's tombstone stays a
// tombstone and the transaction records are null (CEC.java:264-272).
func TestCloudEventsValuesReadByTheSDKAcrossASchemaChange(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text)`)
	e.Exec(`INSERT INTO items VALUES (1, 'snap1'), (2, 'snap2')`)
	// Two pipelines: data with its schema (as CECT configures the
	// converter) and without (json.schemas.enable=false).
	names := map[bool]string{true: "ce", false: "ceplain"}
	var runs []*ittest.Running
	for _, schemas := range []bool{true, false} {
		cfg := e.Config(names[schemas], "public.items")
		cfg.Heartbeat.Records = false
		cfg.Format.Value = config.FormatCloudEvents
		cfg.Format.JSONSchemas = schemas
		cfg.Format.ProvideTransactionMetadata = true
		runs = append(runs, ittest.StartStreaming(t, cfg))
	}
	for _, r := range runs {
		r.WaitHandedOver(t)
	}
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
	n := len(wants) + 1 // and the delete's tombstone
	var topics []jsclients.Topic
	for _, schemas := range []bool{true, false} {
		name := names[schemas]
		raw := ittest.ReadRaw(t, e.Kafka, n, name+".public.items")
		if raw[n-1].Value != nil || !strings.HasSuffix(string(raw[n-1].Key), `{"id":4}`) && !strings.HasSuffix(string(raw[n-1].Key), `"payload":{"id":4}}`) {
			t.Errorf("%s: the last record is not the delete's tombstone: key %s, value %q", name, raw[n-1].Key, raw[n-1].Value)
		}
		// Four transactions with changes, a BEGIN and an END each.
		for _, rec := range ittest.ReadRaw(t, e.Kafka, 8, name+".transaction") {
			if rec.Value != nil {
				t.Errorf("%s: a transaction record's value %s: CloudEventsConverter writes null for it", name, rec.Value)
			}
		}
		topics = append(topics, jsclients.Topic{Name: name + ".public.items", Count: n, Value: jsclients.CloudEvent})
	}

	byTopic := map[string][]jsclients.Record{}
	for _, r := range jsclients.ReadT(t, jsclients.Request{Broker: e.Kafka, Topics: topics}) {
		byTopic[r.Topic] = append(byTopic[r.Topic], r)
	}
	for _, schemas := range []bool{true, false} {
		name := names[schemas]
		read := byTopic[name+".public.items"]
		if len(read) != n {
			t.Fatalf("%s: the client read %d records, want %d", name, len(read), n)
		}
		if !read[n-1].Value.Null {
			t.Errorf("%s: the tombstone reads as %s", name, read[n-1].Value.Decoded)
		}
		// PCM.java:41-46; a row mooncdc copies has a null source.txId.
		idRE := regexp.MustCompile(`^name:` + name + `;lsn:[0-9]+;txId:([0-9]+|null);sequence:\[.*\]$`)
		for i, w := range wants {
			d := read[i].Value
			t.Run(fmt.Sprintf("%s %d %s", name, i, w.op), func(t *testing.T) {
				checkCloudEvent(t, d, name, schemas, idRE, i, w.op, w.snapshot, w.after, w.tx)
			})
		}
	}
	for _, r := range runs {
		if err := r.Stop(t); err != nil {
			t.Fatal(err)
		}
	}
}

// checkCloudEvent checks one event as the SDK read it: record i of
// pipeline name, op, snapshot marker, after (nil for a delete) and
// whether it carries the transaction attributes.
func checkCloudEvent(t *testing.T, d jsclients.Decoded, name string, schemas bool, idRE *regexp.Regexp,
	i int, op, snapshot string, after map[string]any, tx bool) {
	// The SDK: every check passes but the extension name Debezium keeps
	// in upper case (CEC.java:685-705), iodebeziumtxId; no content-type
	// header, as Debezium writes none, so the Kafka binding finds no
	// event (connectformat's findings 6 and 7).
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
	for _, attr := range []string{"id", "source", "specversion", "type", "datacontenttype", "time", "data", "iodebeziumop", "iodebeziumtsms"} {
		if len(ev[attr]) == 0 || string(ev[attr]) == "null" {
			t.Errorf("%s is missing", attr)
		}
	}
	for _, attr := range []string{"dataschema", "traceparent"} {
		if _, ok := ev[attr]; ok {
			t.Errorf("%s = %s, want none", attr, ev[attr])
		}
	}
	if typ := str("type"); typ != "io.debezium.connector.postgresql.DataChangeEvent" {
		t.Errorf("type %q", typ)
	}
	if src := str("source"); src != "/debezium/postgresql/"+name {
		t.Errorf("source %q", src)
	}
	if id := str("id"); !idRE.MatchString(id) || tx && strings.Contains(id, "txId:null") {
		t.Errorf("id %q, want name:%s;lsn:…;txId:…;sequence:[…] (a streamed change with its transaction id)", id, name)
	}
	if str("specversion") != "1.0" || str("datacontenttype") != "application/json" || str("iodebeziumop") != op ||
		str("iodebeziumsnapshot") != snapshot || str("iodebeziumtable") != "items" {
		t.Errorf("attributes: specversion %s, datacontenttype %s, op %s (want %s), snapshot %s (want %s), table %s",
			ev["specversion"], ev["datacontenttype"], ev["iodebeziumop"], op, ev["iodebeziumsnapshot"], snapshot, ev["iodebeziumtable"])
	}
	// CECT.java:118-123: with transaction metadata, the three tx attributes.
	for _, attr := range []string{"iodebeziumtxid", "iodebeziumtxtotalorder", "iodebeziumtxdatacollectionorder"} {
		if set := len(ev[attr]) > 0 && string(ev[attr]) != "null"; set != tx {
			t.Errorf("%s = %s, want set %v", attr, ev[attr], tx)
		}
	}
	// CECT.java:124-131: with schemas, data is {schema, payload}, the
	// schema named io.debezium.connector.*.Data; without, data is the
	// payload itself (CEC.java:299-322).
	type payload struct {
		Before map[string]any `json:"before"`
		After  map[string]any `json:"after"`
	}
	var data struct {
		Schema *struct {
			Name   string `json:"name"`
			Fields []struct {
				Field  string `json:"field"`
				Fields []struct {
					Field string `json:"field"`
				} `json:"fields"`
			} `json:"fields"`
		} `json:"schema"`
		Payload *payload `json:"payload"`
	}
	if err := json.Unmarshal(ev["data"], &data); err != nil {
		t.Fatalf("data: %v: %s", err, ev["data"])
	}
	var p payload
	switch {
	case schemas && (data.Schema == nil || data.Payload == nil):
		t.Fatalf("data without schema or payload: %s", ev["data"])
	case schemas:
		p = *data.Payload
	case data.Schema != nil || data.Payload != nil:
		t.Fatalf("data with a schema, json_schemas off: %s", ev["data"])
	default:
		if err := json.Unmarshal(ev["data"], &p); err != nil {
			t.Fatal(err)
		}
	}
	if !equalJSON(p.After, after) {
		t.Errorf("data after %v, want %v", p.After, after)
	}
	if op == "d" && (p.Before == nil || p.Before["id"] != 4.0) {
		t.Errorf("the delete's before %v, want the row", p.Before)
	}
	if !schemas {
		return
	}
	if data.Schema.Name != "io.debezium.connector.postgresql.Data" {
		t.Errorf("data schema name %q", data.Schema.Name)
	}
	// The schema change: the rows after it carry the new column in
	// data's schema, those before it do not.
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
}

func equalJSON(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
