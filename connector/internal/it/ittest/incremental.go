package ittest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

// LoadOffsets reads the pipeline cfg.Name's offsets as the next start
// would.
func LoadOffsets(t *testing.T, e *Env, cfg config.Config) offsets.State {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := offsets.Load(ctx, cl, cfg.Kafka.OffsetsTopic, cfg.Name)
	if err != nil {
		t.Fatalf("load offsets: %v", err)
	}
	return st
}

// RequestIncremental asks for an incremental snapshot of tables as
// `mooncdc resnapshot --incremental` does: a request record in the
// offsets topic, which a running pipeline tails.
func RequestIncremental(t *testing.T, e *Env, cfg config.Config, tables ...string) {
	t.Helper()
	st := LoadOffsets(t, e, cfg)
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := connector.RequestIncrementalSnapshot(ctx, cl, &cfg, tables, st.Tables, time.Now()); err != nil {
		t.Fatalf("request an incremental snapshot: %v", err)
	}
}
