package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
)

// TestDemo runs the demo's whole flow with a one-second load against a
// freshly built mooncdc: every op must reach Kafka, the records must replay
// into the tables' rows, and mooncdc must stop cleanly on SIGTERM. It needs
// the Postgres server binaries and a free 127.0.0.1:9092.
func TestDemo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mooncdc")
	build := exec.Command("go", "build", "-o", bin, "github.com/mooncdc/mooncdc/cmd/mooncdc")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build mooncdc: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	defer func() {
		if t.Failed() {
			t.Logf("demo output:\n%s", out.String())
		}
	}()
	res, err := run(ctx, options{Binary: bin, Load: time.Second, Samples: 2, Out: &out})
	if err != nil {
		t.Fatalf("demo: %v", err)
	}

	if res.ExitCode != 0 {
		t.Errorf("mooncdc exit code %d, want 0", res.ExitCode)
	}
	if res.Records != res.Expected {
		t.Errorf("read %d records, want %d (one per change, plus a tombstone per delete)", res.Records, res.Expected)
	}
	if !res.Replayed {
		t.Error("the records do not replay into the tables' rows")
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

// TestConfigs checks that the config the demo writes and the example it
// prints are valid mooncdc configs.
func TestConfigs(t *testing.T) {
	dir := t.TempDir()
	demo, err := writeConfig(dir, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "127.0.0.1:9187")
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(dir, "example.yaml")
	if err := os.WriteFile(example, []byte(exampleConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{demo, example} {
		cfg, err := connector.LoadConfig(path, nil)
		if err == nil {
			cfg.ApplyDefaults()
			err = cfg.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
	cfg, _ := connector.LoadConfig(demo, nil)
	if !cfg.EmbeddedKafka() || cfg.Name != topicPrefix || cfg.Log.Format != "console" {
		t.Errorf("demo config: embedded Kafka %v, name %q, log format %q", cfg.EmbeddedKafka(), cfg.Name, cfg.Log.Format)
	}
}
