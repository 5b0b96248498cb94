package schema

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/internal/connecttest"
)

// Debezium's sources cited below are debezium-connect-plugins/src/main/java/io/debezium/transforms/outbox/
// at v3.6.1.Final: ERD EventRouterDelegate.java, ERCD
// EventRouterConfigDefinition.java, JSD JsonSchemaData.java; ERT is
// src/test/java/io/debezium/transforms/outbox/EventRouterTest.java.

var outboxRel = &Relation{OID: 4242, Schema: "public", Table: "outbox", ReplicaIdentity: 'd', Columns: []Column{
	{Name: "id", TypeOID: 2950, TypeMod: -1, Key: true, NotNull: true},
	{Name: "aggregatetype", TypeOID: 1043, TypeMod: -1, NotNull: true},
	{Name: "aggregateid", TypeOID: 25, TypeMod: -1, NotNull: true},
	{Name: "payload", TypeOID: 3802, TypeMod: -1},
	{Name: "created", TypeOID: 1114, TypeMod: -1},
	{Name: "tenant", TypeOID: 25, TypeMod: -1},
}, KeyIndexes: []int{0}}

func outboxRow(typ, id, payload string) Tuple {
	t := Tuple{text("6f1c8e02-6bd1-4c5e-9f59-5e8f5a0d2b11"), text(typ), text(id), text(payload), text("2026-12-04 18:00:00.123456"), text("acme")}
	if payload == "\x00" {
		t[3] = Value{Kind: ValueNull}
	}
	return t
}

func mustOutbox(t *testing.T, o OutboxOptions) *OutboxConfig {
	t.Helper()
	if o.Table == "" {
		o.Table = "public.outbox"
	}
	c, err := NewOutboxConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOutboxConfigDefaultsAndRefusals: Debezium's defaults (ERCD.java:195-297)
// and the refusals, each naming the option.
func TestOutboxConfigDefaultsAndRefusals(t *testing.T) {
	c := mustOutbox(t, OutboxOptions{Table: "outbox"})
	if c.Schema != "public" || c.RouteBy != "aggregatetype" || c.IDField != "id" || c.KeyField != "aggregateid" ||
		c.PayloadField != "payload" || c.OnUpdate != OutboxWarn || c.TimestampField != "" || c.envelope {
		t.Fatalf("defaults %+v", c)
	}
	for _, tt := range []struct {
		o    OutboxOptions
		want string
	}{
		{OutboxOptions{}, "table: required"},
		{OutboxOptions{Table: "a.b.c"}, "is not schema.table"},
		{OutboxOptions{Table: "t", OnUpdate: "ignore"}, "table_op_invalid_behavior"},
		{OutboxOptions{Table: "t", TopicRegex: "(unclosed"}, "route_topic_regex"},
		{OutboxOptions{Table: "t", AdditionalPlacement: []string{"type"}}, "is not column:header"},
		{OutboxOptions{Table: "t", AdditionalPlacement: []string{"type:body"}}, "is not header, envelope or partition"},
		{OutboxOptions{Table: "t", AdditionalPlacement: []string{"type:envelope", "kind:envelope:type"}}, "gets the field \"type\" twice"},
		{OutboxOptions{Table: "t", AdditionalPlacement: []string{"p:envelope:payload"}}, "twice"},
	} {
		if _, err := NewOutboxConfig(tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.o, err, tt.want)
		}
	}
	// ERCD.java:369-384: column:placement[:alias], trimmed, the alias
	// defaulting to the column.
	c = mustOutbox(t, OutboxOptions{AdditionalPlacement: []string{" type:header ", "tenant:ENVELOPE:org"}})
	if f := c.Fields; len(f) != 2 || f[0] != (OutboxField{"type", PlaceHeader, "type"}) || f[1] != (OutboxField{"tenant", PlaceEnvelope, "org"}) || !c.envelope {
		t.Fatalf("fields %+v", c.Fields)
	}
}

