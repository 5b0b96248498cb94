package connector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keySet holds the keys that are live in a table's topic before a copy: a
// key the new snapshot does not have again gets a tombstone at the end of
// the copy, so that compaction cannot keep a row the table no longer has
// (Kafka cannot drop a table). Safe for concurrent use.
type keySet struct {
	mu     sync.Mutex
	keys   map[string]struct{}
	active bool // keys was not empty when the copy started; set before it
}

func (s *keySet) remove(key []byte) {
	if !s.active {
		return
	}
	s.mu.Lock()
	delete(s.keys, string(key))
	s.mu.Unlock()
}

// liveKeys reads topic from the start to its end and returns the keys
// whose last record is not a tombstone. While a table is being copied the
// main worker emits none of its changes, so the topic does not move
// underneath.
func liveKeys(ctx context.Context, brokers []string, topic string) (*keySet, error) {
	set := &keySet{keys: map[string]struct{}{}}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(kadm.WithAuthorizedOps(ctx), topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if err := ends.Error(); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	if len(want) > 0 {
		// A partition whose records were all deleted (retention,
		// DeleteRecords) has start == end: nothing to read there.
		starts, err := adm.ListStartOffsets(kadm.WithAuthorizedOps(ctx), topic)
		if err != nil {
			return nil, fmt.Errorf("start offsets of %s: %w", topic, err)
		}
		starts.Each(func(o kadm.ListedOffset) {
			if end, ok := want[o.Partition]; ok && o.Err == nil && o.Offset >= end {
				delete(want, o.Partition)
			}
		})
	}
	if len(want) == 0 {
		return set, nil
	}
	parts := map[int32]kgo.Offset{}
	for p := range want {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read keys of %s: %w", topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("read keys of %s: %w", topic, ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				delete(set.keys, string(r.Key))
			} else if r.Key != nil {
				set.keys[string(r.Key)] = struct{}{}
			}
		})
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			end, ok := want[p.Partition]
			if !ok {
				return
			}
			// Done once the records read reach the end as of the start
			// (compaction may have removed the offsets just before it).
			if n := len(p.Records); n > 0 && p.Records[n-1].Offset+1 >= end {
				delete(want, p.Partition)
			} else if n == 0 && p.Err == nil && p.HighWatermark >= end && p.LogStartOffset >= end {
				delete(want, p.Partition)
			}
		})
	}
	set.active = len(set.keys) > 0
	return set, nil
}
