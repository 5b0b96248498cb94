package connector

import (
	"context"
	"errors"
	"fmt"
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
	known      map[string]bool
}

func newTopicMaker(adm *kadm.Client, partitions int32, rf int16) *topicMaker {
	return &topicMaker{adm: adm, partitions: partitions, rf: rf, known: make(map[string]bool)}
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
	resp, err := m.adm.CreateTopic(ctx, m.partitions, m.rf, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return &TopicError{Topic: topic, Err: err}
	}
	m.known[topic] = true
	return nil
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
