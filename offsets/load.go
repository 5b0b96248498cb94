package offsets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Load reads partition 0 of topic from its start up to its high watermark
// as of the call, read_committed, and applies every record with Decode in
// log order, so the last value per key wins and tombstones delete. A
// missing or empty topic gives an empty State (nil Pipeline, empty Tables)
// and no error; Load never creates the topic: call EnsureTopic first. A
// malformed record of name stops the load with a *MalformedError carrying
// its offset.
//
// The end is the high watermark, not the last stable offset (LSO): records
// above a transaction that is still open are withheld by the broker, and
// stopping at the LSO would return state older than what is committed
// above it (a writer of another connector name sharing the topic, or our
// own previous instance, crashed mid-transaction). So Load waits until such
// a transaction ends: committed, aborted by the coordinator after
// transaction.timeout.ms, or aborted at once when its transactional ID is
// fenced. In exactly-once mode the caller must therefore fence first (init
// its transactional producer, which aborts the previous instance's open
// transaction) and Load after: that both avoids the wait and keeps a zombie
// instance from committing offsets after Load has read them. If ctx ends
// while Load waits, the error says which offset holds it back.
//
// Load issues Fetch requests itself instead of consuming through cl: only
// a fetch response says how far read_committed reading has got past
// aborted records and transaction markers, which a consumer skips silently.
// So cl's consumer configuration does not matter and is left untouched;
// cl may be the connector's producer client. Load blocks, retrying
// connection trouble and leader moves until ctx ends; it is safe to call
// concurrently with other use of cl.
func Load(ctx context.Context, cl *kgo.Client, topic, name string) (State, error) {
	st := State{Tables: make(map[string]Table)}
	err := ReadCommitted(ctx, cl, topic, 0, func(r *kgo.Record) error {
		if err := Decode(name, r.Key, r.Value, &st); err != nil {
			var me *MalformedError
			if errors.As(err, &me) {
				me.Offset = r.Offset
			}
			return err
		}
		return nil
	})
	if err != nil {
		return State{}, fmt.Errorf("load offsets topic %q: %w", topic, err)
	}
	return st, nil
}

// ReadCommitted reads one partition of topic from its start up to its high
// watermark as of the call, read_committed, calling fn for each record in
// log order (an error of fn stops the read and is returned). A missing
// topic or partition reads as empty. It knows when it is done even when
// the partition ends with aborted records or transaction markers, which a
// consumer skips silently (see Load for why it waits for open
// transactions, and how it blocks and retries).
func ReadCommitted(ctx context.Context, cl *kgo.Client, topic string, partition int32, fn func(*kgo.Record) error) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("partition %d: "+format, append([]any{partition}, args...)...)
	}
	adm := kadm.NewClient(cl)

	ends, err := adm.ListEndOffsets(fresh(ctx), topic)
	if err != nil {
		return fail("list end offset: %w", err)
	}
	listed, ok := ends.Lookup(topic, partition)
	switch {
	case !ok, errors.Is(listed.Err, kerr.UnknownTopicOrPartition):
		return nil // missing
	case listed.Err != nil:
		return fail("list end offset: %w", listed.Err)
	}
	end := listed.Offset

	var (
		next       int64 // next offset to fetch
		leader     int32 = -1
		topicID    [16]byte
		lso        int64 = -1 // last stable offset from the latest fetch
		decompress       = kgo.DefaultDecompressor()
	)
	for next < end {
		if leader < 0 {
			details, err := adm.ListTopics(fresh(ctx), topic)
			if err != nil {
				return fail("find the leader: %w", err)
			}
			td := details[topic]
			if td.Err != nil {
				return fail("find the leader: %w", td.Err)
			}
			p, ok := td.Partitions[partition]
			if ok && p.Err == nil && p.Leader >= 0 {
				leader, topicID = p.Leader, td.ID
			}
		}
		if leader >= 0 {
			fp, nextOffset, err := fetch(ctx, cl, leader, topic, topicID, partition, next, decompress)
			switch {
			case err != nil && ctx.Err() == nil:
				leader = -1 // connection trouble or a moved leader: look again
			case err != nil:
			case errors.Is(fp.Err, kerr.OffsetOutOfRange):
				// Records below the log start were deleted
				// (DeleteRecords; compaction alone never moves
				// it): nothing there to read, go on from it.
				starts, err := adm.ListStartOffsets(fresh(ctx), topic)
				if err != nil {
					return fail("list start offset after OFFSET_OUT_OF_RANGE at %d: %w", next, err)
				}
				if start, ok := starts.Lookup(topic, partition); ok && start.Err == nil && start.Offset > next {
					next = start.Offset
					continue
				}
				return fail("fetch at offset %d: %w", next, fp.Err)
			case fp.Err != nil && kerr.IsRetriable(fp.Err):
				leader = -1
			case fp.Err != nil:
				return fail("fetch at offset %d: %w", next, fp.Err)
			default:
				lso = fp.LastStableOffset
				for _, r := range fp.Records {
					if r.Offset >= end {
						break // written after the call
					}
					if err := fn(r); err != nil {
						return err
					}
				}
				if nextOffset > next {
					next = nextOffset
					continue
				}
				// No progress: the broker held the fetch for its
				// max wait because an open transaction pins the
				// LSO at next.
			}
		}
		if err := ctx.Err(); err != nil {
			if lso >= 0 && lso < end {
				return fail("read to offset %d of end offset %d: a transaction open since offset %d has not ended (a producer crashed mid-transaction? it ends when fenced or after transaction.timeout.ms): %w", next, end, lso, err)
			}
			return fail("read to offset %d of end offset %d: %w", next, end, err)
		}
		sleep(ctx, 50*time.Millisecond) // no progress this round
	}
	return nil
}

// fetch issues one read_committed Fetch for partition of topic at offset
// to the leader and decodes the answer. It returns the records, the
// partition-level error and offsets, and the offset to fetch next, which
// moves past aborted records and transaction markers too. It waits up to
// half a second for data when there is none to return.
func fetch(ctx context.Context, cl *kgo.Client, leader int32, topic string, topicID [16]byte, partition int32, offset int64, decompress kgo.Decompressor) (kgo.FetchPartition, int64, error) {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = 500
	req.MinBytes = 1
	req.MaxBytes = 16 << 20
	req.IsolationLevel = 1 // read_committed
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID // by name before v13, by ID after
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = partition
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 8 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	kresp, err := cl.Broker(int(leader)).RetriableRequest(ctx, req)
	if err != nil {
		return kgo.FetchPartition{}, offset, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return kgo.FetchPartition{}, offset, err
	}
	for _, t := range resp.Topics {
		for i := range t.Partitions {
			if t.Partitions[i].Partition != partition {
				continue
			}
			fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
				Offset:         offset,
				IsolationLevel: kgo.ReadCommitted(),
				Topic:          topic,
				Partition:      partition,
			}, &t.Partitions[i], decompress, nil)
			return fp, next, nil
		}
	}
	return kgo.FetchPartition{}, offset, fmt.Errorf("fetch response without partition %d", partition)
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}
