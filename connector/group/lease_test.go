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

// TestLeaseHoldsSeveralHeartbeatsAtEverySessionTheConfigAccepts: the
// lease is renewed by answered heartbeats; if it were shorter than a few
// heartbeat intervals an active member would lapse between two answers and
// abort its pipeline over and over, although nothing is wrong. For every
// ha.session_timeout the config accepts (1s to 30m) the lease lasts at
// least five intervals, and its margin stays what the abort needs: a fifth
// of the session, at least 1 s, or half the session when that is shorter.
func TestLeaseHoldsSeveralHeartbeatsAtEverySessionTheConfigAccepts(t *testing.T) {
	for _, session := range []time.Duration{
		time.Second, 1200 * time.Millisecond, 1500 * time.Millisecond, 1900 * time.Millisecond,
		2 * time.Second, 3 * time.Second, 5 * time.Second, 6 * time.Second, 10 * time.Second,
		30 * time.Second, time.Minute, 30 * time.Minute,
	} {
		margin, hb := leaseMargin(session), heartbeatInterval(session)
		length := newLease(session).length
		if length != session-margin {
			t.Errorf("session %v: lease %v, want the session less its margin %v", session, length, session-margin)
		}
		if length < 5*hb {
			t.Errorf("session %v: lease %v holds fewer than five heartbeat intervals of %v", session, length, hb)
		}
		if want := min(max(session/5, time.Second), session/2); margin < want {
			t.Errorf("session %v: margin %v, want at least %v", session, margin, want)
		}
	}
}
