package group

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLeaseLapsesBeforeTheCoordinatorCanEndTheSession: the lease counts
// from the moment an answered heartbeat was queued (before the coordinator
// received it, so before its session clock restarted) and lapses a margin
// before session_timeout; unanswered requests and other requests do not
// renew it.
func TestLeaseLapsesBeforeTheCoordinatorCanEndTheSession(t *testing.T) {
	const session = 10 * time.Second
	answered := kgo.BrokerE2E{WriteWait: 100 * time.Millisecond, TimeToWrite: time.Millisecond, ReadWait: 300 * time.Millisecond, TimeToRead: time.Millisecond}
	lost := answered
	lost.ReadErr = errors.New("i/o timeout")

	l := newLease(session)
	if out, _ := l.lapsed(time.Now().Add(time.Hour)); out {
		t.Fatal("a lease never answered lapsed: nothing is assigned before the first answer")
	}
	l.OnBrokerE2E(kgo.BrokerMetadata{}, int16(kmsg.Heartbeat), answered)
	queued := time.Now().Add(-402 * time.Millisecond)
	for _, c := range []struct {
		key  kmsg.Key
		e2e  kgo.BrokerE2E
		why  string
		want bool // renews
	}{
		{kmsg.Heartbeat, lost, "an unanswered heartbeat", false},
		{kmsg.Produce, answered, "a produce request", false},
		{kmsg.OffsetCommit, answered, "an offset commit", false},
	} {
		before := l.renewed.Load()
		l.OnBrokerE2E(kgo.BrokerMetadata{}, int16(c.key), c.e2e)
		if got := l.renewed.Load() != before; got != c.want {
			t.Errorf("%s renewed the lease: %v, want %v", c.why, got, c.want)
		}
	}
	// Lapsed margin before session_timeout after the heartbeat was queued,
	// whatever the answer's delay.
	deadline := queued.Add(session - leaseMargin(session))
	if out, _ := l.lapsed(deadline.Add(-50 * time.Millisecond)); out {
		t.Errorf("lapsed before session_timeout - margin (%v) from the queueing", session-leaseMargin(session))
	}
	out, since := l.lapsed(deadline.Add(50 * time.Millisecond))
	if !out {
		t.Errorf("not lapsed %v after the queueing of the last answered heartbeat", since)
	}
	// An older answer (a slow one arriving late) never moves it back.
	r := l.renewed.Load()
	l.OnBrokerE2E(kgo.BrokerMetadata{}, int16(kmsg.SyncGroup), kgo.BrokerE2E{ReadWait: 5 * time.Second})
	if l.renewed.Load() != r {
		t.Error("an answer to a request queued before the last renewal moved the lease back")
	}
	l.OnBrokerE2E(kgo.BrokerMetadata{}, int16(kmsg.JoinGroup), kgo.BrokerE2E{})
	if l.renewed.Load() <= r {
		t.Error("an answered JoinGroup did not renew the lease")
	}
}
