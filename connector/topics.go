package connector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicMaker creates data topics the first time mooncdc writes to them.
// It is safe for concurrent use (the main worker and copy workers).
type topicMaker struct {
	mu         sync.Mutex
	adm        *kadm.Client
	partitions int32
	rf         int16
	configs    map[string]*string
	known      map[string]bool
}

// newTopicMaker makes topics with partitions and replication factor rf;
// above Kafka's default, maxRecord sets the topic's max.message.bytes.
func newTopicMaker(adm *kadm.Client, partitions int32, rf int16, maxRecord int32) *topicMaker {
	m := &topicMaker{adm: adm, partitions: partitions, rf: rf, known: make(map[string]bool)}
	if maxRecord > DefaultMaxRecordBytes {
		v := strconv.Itoa(int(maxRecord) + recordOverhead)
		m.configs = map[string]*string{"max.message.bytes": &v}
	}
	return m
}

// ensure creates topic unless it exists. It blocks for at most 30 s.
func (m *topicMaker) ensure(topic string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known[topic] {
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
	m.known[topic] = true
	return nil
}

// ensureAll creates those of topics not known yet in one CreateTopics
// request, as a snapshot of a thousand tables needs a thousand topics at
// once (one request each took a round trip per table under the mutex).
// It is best effort: a topic it could not create stays unknown, and
// ensure, called before the topic's first record, tries it again and
// reports the error. It blocks for at most 30 s.
func (m *topicMaker) ensureAll(topics []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var todo []string
	for _, t := range topics {
		if !m.known[t] {
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
			m.known[r.Topic] = true
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

// recordOverhead is room for a record batch's framing and a record's
// headers above kafka.max_record_bytes of key and value.
const recordOverhead = 512
