package ittest

import (
	"context"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// ConsumeRaw returns the values (payloads) of topic's first n records,
// tombstones left out.
func ConsumeRaw(t *testing.T, e *Env, n int, topic string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, e.Kafka, n, topic)
	if n >= 0 && len(recs) < n {
		t.Fatalf("consumed %d records of %d expected from %s", len(recs), n, topic)
	}
	var out [][]byte
	for _, r := range recs {
		if r = UnwrapConnect(t, r); r.Value != nil {
			out = append(out, r.Value)
		}
	}
	return out
}
