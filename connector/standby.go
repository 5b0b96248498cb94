package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file is the one seam of standby instances (ha.enabled): several
// processes run the same config, and exactly one of them runs the
// pipeline. Who that is, Kafka's group coordinator decides: every
// instance is a member of the consumer group mooncdc-<name> subscribed to
// the offsets topic, whose one partition the group gives to one member.
// The member holding it is active (a Pipeline runs: it holds the slot,
// writes records and offsets); the others are standbys and only heartbeat.
// Nothing else in the connector knows about it. The membership itself is
// groupMember's (group.go); a worker group (workers.go) uses the same
// seats, one per pipeline, so that both share one set of fencing rules.
//
// Why no window allows two writers, the sequence of events:
//
//	A active ── A dies or is cut off ── A's session times out (ha.session_timeout)
//	        ── the coordinator rebalances ── B is assigned the partition ── B starts a Pipeline
//
// A member that learns of the change itself stops first: a revoke stops
// the pipeline cleanly (bounded by shutdown_timeout) before the callback
// returns, so before the member rejoins and the partition can move; a lost
// membership aborts it at once. A member cut off from the coordinator (a
// partition) learns nothing from it, so it keeps its own clock: its lease
// (lease.go) lapses session_timeout/5 (at least 1 s) before the
// coordinator can end its session, and then it aborts the pipeline, its
// Kafka connections reset so that nothing they queued arrives after the
// network heals (links.go), and it joins again as a new member (group.go,
// hold). So A has stopped writing before B is assigned.
//
// B's Pipeline then needs what A's held: the slot (B writes nothing while
// a walsender holds it; past a grace it ends the one still holding it,
// A's, which Postgres keeps until wal_sender_timeout when A's link is a
// black hole: waitSlotFree), and in exactly-once mode the transactional
// ids, whose InitProducerID bumps the epoch, so that A's open transaction
// is aborted and any late write of A fails.

// StandbyGroup is the consumer group of the instances named name.
func StandbyGroup(name string) string { return "mooncdc-" + name }

// Standby runs the pipeline only while this instance holds its unit of
// assignment, partition 0 of a topic: for standby instances (NewStandby)
// the offsets topic's in the group mooncdc-<name>; for a worker group
// (NewWorkers) the pipeline's own assignment topic in the workers' group.
// Which member holds it, groupMember decides; what holding it means (a
// fresh Pipeline, the slot wait, the clean stop before a revoke returns)
// is here, once. It starts nothing until it is assigned.
type Standby struct {
	cfg     config.Config
	log     *zap.Logger // the standby's own lines ("ha")
	plog    *zap.Logger // each activation's pipeline
	metrics *Metrics    // shared by every activation, so counters go on
	group   string

	member  atomic.Bool              // in the group: assigned (maybe nothing) since the last loss
	current atomic.Pointer[Pipeline] // the active pipeline; nil while standby

	mu      sync.Mutex  // guards act and closing; callbacks are serial, Run's stop is not
	act     *activation // the running pipeline, if any
	closing bool        // Run is stopping: no new activation
	ended   chan *activation
}

// activation is one run of a fresh Pipeline while this instance is active.
type activation struct {
	p          *Pipeline
	cancel     context.CancelFunc
	done       chan struct{} // closed when p.Run has returned; err is set then
	err        error
	deliberate bool // stopped by a revoke, a loss or Run's stop, not by itself
	started    time.Time
}

