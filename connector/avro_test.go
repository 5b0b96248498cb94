package connector_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/connecttest"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// avroRecord is a record decoded with the schema the registry returns for
// the id in its Confluent header.
type avroRecord struct {
	keyID, valueID int
	key, value     map[string]any // nil for a tombstone's value
}

// decodeAvro decodes one Confluent wire-format payload.
func decodeAvro(t *testing.T, reg *srtest.Registry, b []byte) (int, map[string]any) {
	t.Helper()
	if len(b) < 5 || b[0] != 0 {
		t.Fatalf("not Confluent wire format: % x", b[:min(len(b), 8)])
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	text, ok := reg.SchemaByID(id)
	if !ok {
		t.Fatalf("schema id %d is not in the registry", id)
	}
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatalf("registry schema %d does not parse: %v", id, err)
	}
	var v map[string]any
	if err := avro.Unmarshal(s, b[5:], &v); err != nil {
		t.Fatalf("decode with schema %d: %v", id, err)
	}
	return id, unwrapUnions(v).(map[string]any)
}

// unwrapUnions replaces hamba's generic form of a union value, a map from
// the branch's type name to the value, by the value.
func unwrapUnions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, inner := range x {
				if avroTypeName(k) {
					return unwrapUnions(inner)
				}
			}
		}
		for k, inner := range x {
			x[k] = unwrapUnions(inner)
		}
		return x
	case []any:
		for i := range x {
			x[i] = unwrapUnions(x[i])
		}
	}
	return v
}

func avroTypeName(k string) bool {
	switch k {
	case "string", "bytes", "int", "long", "float", "double", "boolean", "array", "map":
		return true
	}
	return strings.Contains(k, ".")
}

func readAvro(t *testing.T, reg *srtest.Registry, addr string, n int, topic string) []avroRecord {
	t.Helper()
	recs := readRaw(t, addr, n, topic)
	out := make([]avroRecord, 0, len(recs))
	for _, r := range recs {
		var ar avroRecord
		if r.Key != nil {
			ar.keyID, ar.key = decodeAvro(t, reg, r.Key)
		}
		if r.Value != nil {
			ar.valueID, ar.value = decodeAvro(t, reg, r.Value)
		}
		out = append(out, ar)
	}
	return out
}

func avroConfig(e *env, reg *srtest.Registry, name string, tables ...string) config.Config {
	cfg := e.config(name, tables...)
	cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
	cfg.Format.SchemaRegistry.URL = reg.URL()
	return cfg
}

// after returns the after image of a decoded envelope.
func after(t *testing.T, r avroRecord) map[string]any {
	t.Helper()
	a, ok := r.value["after"].(map[string]any)
	if !ok {
		t.Fatalf("record has no after image: %v", r.value)
	}
	return a
}

