package snapshot

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/schema"
)

// The prefetch's registration of a run's schemas, bounded and shared with
// the copies, against the Schema Registry stand-in, without Postgres or
// Kafka (the integration test is TestSnapshotRunRegistersEachSubjectOnceAheadOfItsCopies,
// snapshot_registry_test.go).

// keyedRelation is public.<table> (id int4 key, v text).
func keyedRelation(oid uint32, table string) *schema.Relation {
	rel := &schema.Relation{OID: oid, Schema: "public", Table: table, ReplicaIdentity: 'd', Columns: []schema.Column{
		{Name: "id", TypeOID: 23, TypeMod: -1}, {Name: "v", TypeOID: 25, TypeMod: -1}}}
	record.SetKey(rel, []string{"id"})
	return rel
}

// TestPrefetchRegistersManyTablesAtOnceAndTheCopiesFindThem: the prefetch
// registers a run's tables inFlight at once (never more), each subject
// once, and a copy's codec then registers nothing.
func TestPrefetchRegistersManyTablesAtOnceAndTheCopiesFindThem(t *testing.T) {
	reg := srtest.New(t, srtest.WithLatency(20*time.Millisecond))
	f := avroTestFormats(t, reg)
	const tables, inFlight = 100, 16
	in := make(chan describedTable)
	go func() {
		defer close(in)
		for i := range tables {
			name := fmt.Sprintf("t%03d", i)
			in <- describedTable{name: "public." + name, topic: "shop.public." + name, plan: schema.NewPlan(f.SchemaConfig(), keyedRelation(uint32(1000+i), name))}
		}
	}()
	start := time.Now()
	if n := registerSchemas(context.Background(), f, in, inFlight, zap.NewNop()); n != tables {
		t.Fatalf("registered %d tables, want %d", n, tables)
	}
	took := time.Since(start)
	if got := reg.MaxInFlight(); got > inFlight || got < inFlight/2 {
		t.Fatalf("at most %d requests served at once, want up to %d and at least %d", got, inFlight, inFlight/2)
	}
	if n := reg.Requests(srtest.EndpointRegister); n != 2*tables {
		t.Fatalf("%d register requests for %d tables' key and value, want %d", n, tables, 2*tables)
	}
	t.Logf("%d tables' schemas registered in %s, %d requests at once (one after the other: ≥ %s)", tables, took, reg.MaxInFlight(), 2*tables*20*time.Millisecond)

	reg.ResetRequests()
	c := f.Codec()
	for i := range tables {
		name := fmt.Sprintf("t%03d", i)
		if err := c.Prepare(context.Background(), "shop.public."+name, schema.NewPlan(f.SchemaConfig(), keyedRelation(uint32(1000+i), name))); err != nil {
			t.Fatal(err)
		}
	}
	if n := reg.TotalRequests(); n != 0 {
		t.Fatalf("the copies' codec sent %d requests after the prefetch, want 0", n)
	}
	for _, s := range reg.Subjects() {
		if vs := reg.Versions(s); len(vs) != 1 {
			t.Errorf("subject %s has versions %v, want one", s, vs)
		}
	}
}

// avroTestFormats is Avro keys and values under topic prefix "shop",
// registered in reg.
func avroTestFormats(t *testing.T, reg *srtest.Registry) *record.Formats {
	t.Helper()
	return avroTestFormatsWith(t, reg, func(*schema.Config) {})
}

// avroTestFormatsWith is avroTestFormats with the encoders' settings as
// edit leaves them.
func avroTestFormatsWith(t *testing.T, reg *srtest.Registry, edit func(*schema.Config)) *record.Formats {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
	cfg.Format.SchemaRegistry.URL = reg.URL()
	cfg.ApplyDefaults()
	cfg.Kafka.TopicPrefix = "shop"
	naming, err := cfg.TopicNaming()
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	enc := record.EncoderConfig(&cfg, "shop", naming, nil, nil)
	edit(&enc)
	return record.NewFormats(cfg.Format, enc, r, naming, int(cfg.Kafka.MaxRecordBytes), zap.NewNop())
}
