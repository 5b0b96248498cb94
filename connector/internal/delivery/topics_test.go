package delivery

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
)

// TestTopicsOfASnapshotRunAreCreatedInOneRequest protects the startup of
// thousands of tables (issue 17.4): ensureAll creates every missing topic
// in one CreateTopics request, skips the ones it knows, and ensure then
// needs no request for them.
func TestTopicsOfASnapshotRunAreCreatedInOneRequest(t *testing.T) {
	b := kafkatest.New(t)
	var requests, topicsAsked atomic.Int64
	b.Cluster().ControlKey(kmsg.CreateTopics.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		requests.Add(1)
		topicsAsked.Add(int64(len(req.(*kmsg.CreateTopicsRequest).Topics)))
		return nil, nil, false
	})
	adm := kadm.NewClient(b.Client(t))
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "run.public.t0"); err != nil { // exists already
		t.Fatal(err)
	}
	requests.Store(0)
	topicsAsked.Store(0)
	m := NewTopicMaker(adm, 1, 1, config.DefaultMaxRecordBytes)
	var topics []string
	for i := range 500 {
		topics = append(topics, fmt.Sprintf("run.public.t%d", i))
	}
	m.EnsureAll(topics)
	if got := requests.Load(); got != 1 {
		t.Fatalf("%d CreateTopics requests for 500 topics, want 1", got)
	}
	m.EnsureAll(topics)
	for _, topic := range topics {
		if err := m.Ensure(topic); err != nil {
			t.Fatal(err)
		}
	}
	if got, asked := requests.Load(), topicsAsked.Load(); got != 1 || asked != 500 {
		t.Fatalf("%d requests asking for %d topics after ensureAll and ensure of known topics, want 1 and 500", got, asked)
	}
	listed, err := adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range topics {
		if !listed.Has(topic) {
			t.Fatalf("topic %s not created", topic)
		}
	}
}
