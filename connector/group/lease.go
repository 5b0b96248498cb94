package group

import (
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lease is the member's own clock on its group session: when did the
// coordinator last answer a heartbeat (or a sync) of this member, counted
// from the moment the request was queued, which is before the coordinator
// received it. The coordinator ends the session session_timeout after the
// last heartbeat it received, so at the earliest session_timeout after
// that moment; the lease lapses margin before that. Until it lapses, no
// other member can have been given this member's partitions by an expiry
// of its session; once it lapses, the member must have stopped writing
// (Standby.hold aborts every pipeline) before the coordinator may hand
// them on. kgo itself learns of the end of the session only from the
// coordinator's answer after the network is back (OnPartitionsLost, late
// by the whole partition) or from a heartbeat that times out after its
// request timeout: both can come after another member started.
//
// The lease is a kgo.HookBrokerE2E of the group client. Safe for
// concurrent use.
type lease struct {
	length  time.Duration // session_timeout minus the margin
	renewed atomic.Int64  // unix nanoseconds; 0: never answered
}

// leaseMargin is how long before the coordinator can end the session the
// lease lapses: time for the abort (config.KafkaLinks resets the
// connections at once) and for clock rates that differ; a fifth of the
// session, at least 1 s. But at most half the session: below 2 s a 1 s
// margin would leave a lease of a few heartbeat intervals or none (at 1 s,
// the shortest session the config accepts, it lapsed right after every
// answer, and an active member aborted its pipeline again and again).
func leaseMargin(session time.Duration) time.Duration {
	return min(max(session/5, time.Second), session/2)
}

func newLease(session time.Duration) *lease {
	return &lease{length: session - leaseMargin(session)}
}

var _ kgo.HookBrokerE2E = (*lease)(nil)

// OnBrokerE2E renews the lease on every answered Heartbeat, JoinGroup or
// SyncGroup request. An answer carrying an error (the session is over) is
// handled by kgo's OnPartitionsLost; it came after the lease lapsed.
func (l *lease) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	switch kmsg.Key(key) {
	case kmsg.Heartbeat, kmsg.JoinGroup, kmsg.SyncGroup:
	default:
		return
	}
	if e.WriteErr != nil || e.ReadErr != nil {
		return
	}
	queued := time.Now().Add(-(e.WriteWait + e.TimeToWrite + e.ReadWait + e.TimeToRead)).UnixNano()
	for {
		old := l.renewed.Load()
		if queued <= old || l.renewed.CompareAndSwap(old, queued) {
			return
		}
	}
}

// lapsed reports whether the lease has run out at now (never, before the
// first answer: no partition is assigned before a SyncGroup answer).
func (l *lease) lapsed(now time.Time) (bool, time.Duration) {
	r := l.renewed.Load()
	if r == 0 {
		return false, 0
	}
	since := now.Sub(time.Unix(0, r))
	return since > l.length, since
}