// NewStandby validates cfg (ha.enabled and kafka.brokers set) and returns
// a standby member ready to Run. It does no I/O.
func NewStandby(cfg config.Config, log *zap.Logger) (*Standby, error) {
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.HA.Enabled || cfg.EmbeddedKafka() {
		return nil, &config.ConfigError{Err: errors.New("ha.enabled: standby instances need kafka.brokers (the embedded Kafka has no other instance to share with)")}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return newSeat(cfg, log.Named("ha"), log, StandbyGroup(cfg.Name), nil, make(chan *activation, 1))
}

// newSeat is the Standby of cfg in group: its metrics go to reg (nil: a
// registry of its own), an activation that ends by itself is sent on
// ended (without blocking). The first activation's Pipeline is built here
// too, so that a config New refuses fails at start, not at a takeover.
func newSeat(cfg config.Config, log, plog *zap.Logger, group string, reg prometheus.Registerer, ended chan *activation) (*Standby, error) {
	s := &Standby{cfg: cfg, log: log, plog: plog, group: group, ended: ended}
	inflight := func() float64 {
		if p := s.current.Load(); p != nil {
			if t := p.tracker.Load(); t != nil {
				return float64(t.Inflight())
			}
		}
		return 0
	}
	if reg == nil {
		s.metrics = newMetrics(inflight)
	} else {
		s.metrics = newMetricsIn(reg, inflight)
	}
	if _, err := s.newPipeline(); err != nil {
		return nil, err
	}
	return s, nil
}

// Role reports RoleActive while this instance runs the pipeline,
// RoleStandby while it waits in the group, and "" before it has joined
// (or after its membership was lost). Safe from any goroutine.
func (s *Standby) Role() string {
	switch {
	case s.current.Load() != nil:
		return RoleActive
	case s.member.Load():
		return RoleStandby
	default:
		return ""
	}
}

// TablePhases returns the active pipeline's table phases (nil while
// standby; see Pipeline.TablePhases).
func (s *Standby) TablePhases() map[string]offsets.Table {
	if p := s.current.Load(); p != nil {
		return p.TablePhases()
	}
	return nil
}

// Streaming reports whether this instance is active and its pipeline's
// main worker streams.
func (s *Standby) Streaming() bool {
	p := s.current.Load()
	return p != nil && p.Ready()
}

// Copies returns the active pipeline's running copies (none while standby).
// Safe from any goroutine.
func (s *Standby) Copies() []CopyProgress {
	if p := s.current.Load(); p != nil {
		return p.Copies()
	}
	return nil
}

// Run joins the group and runs a fresh Pipeline each time this instance
// is given the partition, until ctx is done (a clean stop of the pipeline,
// if active, then a leave, so that a standby takes over at once) or the
// active pipeline stops by itself (its error, or nil, is returned: the
// process ends as it would without standbys). It blocks and owns every
// goroutine it starts.
func (s *Standby) Run(ctx context.Context) error {
	cfg := s.cfg
	if cfg.Metrics.Listen != "" {
		srv, err := serveHTTP(cfg.Metrics.Listen, s.metrics.Registry, s.ready, s.serveStatus, s.log)
		if err != nil {
			return err
		}
		defer srv.Close()
	}
	base, err := cfg.KafkaOpts(cfg.Kafka.Brokers)
	if err != nil {
		return err
	}
	// The group's partition is the offsets topic's: it must exist first.
	if err := s.ensureOffsetsTopic(ctx, base); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	g := &groupMember{group: s.group, seats: map[string]*Standby{cfg.Kafka.OffsetsTopic: s}, log: s.log}
	held, stopHold := g.holdInBackground(base, cfg.HA.SessionTimeout, cfg.ShutdownTimeout)
	s.log.Info("joining the group as a standby; the member given its partition runs the pipeline",
		zap.String("group", s.group), zap.String("topic", cfg.Kafka.OffsetsTopic), zap.Duration("session_timeout", cfg.HA.SessionTimeout))

	// Wait for a stop, or for an activation that ended by itself (a
	// critical error, a fence, snapshot.mode initial_only done): then end
	// as a lone instance would; leaving lets a standby take over at once.
	var result error
	select {
	case <-ctx.Done():
	case a := <-s.ended:
		result = a.err
	case result = <-held: // the group client could not be built
		return result
	}
	if err := s.close(); err != nil && result == nil {
		result = err
	}
	// Leave the group: onRevoked finds nothing to stop.
	stopHold()
	return result
}

// activeNow reports whether an activation runs (or waits for the slot).
func (s *Standby) activeNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.act != nil
}

// close stops the running pipeline cleanly, if any, and lets no other
// start; it returns the pipeline's error.
func (s *Standby) close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	return s.deactivate(false, "shutting down")
}

func (s *Standby) ensureOffsetsTopic(ctx context.Context, base []kgo.Opt) error {
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	return fault.Retry(ctx, s.log, "prepare offsets topic "+s.cfg.Kafka.OffsetsTopic, func() error {
		return offsets.EnsureTopic(ctx, adm, s.cfg.Kafka.OffsetsTopic, int16(s.cfg.Kafka.TopicReplicationFactor))
	})
}

