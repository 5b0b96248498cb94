package delivery

// This file holds the producer's partitioner when outbox events may name
// their partition (format.outbox.table_fields_additional_placement with
// column:partition): such a record goes to the partition it names, as
// Debezium's EventRouter sets the SourceRecord's kafkaPartition
// (EventRouterDelegate.java:190-211, 233-241); every other record is
// partitioned by franz-go's default, which hashes a key as Kafka's
// producer does. Without a partition placement the pipeline keeps
// franz-go's default partitioner itself: the seam is chosen once, in
// producerOpts.

import "github.com/twmb/franz-go/pkg/kgo"

// A placed record carries its partition p as -(p+2) in Record.Partition
// until the partitioner reads it: every record mooncdc produces is built
// fresh with Partition 0 (which franz-go leaves to its partitioner), and
// franz-go overwrites the field with the partition chosen, so a promise
// sees the real one.
func PlacePartition(r *kgo.Record, p int32) { r.Partition = -(p + 2) }

// placedPartition is the partition placePartition gave r, if any.
func placedPartition(r *kgo.Record) (int, bool) {
	if r.Partition <= -2 {
		return int(-r.Partition - 2), true
	}
	return 0, false
}

// PlacingPartitioner partitions placed records by their partition and
// the others as franz-go's default partitioner does (the documented
// default, UniformBytesPartitioner(64 KiB, adaptive, keys, Kafka's
// murmur2), whose topic partitioners partition by backup and have no
// OnNewBatch: placingTopic keeps that shape, so franz-go treats the
// unplaced records exactly as it would without it).
func PlacingPartitioner() kgo.Partitioner {
	return placing{kgo.UniformBytesPartitioner(64<<10, true, true, nil)}
}

type placing struct{ inner kgo.Partitioner }

func (p placing) ForTopic(topic string) kgo.TopicPartitioner {
	return &placingTopic{p.inner.ForTopic(topic).(kgo.TopicBackupPartitioner)}
}

type placingTopic struct{ inner kgo.TopicBackupPartitioner }

// RequiresConsistency is true for a placed record: franz-go then picks
// among all of the topic's partitions, so the index is the partition. A
// placed partition past the last is refused before producing
// (topicMaker.ensureEvent).
func (t *placingTopic) RequiresConsistency(r *kgo.Record) bool {
	if _, ok := placedPartition(r); ok {
		return true
	}
	return t.inner.RequiresConsistency(r)
}

// Partition is never called: franz-go calls PartitionByBackup when a
// partitioner has it.
func (t *placingTopic) Partition(r *kgo.Record, n int) int {
	if p, ok := placedPartition(r); ok {
		return p
	}
	return t.inner.Partition(r, n)
}

func (t *placingTopic) PartitionByBackup(r *kgo.Record, n int, it kgo.TopicBackupIter) int {
	if p, ok := placedPartition(r); ok {
		return p
	}
	return t.inner.PartitionByBackup(r, n, it)
}
