package group

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/fault"
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

// hold keeps this process a member of the group until ctx is done: it
// joins, and each time the member's lease (lease.go) lapses while one of
// its seats is active, it aborts every pipeline (nothing of them may land
// after the coordinator hands the seats on: config.KafkaLinks), drops that client
// without waiting for the network and joins again with a fresh one, as a
// new member: the coordinator decides anew. Once ctx is done it closes the
// client, which revokes what is held (the callers stop their pipelines
// first) and leaves the group. It blocks and owns every goroutine it
// starts; it returns an error only when the first client cannot be built.
func (g *groupMember) hold(ctx context.Context, base []kgo.Opt, sessionTimeout, shutdownTimeout time.Duration) error {
	m, cl, err := g.join(base, sessionTimeout, shutdownTimeout)
	if err != nil {
		return err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var closing []<-chan struct{} // dropped clients still closing
	for {
		select {
		case <-ctx.Done():
			// Leave (onRevoked finds nothing running), bounded: a
			// coordinator out of reach must not hold up the stop.
			lctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
			_ = cl.LeaveGroupContext(lctx)
			cancel()
			closing = append(closing, closeInBackground(cl))
			deadline := time.After(leaveTimeout)
			for _, c := range closing {
				select {
				case <-c:
				case <-deadline:
					g.log.Warn("the group client did not close in time (the brokers are out of reach); leaving it to the session timeout", zap.String("group", g.group), zap.Duration("waited", leaveTimeout))
					return nil
				}
			}
			return nil
		case <-tick.C:
		}
		out, since := m.lease.lapsed(time.Now())
		if !out || !g.anyActive() {
			continue
		}
		// From here, this membership's callbacks do nothing.
		m.drop()
		g.log.Warn("the group coordinator has not answered a heartbeat for longer than the lease; the session may end before an answer comes, and another member be given the partition: aborting the pipeline and joining the group again",
			zap.String("group", g.group), zap.Duration("unanswered_for", since.Round(time.Millisecond)), zap.Duration("session_timeout", sessionTimeout))
		g.lost()
		// Leave without waiting (the coordinator may be unreachable):
		// the session ends by itself, or by the leave once it gets through.
		expired, cancel := context.WithCancel(context.Background())
		cancel()
		_ = cl.LeaveGroupContext(expired)
		closing = append(closing, closeInBackground(cl))
		for {
			m, cl, err = g.join(base, sessionTimeout, shutdownTimeout)
			if err == nil {
				break
			}
			g.log.Warn("cannot build the group client; retrying", zap.Error(err))
			if !fault.Sleep(ctx, time.Second) {
				return nil
			}
		}
	}
}

// holdInBackground runs hold in a goroutine: held receives its result
// (an error at once if the first client cannot be built); stop ends it
// (leaving the group) and returns once it has returned.
func (g *groupMember) holdInBackground(base []kgo.Opt, sessionTimeout, shutdownTimeout time.Duration) (held <-chan error, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch <- g.hold(ctx, base, sessionTimeout, shutdownTimeout)
	}()
	return ch, func() {
		cancel()
		<-done
	}
}

// leaveTimeout bounds leaving the group at a stop: past it, the process
// stops without having left, and the coordinator ends its session after
// session_timeout.
const leaveTimeout = 5 * time.Second

// closeInBackground closes cl in a goroutine (kgo's Close waits for the
// group's requests in flight, which a partition can keep for a request
// timeout and more); the channel is closed once it has. Only a stop of the
// process abandons it, after leaveTimeout.
func closeInBackground(cl *kgo.Client) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl.Close()
	}()
	return done
}

// anyActive reports whether one of the seats runs (or waits to run) a
// pipeline.
func (g *groupMember) anyActive() bool {
	for _, s := range g.seats {
		if s.activeNow() {
			return true
		}
	}
	return false
}

// membership is one group client's membership: its lease, and whether it
// was dropped (its callbacks then do nothing, so that a late revoke or
// assignment of an old client cannot touch the pipelines of a new one).
type membership struct {
	g       *groupMember
	lease   *lease
	mu      sync.Mutex // orders an assignment against drop
	dropped bool
}

func (m *membership) drop() {
	m.mu.Lock()
	m.dropped = true
	m.mu.Unlock()
}

func (m *membership) live() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.dropped
}

func (m *membership) onAssigned(ctx context.Context, cl *kgo.Client, added map[string][]int32) {
	m.mu.Lock() // held: drop waits until the activations have begun, and then aborts them
	defer m.mu.Unlock()
	if !m.dropped {
		m.g.onAssigned(ctx, cl, added)
	}
}

func (m *membership) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	if m.live() {
		m.g.onRevoked(ctx, cl, revoked)
	}
}

func (m *membership) onLost(ctx context.Context, cl *kgo.Client, lost map[string][]int32) {
	if m.live() {
		m.g.onLost(ctx, cl, lost)
	}
}

// join builds a group client: it joins in the background and calls the
// seats on every assignment, revoke and loss until it is closed (closing
// leaves the group, after revoking everything). It never fetches records.
func (g *groupMember) join(base []kgo.Opt, sessionTimeout, shutdownTimeout time.Duration) (*membership, *kgo.Client, error) {
	m := &membership{g: g, lease: newLease(sessionTimeout)}
	topics := make([]string, 0, len(g.seats))
	for t := range g.seats {
		topics = append(topics, t)
	}
	opts := append(slices.Clip(base),
		kgo.ConsumerGroup(g.group),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
		kgo.DisableAutoCommit(),
		// Cooperative-sticky: a member joining leaves the other members'
		// partitions where they are, but for those it takes over (an
		// eager balancer would revoke every partition at every join).
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.SessionTimeout(sessionTimeout),
		kgo.HeartbeatInterval(heartbeatInterval(sessionTimeout)),
		kgo.RebalanceTimeout(rebalanceTimeout(shutdownTimeout)),
		kgo.OnPartitionsAssigned(m.onAssigned),
		kgo.OnPartitionsRevoked(m.onRevoked),
		kgo.OnPartitionsLost(m.onLost),
		kgo.WithHooks(m.lease),
	)
	if g.clientID != "" {
		opts = append(opts, kgo.ClientID(g.clientID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka group client: %w", err)
	}
	// Membership is all this client is for.
	cl.PauseFetchTopics(topics...)
	return m, cl, nil
}

// heartbeatInterval is how often a member in a session of the given
// length heartbeats: a tenth of it, within 100 ms and 3 s. Each answered
// heartbeat renews the lease, which lapses margin before the session can
// end; several heartbeats fit in it, so one slow answer does not make an
// active member abort.
func heartbeatInterval(session time.Duration) time.Duration {
	return min(max(session/10, 100*time.Millisecond), 3*time.Second)
}

// rebalanceTimeout is how long the coordinator waits in a rebalance for a
// member to rejoin. A member rejoins only once its revoke callback has
// returned, that is once the revoked pipelines have stopped (deactivate:
// shutdown_timeout, then stopGrace, then an abort); a coordinator that
// gave up sooner would evict the member and give its seats to another
// while the old pipelines may still write. So it outlasts that bound.
func rebalanceTimeout(shutdown time.Duration) time.Duration {
	return max(time.Minute, shutdown+stopGrace+10*time.Second)
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
	g.lost()
}

// lost aborts every pipeline at once and marks every seat out of the group.
func (g *groupMember) lost() {
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
