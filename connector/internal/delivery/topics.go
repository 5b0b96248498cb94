package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// TopicMaker creates data topics the first time mooncdc writes to them.
// It is safe for concurrent use (the main worker and copy workers).
type TopicMaker struct {
	mu         sync.Mutex
	adm        *kadm.Client
	partitions int32
	rf         int16
	configs    map[string]*string
	Known      map[string]bool
	counts     map[string]int32 // partitions per topic, read for placed outbox events
}

// NewTopicMaker makes topics with partitions and replication factor rf;
// above Kafka's default, maxRecord sets the topic's max.message.bytes.
func NewTopicMaker(adm *kadm.Client, partitions int32, rf int16, maxRecord int32) *TopicMaker {
	m := &TopicMaker{adm: adm, partitions: partitions, rf: rf, Known: make(map[string]bool)}
	if maxRecord > config.DefaultMaxRecordBytes {
		v := strconv.Itoa(int(maxRecord) + RecordOverhead)
		m.configs = map[string]*string{"max.message.bytes": &v}
	}
	return m
}

// Ensure creates topic unless it exists. It blocks for at most 30 s.
func (m *TopicMaker) Ensure(topic string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Known[topic] {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := m.adm.CreateTopic(ctx, m.partitions, m.rf, m.configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return &TopicError{Topic: topic, Err: err}
	}
	m.Known[topic] = true
	return nil
}

// EnsureEvent creates ev's topic unless it exists and, when ev names its
// partition, checks that the topic has it: Kafka's producer refuses a
// partition past the topic's last (as Kafka Connect's does, failing the
// task), so such an event is a *PartitionRangeError (its caller makes it
// the record's *RecordError: outboxEventError) instead of a record that
// could never be written. A topic's count is read once per run (the
// producer's metadata would not know partitions added later either; the
// next start sees them); it blocks for at most 30 s.
func (m *TopicMaker) EnsureEvent(ev *schema.OutboxEvent) error {
	if err := m.Ensure(ev.Topic); err != nil || !ev.Placed {
		return err
	}
	n, err := m.partitionCount(ev.Topic)
	if err != nil {
		return err
	}
	if ev.Partition >= n {
		return &PartitionRangeError{Partition: ev.Partition, Count: n}
	}
	return nil
}

// PartitionRangeError is an outbox event that names a partition its
// topic does not have; like a value that cannot be encoded, it parks the
// outbox table (emitter.tableError).
type PartitionRangeError struct{ Partition, Count int32 }

func (e *PartitionRangeError) Error() string {
	return fmt.Sprintf("the outbox event names partition %d, but the topic has %d (0 to %d): add partitions to the topic, or fix the event's partition column", e.Partition, e.Count, e.Count-1)
}

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *PartitionRangeError) TableLocal() {}

// partitionCount is topic's number of partitions.
func (m *TopicMaker) partitionCount(topic string) (int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.counts[topic]; ok {
		return n, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	td, err := m.adm.ListTopics(ctx, topic)
	if err == nil {
		err = td.Error()
	}
	if err != nil {
		return 0, &TopicError{Topic: topic, Err: fmt.Errorf("read its partitions: %w", err)}
	}
	n := int32(len(td[topic].Partitions))
	if m.counts == nil {
		m.counts = make(map[string]int32)
	}
	m.counts[topic] = n
	return n, nil
}

// EnsureAll creates those of topics not known yet in one CreateTopics
// request, as a snapshot of a thousand tables needs a thousand topics at
// once (one request each took a round trip per table under the mutex).
// It is best effort: a topic it could not create stays unknown, and
// ensure, called before the topic's first record, tries it again and
// reports the error. It blocks for at most 30 s.
func (m *TopicMaker) EnsureAll(topics []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var todo []string
	for _, t := range topics {
		if !m.Known[t] {
			todo = append(todo, t)
		}
	}
	if len(todo) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resps, err := m.adm.CreateTopics(ctx, m.partitions, m.rf, m.configs, todo...)
	if err != nil {
		return
	}
	for _, r := range resps {
		if r.Err == nil || errors.Is(r.Err, kerr.TopicAlreadyExists) {
			m.Known[r.Topic] = true
		}
	}
}

// TopicError is a data topic that could not be created.
type TopicError struct {
	Topic string
	Err   error
}

func (e *TopicError) Error() string {
	return fmt.Sprintf("create topic %q: %v (create it yourself, or give mooncdc's Kafka user CREATE on the cluster)", e.Topic, e.Err)
}
func (e *TopicError) Unwrap() error { return e.Err }

// RecordOverhead is room for a record batch's framing and a record's
// headers above kafka.max_record_bytes of key and value.
const RecordOverhead = 512
