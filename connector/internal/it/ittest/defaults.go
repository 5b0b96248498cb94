package ittest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// ReadRaw reads n records of topic as they are, within 90 s.
func ReadRaw(t *testing.T, addr string, n int, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	recs := kafkatest.ReadAll(ctx, t, addr, n, topic)
	if len(recs) < n {
		t.Fatalf("read %d records of %d from %s", len(recs), n, topic)
	}
	return recs
}
