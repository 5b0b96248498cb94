package records

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

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

// TestAvroSchemaEvolvesWithAlterTable: a column added mid-stream gives the
// next records a new value schema version (a new id); records on both
// sides of the ALTER decode with the schema the registry returns for their
// id; each schema is registered once per process.
func TestAvroSchemaEvolvesWithAlterTable(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.items (id int PRIMARY KEY, name text NOT NULL)`)
	e.Exec(`INSERT INTO items VALUES (1, 'snap')`)
	cfg := ittest.AvroConfig(e, reg, "evo", "public.items")
	cfg.Heartbeat.Records = false // their two schemas would count below
	r := ittest.Start(t, cfg)

	e.Exec(`INSERT INTO items VALUES (2, 'before')`)
	e.Exec(`INSERT INTO items VALUES (3, 'before too')`)
	e.Exec(`ALTER TABLE items ADD COLUMN price numeric(8,2)`)
	e.Exec(`INSERT INTO items VALUES (4, 'after', 9.99)`)
	e.Exec(`ALTER TABLE items DROP COLUMN price`)
	e.Exec(`INSERT INTO items VALUES (5, 'dropped')`)

	recs := ittest.ReadAvro(t, reg, e.Kafka, 5, "evo.public.items")
	ids := make([]int, len(recs))
	for i, rec := range recs {
		ids[i] = rec.ValueID
		if got := ittest.After(t, rec)["id"]; got != i+1 {
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
	if _, has := ittest.After(t, recs[2])["price"]; has {
		t.Errorf("record before the ALTER has price: %v", ittest.After(t, recs[2]))
	}
	if got := ittest.After(t, recs[3])["price"]; got == nil {
		t.Errorf("record after the ALTER lacks price: %v", ittest.After(t, recs[3]))
	}
	if recs[0].KeyID != recs[4].KeyID {
		t.Errorf("key schema changed with a non-key column: %d vs %d", recs[0].KeyID, recs[4].KeyID)
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
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestIncompatibleSchemaParksOnlyThatTable: a type change the registry
// refuses under BACKWARD compatibility sends that table to errored with the
// registry's message; the stream and the other table go on, and nothing
// of the parked table is written with a wrong schema.
func TestIncompatibleSchemaParksOnlyThatTable(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.a (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
	r := ittest.Start(t, ittest.AvroConfig(e, reg, "inc", "public.a", "public.b"))

	e.Exec(`INSERT INTO a VALUES (1, 'x')`)
	e.Exec(`ALTER TABLE a ALTER COLUMN v TYPE int USING 0`)
	e.Exec(`INSERT INTO a VALUES (2, 7)`)
	e.Exec(`INSERT INTO b VALUES (1, 'still flowing')`)

	b := ittest.ReadAvro(t, reg, e.Kafka, 1, "inc.public.b")
	if got := ittest.After(t, b[0])["v"]; got != "still flowing" {
		t.Fatalf("table b: %v", ittest.After(t, b[0]))
	}
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		ph := r.P.TablePhases()["public.a"]
		if ph.Phase != "errored" {
			return fmt.Errorf("table a not errored: %+v", ph)
		}
		if ph.Retry != "resnapshot" || !strings.Contains(ph.LastError, "incompatible") || !strings.Contains(ph.LastError, "inc.public.a-value") {
			t.Fatalf("errored phase = %+v", ph)
		}
		return nil
	})
	e.Exec(`INSERT INTO b VALUES (2, 'after the refusal')`)
	b = ittest.ReadAvro(t, reg, e.Kafka, 2, "inc.public.b")
	if len(b) != 2 {
		t.Fatalf("table b has %d records, want 2", len(b))
	}
	if a := ittest.ReadAvro(t, reg, e.Kafka, 1, "inc.public.a"); len(a) != 1 {
		t.Fatalf("table a has %d records, want only the one before the refused change", len(a))
	}
	if !r.P.Ready() {
		t.Fatal("the pipeline stopped streaming")
	}
}

// TestAvroWithoutAutoRegisterNeedsRegisteredSchemas: with
// auto_register false a schema is looked up, never registered; a missing
// one parks the table with a message saying how to fix it, and a
// pre-registered one is used.
func TestAvroWithoutAutoRegisterNeedsRegisteredSchemas(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := ittest.AvroConfig(e, reg, "noreg", "public.t")
	cfg.Format.SchemaRegistry.AutoRegister = false
	cfg.Snapshot.MaxRetries = 0
	r := ittest.StartStreaming(t, cfg)
	eventually.Succeeds(t, 30*time.Second, 20*time.Millisecond, func() error {
		ph := r.P.TablePhases()["public.t"]
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
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := ittest.AvroConfig(e, reg, "down", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	ittest.StartStreaming(t, cfg)
	reg.FailNextOn(srtest.EndpointRegister, 4, 503)
	for i := 1; i <= 20; i++ {
		e.Exec(`INSERT INTO t VALUES ($1)`, i)
	}
	recs := ittest.ReadAvro(t, reg, e.Kafka, 20, "down.public.t")
	for i, rec := range recs[:20] {
		if got := ittest.After(t, rec)["id"]; got != i+1 {
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
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, at timestamp NOT NULL)`)
	cfg := e.Config("js", "public.t")
	cfg.Format.JSONSchemas = true
	cfg.Snapshot.Mode = config.SnapshotNever
	ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO t VALUES (1, '2024-01-02 03:04:05.123456')`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.Kafka, 1, "js.public.t")
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
	e := ittest.NewEnv(t)
	reg := srtest.New(t, srtest.WithTLS(), srtest.WithBasicAuth("moon", "s3cret"))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, reg.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := ittest.AvroConfig(e, reg, "tls", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Format.SchemaRegistry.CAFile = ca
	cfg.Format.SchemaRegistry.Username, cfg.Format.SchemaRegistry.Password = "moon", "s3cret"
	r := ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO t VALUES (1)`)
	if got := ittest.After(t, ittest.ReadAvro(t, reg, e.Kafka, 1, "tls.public.t")[0])["id"]; got != 1 {
		t.Fatalf("id = %v", got)
	}
	if err := r.Stop(t); err != nil {
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
	r = ittest.RunPipeline(t, p)
	select {
	case err := <-r.Done:
		r.Done <- err // for the cleanup
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
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.a (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE public.b (id int PRIMARY KEY, v text)`)
	cfg := e.Config("big", "public.a", "public.b")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Kafka.MaxRecordBytes = 2048
	r := ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO a VALUES (1, (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 200) i))`)
	e.Exec(`INSERT INTO b VALUES (1, 'small')`)
	e.Exec(`INSERT INTO a VALUES (2, 'small too, but the table is parked')`)
	e.Exec(`INSERT INTO b VALUES (2, 'small')`)
	if evs := ittest.Consume(t, e.Kafka, 2, "big.public.b"); len(evs) != 2 {
		t.Fatalf("table b: %d records", len(evs))
	}
	ph := r.P.TablePhases()["public.a"]
	if ph.Phase != "errored" || ph.Retry != "resnapshot" || !strings.Contains(ph.LastError, "kafka.max_record_bytes") {
		t.Fatalf("table a: %+v", ph)
	}
	if evs := ittest.Consume(t, e.Kafka, -1, "big.public.a"); len(evs) != 0 {
		t.Fatalf("table a has %d records, want none", len(evs))
	}
}

// TestAvroMessagesAndTruncate: logical messages have Debezium's
// MessageKey/MessageValue schemas on <prefix>.message, and a truncate is
// the table's envelope with op t and a null key.
func TestAvroMessagesAndTruncate(t *testing.T) {
	e := ittest.NewEnv(t)
	reg := srtest.New(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := ittest.AvroConfig(e, reg, "msg", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Format.SkippedOperations = nil // write the truncate (Debezium skips it by default)
	ittest.StartStreaming(t, cfg)
	e.Exec(`INSERT INTO t VALUES (1)`)
	e.Exec(`TRUNCATE t`)
	e.Exec(`SELECT pg_logical_emit_message(true, 'app', 'hello')`)
	e.Exec(`SELECT pg_logical_emit_message(false, 'ops', '\x00ff'::bytea)`)

	recs := ittest.ReadAvro(t, reg, e.Kafka, 2, "msg.public.t")
	if recs[1].Value["op"] != "t" || recs[1].Key != nil || recs[1].Value["before"] != nil || recs[1].Value["after"] != nil {
		t.Errorf("truncate record = key %v value %v", recs[1].Key, recs[1].Value)
	}
	if recs[1].ValueID != recs[0].ValueID {
		t.Errorf("truncate uses value schema %d, the table's is %d", recs[1].ValueID, recs[0].ValueID)
	}
	msgs := ittest.ReadAvro(t, reg, e.Kafka, 2, "msg.message")
	for i, want := range []struct {
		prefix  string
		content []byte
	}{{"app", []byte("hello")}, {"ops", []byte{0, 0xff}}} {
		m := msgs[i]
		if m.Key["prefix"] != want.prefix || m.Value["op"] != "m" {
			t.Fatalf("message %d: key %v value %v", i, m.Key, m.Value)
		}
		body := m.Value["message"].(map[string]any)
		if body["prefix"] != want.prefix || string(body["content"].([]byte)) != string(want.content) {
			t.Errorf("message %d body = %v", i, body)
		}
	}
	text, _ := reg.SchemaByID(msgs[0].ValueID)
	if !strings.Contains(text, `"name":"MessageValue","namespace":"io.debezium.connector.postgresql"`) {
		t.Errorf("message value schema: %s", text)
	}
}
