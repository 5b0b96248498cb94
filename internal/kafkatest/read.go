package kafkatest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReadAll reads topics from the start with isolation level read_committed
// until it has seen at least n records in total or, if n < 0, until every
// partition is read up to its last stable offset as of the call (topics
// missing at the call count as empty). It stops early when ctx expires and
// returns what it read, logging the shortfall; it fails t on a non-retryable
// error. Records come back grouped by topic (in argument order) and
// partition (ascending), each partition in offset order.
//
// It uses its own client and issues Fetch requests directly rather than
// consuming: a consumer cannot tell when it has passed the end of a
// partition whose tail is transaction markers or aborted records, which it
// skips without a trace.
func ReadAll(ctx context.Context, t testing.TB, addr string, n int, topics ...string) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatalf("kafkatest: ReadAll: new client: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// Ask the broker, not the client's metadata cache, which would keep
	// "topic does not exist" for up to 5s while we wait for it.
	mctx := kadm.WithAuthorizedOps(ctx)

	type tp struct {
		topic string
		part  int32
	}
	var ends map[tp]int64 // n < 0 only
	if n < 0 {
		listed, err := adm.ListCommittedOffsets(mctx, topics...)
		if err != nil {
			t.Fatalf("kafkatest: ReadAll: list end offsets of %v: %v", topics, err)
		}
		ends = make(map[tp]int64)
		listed.Each(func(o kadm.ListedOffset) {
			switch {
			case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
			case o.Err != nil:
				t.Fatalf("kafkatest: ReadAll: end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
			default:
				ends[tp{o.Topic, o.Partition}] = o.Offset
			}
		})
	}

	next := make(map[tp]int64)
	read := make(map[tp][]*kgo.Record)
	total := 0
	done := func() bool {
		if n >= 0 {
			return total >= n
		}
		for p, end := range ends {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	decompressor := kgo.DefaultDecompressor()

	for !done() && ctx.Err() == nil {
		details, err := adm.ListTopics(mctx, topics...)
		if err != nil {
			if ctx.Err() == nil {
				t.Fatalf("kafkatest: ReadAll: metadata for %v: %v", topics, err)
			}
			break
		}
		names := make(map[[16]byte]string)
		reqs := make(map[int32]*kmsg.FetchRequest) // by leader
		for _, td := range details {
			if td.Err != nil {
				continue // not created yet
			}
			names[td.ID] = td.Topic
			for _, pd := range td.Partitions {
				p := tp{td.Topic, pd.Partition}
				if n < 0 {
					if end, ok := ends[p]; !ok || next[p] >= end {
						continue
					}
				}
				if pd.Err != nil || pd.Leader < 0 {
					continue // no leader right now; next round
				}
				req := reqs[pd.Leader]
				if req == nil {
					req = kmsg.NewPtrFetchRequest()
					req.MaxWaitMillis = 100
					req.MinBytes = 1
					req.IsolationLevel = 1 // read_committed
					reqs[pd.Leader] = req
				}
				if len(req.Topics) == 0 || req.Topics[len(req.Topics)-1].Topic != td.Topic {
					rt := kmsg.NewFetchRequestTopic()
					rt.Topic, rt.TopicID = td.Topic, td.ID
					req.Topics = append(req.Topics, rt)
				}
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition = pd.Partition
				rp.FetchOffset = next[p]
				rp.PartitionMaxBytes = 1 << 20
				rt := &req.Topics[len(req.Topics)-1]
				rt.Partitions = append(rt.Partitions, rp)
			}
		}
		if len(reqs) == 0 {
			sleep(ctx, 20*time.Millisecond)
			continue
		}
		for leader, req := range reqs {
			kresp, err := cl.Broker(int(leader)).RetriableRequest(ctx, req)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				t.Logf("kafkatest: ReadAll: fetch from broker %d: %v (retrying)", leader, err)
				sleep(ctx, 50*time.Millisecond)
				continue
			}
			resp := kresp.(*kmsg.FetchResponse)
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				t.Fatalf("kafkatest: ReadAll: fetch from broker %d: %v", leader, err)
			}
			for _, rt := range resp.Topics {
				topic := rt.Topic
				if topic == "" {
					topic = names[rt.TopicID]
				}
				for i := range rt.Partitions {
					rp := &rt.Partitions[i]
					p := tp{topic, rp.Partition}
					fp, nextOffset := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
						Offset:         next[p],
						IsolationLevel: kgo.ReadCommitted(),
						Topic:          topic,
						Partition:      rp.Partition,
					}, rp, decompressor, nil)
					switch {
					case errors.Is(fp.Err, kerr.OffsetOutOfRange):
						// Deleted below the log start; go on from it.
						starts, err := adm.ListStartOffsets(mctx, topic)
						if start, ok := starts.Lookup(topic, rp.Partition); err == nil && ok && start.Err == nil && start.Offset > next[p] {
							next[p] = start.Offset
							continue
						}
						t.Fatalf("kafkatest: ReadAll: fetch %s/%d at offset %d: %v", topic, rp.Partition, next[p], fp.Err)
					case fp.Err != nil && kerr.IsRetriable(fp.Err):
						continue
					case fp.Err != nil:
						t.Fatalf("kafkatest: ReadAll: fetch %s/%d at offset %d: %v", topic, rp.Partition, next[p], fp.Err)
					}
					for _, r := range fp.Records {
						if n < 0 && r.Offset >= ends[p] {
							break // committed after the call
						}
						read[p] = append(read[p], r)
						total++
					}
					next[p] = nextOffset
				}
			}
		}
	}
	if !done() {
		if n >= 0 {
			t.Logf("kafkatest: ReadAll: %v after %d of %d records from %v", ctx.Err(), total, n, topics)
		} else {
			t.Logf("kafkatest: ReadAll: %v after %d records, before the end of %v", ctx.Err(), total, topics)
		}
	}

	keys := make([]tp, 0, len(read))
	for p := range read {
		keys = append(keys, p)
	}
	slices.SortFunc(keys, func(a, b tp) int {
		if a.topic != b.topic {
			return slices.Index(topics, a.topic) - slices.Index(topics, b.topic)
		}
		return int(a.part - b.part)
	})
	var out []*kgo.Record
	for _, p := range keys {
		out = append(out, read[p]...)
	}
	return out
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