// TestOutboxTopicIsRegexRouter: route.topic.replacement applied by
// RegexRouter to the route-by value (ERD.java:234-246, 373-377); a value
// the regex does not match whole keeps the value (RegexRouter.apply);
// Java's (?<name>) and Go's (?P<name>) groups both work
// (ERT.java:373 canRouteBasedOnField, :411 canConfigureEveryTableField).
func TestOutboxTopicIsRegexRouter(t *testing.T) {
	for _, tt := range []struct {
		regex, replacement, value, want string
	}{
		{"", "", "User", "outbox.event.User"},
		{"", "", "", "outbox.event."},
		{"", "${routedByValue}.events", "order", "order.events"},
		{"(?P<routedByValue>.*)", "events.${routedByValue}", "order", "events.order"},
		{"(?<t>[a-z]+)-(?<v>v[0-9])", "${t}.${v}", "order-v2", "order.v2"},
		{"(?<t>[a-z]+)", "x.${t}", "Order", "Order"}, // no whole match: unchanged
		{"(.*)", "x.$1", "order", "x.order"},
	} {
		c := mustOutbox(t, OutboxOptions{TopicRegex: tt.regex, TopicReplacement: tt.replacement})
		if got := c.Topic(tt.value); got != tt.want {
			t.Errorf("%q %q on %q: %q, want %q", tt.regex, tt.replacement, tt.value, got, tt.want)
		}
	}
}

// TestOutboxActionPerOperation: inserts and snapshot rows are events,
// deletes ignored (ERD.java:111-115; ERT.java:64 canSkipDeletion; updates ERT.java:208 canSkipUpdates),
// updates by table.op.invalid.behavior (ERD.java:117-121), truncates
// ignored (Debezium's default skipped.operations t never passes one).
func TestOutboxActionPerOperation(t *testing.T) {
	c := mustOutbox(t, OutboxOptions{})
	for op, want := range map[Op]OutboxAction{OpCreate: OutboxEmit, OpRead: OutboxEmit, OpDelete: OutboxIgnore, OpUpdate: OutboxUpdate, OpTruncate: OutboxIgnore} {
		if got := c.Action(op); got != want {
			t.Errorf("%c: %d, want %d", op, got, want)
		}
	}
}

func outboxRecord(t *testing.T, enc *JSONEncoder, c *OutboxConfig, row Tuple) (*OutboxEvent, string, string, bool) {
	t.Helper()
	ev, err := enc.OutboxEvent(enc.Plan(outboxRel), &Change{Op: OpCreate, Relation: outboxRel, After: row}, c)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := enc.AppendOutboxValue(nil, c, ev)
	return ev, string(enc.AppendOutboxKey(nil, ev)), string(v), ok
}

// TestOutboxRowRecords: the record an outbox row becomes, in plain JSON and
// with schemas (checked by the JsonConverter validator): topic by
// aggregatetype, key the aggregate id, value the payload string with its
// column's schema (ERD.java:183-188, 223-226: without envelope fields the
// value is the payload itself), or the struct {payload, fields} named
// <row>.<routedBy>.Value with envelope fields (ERD.java:414-455;
// ERT.java:625 canSetPayloadTypeIntoTheEnvelope, :638 …WithAlias), the event id and header
// fields as header text, the timestamp from the column (ERD.java:253-285).
func TestOutboxRowRecords(t *testing.T) {
	plain, schemas := NewJSONEncoder(Config{Name: "shop"}), NewJSONSchemaEncoder(Config{Name: "shop"})
	row := outboxRow("Order", "42", `{"total": 10}`)

	c := mustOutbox(t, OutboxOptions{TimestampField: "created"})
	ev, key, value, ok := outboxRecord(t, plain, c, row)
	if ev.Topic != "outbox.event.Order" || key != `"42"` || value != `"{\"total\": 10}"` || !ok {
		t.Errorf("plain: topic %q key %s value %s %v", ev.Topic, key, value, ok)
	}
	if id, null := ev.ID.Text(); string(id) != "6f1c8e02-6bd1-4c5e-9f59-5e8f5a0d2b11" || null {
		t.Errorf("id header %q", id)
	}
	if !ev.HasTime || ev.Millis != 1796407200123 { // 2026-12-04T18:00:00.123Z, MicroTimestamp / 1000
		t.Errorf("timestamp %d %v", ev.Millis, ev.HasTime)
	}
	_, key, value, _ = outboxRecord(t, schemas, c, row)
	if key != `{"schema":{"type":"string","optional":false},"payload":"42"}` ||
		value != `{"schema":{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1},"payload":"{\"total\": 10}"}` {
		t.Errorf("schemas: key %s value %s", key, value)
	}
	for _, r := range []string{key, value} {
		if err := connecttest.Validate([]byte(r)); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}

	c = mustOutbox(t, OutboxOptions{AdditionalPlacement: []string{"aggregatetype:envelope:type", "tenant:header"}})
	ev, _, value, _ = outboxRecord(t, plain, c, row)
	if value != `{"payload":"{\"total\": 10}","type":"Order"}` {
		t.Errorf("envelope: %s", value)
	}
	if h, _ := ev.Fields[1].Text(); string(h) != "acme" {
		t.Errorf("tenant header %q", h)
	}
	_, _, value, _ = outboxRecord(t, schemas, c, row)
	if !strings.HasPrefix(value, `{"schema":{"type":"struct","fields":[{"type":"string","optional":true,"name":"io.debezium.data.Json","version":1,"field":"payload"},`+
		`{"type":"string","optional":false,"field":"type"}],"optional":false,"name":"shop.public.outbox.Order.Value"}`) {
		t.Errorf("envelope schema: %s", value)
	}
	if err := connecttest.Validate([]byte(value)); err != nil {
		t.Error(err)
	}
}

