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

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/offsets"
)

// keySet holds the keys that are live in a table's topics before a copy
// (its own, and those its transform chain routes its records to): a key
// the new snapshot does not write again to the topic it was read from gets
// a tombstone there at the end of the copy, so that compaction cannot keep
// a row the table no longer has (Kafka cannot drop a table). Safe for
// concurrent use.
type keySet struct {
	mu     sync.Mutex
	keys   map[topicKey]struct{}
	active bool // keys was not empty when the copy started; set before it
}

// topicKey is a key as written (its bytes) in the topic it was read from:
// a tombstone removes exactly that one under compaction.
type topicKey struct{ topic, key string }

func newKeySet() *keySet { return &keySet{keys: map[topicKey]struct{}{}} }

func (s *keySet) remove(topic string, key []byte) {
	if !s.active {
		return
	}
	s.mu.Lock()
	delete(s.keys, topicKey{topic, string(key)})
	s.mu.Unlock()
}

// add reads topic's live keys into s (liveKeys).
func (s *keySet) add(ctx context.Context, kafka []kgo.Opt, topic string, before map[int32]int64) (map[int32]int64, error) {
	more, ends, err := liveKeys(ctx, kafka, topic, before)
	if err != nil {
		return nil, err
	}
	for k := range more.keys {
		s.keys[k] = struct{}{}
	}
	s.active = len(s.keys) > 0
	return ends, nil
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
	set := newKeySet()
	read, err := scanKeys(ctx, kafka, topic, nil, func(r *kgo.Record) error {
		if before != nil && pastMark(before, r) {
			// Written by the resumed copy (its rows or changes): not
			// stale, whatever it says.
			delete(set.keys, topicKey{topic, string(r.Key)})
			return nil
		}
		if r.Value == nil {
			delete(set.keys, topicKey{topic, string(r.Key)})
		} else if r.Key != nil {
			set.keys[topicKey{topic, string(r.Key)}] = struct{}{}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	set.active = len(set.keys) > 0
	return set, read, nil
}

// pastMark reports whether r is at or past mark's offset for its
// partition (0 for a partition mark lacks).
func pastMark(mark map[int32]int64, r *kgo.Record) bool {
	o, ok := mark[r.Partition]
	return !ok || r.Offset >= o
}

// scanKeys reads topic from the start to its end, or to upTo's offset
// for each partition when upTo is not nil (none of a partition it lacks),
// read_committed; it calls see with each record in offset order by
// partition (an error from it ends the read with that error), and returns
// the end offsets it read to (0 for an empty partition). It is the
// blocking copy's read of the keys (liveKeys) and the incremental
// snapshot's (incremental_stale.go).
func scanKeys(ctx context.Context, kafka []kgo.Opt, topic string, upTo map[int32]int64, see func(*kgo.Record) error) (map[int32]int64, error) {
	cl, err := kgo.NewClient(append(slices.Clip(kafka), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(kadm.WithAuthorizedOps(ctx), topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	want, read := map[int32]int64{}, map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		end := o.Offset
		if upTo != nil {
			end = min(end, upTo[o.Partition])
		}
		read[o.Partition] = end
		if end > 0 {
			want[o.Partition] = end
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
		return read, nil
	}
	// Read with offsets.ReadCommitted, not a consumer: in exactly-once
	// mode every partition ends with a transaction marker (or aborted
	// records) that a consumer skips silently, so it could not tell that
	// it reached the end.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for p, end := range want {
		err := offsets.ReadCommitted(ctx, cl, topic, p, func(r *kgo.Record) error {
			if r.Offset >= end {
				return errReadEnough
			}
			return see(r)
		})
		if err != nil && !errors.Is(err, errReadEnough) {
			return nil, fmt.Errorf("read keys of %s: %w", topic, err)
		}
	}
	return read, nil
}

// errReadEnough ends scanKeys's read of a partition at its upTo offset.
var errReadEnough = errors.New("read to the offset asked")

// staleTopics returns the topics a table whose own topic is topic has its
// records in, so its stale keys are read there: topic alone without a
// transform chain, else every topic the chain can route its records to
// (transform.Chain.Topics; topic first), or the *transform.RouteError
// when they cannot be listed.
func (c *copier) staleTopics(topic string) ([]string, error) {
	return chainTopics(c.formats.Chain(), topic)
}

func chainTopics(ch *transform.Chain, topic string) ([]string, error) {
	if ch == nil {
		return []string{topic}, nil
	}
	topics, err := ch.Topics(topic)
	if err != nil {
		return []string{topic}, err
	}
	return topics, nil
}
