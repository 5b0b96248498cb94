package connectformat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// CET = debezium-connect-plugins/src/test/java/io/debezium/converters/CloudEventsConverterTest.java
// at v3.6.1.Final; CEC, CEM, PCM as in cloudevents.go.

// wantCloudEvent is the update of pgChange as the converter writes it
// without data schemas, built from its rules: the attributes in the order
// of CEC:490-546 (id, source, specversion, type, time, datacontenttype,
// then iodebeziumop, one per source field, the three tx ones, data); the
// id of PCM:41-46; time as yyyy-MM-dd'T'HH:mm:ss.SSSXXX in UTC of
// source.ts_ms 1559033904863 (2019-05-28T08:58:24 UTC, by `date -u`);
// int64 attributes as strings and nulls as null (CEC:552-597, JsonConverter);
// names by adjustExtensionName, which keeps upper case (txId).
const wantCloudEvent = `{"id":"name:dbserver1;lsn:24023128;txId:555;sequence:[\"24023119\",\"24023128\"]",` +
	`"source":"/debezium/postgresql/dbserver1","specversion":"1.0",` +
	`"type":"io.debezium.connector.postgresql.DataChangeEvent","time":"2019-05-28T08:58:24.863Z",` +
	`"datacontenttype":"application/json","iodebeziumop":"u",` +
	`"iodebeziumversion":"3.6.1.Final","iodebeziumconnector":"postgresql","iodebeziumname":"dbserver1",` +
	`"iodebeziumtsms":"1559033904863","iodebeziumsnapshot":"false","iodebeziumdb":"postgres",` +
	`"iodebeziumsequence":"[\"24023119\",\"24023128\"]","iodebeziumtsus":"1559033904863123","iodebeziumtsns":"1559033904863123000",` +
	`"iodebeziumschema":"public","iodebeziumtable":"customers","iodebeziumtxId":"555","iodebeziumlsn":"24023128",` +
	`"iodebeziumxmin":null,"iodebeziumorigin":null,"iodebeziumoriginlsn":null,` +
	`"iodebeziumtxid":"555:24023128","iodebeziumtxtotalorder":"1","iodebeziumtxdatacollectionorder":"1",` +
	`"data":{"before":{"id":1001,"name":"Sally","balance":"BNI=","born":7441,"seen":null},` +
	`"after":{"id":1001,"name":"Sally","balance":"Fi4=","born":7441,"seen":1700000000123}}}`

func TestCloudEventOfAPostgresChangeAsDebeziumWritesIt(t *testing.T) {
	got, ok, err := AppendCloudEvent(nil, pgEnvelope, pgChange(t), CloudEventsOptions{})
	if err != nil || !ok {
		t.Fatalf("ok %v err %v", ok, err)
	}
	if string(got) != wantCloudEvent {
		t.Fatalf("event:\n%s\nwant:\n%s", got, wantCloudEvent)
	}
}

// TestCloudEventWithDataSchema is CET:52-147 (json.schemas.enable true):
// every required attribute, no dataschema, no traceparent, the type's
// prefix and suffix, the extension attributes with a transaction, and
// data as schema and payload, the schema named io.debezium.connector.*.Data.
func TestCloudEventWithDataSchema(t *testing.T) {
	got, ok, err := AppendCloudEvent(nil, pgEnvelope, pgChange(t), CloudEventsOptions{DataSchemas: true})
	if err != nil || !ok {
		t.Fatalf("ok %v err %v", ok, err)
	}
	var ev map[string]any
	if err := json.Unmarshal(got, &ev); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	for _, k := range []string{"id", "source", "specversion", "type", "datacontenttype", "time", "data", // CET:104-114
		"iodebeziumop", "iodebeziumtsms", "iodebeziumtxid", "iodebeziumtxtotalorder", "iodebeziumtxdatacollectionorder"} { // CET:116-122
		if ev[k] == nil {
			t.Errorf("%s missing", k)
		}
	}
	for _, k := range []string{"dataschema", "traceparent"} { // CET:107, 111
		if _, ok := ev[k]; ok {
			t.Errorf("%s present", k)
		}
	}
	typ := ev["type"].(string)
	if !strings.HasPrefix(typ, "io.debezium.connector.") || !strings.HasSuffix(typ, ".DataChangeEvent") { // CET:109-110
		t.Errorf("type %s", typ)
	}
	data := ev["data"].(map[string]any)
	name := data["schema"].(map[string]any)["name"].(string)
	if name != "io.debezium.connector.postgresql.Data" { // CET:127-128, RMB dataSchemaName
		t.Errorf("data schema name %s", name)
	}
	if data["payload"].(map[string]any)["after"] == nil { // CET:131
		t.Errorf("no payload.after: %v", data)
	}
	// The same bytes as without schemas, "data" replaced (CEC:300-314).
	prefix := wantCloudEvent[:strings.Index(wantCloudEvent, `"data":`)]
	if !strings.HasPrefix(string(got), prefix+`"data":{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}`) {
		t.Errorf("event:\n%s", got)
	}
	if !strings.HasSuffix(string(got), `"optional":false,"name":"io.debezium.connector.postgresql.Data"},"payload":`+wantCloudEvent[strings.Index(wantCloudEvent, `"data":`)+7:len(wantCloudEvent)-1]+"}}") {
		t.Errorf("event's data:\n%s", got)
	}
}

