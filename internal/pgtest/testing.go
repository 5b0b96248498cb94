package pgtest

import "testing"

// New starts a cluster for a test or benchmark and closes it in t.Cleanup.
// Each opt edits the Options before Start. If the cluster cannot start, New
// calls t.Fatalf with the reason, which includes how to install missing
// binaries; it never skips. When the test has failed, the cleanup logs the
// end of the server log. Call New from the test's goroutine.
//
// Under go test -short (make test-unit: the unit tests alone) New skips the
// test, which is an integration test; make test runs it.
func New(t testing.TB, opts ...func(*Options)) *Cluster {
	t.Helper()
	SkipIntegrationInShort(t)
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	c, err := Start(t.Context(), o)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("end of the server log of the cluster on port %d:\n%s", c.Port(), c.logTail())
		}
		if err := c.Close(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return c
}

// SkipIntegrationInShort skips t under go test -short: make test-unit runs
// the unit tests only (no Postgres, no Kafka), make test runs everything
// and never passes -short.
func SkipIntegrationInShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (a Postgres cluster or a Kafka broker): -short (make test-unit) leaves it out; make test runs it")
	}
}
