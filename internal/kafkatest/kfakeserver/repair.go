package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// abortOrphanedTransactions writes an abort marker for every transaction
// that a crash left open in the log of the cluster at addr, and returns how
// many partitions it marked.
//
// Why: when kfake reloads a data directory after a crash, it treats
// transactions that were open as aborted (the LSO moves past them) but
// writes no abort marker. Consumers filter aborted records per producer ID:
// an aborted range starts at the fetch response's aborted-transaction entry
// and ends at the producer's next control batch. A transactional producer
// that comes back with the same transactional ID keeps its producer ID, so
// without a marker its whole next transaction, although committed, is
// skipped by every read_committed consumer. Real Kafka never gets there: the
// coordinator writes abort markers when it times out or fences a
// transaction. This restores that.
//
// A transaction is orphaned when its producer's last batch in a partition is
// transactional data not followed by a control batch, and the broker does
// not list the producer as in a transaction on that partition
// (DescribeProducers). The second test keeps transactions that kfake
// restored after a clean shutdown, which are still live.
func abortOrphanedTransactions(ctx context.Context, addr string) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	ends, err := adm.ListEndOffsets(ctx)
	if err != nil {
		return 0, fmt.Errorf("list end offsets: %w", err)
	}
	type tp struct {
		topic string
		part  int32
	}
	type pe struct {
		pid   int64
		epoch int16
	}
	want := make(map[tp]int64) // partition -> high watermark, non-empty partitions only
	consume := make(map[string]map[int32]kgo.Offset)
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset <= 0 {
			return
		}
		want[tp{o.Topic, o.Partition}] = o.Offset
		if consume[o.Topic] == nil {
			consume[o.Topic] = make(map[int32]kgo.Offset)
		}
		consume[o.Topic][o.Partition] = kgo.NewOffset().AtStart()
	})
	if len(want) == 0 {
		return 0, nil
	}

	// Read every partition up to its high watermark, control records
	// included. The last batch of a log is never compacted away, so the
	// record at HWM-1 is always seen.
	reader, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(consume),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return 0, err
	}
	defer reader.Close()
	open := make(map[tp]map[int64]int16) // producers with a transaction open in the log
	for len(want) > 0 {
		fs := reader.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("read logs: %w", err)
		}
		var fetchErr error
		fs.EachError(func(t string, p int32, err error) {
			fetchErr = fmt.Errorf("read %s/%d: %w", t, p, err)
		})
		if fetchErr != nil {
			return 0, fetchErr
		}
		fs.EachRecord(func(r *kgo.Record) {
			k := tp{r.Topic, r.Partition}
			if open[k] == nil {
				open[k] = make(map[int64]int16)
			}
			switch {
			case r.Attrs.IsControl():
				delete(open[k], r.ProducerID)
			case r.Attrs.IsTransactional():
				open[k][r.ProducerID] = r.ProducerEpoch
			}
			if end, ok := want[k]; ok && r.Offset >= end-1 {
				delete(want, k)
			}
		})
	}

	markers := make(map[pe]map[string][]int32)
	for k, pids := range open {
		if len(pids) == 0 {
			continue
		}
		live, err := inTransaction(ctx, cl, k.topic, k.part)
		if err != nil {
			return 0, err
		}
		for pid, epoch := range pids {
			if live[pid] {
				continue
			}
			m := markers[pe{pid, epoch}]
			if m == nil {
				m = make(map[string][]int32)
				markers[pe{pid, epoch}] = m
			}
			m[k.topic] = append(m[k.topic], k.part)
		}
	}
	if len(markers) == 0 {
		return 0, nil
	}

	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for p, topics := range markers {
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = p.pid, p.epoch, false
		for topic, parts := range topics {
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic, mt.Partitions = topic, slices.Sorted(slices.Values(parts))
			m.Topics = append(m.Topics, mt)
		}
		req.Markers = append(req.Markers, m)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("write abort markers: %w", err)
	}
	n := 0
	for _, m := range resp.Markers {
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return n, fmt.Errorf("write abort marker for producer %d on %s/%d: %w", m.ProducerID, t.Topic, p.Partition, err)
				}
				n++
			}
		}
	}
	return n, nil
}

// inTransaction returns the producers the broker has in a live transaction
// on the partition.
func inTransaction(ctx context.Context, cl *kgo.Client, topic string, part int32) (map[int64]bool, error) {
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{part}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describe producers of %s/%d: %w", topic, part, err)
	}
	live := make(map[int64]bool)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("describe producers of %s/%d: %w", topic, part, err)
			}
			for _, ap := range p.ActiveProducers {
				live[ap.ProducerID] = true
			}
		}
	}
	return live, nil
}