// TestOutboxExpandAndEmptyPayload: table.expand.json.payload turns the
// string into JSON with an inferred schema (ERD.java:162-181; JSD.java:52-88;
// ERT.java:957 canExpandJsonPayloadIfConfigured), nulls ignored (the default
// table.json.payload.null.behavior); text that is not a JSON object stays
// a string with ExpandErr set (ERD.java:172-174,
// "JSON expansion failed", ERD.java:172-174); route.tombstone.on.empty.payload
// makes a null or blank payload a tombstone (ERD.java:214-222;
// ERT.java:863 canMarkAnEventAsDeleted, :910 noTombstoneIfNotConfigured), which otherwise is a null value.
func TestOutboxExpandAndEmptyPayload(t *testing.T) {
	plain, schemas := NewJSONEncoder(Config{Name: "shop"}), NewJSONSchemaEncoder(Config{Name: "shop"})
	c := mustOutbox(t, OutboxOptions{ExpandJSONPayload: true, TombstoneOnEmptyPayload: true})
	in := `{"fullName": "John Doe", "rating": 4.5, "age": 30, "big": 10000000000, "none": null, "enrolled": true, ` +
		`"tags": ["a", "b"], "empty": [], "address": {"city": "Bern"}, "items": [{"n": 1}, {"n": 2, "m": "x"}]}`
	ev, _, value, ok := outboxRecord(t, plain, c, outboxRow("User", "1", in))
	want := `{"fullName":"John Doe","rating":4.5,"age":30,"big":10000000000,"enrolled":true,"tags":["a","b"],` +
		`"address":{"city":"Bern"},"items":[{"n":1,"m":null},{"n":2,"m":"x"}]}`
	if value != want || !ok || ev.ExpandErr != nil {
		t.Errorf("expanded:\n%s\nwant\n%s (%v)", value, want, ev.ExpandErr)
	}
	_, _, value, _ = outboxRecord(t, schemas, c, outboxRow("User", "1", in))
	if !strings.Contains(value, `{"type":"int32","optional":true,"field":"age"},{"type":"int64","optional":true,"field":"big"}`) ||
		!strings.Contains(value, `"optional":true,"name":"payload.address","field":"address"}`) ||
		!strings.Contains(value, `],"optional":true,"name":"payload"}`) {
		t.Errorf("expanded schema: %s", value)
	}
	if err := connecttest.Validate([]byte(value)); err != nil {
		t.Errorf("%v: %s", err, value)
	}
	for _, bad := range []string{`not json`, `[1, 2]`, `{"a": [1, "x"]}`, `{"a": [1, 10000000000]}`, `{"n": 123456789012345678901234567890}`, `{"a":`} {
		ev, _, value, ok := outboxRecord(t, plain, c, outboxRow("User", "1", bad))
		if ev.ExpandErr == nil || !errors.Is(ev.ExpandErr, errExpand) || value != string(appendJSONString(nil, bad)) || !ok {
			t.Errorf("%s: %s %v", bad, value, ev.ExpandErr)
		}
	}
	for _, empty := range []string{"\x00", "", "  \t"} {
		if _, _, _, ok := outboxRecord(t, plain, c, outboxRow("User", "1", empty)); ok {
			t.Errorf("%q: not a tombstone", empty)
		}
	}
	c = mustOutbox(t, OutboxOptions{})
	if _, _, value, ok := outboxRecord(t, plain, c, outboxRow("User", "1", "\x00")); !ok || value != "null" {
		t.Errorf("null payload without tombstones: %q %v", value, ok)
	}
}

