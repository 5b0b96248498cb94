package record

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// The registry client's shared requests, against the Schema Registry
// stand-in, without Postgres or Kafka.

// avroTestRegistry is the registry client of Avro formats registering in
// reg.
func avroTestRegistry(t *testing.T, reg *srtest.Registry) *Registry {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
	cfg.Format.SchemaRegistry.URL = reg.URL()
	cfg.ApplyDefaults()
	r, err := NewRegistry(cfg.Format.SchemaRegistry, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRegistryCallersOfOneSchemaShareOneRequest: callers asking for the
// same subject and schema while its request is out wait for that request
// instead of sending their own, so a copy that reaches a subject the
// prefetch is registering costs the registry nothing.
func TestRegistryCallersOfOneSchemaShareOneRequest(t *testing.T) {
	reg := srtest.New(t, srtest.WithLatency(100*time.Millisecond))
	r := avroTestRegistry(t, reg)
	const callers = 20
	ids := make([]int, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { ids[i], errs[i] = r.id(context.Background(), "shop.public.t-value", `"string"`) })
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("caller %d: id %d, %v (caller 0: %d)", i, ids[i], errs[i], ids[0])
		}
	}
	if n := reg.Requests(srtest.EndpointRegister); n != 1 {
		t.Fatalf("%d callers of one schema sent %d register requests, want 1", callers, n)
	}
}

// TestRegistryCallerOutlivesTheStoppedCallerItWaitedFor: a caller waiting
// for another's request is not failed by that caller's stop: it sends the
// request itself, at once.
func TestRegistryCallerOutlivesTheStoppedCallerItWaitedFor(t *testing.T) {
	reg := srtest.New(t, srtest.WithLatency(300*time.Millisecond))
	r := avroTestRegistry(t, reg)
	stopped, stop := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := r.id(stopped, "shop.public.t-value", `"string"`)
		first <- err
	}()
	// The second caller joins the first one's request, which then stops.
	for reg.MaxInFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan error, 1)
	go func() {
		_, err := r.id(context.Background(), "shop.public.t-value", `"string"`)
		second <- err
	}()
	time.Sleep(50 * time.Millisecond)
	stop()
	if err := <-first; err == nil {
		t.Fatal("the stopped caller got an id")
	}
	start := time.Now()
	if err := <-second; err != nil {
		t.Fatalf("the waiting caller failed with the other's stop: %v", err)
	}
	// Its own request (300 ms), not a backoff after a failure on top.
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the waiting caller took %s after the stop", took)
	}
	if n := reg.Requests(srtest.EndpointRegister); n != 1 {
		t.Fatalf("register requests served = %d, want 1 (the waiting caller's own)", n)
	}
}
