package snapshot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/offsets"
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
// whose last record is not a tombstone, and the end offsets it read to.
// While a table is being copied the main worker emits none of its changes,
// so the topic does not move underneath.
//
// With before (a resumed copy's mark, copy_resume.go), a key with a
// record at or past before's offset for its partition (0 for a partition
// it lacks) is not returned: the copy wrote it.
func liveKeys(ctx context.Context, kafka []kgo.Opt, topic string, before map[int32]int64) (*keySet, map[int32]int64, error) {
	set := &keySet{keys: map[string]struct{}{}}
	cl, err := kgo.NewClient(append(slices.Clip(kafka), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(kadm.WithAuthorizedOps(ctx), topic)
	if err != nil {
		return nil, nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	want, read := map[int32]int64{}, map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			read[o.Partition] = o.Offset
		}
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	if err := ends.Error(); err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	if len(want) > 0 {
		// A partition whose records were all deleted (retention,
		// DeleteRecords) has start == end: nothing to read there.
		starts, err := adm.ListStartOffsets(kadm.WithAuthorizedOps(ctx), topic)
		if err != nil {
			return nil, nil, fmt.Errorf("start offsets of %s: %w", topic, err)
		}
		starts.Each(func(o kadm.ListedOffset) {
			if end, ok := want[o.Partition]; ok && o.Err == nil && o.Offset >= end {
				delete(want, o.Partition)
			}
		})
	}
	if len(want) == 0 {
		return set, read, nil
	}
	// Read with offsets.ReadCommitted, not a consumer: in exactly-once
	// mode every partition ends with a transaction marker (or aborted
	// records) that a consumer skips silently, so it could not tell that
	// it reached the end.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for p := range want {
		mark, marked := before[p]
		err := offsets.ReadCommitted(ctx, cl, topic, p, func(r *kgo.Record) error {
			if before != nil && (!marked || r.Offset >= mark) {
				// Written by the resumed copy (its rows or changes): not
				// stale, whatever it says.
				delete(set.keys, string(r.Key))
				return nil
			}
			if r.Value == nil {
				delete(set.keys, string(r.Key))
			} else if r.Key != nil {
				set.keys[string(r.Key)] = struct{}{}
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read keys of %s: %w", topic, err)
		}
	}
	set.active = len(set.keys) > 0
	return set, read, nil
}