// TestOutboxRowFieldErrors: a missing column (ERD.java:144-160,
// 425-427), a null route-by value, a timestamp column of another type
// (ERD.java:268-284) are value errors naming the table and column.
func TestOutboxRowFieldErrors(t *testing.T) {
	enc := NewJSONEncoder(Config{Name: "shop"})
	row := outboxRow("Order", "42", "{}")
	nullType := append(Tuple(nil), row...)
	nullType[1] = Value{Kind: ValueNull}
	for _, tt := range []struct {
		o      OutboxOptions
		row    Tuple
		column string
	}{
		{OutboxOptions{PayloadField: "body"}, row, "body"},
		{OutboxOptions{KeyField: "agg"}, row, "agg"},
		{OutboxOptions{AdditionalPlacement: []string{"kind:header"}}, row, "kind"},
		{OutboxOptions{TimestampField: "tenant"}, row, "tenant"},
		{OutboxOptions{}, nullType, "aggregatetype"},
	} {
		_, err := enc.OutboxEvent(enc.Plan(outboxRel), &Change{Op: OpCreate, Relation: outboxRel, After: tt.row}, mustOutbox(t, tt.o))
		var ve *ValueError
		var fe *OutboxFieldError
		if !errors.As(err, &ve) || ve.Table != "public.outbox" || ve.Column != tt.column || !errors.As(err, &fe) {
			t.Errorf("%+v: %v", tt.o, err)
		}
	}
}

