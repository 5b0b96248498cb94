package connector_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/group"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// member is one Standby running in the background.
type member struct {
	s      *group.Standby
	cancel context.CancelFunc
	done   chan error
}

func startMember(t *testing.T, cfg config.Config, label string, cores ...zapcore.Core) *member {
	t.Helper()
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel), zaptest.WrapOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return zapcore.NewTee(append(cores, c)...)
	}))).Named(label)
	s, err := group.NewStandby(cfg, log)
	if err != nil {
		t.Fatalf("new standby: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{s: s, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-m.done
		m.done <- nil
	})
	return m
}

// waitRole waits until the member has role (and, if active, streams).
func (m *member) waitRole(t *testing.T, role string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	eventually.Succeeds(t, within, 20*time.Millisecond, func() error {
		if m.s.Role() == role && (role != connector.RoleActive || m.s.Streaming()) {
			return nil
		}
		select {
		case err := <-m.done:
			m.done <- err
			t.Fatalf("member stopped while waiting to be %s: %v", role, err)
		default:
		}
		return fmt.Errorf("member is %q after %s, want %s", m.s.Role(), within, role)
	})
	return time.Since(start)
}

// waitHandedOver waits until the member is active and every table its
// pipeline knows is handed over (so that writes are streamed one by one,
// not folded into a copy).
func (m *member) waitHandedOver(t *testing.T) {
	t.Helper()
	m.waitRole(t, connector.RoleActive, 60*time.Second)
	eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
		ph := m.s.TablePhases()
		done := len(ph) > 0
		for _, tb := range ph {
			if tb.Phase != "ready" && tb.Phase != "catchup" {
				done = false
			}
		}
		if !done {
			return fmt.Errorf("tables not handed over after 60s: %+v", ph)
		}
		return nil
	})
}

// TestStandbyTakesOverAtTheActivesCleanStopLosingNothing: two members of
// one pipeline; the first is active, the second waits as a standby while
// changes flow; the active one stops cleanly (and leaves the group), the
// standby takes over at once from the durable LSN, and every change is in
// Kafka once, in order (exactly-once), or at least once (at-least-once).
func TestStandbyTakesOverAtTheActivesCleanStopLosingNothing(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
			cfg := e.config("ha", "public.load")
			cfg.Kafka.Delivery = mode
			cfg.HA.Enabled = true
			cfg.HA.SessionTimeout = 6 * time.Second // kfake's group.min.session.timeout.ms
			aAddr, bAddr := freeAddr(t), freeAddr(t)
			cfg.Metrics.Listen = aAddr
			a := startMember(t, cfg, "A")
			a.waitHandedOver(t)
			cfg.Metrics.Listen = bAddr
			b := startMember(t, cfg, "B")
			b.waitRole(t, connector.RoleStandby, 30*time.Second)
			// Probes and the role metric: a healthy standby is ready too.
			for _, c := range []struct{ addr, readyz, active string }{{aAddr, "streaming", "1"}, {bAddr, "standby", "0"}} {
				if code, body := get(t, "http://"+c.addr+"/readyz"); code != 200 || strings.TrimSpace(body) != c.readyz {
					t.Errorf("/readyz of the %s member: %d %q, want 200 %q", c.readyz, code, body, c.readyz)
				}
				if _, body := get(t, "http://"+c.addr+"/metrics"); !strings.Contains(body, "\nmooncdc_active "+c.active+"\n") {
					t.Errorf("/metrics of the %s member: no mooncdc_active %s:\n%s", c.readyz, c.active, grepMooncdc(body))
				}
				if _, body := get(t, "http://"+c.addr+"/status"); !strings.Contains(body, `"role": "`+map[string]string{"1": "active", "0": "standby"}[c.active]+`"`) {
					t.Errorf("/status of the %s member has no role: %s", c.readyz, body)
				}
			}
			writeLoad(t, e, "load", 20, 50, 100, 0)
			consume(t, e.kafka, 1000, "ha.public.load")
			if r := a.s.Role(); r != connector.RoleActive {
				t.Fatalf("a standby joining moved the pipeline: the first member is %q", r)
			}

			a.cancel()
			if err := <-a.done; err != nil {
				t.Fatalf("clean stop of the active member: %v", err)
			}
			a.done <- nil
			took := b.waitRole(t, connector.RoleActive, 30*time.Second)
			t.Logf("the standby streams %s after the active member stopped", took.Round(time.Millisecond))
			writeLoad(t, e, "load", 20, 50, 100, 1000)
			evs := consume(t, e.kafka, 2000, "ha.public.load")
			checkChanges(t, evs, 2000, mode == config.DeliveryAtLeastOnce)
		})
	}
}