// activate starts a fresh Pipeline, unless one runs or Run is stopping.
// It returns at once; the pipeline runs until deactivate or its own end.
func (s *Standby) activate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || s.act != nil {
		return
	}
	p, err := s.newPipeline()
	if err != nil { // newSeat built one from the same config
		s.log.Error("active: cannot build the pipeline", zap.Error(err))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &activation{p: p, cancel: cancel, done: make(chan struct{}), started: time.Now()}
	s.act = a
	s.current.Store(p)
	s.log.Info("active: this instance holds the group's partition; starting the pipeline", zap.String("group", s.group))
	go func() {
		// Wait until the last active instance's walsender has let the
		// slot go (or end it: waitSlotFree): in at-least-once mode the
		// slot is what keeps two instances from writing; in both, the
		// stream cannot start before.
		s.waitSlotFree(ctx)
		if ctx.Err() == nil {
			a.err = p.Run(ctx)
		}
		cancel()
		s.metrics.Streaming.Set(0) // an aborted session does not say so
		s.mu.Lock()
		deliberate := a.deliberate
		if s.act == a {
			s.act = nil
			s.current.Store(nil)
		}
		s.mu.Unlock()
		close(a.done)
		if !deliberate {
			select {
			case s.ended <- a:
			default: // Run is stopping already, for an earlier end
			}
		}
	}()
}

// deactivate stops the running pipeline, if any, and waits until it has:
// cleanly (bounded by shutdown_timeout; past it and a grace period, it is
// aborted) or, with abort, at once. It returns the pipeline's error.
func (s *Standby) deactivate(abort bool, why string) error {
	s.mu.Lock()
	a := s.act
	if a != nil {
		a.deliberate = true
	}
	s.mu.Unlock()
	if a == nil {
		return nil
	}
	if abort {
		s.log.Warn(why+"; aborting the pipeline", zap.String("group", s.group))
		a.p.Abort()
		a.cancel() // and the wait for the slot, if it has not started
	} else {
		s.log.Info(why+"; stopping the pipeline cleanly", zap.String("group", s.group))
		a.cancel()
	}
	grace := time.NewTimer(s.cfg.ShutdownTimeout + 5*time.Second)
	defer grace.Stop()
	select {
	case <-a.done:
	case <-grace.C:
		a.p.Abort()
		<-a.done
	}
	s.log.Info("pipeline stopped; no longer active", zap.Duration("active_for", time.Since(a.started).Round(time.Millisecond)))
	if abort || errors.Is(a.err, ErrAborted) {
		return nil
	}
	return a.err
}

// slotTakeoverGrace is how long a new active instance lets the walsender
// still holding the slot end by itself before it terminates it.
const slotTakeoverGrace = time.Second

// slotTerminateEvery is how often a new active instance terminates again
// the walsender that still holds its slot after a termination.
const slotTerminateEvery = time.Second