// TestAvroSchemaEvolvesWithAlterTable: a column added mid-stream gives the
// next records a new value schema version (a new id); records on both
// sides of the ALTER decode with the schema the registry returns for their
// id; each schema is registered once per process.
func TestAvroSchemaEvolvesWithAlterTable(t *testing.T) {
	e := newEnv(t)
	reg := srtest.New(t)
	e.exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text NOT NULL)`)
	e.exec(`INSERT INTO items VALUES (1, 'snap')`)
	cfg := avroConfig(e, reg, "evo", "public.items")
	cfg.Heartbeat.Records = false // their two schemas would count below
	r := start(t, cfg)

	e.exec(`INSERT INTO items VALUES (2, 'before')`)
	e.exec(`INSERT INTO items VALUES (3, 'before too')`)
	e.exec(`ALTER TABLE items ADD COLUMN price numeric(8,2)`)
	e.exec(`INSERT INTO items VALUES (4, 'after', 9.99)`)
	e.exec(`ALTER TABLE items DROP COLUMN price`)
	e.exec(`INSERT INTO items VALUES (5, 'dropped')`)

	recs := readAvro(t, reg, e.kafka, 5, "evo.public.items")
	ids := make([]int, len(recs))
	for i, rec := range recs {
		ids[i] = rec.valueID
		if got := after(t, rec)["id"]; got != i+1 {
			t.Fatalf("record %d has id %v", i, got)
		}
	}
	// The snapshot row and the streamed rows of the same table version
	// share one schema; the added column makes a new one; dropping it again
	// gives back the first schema (same text, same id).
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("value schema ids before the ALTER differ: %v", ids)
	}
	if ids[3] == ids[2] {
		t.Errorf("the added column did not give a new value schema id: %v", ids)
	}
	if ids[4] != ids[0] {
		t.Errorf("after dropping the column again the schema id is %d, want the first one %d", ids[4], ids[0])
	}
	if _, has := after(t, recs[2])["price"]; has {
		t.Errorf("record before the ALTER has price: %v", after(t, recs[2]))
	}
	if got := after(t, recs[3])["price"]; got == nil {
		t.Errorf("record after the ALTER lacks price: %v", after(t, recs[3]))
	}
	if recs[0].keyID != recs[4].keyID {
		t.Errorf("key schema changed with a non-key column: %d vs %d", recs[0].keyID, recs[4].keyID)
	}
	if v := reg.Versions("evo.public.items-value"); len(v) != 2 {
		t.Errorf("value subject versions = %v, want 2 (v1, v2 with price)", v)
	}
	// Register calls: key once, value v1 once per process (the copy worker
	// and the main worker share the cache), v2 once; and the schema-change
	// records the two ALTERs derive from their Relation messages, key and
	// value once (schemachange.go).
	if n := reg.Requests(srtest.EndpointRegister); n != 5 {
		t.Errorf("register requests = %d, want 5: a schema is registered once per process", n)
	}
	if v := reg.Versions("evo.schema-changes-value"); len(v) != 1 {
		t.Errorf("schema-change value subject versions = %v, want 1", v)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncompatibleSchemaParksOnlyThatTable: a type change the registry
// refuses under BACKWARD compatibility sends that table to errored with the
// registry's message; the stream and the other table go on, and nothing
// of the parked table is written with a wrong schema.
func TestIncompatibleSchemaParksOnlyThatTable(t *testing.T) {
	e := newEnv(t)
	reg := srtest.New(t)
	e.exec(`CREATE TABLE public.a (id int PRIMARY KEY, v text)`)
	e.exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
	r := start(t, avroConfig(e, reg, "inc", "public.a", "public.b"))

	e.exec(`INSERT INTO a VALUES (1, 'x')`)
	e.exec(`ALTER TABLE a ALTER COLUMN v TYPE int USING 0`)
	e.exec(`INSERT INTO a VALUES (2, 7)`)
	e.exec(`INSERT INTO b VALUES (1, 'still flowing')`)

	b := readAvro(t, reg, e.kafka, 1, "inc.public.b")
	if got := after(t, b[0])["v"]; got != "still flowing" {
		t.Fatalf("table b: %v", after(t, b[0]))
	}
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		ph := r.p.TablePhases()["public.a"]
		if ph.Phase != "errored" {
			return fmt.Errorf("table a not errored: %+v", ph)
		}
		if ph.Retry != "resnapshot" || !strings.Contains(ph.LastError, "incompatible") || !strings.Contains(ph.LastError, "inc.public.a-value") {
			t.Fatalf("errored phase = %+v", ph)
		}
		return nil
	})
	e.exec(`INSERT INTO b VALUES (2, 'after the refusal')`)
	b = readAvro(t, reg, e.kafka, 2, "inc.public.b")
	if len(b) != 2 {
		t.Fatalf("table b has %d records, want 2", len(b))
	}
	if a := readAvro(t, reg, e.kafka, 1, "inc.public.a"); len(a) != 1 {
		t.Fatalf("table a has %d records, want only the one before the refused change", len(a))
	}
	if !r.p.Ready() {
		t.Fatal("the pipeline stopped streaming")
	}
}

// TestAvroWithoutAutoRegisterNeedsRegisteredSchemas: with
// auto_register false a schema is looked up, never registered; a missing
// one parks the table with a message saying how to fix it, and a
// pre-registered one is used.
func TestAvroWithoutAutoRegisterNeedsRegisteredSchemas(t *testing.T) {
	e := newEnv(t)
	reg := srtest.New(t)
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := avroConfig(e, reg, "noreg", "public.t")
	cfg.Format.SchemaRegistry.AutoRegister = false
	cfg.Snapshot.MaxRetries = 0
	r := startStreaming(t, cfg)
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		ph := r.p.TablePhases()["public.t"]
		if ph.Phase != "errored" {
			return fmt.Errorf("table not errored: %+v", ph)
		}
		if !strings.Contains(ph.LastError, "auto_register") || !strings.Contains(ph.LastError, "noreg.public.t-") {
			t.Fatalf("errored phase = %+v", ph)
		}
		return nil
	})
	if n := reg.Requests(srtest.EndpointRegister); n != 0 {
		t.Errorf("%d register requests with auto_register false", n)
	}
}

// TestRegistryOutageDelaysButLosesNothing: while the registry answers 503
// the stream waits; once it answers, every change is there.
func TestRegistryOutageDelaysButLosesNothing(t *testing.T) {
	e := newEnv(t)
	reg := srtest.New(t)
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := avroConfig(e, reg, "down", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	startStreaming(t, cfg)
	reg.FailNextOn(srtest.EndpointRegister, 4, 503)
	for i := 1; i <= 20; i++ {
		e.exec(`INSERT INTO t VALUES ($1)`, i)
	}
	recs := readAvro(t, reg, e.kafka, 20, "down.public.t")
	for i, rec := range recs[:20] {
		if got := after(t, rec)["id"]; got != i+1 {
			t.Fatalf("record %d has id %v", i, got)
		}
	}
	if n := reg.Requests(srtest.EndpointRegister); n < 5 {
		t.Errorf("register requests = %d: the failures were not retried", n)
	}
}

// TestJSONWithSchemasWrapsKeyAndValue: format.json_schemas gives Kafka
// Connect's {"schema":…,"payload":…} with Debezium's names.
func TestJSONWithSchemasWrapsKeyAndValue(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY, at timestamp NOT NULL)`)
	cfg := e.config("js", "public.t")
	cfg.Format.JSONSchemas = true
	cfg.Snapshot.Mode = config.SnapshotNever
	startStreaming(t, cfg)
	e.exec(`INSERT INTO t VALUES (1, '2024-01-02 03:04:05.123456')`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.kafka, 1, "js.public.t")
	if len(recs) != 1 {
		t.Fatalf("got %d records", len(recs))
	}
	checkJSONSchemas(t, recs[0])
}

