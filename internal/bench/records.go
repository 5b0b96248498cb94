package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file reads back from the broker what the benchmarks check: record
// counts, a topic's first record, a table's phase in the offsets topic.

// tablePhase reads the table's phase from the offsets topic.
func tablePhase(ctx context.Context, addr, name, table string) (offsets.Table, bool, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return offsets.Table{}, false, err
	}
	defer cl.Close()
	st, err := offsets.Load(ctx, cl, config.DefaultOffsetsTopic, name)
	if err != nil {
		return offsets.Table{}, false, err
	}
	t, ok := st.Tables[table]
	return t, ok, nil
}

// firstRecord returns the topic's first record (to show a record's size).
func firstRecord(ctx context.Context, addr, topic string) (*kgo.Record, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	fs := cl.PollRecords(ctx, 1)
	if errs := fs.Errors(); len(errs) > 0 {
		return nil, errs[0].Err
	}
	recs := fs.Records()
	if len(recs) == 0 {
		return nil, fmt.Errorf("no record in %s", topic)
	}
	return recs[0], nil
}

// recordCount returns the number of records in topic: the sum over its
// partitions of end offset minus start offset.
func recordCount(ctx context.Context, addr, topic string) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	var n int64
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s/%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		n += o.Offset
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok && s.Err == nil {
			n -= s.Offset
		}
	})
	if len(ends) == 0 {
		errs = append(errs, fmt.Errorf("topic %s does not exist", topic))
	}
	return n, errors.Join(errs...)
}

// committedCount counts the records of topic a read_committed consumer
// sees (offsets would count transaction markers too). It stops when no
// record came for a second after want were seen, or for 5 s at all.
func committedCount(ctx context.Context, addr, topic string, want int64) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	last := time.Now()
	for {
		quiet := 5 * time.Second
		if n >= want {
			quiet = time.Second
		}
		if time.Since(last) > quiet {
			return n, nil
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		got := int64(fs.NumRecords())
		if got > 0 {
			n += got
			last = time.Now()
		}
	}
}
