package connector_test

import (
	"testing"

	"github.com/mooncdc/mooncdc/connector"
)

// TestFullBatchesFitTheBrokersDefaultLimit: a burst of small records fills
// producer batches to their maximum size, which must stay within the
// brokers' default message.max.bytes (1048588) whatever
// kafka.max_record_bytes is at its default.
func TestFullBatchesFitTheBrokersDefaultLimit(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE public.burst (id int PRIMARY KEY, v text)`)
	cfg := e.config("burst", "public.burst")
	cfg.Snapshot.Mode = connector.SnapshotNever
	r := startStreaming(t, cfg)
	const rows = 30000
	e.exec(`INSERT INTO burst SELECT i, repeat(md5(i::text), 6) FROM generate_series(1, $1) i`, rows)
	if evs := consume(t, e.kafka, rows, "burst.public.burst"); len(evs) < rows {
		t.Fatalf("%d records, want %d", len(evs), rows)
	}
	if err := r.stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
