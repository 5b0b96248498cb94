package offsets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestEnsureTopicCreatesCompactedSinglePartitionTopic(t *testing.T) {
	b := kafkatest.New(t)
	adm := kadm.NewClient(b.Client(t))
	ctx := testCtx(t)

	if err := EnsureTopic(ctx, adm, "mooncdc-offsets", -1); err != nil {
		t.Fatalf("create: %v", err)
	}
	details, err := adm.ListTopics(fresh(ctx), "mooncdc-offsets")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(details["mooncdc-offsets"].Partitions); n != 1 {
		t.Errorf("created with %d partitions", n)
	}
	configs, err := adm.DescribeTopicConfigs(ctx, "mooncdc-offsets")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := configs.On("mooncdc-offsets", nil)
	var policy string
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.Value != nil {
			policy = *c.Value
		}
	}
	if policy != "compact" {
		t.Errorf("cleanup.policy = %q", policy)
	}
	if err := EnsureTopic(ctx, adm, "mooncdc-offsets", -1); err != nil {
		t.Errorf("second call on the topic it created: %v", err)
	}
}

func TestEnsureTopicRejectsTopicThatWouldLoseState(t *testing.T) {
	b := kafkatest.New(t)
	adm := kadm.NewClient(b.Client(t))
	ctx := testCtx(t)
	create := func(topic string, partitions int32, policy string) {
		t.Helper()
		var configs map[string]*string
		if policy != "" {
			configs = map[string]*string{"cleanup.policy": kadm.StringPtr(policy)}
		}
		if _, err := adm.CreateTopic(ctx, partitions, 1, configs, topic); err != nil {
			t.Fatal(err)
		}
	}
	create("default-policy", 1, "")
	create("delete", 1, "delete")
	create("compact-delete", 1, "compact,delete")
	create("partitioned", 3, "compact")
	create("both", 2, "delete")

	tests := []struct {
		topic string
		want  []string
	}{
		{"default-policy", []string{`cleanup.policy is "delete"`, "kafka-configs.sh", "--entity-name default-policy --add-config cleanup.policy=compact"}},
		{"delete", []string{`cleanup.policy is "delete"`, "kafka-configs.sh"}},
		{"compact-delete", []string{`cleanup.policy is "compact,delete"`, "kafka-configs.sh"}},
		{"partitioned", []string{"3 partitions", "needs exactly 1"}},
		{"both", []string{"2 partitions", `cleanup.policy is "delete"`}},
	}
	for _, tt := range tests {
		t.Run(tt.topic, func(t *testing.T) {
			err := EnsureTopic(ctx, adm, tt.topic, -1)
			if !errors.Is(err, ErrTopicMisconfigured) {
				t.Fatalf("err = %v, want ErrTopicMisconfigured", err)
			}
			for _, w := range tt.want {
				if !contains(err.Error(), w) {
					t.Errorf("%q\ndoes not say %q", err, w)
				}
			}
		})
	}
}
