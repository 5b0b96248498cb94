package offsets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrTopicMisconfigured is wrapped by EnsureTopic's error when the offsets
// topic exists but cannot safely hold the state. Retrying does not help;
// the message says what to change.
var ErrTopicMisconfigured = errors.New("offsets topic misconfigured")

// EnsureTopic makes sure topic exists as the offsets topic needs it: one
// partition and cleanup.policy=compact. A missing topic is created so, with
// replicationFactor replicas (-1: the broker's default.replication.factor).
// An existing topic is never changed; if it has more than one partition or
// a cleanup policy other than exactly "compact" ("delete" or
// "compact,delete" would let retention drop table phases that were not
// rewritten lately), EnsureTopic returns an error wrapping
// ErrTopicMisconfigured that says how to fix it. It blocks for a few
// round trips and is safe to call concurrently, also from several
// processes: a concurrent creation is detected and the winner's topic
// checked.
func EnsureTopic(ctx context.Context, adm *kadm.Client, topic string, replicationFactor int16) error {
	ctx = fresh(ctx)
	for attempt := 1; ; attempt++ {
		details, err := adm.ListTopics(ctx, topic)
		if err != nil {
			return fmt.Errorf("describe offsets topic %q: %w", topic, err)
		}
		td, ok := details[topic]
		if ok && !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			if td.Err != nil {
				return fmt.Errorf("describe offsets topic %q: %w", topic, td.Err)
			}
			return checkTopic(ctx, adm, td)
		}
		_, err = adm.CreateTopic(ctx, 1, replicationFactor, map[string]*string{
			"cleanup.policy": kadm.StringPtr("compact"),
		}, topic)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kerr.TopicAlreadyExists) && attempt < 10:
			// Created meanwhile by someone else; check theirs once
			// metadata shows it (Kafka propagates it in a moment).
			select {
			case <-ctx.Done():
				return fmt.Errorf("describe offsets topic %q: %w", topic, ctx.Err())
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			}
		default:
			return fmt.Errorf("create offsets topic %q (1 partition, cleanup.policy=compact, replication factor %d): %w", topic, replicationFactor, err)
		}
	}
}

// checkTopic returns why the existing topic td cannot be the offsets topic.
func checkTopic(ctx context.Context, adm *kadm.Client, td kadm.TopicDetail) error {
	problems, err := TopicProblems(ctx, adm, td)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = errors.New(p)
		}
		return fmt.Errorf("%w: %q: %w", ErrTopicMisconfigured, td.Topic, errors.Join(errs...))
	}
	return nil
}

// TopicProblems returns why the existing topic td cannot be the offsets
// topic, one sentence per problem with its fix, or none. The error is a
// failure to read the topic's configs. It blocks on the broker.
func TopicProblems(ctx context.Context, adm *kadm.Client, td kadm.TopicDetail) ([]string, error) {
	topic := td.Topic
	var problems []string
	if n := len(td.Partitions); n != 1 {
		problems = append(problems, fmt.Sprintf("it has %d partitions and needs exactly 1 so that every write keeps its order; Kafka cannot remove partitions: configure a new offsets topic (mooncdc creates it), or delete this one with `kafka-topics.sh --bootstrap-server <broker> --delete --topic %s` if starting every table over is acceptable", n, topic))
	}
	configs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("describe configs of offsets topic %q: %w", topic, err)
	}
	rc, err := configs.On(topic, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return nil, fmt.Errorf("describe configs of offsets topic %q: %w", topic, err)
	}
	policy := "delete" // Kafka's default when the broker does not say
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.Value != nil {
			policy = *c.Value
		}
	}
	if strings.ReplaceAll(policy, " ", "") != "compact" {
		problems = append(problems, fmt.Sprintf("its cleanup.policy is %q and must be exactly \"compact\", or retention deletes table phases that were not rewritten lately; fix it with `kafka-configs.sh --bootstrap-server <broker> --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact`", policy, topic))
	}
	return problems, nil
}

// fresh returns a context under which kadm asks the broker for metadata
// instead of answering from the client's metadata cache. The cache keeps
// answers for up to kgo.MetadataMinAge (5s by default), including "topic
// does not exist", so right after a topic was created it can still report
// it missing: EnsureTopic would then try to create it again, and Load would
// return an empty state for a topic that has one. kadm bypasses the cache
// for requests that ask for authorized operations (the cache does not hold
// them), and the fresh answer also refreshes the cache.
func fresh(ctx context.Context) context.Context { return kadm.WithAuthorizedOps(ctx) }
