package connector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/schema"
)

// The prefetch's registration of a run's schemas, bounded and shared with
// the copies, against the Schema Registry stand-in, without Postgres or
// Kafka (the integration test is TestSnapshotRunRegistersEachSubjectOnceAheadOfItsCopies,
// snapshot_registry_test.go).

// keyedRelation is public.<table> (id int4 key, v text).
func keyedRelation(oid uint32, table string) *schema.Relation {
	rel := testRelation(oid, table)
	setKey(rel, []string{"id"})
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
			in <- describedTable{name: "public." + name, topic: "shop.public." + name, plan: schema.NewPlan(f.enc, keyedRelation(uint32(1000+i), name))}
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
	c := f.codec()
	for i := range tables {
		name := fmt.Sprintf("t%03d", i)
		if err := c.prepare(context.Background(), "shop.public."+name, schema.NewPlan(f.enc, keyedRelation(uint32(1000+i), name))); err != nil {
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
