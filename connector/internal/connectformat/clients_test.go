package connectformat

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/internal/jsclients"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/schema"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The outside-client tests: what this package writes, registered in
// srtest and produced into kfake, read by kafkajs with
// @kafkajs/confluent-schema-registry (Protobuf, JSON Schema) and by the
// CloudEvents JS SDK, in one node run (internal/jsclients), compared
// field by field with the Connect values written (clients_values_test.go).
// Where a client cannot read what Confluent's converter writes, the
// subtest proves the client's limit and the remedy that works.

// fieldMetaOption matches a field's [(confluent.field_meta) = {…}] as
// protobuf_text.go writes it; it is all the field options the text has.
var fieldMetaOption = regexp.MustCompile(`(?s) \[\(confluent\.field_meta\) = \{.*?\n {4,}\}\]`)

// withoutFieldMeta is the text without its field_meta options: the
// remedy for protobufjs (finding 1), which loses the Connect parameters a
// Java reader restores from them (int8/int16 read back as int32, a
// decimal without its precision).
func withoutFieldMeta(text string) string { return fieldMetaOption.ReplaceAllString(text, "") }

// wellKnown is the schema text of each file ProtobufData imports, as the
// registry serves it under a subject of that name when the serializer
// registers it as a reference: with skip.known.types=false (default true)
// and the default reference.subject.name.strategy,
// DefaultReferenceSubjectNameStrategy, "the reference name is used as
// subject" (schema-registry protobuf-serializer/.../KafkaProtobufSerializerConfig.java
// at 056f131448d, SKIP_KNOWN_TYPES_CONFIG and
// REFERENCE_SUBJECT_NAME_STRATEGY_CONFIG).
// Field numbers from the published files (protobuf_deps.go).
var wellKnown = importTexts

// registerWellKnown registers the imports of p as subjects and returns
// the references to them.
func registerWellKnown(t *testing.T, reg *srtest.Registry, p *Protobuf) []srtest.Reference {
	t.Helper()
	var refs []srtest.Reference
	for _, imp := range p.Imports {
		text, ok := wellKnown[imp]
		if !ok {
			t.Fatalf("no text for import %s", imp)
		}
		if _, err := reg.RegisterSchema(imp, "PROTOBUF", text); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, srtest.Reference{Name: imp, Subject: imp, Version: 1})
	}
	return refs
}

func mustRegister(t *testing.T, reg *srtest.Registry, subject, schemaType, text string, refs ...srtest.Reference) int {
	t.Helper()
	id, err := reg.RegisterSchema(subject, schemaType, text, refs...)
	if err != nil {
		t.Fatalf("register %s: %v", subject, err)
	}
	return id
}

// written is what a topic was given: the record's Connect key and value.
type written struct {
	key, value *transform.Struct
}

type clientCase struct {
	topic   string
	env     *schema.Schema
	key     *schema.Schema
	records []written
}

func newClientCase(t *testing.T, topic, table string, groups int) *clientCase {
	env := cornersEnvelope(table, groups)
	key := structOf("dbserver1.public."+table+".Key", "id", sInt32)
	c := &clientCase{topic: topic, env: env, key: key}
	for _, ch := range cornersChanges(t, env) {
		row, _ := ch.Get("after")
		if row == nil {
			row, _ = ch.Get("before")
		}
		id, _ := row.(*transform.Struct).Get("id")
		c.records = append(c.records, written{newStruct(t, key, "id", id), ch})
	}
	return c
}

