package connector

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
)

// groupMember is this process's membership in a Kafka consumer group whose
// units of work are partition 0 of some topics, one topic per pipeline
// (seats, by topic): the coordinator gives each partition to one member,
// and the member holding a topic's partition runs that topic's pipeline.
// Standby instances have one seat (the offsets topic, group
// mooncdc-<name>); a worker group has one per pipeline of the config
// directory (its assignment topic, group mooncdc-workers-<group>). The
// balancing is the group protocol's, cooperative-sticky: a member joining
// or leaving moves only the partitions that must move, and a partition
// moves only after its old holder's revoke callback has returned, that is
// after the pipeline has stopped cleanly.
type groupMember struct {
	group    string
	clientID string // the member's client id, as "mooncdc status" shows it; "" for kgo's
	seats    map[string]*Standby
	log      *zap.Logger
}

// join builds the group client: it joins in the background and calls the
// seats on every assignment, revoke and loss until it is closed (closing
// leaves the group, after revoking everything). It never fetches records.
func (g *groupMember) join(base []kgo.Opt, sessionTimeout, shutdownTimeout time.Duration) (*kgo.Client, error) {
	topics := make([]string, 0, len(g.seats))
	for t := range g.seats {
		topics = append(topics, t)
	}
	hb := min(max(sessionTimeout/10, 100*time.Millisecond), 3*time.Second)
	opts := append(base,
		kgo.ConsumerGroup(g.group),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
		kgo.DisableAutoCommit(),
		// Cooperative-sticky: a member joining leaves the other members'
		// partitions where they are, but for those it takes over (an
		// eager balancer would revoke every partition at every join).
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(sessionTimeout),
		kgo.HeartbeatInterval(hb),
		// A revoke waits for clean stops, bounded by shutdown_timeout.
		kgo.RebalanceTimeout(max(time.Minute, shutdownTimeout+15*time.Second)),
		kgo.OnPartitionsAssigned(g.onAssigned),
		kgo.OnPartitionsRevoked(g.onRevoked),
		kgo.OnPartitionsLost(g.onLost),
	)
	if g.clientID != "" {
		opts = append(opts, kgo.ClientID(g.clientID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka group client: %w", err)
	}
	// Membership is all this client is for.
	cl.PauseFetchTopics(topics...)
	return cl, nil
}

// held is the seats whose partition 0 is in m.
func (g *groupMember) held(m map[string][]int32) []*Standby {
	var out []*Standby
	for t, parts := range m {
		s := g.seats[t]
		for _, p := range parts {
			if p == 0 && s != nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// onAssigned is kgo's callback after every join, with what was added (maybe
// nothing): each added partition starts its pipeline. It returns at once.
func (g *groupMember) onAssigned(_ context.Context, _ *kgo.Client, added map[string][]int32) {
	for _, s := range g.seats {
		s.member.Store(true)
	}
	got := g.held(added)
	if len(got) == 0 && len(g.seats) == 1 {
		for _, s := range g.seats {
			if s.current.Load() == nil {
				g.log.Info("standby: in the group, another member is active", zap.String("group", g.group))
			}
		}
	}
	for _, s := range got {
		s.activate()
	}
}

// onRevoked is kgo's callback when partitions move away (or at the end of
// a session, with what is lost, maybe nothing; and on leaving). Each
// revoked partition's pipeline stops cleanly, all at once, and the
// callback returns only once they have stopped: only then may the member
// rejoin and the partitions move.
func (g *groupMember) onRevoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	g.each(g.held(revoked), func(s *Standby) {
		if err := s.deactivate(false, "the partition was revoked"); err != nil {
			s.log.Warn("the pipeline's clean stop failed", zap.Error(err))
		}
	})
}

// onLost is kgo's callback on a fatal group error (the session expired,
// the member was fenced): another member may run these pipelines already,
// so every one is aborted at once, writing nothing more.
func (g *groupMember) onLost(_ context.Context, _ *kgo.Client, _ map[string][]int32) {
	var all []*Standby
	for _, s := range g.seats {
		s.member.Store(false)
		all = append(all, s)
	}
	g.each(all, func(s *Standby) { _ = s.deactivate(true, "the group membership was lost") })
}

// each runs f on every seat concurrently and returns when all are done.
func (g *groupMember) each(seats []*Standby, f func(*Standby)) {
	var wg sync.WaitGroup
	for _, s := range seats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(s)
		}()
	}
	wg.Wait()
}
