package snapshot

import (
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/record"
)

// TestPrefetchLeavesRegistryConnectionsToTheCopies: the registry client
// owns its concurrency (registryConns, the connections it reuses) and the
// prefetch takes its share of it, leaving four for a copy's or the
// stream's requests beside it. The values are those of before the
// registry stopped naming the prefetch (16 requests at once, 20 idle
// connections per host).
func TestPrefetchLeavesRegistryConnectionsToTheCopies(t *testing.T) {
	if prefetchInFlight != 16 || record.RegistryConns != 20 {
		t.Errorf("prefetchInFlight = %d, registryConns = %d; want 16 and 20", prefetchInFlight, record.RegistryConns)
	}
	if prefetchInFlight >= record.RegistryConns {
		t.Errorf("the prefetch's %d requests at once take every one of the registry's %d reused connections", prefetchInFlight, record.RegistryConns)
	}
}