func frameJSON(t *testing.T, j *JSONSchema, id int, v any) []byte {
	t.Helper()
	b, err := j.AppendEncode(nil, id, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func frameProto(t *testing.T, p *Protobuf, id int, v any) []byte {
	t.Helper()
	b, err := p.AppendEncode(nil, id, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOutsideClientsReadWhatConnectformatWrites is issue 30's "records
// read by clients written outside this project" for the formats: kafkajs
// 2.2.4 with @kafkajs/confluent-schema-registry 4.1.0 (protobufjs 7,
// Ajv 8) and cloudevents 9.0.0, pinned in internal/jsclients/js.
func TestOutsideClientsReadWhatConnectformatWrites(t *testing.T) {
	jsclients.SkipInShort(t)
	topics := []string{"pb-plain", "pb-meta", "pb-wkt", "pb-all", "js-default", "js", "js-closed", "ce"}
	b := kafkatest.New(t, kfake.SeedTopics(1, topics...))
	reg := srtest.New(t)
	var produce []*kgo.Record
	add := func(topic string, key, value []byte) {
		produce = append(produce, &kgo.Record{Topic: topic, Key: key, Value: value})
	}

	// Protobuf, plain types: Confluent's text as it is, no import, no
	// option; then a tombstone after the delete, as Debezium writes.
	pbPlain := newClientCase(t, "pb-plain", "plain", 0)
	pv, pk := mustProtobuf(t, pbPlain.env), mustProtobuf(t, pbPlain.key)
	if len(pv.Imports) != 0 || strings.Contains(pv.Text, "field_meta") {
		t.Fatalf("plain types need no import nor option:\n%s", pv.Text)
	}
	pvID := mustRegister(t, reg, "pb-plain-value", "PROTOBUF", pv.Text)
	pkID := mustRegister(t, reg, "pb-plain-key", "PROTOBUF", pk.Text)
	for _, w := range pbPlain.records {
		add("pb-plain", frameProto(t, pk, pkID, w.key), frameProto(t, pv, pvID, w.value))
	}
	add("pb-plain", frameProto(t, pk, pkID, pbPlain.records[2].key), nil)

	// Protobuf with field_meta (int8, int16): each record twice, under
	// Confluent's text and under the same text without the options.
	pbMeta := newClientCase(t, "pb-meta", "meta", meta)
	mv := mustProtobuf(t, pbMeta.env)
	if len(mv.Imports) != 0 || !strings.Contains(mv.Text, "(confluent.field_meta)") {
		t.Fatalf("want field_meta and no import:\n%s", mv.Text)
	}
	mvConfluent := mustRegister(t, reg, "pb-meta-value", "PROTOBUF", mv.Text)
	reg.SetCompatibility("pb-meta-value", srtest.None)
	mvStripped := mustRegister(t, reg, "pb-meta-value", "PROTOBUF", withoutFieldMeta(mv.Text))
	for _, w := range pbMeta.records {
		add("pb-meta", nil, frameProto(t, mv, mvConfluent, w.value))
		add("pb-meta", nil, frameProto(t, mv, mvStripped, w.value))
	}

	// Protobuf with the well-known types (Date, Time, Timestamp): each
	// record under Confluent's registration (no reference, as its
	// serializer with skip.known.types=true, the default) and under the
	// same text with the imports registered as references.
	pbWKT := newClientCase(t, "pb-wkt", "wkt", wkt)
	wv := mustProtobuf(t, pbWKT.env)
	if len(wv.Imports) == 0 || strings.Contains(wv.Text, "field_meta") {
		t.Fatalf("want imports and no field_meta:\n%s", wv.Text)
	}
	wvConfluent := mustRegister(t, reg, "pb-wkt-value", "PROTOBUF", wv.Text)
	reg.SetCompatibility("pb-wkt-value", srtest.None)
	wvRefs := mustRegister(t, reg, "pb-wkt-value", "PROTOBUF", wv.Text, registerWellKnown(t, reg, wv)...)
	for _, w := range pbWKT.records {
		add("pb-wkt", nil, frameProto(t, wv, wvConfluent, w.value))
		add("pb-wkt", nil, frameProto(t, wv, wvRefs, w.value))
	}

	// Protobuf with every corner, under both remedies at once.
	pbAll := newClientCase(t, "pb-all", "corners", allCorners)
	av := mustProtobuf(t, pbAll.env)
	avID := mustRegister(t, reg, "pb-all-value", "PROTOBUF", withoutFieldMeta(av.Text), registerWellKnown(t, reg, av)...)
	for _, w := range pbAll.records {
		add("pb-all", nil, frameProto(t, av, avID, w.value))
	}

	// JSON Schema with every corner: the same records on two topics, read
	// with the client's defaults and with Ajv's strict mode off.
	jsCase := newClientCase(t, "js", "corners", allCorners)
	jv, jk := mustJSONSchema(t, jsCase.env), mustJSONSchema(t, jsCase.key)
	jvID := mustRegister(t, reg, "js-value", "JSON", string(jv.Document))
	jkID := mustRegister(t, reg, "js-key", "JSON", string(jk.Document))
	for _, topic := range []string{"js-default", "js"} {
		for _, w := range jsCase.records {
			add(topic, frameJSON(t, jk, jkID, w.key), frameJSON(t, jv, jvID, w.value))
		}
	}

	// The same under object.additional.properties=false (every object
	// closed), its own subject.
	jc := mustJSONSchemaOptions(t, jsCase.env, JSONSchemaOptions{ClosedObjects: true})
	if !strings.Contains(string(jc.Document), `"additionalProperties":false`) {
		t.Fatalf("closed objects: %s", jc.Document)
	}
	jcID := mustRegister(t, reg, "js-closed-value", "JSON", string(jc.Document))
	for _, w := range jsCase.records {
		add("js-closed", frameJSON(t, jk, jkID, w.key), frameJSON(t, jc, jcID, w.value))
	}

	// CloudEvents, structured mode with JSON data, every corner.
	ceCase := newClientCase(t, "ce", "corners", allCorners)
	for _, w := range ceCase.records {
		v, ok, err := AppendCloudEvent(nil, ceCase.env, w.value, CloudEventsOptions{})
		if err != nil || !ok {
			t.Fatalf("AppendCloudEvent: %v, %v", ok, err)
		}
		add("ce", nil, v)
		// The same with the header the Kafka protocol binding's
		// structured mode requires (kafka-protocol-binding.md 3.3).
		add("ce", nil, v)
		produce[len(produce)-1].Headers = []kgo.RecordHeader{{Key: "content-type", Value: []byte("application/cloudevents+json; charset=UTF-8")}}
	}

	// mooncdc's default kafka.compression, none: kafkajs reads gzip too
	// but no other codec without a plugin (internal/jsclients's tests).
	if err := b.Client(t, kgo.ProducerBatchCompression(kgo.NoCompression())).ProduceSync(t.Context(), produce...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range produce {
		counts[r.Topic]++
	}
	strictOff := map[string]any{"JSON": map[string]any{"strict": false}}
	read := jsclients.ReadT(t, jsclients.Request{Broker: b.Addr(), Registry: reg.URL(), Topics: []jsclients.Topic{
		{Name: "pb-plain", Count: counts["pb-plain"], Key: jsclients.Registry, Value: jsclients.Registry},
		{Name: "pb-meta", Count: counts["pb-meta"], Value: jsclients.Registry},
		{Name: "pb-wkt", Count: counts["pb-wkt"], Value: jsclients.Registry},
		{Name: "pb-all", Count: counts["pb-all"], Value: jsclients.Registry},
		{Name: "js-default", Count: counts["js-default"], Key: jsclients.Registry, Value: jsclients.Registry},
		{Name: "js", Count: counts["js"], Key: jsclients.Registry, Value: jsclients.Registry, RegistryOptions: strictOff},
		{Name: "js-closed", Count: counts["js-closed"], Key: jsclients.Registry, Value: jsclients.Registry, RegistryOptions: strictOff},
		{Name: "ce", Count: counts["ce"], Value: jsclients.CloudEvent},
	}})
	got := map[string][]jsclients.Record{}
	for _, r := range read {
		got[r.Topic] = append(got[r.Topic], r)
	}

	// wantRead compares one decoded value with the written one.
	wantRead := func(t *testing.T, what string, d jsclients.Decoded, want any) {
		t.Helper()
		if d.Error != "" {
			t.Errorf("%s: the client could not decode: %s", what, d.Error)
			return
		}
		for _, m := range diff(what, normalizeJSON(t, d.Decoded), normalize(t, want)) {
			t.Error(m)
		}
	}

	t.Run("ProtobufPlainTypesReadAsWritten", func(t *testing.T) {
		rs := got["pb-plain"]
		for i, w := range pbPlain.records {
			wantRead(t, "key", rs[i].Key, wantProto(pbPlain.key, w.key))
			wantRead(t, w.value.Values[4].(string), rs[i].Value, wantProto(pbPlain.env, w.value))
			if rs[i].Value.SchemaID == nil || *rs[i].Value.SchemaID != pvID {
				t.Errorf("schema id %v, want %d", rs[i].Value.SchemaID, pvID)
			}
		}
		if tomb := rs[3]; !tomb.Value.Null || tomb.Key.Error != "" {
			t.Errorf("tombstone: %+v", tomb)
		}
	})

	// Finding 1: protobufjs (7.x, the registry client's parser) cannot
	// parse an aggregate option value holding a list of messages, which is
	// how ProtobufSchema writes confluent.field_meta's params; the same
	// bytes under the text without the options read exactly.
	t.Run("ProtobufFieldMetaIsBeyondProtobufjs", func(t *testing.T) {
		for i, r := range got["pb-meta"] {
			w := pbMeta.records[i/2]
			if i%2 == 0 {
				if !strings.Contains(r.Value.Error, "illegal value '{'") {
					t.Errorf("record %d under Confluent's text: want protobufjs's parse error on field_meta, got %q %s", i, r.Value.Error, r.Value.Decoded)
				}
				continue
			}
			wantRead(t, "without field_meta", r.Value, wantProto(pbMeta.env, w.value))
		}
	})

	// Finding 2: the registry client parses the schema text alone; without
	// references protobufjs knows none of the imported types, not even
	// google.protobuf.Timestamp. With the imports registered as
	// references the records read exactly.
	t.Run("ProtobufWellKnownTypesNeedReferences", func(t *testing.T) {
		for i, r := range got["pb-wkt"] {
			w := pbWKT.records[i/2]
			if i%2 == 0 {
				if !strings.Contains(r.Value.Error, "no such Type or Enum 'google.") {
					t.Errorf("record %d without references: want an unresolved google type, got %q %s", i, r.Value.Error, r.Value.Decoded)
				}
				continue
			}
			wantRead(t, "with references", r.Value, wantProto(pbWKT.env, w.value))
		}
	})

	t.Run("ProtobufEveryCornerReadsWithBothRemedies", func(t *testing.T) {
		for i, r := range got["pb-all"] {
			wantRead(t, pbAll.records[i].value.Values[4].(string), r.Value, wantProto(pbAll.env, pbAll.records[i].value))
		}
	})

	// Finding 3: Ajv 8 (the client's default, strict mode on) refuses
	// to compile a schema with keywords it does not know, and
	// JsonSchemaData writes connect.index, connect.type … on every
	// property (JSD:920-1040).
	t.Run("JSONSchemaNeedsAjvStrictOff", func(t *testing.T) {
		for i, r := range got["js-default"] {
			if !strings.Contains(r.Value.Error, `strict mode: unknown keyword: "connect.`) {
				t.Errorf("record %d: want Ajv's strict-mode refusal, got %q %s", i, r.Value.Error, r.Value.Decoded)
			}
		}
	})

	// Finding 4: the client parses the JSON with JSON.parse, so a 64-bit
	// integer beyond 2^53 reads as the nearest double (a bigint column,
	// Debezium's ts_ns). Every other field reads as written, and Ajv
	// validated each value against its document (the client validates on
	// decode: JsonSchema.js fromBuffer), open or closed objects.
	t.Run("JSONSchemaReadsAsWrittenBut64BitIntegersBeyond2p53", func(t *testing.T) {
		rs := append(append([]jsclients.Record{}, got["js"]...), got["js-closed"]...)
		if len(rs) != 2*len(jsCase.records) {
			t.Fatalf("%d records", len(rs))
		}
		for j, r := range rs {
			i := j % len(jsCase.records)
			w := jsCase.records[i]
			wantRead(t, "key", r.Key, wantJSON(jsCase.key, w.key))
			if r.Value.Error != "" {
				t.Fatalf("record %d: %s", i, r.Value.Error)
			}
			rounded := diff("", normalizeJSON(t, r.Value.Decoded), normalize(t, wantJSON(jsCase.env, w.value)))
			wantRounded := roundedInt64s(t, "", jsCase.env, w.value)
			if strings.Join(rounded, "\n") != strings.Join(wantRounded, "\n") {
				t.Errorf("record %d: differences\n%s\nwant exactly the integers beyond 2^53 as doubles\n%s",
					i, strings.Join(rounded, "\n"), strings.Join(wantRounded, "\n"))
			}
			if len(wantRounded) == 0 {
				t.Errorf("record %d: no integer beyond 2^53 (the test must show the rounding)", i)
			}
		}
	})

	// Findings 6 and 7, CloudEvents: the SDK parses our structured JSON
	// and its strict checks (spec version, the required attributes, the
	// time's format, the extension values' types) pass for everything but
	// the one extension attribute Debezium names with upper case,
	// iodebeziumtxId from source.txId (CEC:685-705 keeps the case; the
	// CloudEvents spec and the SDK allow [a-z0-9] only). The SDK's Kafka
	// protocol binding reads a record as structured only with the
	// content-type header application/cloudevents+json
	// (kafka-protocol-binding.md 3.3), which Debezium does not write
	// (CloudEventsConverter.java:81-87: no headers); with it, it parses.
	t.Run("CloudEventsParsedAndValidatedBySDK", func(t *testing.T) {
		for j, r := range got["ce"] {
			i, w := j/2, ceCase.records[j/2]
			var ev map[string]json.RawMessage
			if err := json.Unmarshal(r.Value.Decoded, &ev); err != nil {
				t.Fatal(err)
			}
			if r.Value.RestError != nil {
				t.Errorf("record %d: the SDK refuses more than the extension attributes: %s", i, *r.Value.RestError)
			}
			var wantRefused []string
			for name := range ev {
				if !regexp.MustCompile(`^[a-z0-9]+$`).MatchString(name) {
					wantRefused = append(wantRefused, name)
				}
			}
			slices.Sort(wantRefused)
			refused := slices.Sorted(slices.Values(r.Value.Refused))
			if !slices.Equal(refused, wantRefused) {
				t.Errorf("record %d: the SDK refuses %v, want %v", i, refused, wantRefused)
			}
			if len(wantRefused) == 0 {
				t.Errorf("record %d: no upper-case extension name (the test must show the SDK's refusal)", i)
			}
			if r.Value.StrictError == nil || !strings.Contains(*r.Value.StrictError, "invalid extension name: iodebeziumtxId") {
				t.Errorf("record %d: strict: %s", i, str(r.Value.StrictError))
			}
			// Without the header the binding takes the record for binary
			// mode and finds no ce_ headers; with it, it parses the
			// structured event (without strict checks: its parseStructured
			// builds the CloudEvent with strict false).
			if j%2 == 0 && (r.Value.BindingError == nil || !strings.Contains(*r.Value.BindingError, "No CloudEvent detected")) {
				t.Errorf("record %d without the header: Kafka binding: %s, want No CloudEvent detected", i, str(r.Value.BindingError))
			}
			if j%2 == 1 && r.Value.BindingError != nil {
				t.Errorf("record %d with the header: Kafka binding: %s", i, *r.Value.BindingError)
			}
			src := w.value.Values[2].(*transform.Struct)
			lsn, _ := src.Get("lsn")
			tx, _ := src.Get("txId")
			for attr, want := range map[string]string{
				"specversion": `"1.0"`, "source": `"/debezium/postgresql/dbserver1"`,
				"type": `"io.debezium.connector.postgresql.DataChangeEvent"`, "datacontenttype": `"application/json"`,
				"time": `"2019-05-28T08:58:24.863Z"`, "iodebeziumop": strconv.Quote(w.value.Values[4].(string)),
				"id": strconv.Quote("name:dbserver1;lsn:" + strconv.FormatInt(lsn.(int64), 10) + ";txId:" + strconv.FormatInt(tx.(int64), 10) + `;sequence:[null,"24023128"]`),
			} {
				if string(ev[attr]) != want {
					t.Errorf("record %d: %s = %s, want %s", i, attr, ev[attr], want)
				}
			}
			var data map[string]json.RawMessage
			if err := json.Unmarshal(ev["data"], &data); err != nil {
				t.Fatal(err)
			}
			// The data as JsonConverter writes the row, parsed with
			// JSON.parse: finding 4 again.
			for _, part := range []string{"before", "after"} {
				v, _ := w.value.Get(part)
				rs := fieldSchema(ceCase.env, part)
				got := diff("", normalizeJSON(t, data[part]), normalize(t, wantConnectJSON(rs, v)))
				if want := roundedInt64s(t, "", rs, v); strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("record %d data.%s: differences\n%s\nwant\n%s", i, part, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		}
	})
}

// roundedInt64s lists, as diff words them, the int64 fields of v beyond
// 2^53 with the double JSON.parse makes of them (JavaScript prints the
// shortest decimal that reads back as the same double).
func roundedInt64s(t *testing.T, path string, s *schema.Schema, v any) []string {
	var out []string
	st, ok := v.(*transform.Struct)
	if !ok {
		return nil
	}
	for i, f := range s.Fields {
		p := path + "." + f.Name
		switch x := st.Values[i].(type) {
		case int64:
			if js := jsNumber(float64(x)); f.Schema.Name == "" && js != strconv.FormatInt(x, 10) {
				out = append(out, p+": "+js+", want "+strconv.FormatInt(x, 10))
			}
		case *transform.Struct:
			out = append(out, roundedInt64s(t, p, f.Schema, x)...)
		}
	}
	slices.Sort(out)
	return out
}

// jsNumber is Number.prototype.toString of f: the shortest digits that
// read back as f, written out without an exponent below 1e21.
func jsNumber(f float64) string {
	if math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func mustProtobuf(t *testing.T, s *schema.Schema) *Protobuf {
	t.Helper()
	p, err := NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustJSONSchemaOptions(t *testing.T, s *schema.Schema, opts JSONSchemaOptions) *JSONSchema {
	t.Helper()
	j, err := NewJSONSchemaOptions(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func mustJSONSchema(t *testing.T, s *schema.Schema) *JSONSchema {
	t.Helper()
	j, err := NewJSONSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	return j
}