// TestCloudEventOnlyForChangeEvents: the converter writes nothing for a
// null value or a value that is not an envelope (CEC:264-271).
func TestCloudEventOnlyForChangeEvents(t *testing.T) {
	if _, ok, err := AppendCloudEvent(nil, pgEnvelope, nil, CloudEventsOptions{}); ok || err != nil {
		t.Errorf("tombstone: ok %v err %v", ok, err)
	}
	hb := structOf("io.debezium.connector.common.Heartbeat", "ts_ms", sInt64)
	if _, ok, err := AppendCloudEvent(nil, hb, newStruct(t, hb, "ts_ms", int64(1)), CloudEventsOptions{}); ok || err != nil {
		t.Errorf("heartbeat: ok %v err %v", ok, err)
	}
	// A create without a transaction block: the tx attributes are null.
	c := pgChange(t)
	c.Values[0] = nil // before
	c.Values[3] = nil // transaction
	c.Values[4] = "c" // op
	got, ok, err := AppendCloudEvent(nil, pgEnvelope, c, CloudEventsOptions{})
	if err != nil || !ok {
		t.Fatalf("ok %v err %v", ok, err)
	}
	for _, want := range []string{`"iodebeziumop":"c"`, `"iodebeziumtxid":null,"iodebeziumtxtotalorder":null,"iodebeziumtxdatacollectionorder":null`, `"data":{"before":null,`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	if n := extensionName("origin_lsn"); n != "iodebeziumoriginlsn" {
		t.Errorf("extension name %s", n)
	}
}

// TestCloudEventsDataMapsAreJsonConverters: the data is JsonConverter's
// (CEC:306, jsonDataConverter.fromConnectData), which writes a map whose
// keys are not strings as [key, value] tuples (apache/kafka
// connect/json/.../JsonConverter.java:644-676 at 1eb7644349c), where
// JsonSchemaData writes {"key", "value"} objects; string keys make an
// object in both.
func TestCloudEventsDataMapsAreJsonConverters(t *testing.T) {
	env := cornersEnvelope("maps", 0)
	ch := cornersChanges(t, env)[0]
	for _, dataSchemas := range []bool{false, true} {
		b, ok, err := AppendCloudEvent(nil, env, ch, CloudEventsOptions{DataSchemas: dataSchemas})
		if err != nil || !ok {
			t.Fatalf("AppendCloudEvent: %v %v", ok, err)
		}
		for _, want := range []string{`"scores":[[7,"seven"],[-7,""]]`, `"attrs":{"x":-1,"y":2147483647}`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("schemas %v: no %s in\n%s", dataSchemas, want, b)
			}
		}
	}
	row, _ := ch.Get("after")
	j, err := NewJSONSchema(fieldSchema(env, "after"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := j.AppendJSON(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"scores":[{"key":7,"value":"seven"},{"key":-7,"value":""}]`; !strings.Contains(string(b), want) {
		t.Errorf("JSON Schema: no %s in\n%s", want, b)
	}
}

// TestCloudEventsDataKeepsNullsWhenAsked: JsonConverter writes a null
// column whose schema has a default as the default, unless
// replace.null.with.default is false (apache/kafka
// connect/json/.../JsonConverter.java:586-592 at 1eb7644349c);
// CloudEventsConverter passes json.* to its data converter
// (CloudEventsConverter.java:184, 218-220 at Debezium v3.6.1.Final).
func TestCloudEventsDataKeepsNullsWhenAsked(t *testing.T) {
	name := &schema.Schema{Type: schema.TypeString, Optional: true, Default: []byte(`"anon"`), HasDefault: true}
	row := structOf("dbserver1.public.customers.Value", "id", sInt32, "name", name)
	env := structOf("dbserver1.public.customers.Envelope",
		"before", opt(row), "after", opt(row), "source", pgSource, "transaction", pgBlock,
		"op", sString, "ts_ms", sOptInt64, "ts_us", sOptInt64, "ts_ns", sOptInt64)
	src, _ := pgChange(t).Get("source")
	ch := newStruct(t, env, "after", newStruct(t, row, "id", int32(1)), "source", src, "op", "c")
	for _, keep := range []bool{false, true} {
		b, ok, err := AppendCloudEvent(nil, env, ch, CloudEventsOptions{KeepNulls: keep})
		if err != nil || !ok {
			t.Fatalf("AppendCloudEvent: %v %v", ok, err)
		}
		want := map[bool]string{false: `"after":{"id":1,"name":"anon"}`, true: `"after":{"id":1,"name":null}`}[keep]
		if !strings.Contains(string(b), want) {
			t.Errorf("keep nulls %v: no %s in\n%s", keep, want, b)
		}
	}
}
