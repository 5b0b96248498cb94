package ittest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TopicsWithPrefix lists the broker's topics that start with prefix.
func TopicsWithPrefix(t *testing.T, addr, prefix string) []string {
	t.Helper()
	kc, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	cl := kadm.NewClient(kc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := cl.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range td.Names() {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// KeyString renders a JSON key map as k=v pairs in key order.
func KeyString(k map[string]any) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(k)) {
		parts = append(parts, fmt.Sprintf("%s=%v", name, k[name]))
	}
	return strings.Join(parts, ",")
}

// WaitTable waits until table is handed over.
func (r *Running) WaitTable(t *testing.T, table string) {
	t.Helper()
	eventually.Succeeds(t, 60*time.Second, 50*time.Millisecond, func() error {
		if ph := r.P.TablePhases()[table].Phase; ph != "ready" && ph != "catchup" {
			return fmt.Errorf("table %s not handed over after 60s (phase %q)", table, ph)
		}
		return nil
	})
}