// TestOutboxMessageEvents: the JSON content of an outbox message gives
// the same record as a row with those values would, each field's schema
// inferred; a string payload is expanded like a column's, another value
// written as it is.
func TestOutboxMessageEvents(t *testing.T) {
	plain, schemas := NewJSONEncoder(Config{Name: "shop"}), NewJSONSchemaEncoder(Config{Name: "shop"})
	c := mustOutbox(t, OutboxOptions{TimestampField: "ts", AdditionalPlacement: []string{"type:header", "tenant:envelope"}, MessagePrefix: "outbox"})
	ev, err := ParseOutboxMessage(c, []byte(`{"id":"e1","aggregatetype":"Order","aggregateid":42,"type":"Created","ts":1700000000000,"payload":{"total":10}}`))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := plain.AppendOutboxValue(nil, c, ev)
	if ev.Topic != "outbox.event.Order" || string(plain.AppendOutboxKey(nil, ev)) != "42" || string(v) != `{"payload":{"total":10},"tenant":null}` ||
		ev.Millis != 1700000000000 || !ev.HasTime {
		t.Errorf("event %+v value %s", ev, v)
	}
	if h, _ := ev.Fields[0].Text(); string(h) != "Created" {
		t.Errorf("type header %q", h)
	}
	v, _ = schemas.AppendOutboxValue(nil, c, ev)
	k := schemas.AppendOutboxKey(nil, ev)
	for _, r := range [][]byte{k, v} {
		if err := connecttest.Validate(r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	if !strings.Contains(string(v), `"name":"Order"`) {
		t.Errorf("value name: %s", v)
	}
	c = mustOutbox(t, OutboxOptions{ExpandJSONPayload: true})
	ev, err = ParseOutboxMessage(c, []byte(`{"aggregatetype":"Order","payload":"{\"a\":1}"}`))
	if v, _ := plain.AppendOutboxValue(nil, c, ev); err != nil || string(v) != `{"a":1}` || !ev.Key.Null() {
		t.Errorf("string payload: %s %v", v, err)
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"aggregateid":"1"}`, `{"aggregatetype":1}`, `{"aggregatetype":"a","payload":[]}`, `{"aggregatetype":"a"} x`} {
		if _, err := ParseOutboxMessage(c, []byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if _, err := ParseOutboxMessage(mustOutbox(t, OutboxOptions{TimestampField: "ts"}), []byte(`{"aggregatetype":"a","ts":"now"}`)); err == nil {
		t.Error("string timestamp accepted")
	}
}

// FuzzParseOutboxMessage: message content is untrusted bytes; parsing
// never panics, and an event it accepts is written as valid JSON (and,
// with schemas, as a record JsonConverter reads).
func FuzzParseOutboxMessage(f *testing.F) {
	for _, s := range []string{`{"id":"e1","aggregatetype":"Order","aggregateid":42,"payload":{"total":10}}`,
		`{"aggregatetype":"a","payload":"{\"x\":[1,2,{\"y\":null}]}"}`, `{"aggregatetype":"a","payload":[[1],[2.5]]}`,
		`{"aggregatetype":"a","payload":[{"a":1},{"a":"x"}]}`, `[`, `{"aggregatetype":"a","aggregatetype":"b"}`, `{"aggregatetype":"a","payload":1e999}`} {
		f.Add([]byte(s))
	}
	c, _ := NewOutboxConfig(OutboxOptions{Table: "public.outbox", ExpandJSONPayload: true, TimestampField: "ts", AdditionalPlacement: []string{"t:envelope", "h:header"}})
	plain, schemas, av := NewJSONEncoder(Config{Name: "shop"}), NewJSONSchemaEncoder(Config{Name: "shop"}), NewAvroEncoder(Config{Name: "shop"})
	valid := map[string]bool{}
	f.Fuzz(func(t *testing.T, content []byte) {
		ev, err := ParseOutboxMessage(c, content)
		if err != nil {
			return
		}
		// In Avro: a schema that renders valid, and a body that decodes
		// with it.
		if v, ok := c.Value(ev); ok {
			if text, err := OutboxAvroSchema(v, valid); err == nil {
				body, err := av.AppendOutboxAvro(nil, 1, v)
				if err != nil {
					t.Fatalf("%s: %v", v.JSON, err)
				}
				var got any
				as, err := avro.ParseWithCache(text, "", &avro.SchemaCache{}) // a fresh cache: names repeat across inputs
				if err != nil {
					t.Fatal(err)
				}
				if err := avro.Unmarshal(as, body[5:], &got); err != nil {
					t.Fatalf("%s does not decode with %s: %v", v.JSON, text, err)
				}
			}
		}
		for _, enc := range []*JSONEncoder{plain, schemas} {
			v, ok := enc.AppendOutboxValue(nil, c, ev)
			k := enc.AppendOutboxKey(nil, ev)
			if !json.Valid(k) || ok && !json.Valid(v) {
				t.Fatalf("invalid JSON: key %s value %s", k, v)
			}
			if enc == schemas && ok && !strings.Contains(string(v), "Infinity") && !strings.Contains(string(v), "NaN") {
				if err := connecttest.Validate(v); err != nil {
					t.Fatalf("%s: %v", v, err)
				}
			}
		}
	})
}

// TestOutboxAvroReadsBackAsTheJSON: in Avro each part's schema is what
// AvroConverter derives from its Connect schema, and the body decodes (with
// that schema) to the values the JSON record holds: the key, an
// envelope value with an expanded payload (records, arrays, int, long,
// double, optional fields), and a message's inferred parts.
func TestOutboxAvroReadsBackAsTheJSON(t *testing.T) {
	enc, js := NewAvroEncoder(Config{Name: "shop"}), NewJSONEncoder(Config{Name: "shop"})
	c := mustOutbox(t, OutboxOptions{ExpandJSONPayload: true, AdditionalPlacement: []string{"aggregatetype:envelope:type", "created:envelope"}})
	ev, err := js.OutboxEvent(js.Plan(outboxRel), &Change{Op: OpCreate, Relation: outboxRel,
		After: outboxRow("Order", "42", `{"total": 10.5, "n": 3, "big": 10000000000, "lines": [{"sku": "a"}, {"sku": "b", "q": 2}], "tags": ["x"], "gone": null}`)}, c)
	if err != nil {
		t.Fatal(err)
	}
	value, _ := c.Value(ev)
	msg, err := ParseOutboxMessage(c, []byte(`{"aggregatetype":"Customer","aggregateid":7,"payload":{"city":"Bern"}}`))
	if err != nil {
		t.Fatal(err)
	}
	mvalue, _ := c.Value(msg)
	valid := map[string]bool{}
	for _, tt := range []struct {
		name string
		p    OutboxPart
		want string
	}{
		{"key", ev.Key, `"42"`},
		{"value", value, `{"payload":{"big":10000000000,"lines":[{"q":null,"sku":"a"},{"q":2,"sku":"b"}],"n":3,"tags":["x"],"total":10.5},` +
			`"type":"Order","created":1796407200123456}`},
		{"message key", msg.Key, `7`},
		{"message value", mvalue, `{"payload":{"city":"Bern"},"type":"Customer","created":null}`},
	} {
		text, err := OutboxAvroSchema(tt.p, valid)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		body, err := enc.AppendOutboxAvro(nil, 7, tt.p)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if body[0] != 0 || body[4] != 7 {
			t.Fatalf("%s: header % x", tt.name, body[:5])
		}
		var got any
		if err := avro.Unmarshal(avro.MustParse(text), body[5:], &got); err != nil {
			t.Fatalf("%s: %v (schema %s)", tt.name, err, text)
		}
		var want any
		if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatal(err)
		}
		if s, w := unionFree(got), unionFree(want); s != w {
			t.Errorf("%s:\n got  %s\n want %s\n schema %s", tt.name, s, tt.want, text)
		}
	}
	if !valid[renderAvro(ev.Key.Schema)] {
		t.Error("the checked schema is not cached")
	}
}

// unionFree renders an Avro datum hamba decoded as JSON (keys sorted),
// with each union value of the test's types ({"type": v}) replaced by v.
func unionFree(v any) string {
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 1 {
				for k, u := range x {
					switch k {
					case "string", "int", "long", "double", "boolean", "array", "payload", "payload.lines", "shop.public.outbox.Order.payload":
						return strip(u)
					}
				}
			}
			m := map[string]any{}
			for k, u := range x {
				m[k] = strip(u)
			}
			return m
		case []any:
			for i := range x {
				x[i] = strip(x[i])
			}
		}
		return v
	}
	b, _ := json.Marshal(strip(v))
	return string(b)
}

// TestOutboxExpandMatchesEventRouterTest: the payloads of Debezium's own
// expansion tests (ERT.java, at the lines given) expand to the values and
// schemas those tests assert.
func TestOutboxExpandMatchesEventRouterTest(t *testing.T) {
	for _, tt := range []struct {
		name, in, json, schema string
	}{
		{"canExpandJsonPayloadIfConfigured ERT.java:957-1000",
			`{"fullName": "John Doe", "enabled": true, "rating": 4.9, "age": 42, "pets": ["dog", "cat"], "petObjects": [{"type": "dog"}, {"type": "cat"}]}`,
			`{"fullName":"John Doe","enabled":true,"rating":4.9,"age":42,"pets":["dog","cat"],"petObjects":[{"type":"dog"},{"type":"cat"}]}`,
			"fullName:string enabled:boolean rating:double age:int32 pets:array<string> petObjects:array<struct{type:string}>"},
		{"canExpandJsonWithNestedArraysWhereFirstArrayIsEmpty ERT.java:1036-1082",
			`{"fullName": "John Doe", "petObjects": [{"type": "dog", "colors": []}, {"type": "cat", "colors": [{"name": "white"}]}]}`,
			`{"fullName":"John Doe","petObjects":[{"type":"dog","colors":[]},{"type":"cat","colors":[{"name":"white"}]}]}`,
			"fullName:string petObjects:array<struct{type:string colors:array<struct{name:string}>}>"},
		{"shouldExpandJSONPayloadWithEmptyArrayAndRemoveThatArray ERT.java:1084-1119",
			`{"fullName": "John Doe", "petObjects": [{"type": "dog", "colors": []}]}`,
			`{"fullName":"John Doe","petObjects":[{"type":"dog"}]}`,
			"fullName:string petObjects:array<struct{type:string}>"},
		{"canExpandJsonArrayWithFirstElementNull ERT.java:1181-1217",
			`{"fullName": "John Doe", "numbers": [null, 2, 3]}`,
			`{"fullName":"John Doe","numbers":[null,2,3]}`,
			"fullName:string numbers:array<int32>"},
	} {
		js, s, err := expandPayload(jsonInfer{}, "payload", tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(js) != tt.json || shape(s) != "struct{"+tt.schema+"}" {
			t.Errorf("%s:\n got  %s %s\n want %s struct{%s}", tt.name, js, shape(s), tt.json, tt.schema)
		}
	}
}

// shape writes a schema's types compactly: struct{f:t …}, array<t>.
func shape(s *Schema) string {
	switch s.Type {
	case TypeStruct:
		var parts []string
		for _, f := range s.Fields {
			parts = append(parts, f.Name+":"+shape(f.Schema))
		}
		return "struct{" + strings.Join(parts, " ") + "}"
	case TypeArray:
		return "array<" + shape(s.Items) + ">"
	}
	return s.Type
}

// TestOutboxMissingFieldsAndNullBehavior: table.field.additional.missing
// ignore leaves out an additional field whose column is missing
// (ERD.java:192-196; ERT.java:1259 canSetFieldIntoTheEnvelopeWithMissingField),
// error fails the event (ERT.java:1275 shouldFailOnMissingField);
// table.json.payload.null.behavior optional_bytes keeps an expanded null as
// optional bytes (JSD.java:80-84), ignore leaves it out.
func TestOutboxMissingFieldsAndNullBehavior(t *testing.T) {
	enc := NewJSONSchemaEncoder(Config{Name: "shop"})
	row := outboxRow("Order", "42", `{"a": null, "b": [null], "c": 1}`)
	c := mustOutbox(t, OutboxOptions{AdditionalPlacement: []string{"kind:envelope", "tenant:envelope", "kind:header:k"}, AdditionalMissing: "ignore",
		ExpandJSONPayload: true, NullBehavior: "optional_bytes"})
	ev, _, value, _ := outboxRecord(t, enc, c, row)
	if ev.Fields[0].Schema != nil || ev.Fields[2].Schema != nil || ev.ExpandErr != nil {
		t.Fatalf("fields %+v, expand %v", ev.Fields, ev.ExpandErr)
	}
	if !strings.Contains(value, `"payload":{"payload":{"a":null,"b":[null],"c":1},"tenant":"acme"}`) ||
		!strings.Contains(value, `{"type":"bytes","optional":true,"field":"a"},{"type":"array","items":{"type":"bytes","optional":true},"optional":true,"field":"b"}`) {
		t.Errorf("value %s", value)
	}
	if err := connecttest.Validate([]byte(value)); err != nil {
		t.Error(err)
	}
	c = mustOutbox(t, OutboxOptions{ExpandJSONPayload: true})
	if _, _, value, _ := outboxRecord(t, NewJSONEncoder(Config{}), c, row); value != `"{\"a\": null, \"b\": [null], \"c\": 1}"` {
		t.Errorf("ignore: an all-null array cannot be expanded (JSD.java:109-112): %s", value)
	}
	for _, o := range []OutboxOptions{{Table: "t", NullBehavior: "keep"}, {Table: "t", AdditionalMissing: "skip"}} {
		if _, err := NewOutboxConfig(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestOutboxSchemaVersion: table.field.event.schema.version gives the
// value struct its version (ERD.java:183-186, 403-412; ERT.java:514
// canSetSchemaVersionWhenMoreThanPayloadIsInEnvelope), from an int column
// or a message's integer; null gives none; another type fails.
func TestOutboxSchemaVersion(t *testing.T) {
	rel := &Relation{OID: 4243, Schema: "public", Table: "outbox", Columns: append(append([]Column(nil), outboxRel.Columns...),
		Column{Name: "v", TypeOID: 23, TypeMod: -1})}
	enc := NewJSONSchemaEncoder(Config{Name: "shop"})
	c := mustOutbox(t, OutboxOptions{SchemaVersionField: "v", AdditionalPlacement: []string{"tenant:envelope"}})
	ev, err := enc.OutboxEvent(enc.Plan(rel), &Change{Op: OpCreate, Relation: rel, After: append(outboxRow("Order", "1", "{}"), text("3"))}, c)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := enc.AppendOutboxValue(nil, c, ev); !strings.Contains(string(v), `"name":"shop.public.outbox.Order.Value","version":3}`) {
		t.Errorf("row: %s", v)
	}
	ev, err = ParseOutboxMessage(c, []byte(`{"aggregatetype":"Order","v":4}`))
	if v, _ := enc.AppendOutboxValue(nil, c, ev); err != nil || !strings.Contains(string(v), `"version":4}`) {
		t.Errorf("message: %s %v", v, err)
	}
	if _, err := ParseOutboxMessage(c, []byte(`{"aggregatetype":"Order","v":"4"}`)); err == nil {
		t.Error("a string version accepted")
	}
	c = mustOutbox(t, OutboxOptions{SchemaVersionField: "tenant"})
	if _, err := enc.OutboxEvent(enc.Plan(outboxRel), &Change{Op: OpCreate, Relation: outboxRel, After: outboxRow("Order", "1", "{}")}, c); err == nil {
		t.Error("a text version column accepted")
	}
}

// TestOutboxPartitionPlacement: a field placed at the partition gives the
// event's partition through getInt32 (ERD.java:190-211; ERT.java:669
// canSetPartitionWithAdditionalFields puts 123 in the int32 column p and
// expects kafkaPartition 123): a null places nothing (the record is
// partitioned by its key), the last placed field wins, a column of
// another type is refused as Connect's getInt32 refuses it (a
// DataException), and so is a negative partition (Kafka's producer
// refuses it). Outbox messages place their partition the same way.
func TestOutboxPartitionPlacement(t *testing.T) {
	rel := *outboxRel
	rel.Columns = append(slices.Clone(outboxRel.Columns), Column{Name: "p", TypeOID: 23, TypeMod: -1}, Column{Name: "big", TypeOID: 20, TypeMod: -1})
	enc := NewJSONEncoder(Config{Name: "shop"})
	row := func(p, big string) Tuple {
		r := append(outboxRow("Order", "42", "{}"), text(p), text(big))
		if p == "" {
			r[6] = Value{Kind: ValueNull}
		}
		return r
	}
	for _, tt := range []struct {
		placement []string
		row       Tuple
		partition int32
		placed    bool
		err       string
	}{
		{[]string{"p:partition"}, row("123", "1"), 123, true, ""},
		{[]string{"p:partition"}, row("", "1"), 0, false, ""},
		{[]string{"p:header", "p:partition"}, row("0", "1"), 0, true, ""},
		{[]string{"p:partition", "big:partition"}, row("3", "1"), 0, false, "must be an integer (int32) column, not int64"},
		{[]string{"p:partition"}, row("-1", "1"), 0, false, "the partition -1 is negative"},
	} {
		ev, err := enc.OutboxEvent(enc.Plan(&rel), &Change{Op: OpCreate, Relation: &rel, After: tt.row}, mustOutbox(t, OutboxOptions{AdditionalPlacement: tt.placement}))
		var ve *ValueError
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &ve) || ve.Table != "public.outbox" {
				t.Errorf("%v %v: %v, want a value error with %q", tt.placement, tt.row[6], err, tt.err)
			}
		case err != nil:
			t.Errorf("%v: %v", tt.placement, err)
		case ev.Partition != tt.partition || ev.Placed != tt.placed:
			t.Errorf("%v %v: partition %d placed %v, want %d %v", tt.placement, tt.row[6], ev.Partition, ev.Placed, tt.partition, tt.placed)
		}
	}
	c := mustOutbox(t, OutboxOptions{AdditionalPlacement: []string{"part:partition"}, MessagePrefix: "outbox"})
	for _, tt := range []struct {
		content   string
		partition int32
		placed    bool
		ok        bool
	}{
		{`{"aggregatetype":"Order","part":2}`, 2, true, true},
		{`{"aggregatetype":"Order","part":null}`, 0, false, true},
		{`{"aggregatetype":"Order","part":"2"}`, 0, false, false},
		{`{"aggregatetype":"Order","part":-3}`, 0, false, false},
		{`{"aggregatetype":"Order","part":3000000000}`, 0, false, false},
	} {
		ev, err := ParseOutboxMessage(c, []byte(tt.content))
		if (err == nil) != tt.ok || err == nil && (ev.Partition != tt.partition || ev.Placed != tt.placed) {
			t.Errorf("%s: %+v %v", tt.content, ev, err)
		}
	}
}