// waitSlotFree returns once the pipeline's slot is held by no walsender
// (or does not exist), or ctx is done. An active instance writes nothing
// before then. The walsender still holding it is the last active
// instance's, and that instance has stopped writing already: it stopped
// before its revoke returned, or it lost its membership, which it noticed
// on its own clock (lease.go) before the coordinator could give the
// partition to this one. But Postgres may not know yet: a walsender whose
// client was partitioned away, or whose machine stopped, lives until
// wal_sender_timeout (60 s by default) and holds the slot as long. So past
// slotTakeoverGrace this instance ends it (pg_terminate_backend of the
// slot's active_pid: the replication user may end its own backends). What
// the old one sent and Postgres had not read yet dies with it; its
// confirmations were of LSNs Kafka had, so none can confirm too much.
// Postgres unreachable: it waits, as the pipeline would.
//
// One SIGTERM is not always enough: a walsender whose client stopped
// reading (a paused process, a stopped VM: the socket stays open, its
// buffers full) takes the SIGTERM, logs "terminating connection due to
// administrator command" and then blocks sending that FATAL message to
// the client, with no timeout, holding the slot until the client reads
// again (TestStandbyEndsAWalsenderWhoseClientStoppedReading). A second
// SIGTERM, while it is blocked in that write, makes Postgres give up
// the client output and exit (ProcessClientWriteInterrupt in
// src/backend/tcop/postgres.c). So this instance terminates the
// walsender again every slotTerminateEvery for as long as it holds the
// slot.
func (s *Standby) waitSlotFree(ctx context.Context) {
	slot := s.cfg.Postgres.Slot
	pgcfg, err := s.cfg.PostgresConnConfig()
	if err != nil { // Validate parsed it
		return
	}
	var db *pgx.Conn
	defer func() {
		if db != nil {
			_ = db.Close(context.Background())
		}
	}()
	said := ""
	var heldSince time.Time
	var refused int32          // the walsender Postgres would not let this role end
	var terminatedAt time.Time // the last termination asked for
	terms := 0                 // terminations asked for
	for {
		var pid int32
		if db == nil {
			db, err = pgsource.ConnectSQL(ctx, pgcfg, "mooncdc-ha")
		}
		if err == nil {
			var si pgsource.SlotInfo
			if si, err = pgsource.LookupSlot(ctx, db, slot); err == nil {
				if si.ActivePID == 0 {
					if said != "" {
						s.log.Info("active: the slot is free", zap.String("slot", slot))
					}
					return
				}
				pid = si.ActivePID
				if heldSince.IsZero() {
					heldSince = time.Now()
				}
				if pid != refused && time.Since(heldSince) >= slotTakeoverGrace && time.Since(terminatedAt) >= slotTerminateEvery {
					var ended bool
					err = db.QueryRow(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid = $2`, slot, pid).Scan(&ended)
					var pge *pgconn.PgError
					switch {
					case errors.Is(err, pgx.ErrNoRows):
						err = nil // released meanwhile
					case errors.As(err, &pge):
						// Refused (another role's walsender): wait for
						// Postgres to end it, without asking again.
						s.log.Warn("active: cannot end the walsender still holding the slot; waiting for Postgres to end it (wal_sender_timeout, or, when its client is paused, until that client reads again) before writing anything; to take over sooner, run the instances as the same role or GRANT pg_signal_backend to mooncdc's role",
							zap.String("slot", slot), zap.Int32("active_pid", pid), zap.Error(err))
						refused, err = pid, nil
						said = "held"
					case err == nil:
						terminatedAt = time.Now()
						terms++
						switch terms {
						case 1:
							s.log.Warn("active: the slot is still held by the last active instance's walsender, which has lost its seat; terminating it",
								zap.String("slot", slot), zap.Int32("active_pid", pid), zap.Duration("held_for", time.Since(heldSince).Round(time.Millisecond)), zap.Bool("terminated", ended))
						case 2:
							s.log.Warn("active: the walsender still holds the slot after its termination (its client stopped reading, so it is stuck sending its last message); terminating it again until it lets go",
								zap.String("slot", slot), zap.Int32("active_pid", pid), zap.Duration("held_for", time.Since(heldSince).Round(time.Millisecond)))
						}
					}
				}
			}
			if err != nil {
				_ = db.Close(context.Background())
				db = nil
			}
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && said != "error":
			s.log.Warn("active: cannot see whether the slot is free; retrying before starting the pipeline", zap.String("slot", slot), zap.Error(err))
			said = "error"
		case err == nil && said != "held":
			s.log.Info("active: the slot is still held by another walsender (the last active instance's); waiting for it to be released before writing anything",
				zap.String("slot", slot), zap.Int32("active_pid", pid))
			said = "held"
		}
		if !fault.Sleep(ctx, 200*time.Millisecond) {
			return
		}
	}
}

// newPipeline is a fresh Pipeline for one activation: its metrics are the
// standby's, and it serves no HTTP (the standby does, across activations).
func (s *Standby) newPipeline() (*Pipeline, error) {
	cfg := s.cfg
	cfg.Metrics.Listen = ""
	p, err := New(cfg, s.plog)
	if err != nil {
		return nil, err
	}
	p.metrics = s.metrics
	p.seated = true
	return p, nil
}

// ready is /readyz: the active instance's pipeline's (200 "streaming"
// while it streams), else 200 "standby" while this instance is a member of
// the group, ready to take over (a readiness probe that failed healthy
// standbys would stall a rolling update), 503 before it has joined and
// after its membership was lost.
func (s *Standby) ready() (bool, string) {
	if p := s.current.Load(); p != nil {
		return p.readiness()
	}
	if s.member.Load() {
		return true, RoleStandby
	}
	return false, "not in the group " + s.group
}

func (s *Standby) serveStatus(w http.ResponseWriter, _ *http.Request) {
	st := LiveStatus{Name: s.cfg.Name, Version: config.Version, Role: RoleStandby, Copies: []CopyProgress{}, Time: time.Now().UTC()}
	if p := s.current.Load(); p != nil {
		st = p.Status()
		st.Role = RoleActive
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(st)
}
