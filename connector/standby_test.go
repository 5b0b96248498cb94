package connector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
)

// member is one Standby running in the background.
type member struct {
	s      *connector.Standby
	cancel context.CancelFunc
	done   chan error
}

func startMember(t *testing.T, cfg connector.Config, label string) *member {
	t.Helper()
	s, err := connector.NewStandby(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Named(label))
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
	for {
		if m.s.Role() == role && (role != connector.RoleActive || m.s.Streaming()) {
			return time.Since(start)
		}
		select {
		case err := <-m.done:
			m.done <- err
			t.Fatalf("member stopped while waiting to be %s: %v", role, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > within {
			t.Fatalf("member is %q after %s, want %s", m.s.Role(), within, role)
		}
	}
}

// TestStandbyTakesOverAtTheActivesCleanStopLosingNothing: two members of
// one pipeline; the first is active, the second waits as a standby while
// changes flow; the active one stops cleanly (and leaves the group), the
// standby takes over at once from the durable LSN, and every change is in
// Kafka once, in order (exactly-once), or at least once (at-least-once).
func TestStandbyTakesOverAtTheActivesCleanStopLosingNothing(t *testing.T) {
	for _, mode := range []connector.Delivery{connector.DeliveryAtLeastOnce, connector.DeliveryExactlyOnce} {
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
			a.waitRole(t, connector.RoleActive, 60*time.Second)
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
			checkChanges(t, evs, 2000, mode == connector.DeliveryAtLeastOnce)
		})
	}
}

// TestStandbyNeedsBrokers: ha.enabled with the embedded Kafka has no
// group; NewStandby refuses it (run then runs as without ha).
func TestStandbyNeedsBrokers(t *testing.T) {
	cfg := connector.DefaultConfig()
	cfg.Name = "x"
	cfg.Postgres.URL = "postgres://u@h/db"
	cfg.HA.Enabled = true
	if _, err := connector.NewStandby(cfg, nil); err == nil || !strings.Contains(err.Error(), "kafka.brokers") {
		t.Fatalf("NewStandby with the embedded Kafka: %v, want an error naming kafka.brokers", err)
	}
	cfg.HA.SessionTimeout = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "ha.session_timeout") {
		t.Fatalf("Validate with ha.session_timeout 0: %v", err)
	}
}