func checkJSONSchemas(t *testing.T, rec *kgo.Record) {
	t.Helper()
	for _, b := range [][]byte{rec.Key, rec.Value} {
		if err := connecttest.Validate(b); err != nil {
			t.Errorf("Kafka Connect's JsonConverter would refuse %s: %v", b, err)
		}
	}
	wantKey := `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"js.public.t.Key"},"payload":{"id":1}}`
	if string(rec.Key) != wantKey {
		t.Errorf("key\n got  %s\n want %s", rec.Key, wantKey)
	}
	for _, want := range []string{
		`{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},` +
			`{"type":"int64","optional":false,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"at"}],` +
			`"optional":true,"name":"js.public.t.Value","field":"before"}`,
		// Debezium 3.6.1's envelope is version 2 (Envelope.java:32).
		`"name":"js.public.t.Envelope","version":2},"payload":{"before":null,"after":{"id":1,"at":1704164645123456},`,
	} {
		if !strings.Contains(string(rec.Value), want) {
			t.Errorf("value lacks %s\n value: %s", want, rec.Value)
		}
	}
	if dir := os.Getenv("MOONCDC_DUMP"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "json_schemas.json"), rec.Value, 0o644)
	}
}

// TestAvroRegistryOverTLSWithBasicAuth: the registry's CA file, username
// and password reach the client; wrong credentials stop the pipeline with
// a configuration error naming the keys, instead of parking every table.
func TestAvroRegistryOverTLSWithBasicAuth(t *testing.T) {
	e := newEnv(t)
	reg := srtest.New(t, srtest.WithTLS(), srtest.WithBasicAuth("moon", "s3cret"))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, reg.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := avroConfig(e, reg, "tls", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Format.SchemaRegistry.CAFile = ca
	cfg.Format.SchemaRegistry.Username, cfg.Format.SchemaRegistry.Password = "moon", "s3cret"
	r := startStreaming(t, cfg)
	e.exec(`INSERT INTO t VALUES (1)`)
	if got := after(t, readAvro(t, reg, e.kafka, 1, "tls.public.t")[0])["id"]; got != 1 {
		t.Fatalf("id = %v", got)
	}
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}

	// Wrong credentials: refused when the heartbeat schemas are registered
	// at start, before anything streams.
	cfg.Name = "tls2"
	cfg.Format.SchemaRegistry.Password = "wrong"
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	r = runPipeline(t, p)
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		if connector.ExitCode(err) != 2 || !strings.Contains(err.Error(), "format.schema_registry") {
			t.Fatalf("exit %d: %v", connector.ExitCode(err), err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("wrong registry credentials did not stop the pipeline")
	}
}

// TestRecordOverMaxParksOnlyThatTable: a record above
// kafka.max_record_bytes is refused before it is produced; its table goes
// errored with a message naming the key, the others go on.
func TestRecordOverMaxParksOnlyThatTable(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE public.a (id int PRIMARY KEY, v text)`)
	e.exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
	cfg := e.config("big", "public.a", "public.b")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Kafka.MaxRecordBytes = 2048
	r := startStreaming(t, cfg)
	e.exec(`INSERT INTO a VALUES (1, (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 200) i))`)
	e.exec(`INSERT INTO b VALUES (1, 'small')`)
	e.exec(`INSERT INTO a VALUES (2, 'small too, but the table is parked')`)
	e.exec(`INSERT INTO b VALUES (2, 'small')`)
	if evs := consume(t, e.kafka, 2, "big.public.b"); len(evs) != 2 {
		t.Fatalf("table b: %d records", len(evs))
	}
	ph := r.p.TablePhases()["public.a"]
	if ph.Phase != "errored" || ph.Retry != "resnapshot" || !strings.Contains(ph.LastError, "kafka.max_record_bytes") {
		t.Fatalf("table a: %+v", ph)
	}
	if evs := consume(t, e.kafka, -1, "big.public.a"); len(evs) != 0 {
		t.Fatalf("table a has %d records, want none", len(evs))
	}
}

// TestAvroMessagesAndTruncate: logical messages have Debezium's
// MessageKey/MessageValue schemas on <prefix>.message, and a truncate is
// the table's envelope with op t and a null key.
func TestAvroMessagesAndTruncate(t *testing.T) {
	e := newEnv(t)
	reg := srtest.New(t)
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := avroConfig(e, reg, "msg", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Format.SkippedOperations = nil // write the truncate (Debezium skips it by default)
	startStreaming(t, cfg)
	e.exec(`INSERT INTO t VALUES (1)`)
	e.exec(`TRUNCATE t`)
	e.exec(`SELECT pg_logical_emit_message(true, 'app', 'hello')`)
	e.exec(`SELECT pg_logical_emit_message(false, 'ops', '\x00ff'::bytea)`)

	recs := readAvro(t, reg, e.kafka, 2, "msg.public.t")
	if recs[1].value["op"] != "t" || recs[1].key != nil || recs[1].value["before"] != nil || recs[1].value["after"] != nil {
		t.Errorf("truncate record = key %v value %v", recs[1].key, recs[1].value)
	}
	if recs[1].valueID != recs[0].valueID {
		t.Errorf("truncate uses value schema %d, the table's is %d", recs[1].valueID, recs[0].valueID)
	}
	msgs := readAvro(t, reg, e.kafka, 2, "msg.message")
	for i, want := range []struct {
		prefix  string
		content []byte
	}{{"app", []byte("hello")}, {"ops", []byte{0, 0xff}}} {
		m := msgs[i]
		if m.key["prefix"] != want.prefix || m.value["op"] != "m" {
			t.Fatalf("message %d: key %v value %v", i, m.key, m.value)
		}
		body := m.value["message"].(map[string]any)
		if body["prefix"] != want.prefix || string(body["content"].([]byte)) != string(want.content) {
			t.Errorf("message %d body = %v", i, body)
		}
	}
	text, _ := reg.SchemaByID(msgs[0].valueID)
	if !strings.Contains(text, `"name":"MessageValue","namespace":"io.debezium.connector.postgresql"`) {
		t.Errorf("message value schema: %s", text)
	}
}