// TestStandbyAbortsAtOnceWhenItsMembershipIsLost: the coordinator answers
// the active member's heartbeat with UNKNOWN_MEMBER_ID (its session is
// gone: another member may be given the partition). The member aborts its
// pipeline at once, rejoins, and, given the partition again, resumes from
// the durable LSN: nothing lost, nothing repeated in exactly-once mode.
func TestStandbyAbortsAtOnceWhenItsMembershipIsLost(t *testing.T) {
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			pg := pgtest.New(t)
			broker := kafkatest.New(t)
			e := &env{t: t, pg: pg, kafka: broker.Addr()}
			e.exec(`CREATE TABLE load (id int PRIMARY KEY, n int)`)
			cfg := e.config("halost", "public.load")
			cfg.Kafka.Delivery = mode
			cfg.HA.Enabled = true
			cfg.HA.SessionTimeout = 6 * time.Second
			core, logs := observer.New(zap.InfoLevel)
			a := startMember(t, cfg, "A", core)
			a.waitHandedOver(t)
			writeLoad(t, e, "load", 10, 50, 100, 0)
			consume(t, e.kafka, 500, "halost.public.load")

			c := broker.Cluster()
			var lose, lost atomic.Bool
			c.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				hb := req.(*kmsg.HeartbeatRequest)
				if hb.Group != group.StandbyGroup("halost") || !lose.Load() || !lost.CompareAndSwap(false, true) {
					return nil, nil, false
				}
				resp := hb.ResponseKind().(*kmsg.HeartbeatResponse)
				resp.ErrorCode = kerr.UnknownMemberID.Code
				return resp, nil, true
			})
			lose.Store(true)
			eventually.Succeeds(t, 20*time.Second, 20*time.Millisecond, func() error {
				if logs.FilterMessageSnippet("aborting the pipeline").Len() == 0 {
					return fmt.Errorf("no abort 20s after the membership was lost (lost=%v, role %q)", lost.Load(), a.s.Role())
				}
				return nil
			})
			writeLoad(t, e, "load", 10, 50, 100, 500)
			took := a.waitRole(t, connector.RoleActive, 60*time.Second)
			t.Logf("active again %s after the abort", took.Round(time.Millisecond))
			writeLoad(t, e, "load", 10, 50, 100, 1000)
			evs := consume(t, e.kafka, 1500, "halost.public.load")
			checkChanges(t, evs, 1500, mode == config.DeliveryAtLeastOnce)
		})
	}
}

// TestStandbyNeedsBrokers: ha.enabled with the embedded Kafka has no
// group; NewStandby refuses it (run then runs as without ha).
func TestStandbyNeedsBrokers(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "x"
	cfg.Postgres.URL = "postgres://u@h/db"
	cfg.HA.Enabled = true
	if _, err := group.NewStandby(cfg, nil); err == nil || !strings.Contains(err.Error(), "kafka.brokers") {
		t.Fatalf("NewStandby with the embedded Kafka: %v, want an error naming kafka.brokers", err)
	}
	cfg.HA.SessionTimeout = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "ha.session_timeout") {
		t.Fatalf("Validate with ha.session_timeout 0: %v", err)
	}
}
