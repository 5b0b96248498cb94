package delivery

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file holds the offsets records the commands write from outside a
// pipeline (`mooncdc reset`, `mooncdc resnapshot`), and how they are
// written: through the command's own client, every record acknowledged
// before the command says it is done.

// Deletes returns the tombstones `mooncdc reset` writes: the pipeline's
// record (pipeline) and the records of tables.
func (r Records) Deletes(pipeline bool, tables []string) []*kgo.Record {
	var recs []*kgo.Record
	if pipeline {
		recs = append(recs, offsets.DeletePipelineRecord(r.Topic, r.Name))
	}
	for _, t := range tables {
		recs = append(recs, offsets.DeleteTableRecord(r.Topic, r.Name, t))
	}
	return recs
}

// Requests returns the records `mooncdc resnapshot` writes: a re-copy
// request (phases.ResnapshotRequest) of each of tables, whose states are
// in known, at now.
func (r Records) Requests(tables []string, known map[string]offsets.Table, now time.Time) []*kgo.Record {
	return r.requests(tables, known, now, phases.ResnapshotRequest)
}

// IncrementalRequests is Requests for incremental snapshots
// (phases.IncrementalRequest).
func (r Records) IncrementalRequests(tables []string, known map[string]offsets.Table, now time.Time) []*kgo.Record {
	return r.requests(tables, known, now, phases.IncrementalRequest)
}

func (r Records) requests(tables []string, known map[string]offsets.Table, now time.Time, req func(string, offsets.Table, int64) offsets.Table) []*kgo.Record {
	nowMs := now.UnixMilli()
	recs := make([]*kgo.Record, 0, len(tables))
	for _, name := range tables {
		recs = append(recs, offsets.TableRecord(r.Topic, r.Name, req(name, known[name], nowMs)))
	}
	return recs
}

// WriteSync writes recs through cl and waits until Kafka acknowledged
// every one; it returns the first error (nil for no records). It blocks.
func WriteSync(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}
