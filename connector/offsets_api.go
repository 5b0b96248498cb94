package connector

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/offsets"
)

// ResetOffsets deletes connector cfg.Name's offsets records through cl
// (the command's client, with its acks and partitioner): the pipeline's
// record (pipeline) and the records of tables. It blocks until Kafka
// acknowledged every tombstone; an error may leave some written.
func ResetOffsets(ctx context.Context, cl *kgo.Client, cfg *config.Config, pipeline bool, tables []string) error {
	r := delivery.Records{Name: cfg.Name, Topic: cfg.Kafka.OffsetsTopic}
	return delivery.WriteSync(ctx, cl, r.Deletes(pipeline, tables))
}

// RequestResnapshot writes a re-copy request of each of tables (their
// states as loaded are in known) at now through cl, which a running
// pipeline picks up at once and the next start otherwise. It blocks until
// Kafka acknowledged every request.
func RequestResnapshot(ctx context.Context, cl *kgo.Client, cfg *config.Config, tables []string, known map[string]offsets.Table, now time.Time) error {
	r := delivery.Records{Name: cfg.Name, Topic: cfg.Kafka.OffsetsTopic}
	return delivery.WriteSync(ctx, cl, r.Requests(tables, known, now))
}

// RequestIncrementalSnapshot writes, for each of tables, a request for an
// incremental snapshot (docs/incremental-snapshots.md): a ready table
// keeps streaming while its rows are read again in chunks; a table that
// is not ready is set back to init, as RequestResnapshot does. It blocks
// until Kafka acknowledged the records.
func RequestIncrementalSnapshot(ctx context.Context, cl *kgo.Client, cfg *config.Config, tables []string, known map[string]offsets.Table, now time.Time) error {
	r := delivery.Records{Name: cfg.Name, Topic: cfg.Kafka.OffsetsTopic}
	return delivery.WriteSync(ctx, cl, r.IncrementalRequests(tables, known, now))
}
