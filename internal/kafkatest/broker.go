package kafkatest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Broker is a one-broker kfake cluster running inside the test process.
type Broker struct {
	c    *kfake.Cluster
	addr string
}

// New starts a one-broker kfake cluster listening on 127.0.0.1 on a free
// port and closes it when the test ends. opts are applied after the
// defaults, so they may override them (kfake.NumBrokers or kfake.Ports would
// make Addr name only the first broker). It does not block beyond binding
// the listener; the broker answers requests as soon as New returns.
func New(t testing.TB, opts ...kfake.Opt) *Broker {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (a Kafka broker): -short (make test-unit) leaves it out; make test runs it")
	}
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("kafkatest: start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return &Broker{c: c, addr: c.ListenAddrs()[0]}
}

// Addr returns the broker's "127.0.0.1:PORT".
func (b *Broker) Addr() string { return b.addr }

// Cluster returns the kfake cluster, for fault injection (ControlKey),
// compaction (Compact) and the like.
func (b *Broker) Cluster() *kfake.Cluster { return b.c }

// Client returns a kgo client seeded at Addr and closed when the test ends
// (before the broker, as cleanups run last-in first-out). opts are appended
// to the seed option.
func (b *Broker) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, b.addr, opts...)
}

func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatalf("kafkatest: new client for %s: %v", addr, err)
	}
	t.Cleanup(cl.Close)
	return cl
}
