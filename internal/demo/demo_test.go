package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/gobuild"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// buildMooncdc builds the mooncdc binary the demo runs, with the test's
// race setting (gobuild: under make test a link from the cache, and the
// binary checked by the race detector too).
func buildMooncdc(t *testing.T) string {
	t.Helper()
	bin, err := gobuild.BuildIn(t.TempDir(), "github.com/mooncdc/mooncdc/cmd/mooncdc", "mooncdc")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// runDemo runs the demo with o (a one-second load, 20,000 rows to copy),
// logging its output if the test fails.
func runDemo(t *testing.T, o options) (*result, string) {
	t.Helper()
	pgtest.SkipIntegrationInShort(t)
	o.Binary, o.Load, o.Samples, o.Rows = buildMooncdc(t), time.Second, 2, 20_000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	o.Out = &out
	res, err := run(ctx, o)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("demo output:\n%s", out.String())
		}
	})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}
	return res, out.String()
}

// checkResult checks what every demo must show: every op of the load in
// Kafka, the records replaying into the tables' rows, the seeded table's
// snapshot whole, changes shown as they arrived, and a clean stop.
func checkResult(t *testing.T, res *result, out string) {
	t.Helper()
	if res.ExitCode != 0 {
		t.Errorf("mooncdc exit code %d, want 0", res.ExitCode)
	}
	if res.Records != res.Expected {
		t.Errorf("read %d records, want %d (one per change, plus a tombstone per delete)", res.Records, res.Expected)
	}
	if !res.Replayed {
		t.Error("the records do not replay into the tables' rows")
	}
	if res.Seeded != 20_000 {
		t.Errorf("%s holds %d records, want 20000 (one per seeded row)", seedTopic, res.Seeded)
	}
	if res.Live == 0 || !strings.Contains(out, "public.orders") {
		t.Errorf("no live changes shown during the load (%d seen)", res.Live)
	}
	for _, topic := range demoTopics() {
		for _, op := range []string{"c", "u", "d", opTombstone} {
			if res.Counts[topic][op] == 0 {
				t.Errorf("no %q records on %s; counts %v", op, topic, res.Counts[topic])
			}
		}
	}
	for i, table := range demoTables {
		topic := demoTopics()[i]
		for _, op := range []string{"c", "u", "d"} {
			if got, want := res.Counts[topic][op], res.Load.Ops[table][op]; got != want {
				t.Errorf("%s: %d %q records, want %d (the load's %s)", topic, got, op, want, table)
			}
		}
	}
}

// TestDemo runs the demo's whole flow with a one-second load against a
// freshly built mooncdc: every op must reach Kafka, the records must replay
// into the tables' rows, and mooncdc must stop cleanly on SIGTERM. It needs
// the Postgres server binaries and a free 127.0.0.1:9092.
func TestDemo(t *testing.T) {
	res, out := runDemo(t, options{})
	checkResult(t, res, out)
	if !strings.Contains(out, "JSON records") {
		t.Error("the demo does not say its records are JSON")
	}
}

// TestDemoAvro runs the demo with -avro and no -registry: mooncdc writes
// Avro with its schemas in the in-process registry stand-in, and the
// demo's consumer decodes them through that registry for its replay check.
func TestDemoAvro(t *testing.T) {
	res, out := runDemo(t, options{Avro: true})
	checkResult(t, res, out)
	for _, want := range []string{"Avro records", "Schema Registry stand-in", "demo.public.orders-value"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	// A decimal decoded from Avro is shown as a number, not as bytes.
	if !regexp.MustCompile(`"amount":\d+\.\d\d[,}]`).MatchString(out) {
		t.Error("no order amount shown as a decimal number")
	}
}

// TestConfigs checks that the config the demo writes and the example it
// prints are valid mooncdc configs.
func TestConfigs(t *testing.T) {
	dir := t.TempDir()
	demo, err := writeConfig(dir, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "127.0.0.1:9187", "")
	if err != nil {
		t.Fatal(err)
	}
	avroDir := t.TempDir()
	avro, err := writeConfig(avroDir, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "127.0.0.1:9187", "http://127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(dir, "example.yaml")
	if err := os.WriteFile(example, []byte(exampleConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{demo, avro, example} {
		cfg, err := config.LoadConfig(path, nil)
		if err == nil {
			cfg.ApplyDefaults()
			err = cfg.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
	cfg, _ := config.LoadConfig(demo, nil)
	if !cfg.EmbeddedKafka() || cfg.Name != topicPrefix || cfg.Log.Format != "console" || cfg.Format.Value != config.FormatJSON {
		t.Errorf("demo config: embedded Kafka %v, name %q, log format %q, value format %q", cfg.EmbeddedKafka(), cfg.Name, cfg.Log.Format, cfg.Format.Value)
	}
	cfg, _ = config.LoadConfig(avro, nil)
	if f := cfg.Format; f.Key != config.FormatAvro || f.Value != config.FormatAvro || f.SchemaRegistry.URL != "http://127.0.0.1:8081" {
		t.Errorf("Avro demo config: key %q, value %q, registry %q", f.Key, f.Value, f.SchemaRegistry.URL)
	}
}
