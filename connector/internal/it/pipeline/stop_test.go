package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// TestStopWithKafkaDownEndsAfterShutdownTimeout: with records Kafka never
// acknowledges, a stop gives up after shutdown_timeout (it used to wait
// forever), names how many records were not acknowledged, exits 1, and
// confirms nothing past what Kafka acknowledged: the next start sends them.
func TestStopWithKafkaDownEndsAfterShutdownTimeout(t *testing.T) {
	t.Parallel() // its own cluster and broker, no package-level setting
	for _, mode := range []config.Delivery{config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce} {
		t.Run(string(mode), func(t *testing.T) {
			pg := pgtest.New(t)
			broker := kafkatest.New(t)
			e := ittest.EnvOn(t, pg, broker.Addr())
			e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
			cfg := e.Config("stop", "public.t")
			cfg.Kafka.Delivery = mode
			cfg.ShutdownTimeout = 2 * time.Second
			cfg.Heartbeat.Interval = 0
			r := ittest.Start(t, cfg)

			free := holdProduce(t, broker, "stop.public.t") // made by the copy of the empty table
			before := e.LSN(`SELECT pg_current_wal_lsn()`)
			e.Exec(`INSERT INTO t SELECT generate_series(1, 100)`)
			eventually.Within(30*time.Second, 20*time.Millisecond, func() bool {
				return ittest.Counter(r.P.Metrics().ChangesReceived) >= 100
			})
			took, err := ittest.StopWithin(t, r, 20*time.Second)
			var ste *connector.ShutdownTimeoutError
			if !errors.As(err, &ste) || connector.ExitCode(err) != connector.ExitRuntime {
				t.Fatalf("stop with Kafka down: %v (exit %d), want a ShutdownTimeoutError, exit 1", err, connector.ExitCode(err))
			}
			if took < 2*time.Second || took > 8*time.Second {
				t.Errorf("the stop took %s, want shutdown_timeout (2s) and a little", took)
			}
			if ste.Unacked <= 0 || !strings.Contains(err.Error(), "records were not acknowledged by Kafka") ||
				!strings.Contains(err.Error(), "the next start sends them again") {
				t.Errorf("the error does not name the unacknowledged records: %v", err)
			}
			if after := e.LSN(`SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_stop'`); after > before {
				t.Errorf("the slot was confirmed to %X, past the insert at %X, though Kafka acknowledged nothing", after, before)
			}

			// Kafka back: the next start sends every row.
			free()
			ittest.Start(t, cfg)
			if evs := ittest.Consume(t, e.Kafka, -1, "stop.public.t"); len(countByCreate(evs)) < 100 {
				eventually.Within(30*time.Second, 200*time.Millisecond, func() bool {
					evs = ittest.Consume(t, e.Kafka, -1, "stop.public.t")
					return len(countByCreate(evs)) >= 100
				})
				if n := len(countByCreate(evs)); n < 100 {
					t.Errorf("after the restart %d of the 100 rows arrived", n)
				}
			}
		})
	}
}

// holdProduce makes the broker hold every produce request to topic (which
// must exist) until the returned function is called (also at the test's
// end): Kafka that acknowledges nothing, while it still answers the rest.
func holdProduce(t *testing.T, broker *kafkatest.Broker, topic string) (release func()) {
	t.Helper()
	c := broker.Cluster()
	topicID := c.TopicInfo(topic).TopicID
	held := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	t.Cleanup(release)
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.ProduceRequest).Topics {
			if rt.Topic == topic || rt.TopicID == topicID {
				c.SleepControl(func() { <-held })
				break
			}
		}
		return nil, nil, false
	})
	return release
}

// countByCreate counts the create records of each id.
func countByCreate(evs []ittest.Event) map[float64]int {
	n := map[float64]int{}
	for _, ev := range evs {
		if ev.Op == "c" {
			n[ev.After["id"].(float64)]++
		}
	}
	return n
}

// TestStopWhilePostgresIsDownIsClean: Postgres stops while mooncdc streams;
// a stop during the reconnect backoff is a clean stop (nil: exit 0), fast.
func TestStopWhilePostgresIsDownIsClean(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // it stops the server
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	r := ittest.Start(t, e.Config("pgdown", "public.t"))
	if err := e.PG.Stop("fast"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the stream notices and backs off
	if took, err := ittest.StopWithin(t, r, 15*time.Second); err != nil {
		t.Errorf("stop while Postgres is down: %v after %s, want a clean stop (nil)", err, took)
	}
}

// TestStopWhileStartingIsClean: a stop while a start-up step still retries
// (Postgres unreachable from the start) is a clean stop, not exit 1.
func TestStopWhileStartingIsClean(t *testing.T) {
	broker := kafkatest.New(t)
	cfg := config.DefaultConfig()
	cfg.Name = "nopg"
	cfg.Postgres.URL = "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2"
	cfg.Postgres.Tables = []string{"public.t"}
	cfg.Kafka.Brokers = []string{broker.Addr()}
	cfg.Metrics.Listen = ""
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	time.Sleep(1500 * time.Millisecond)
	if took, err := ittest.StopWithin(t, r, 10*time.Second); err != nil {
		t.Errorf("stop while Postgres is unreachable at start: %v after %s, want nil", err, took)
	}
}

// TestStopWhileTheRegistryIsRetriedIsClean: the stream waits for an
// unreachable schema registry; a stop ends the wait and is clean (nil),
// and the change is sent at the next start (nothing was confirmed).
func TestStopWhileTheRegistryIsRetriedIsClean(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	cfg := e.Config("noreg", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
	cfg.Format.SchemaRegistry.URL = "http://127.0.0.1:1"
	cfg.Heartbeat.Interval = 0 // its schemas would be registered at start
	core, logs := ittest.ObserverLogger()
	p, err := connector.New(cfg, core)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	e.Exec(`INSERT INTO t VALUES (1)`)
	inserted := e.LSN(`SELECT pg_current_wal_lsn()`)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the stream never waited for the registry", func() bool {
		return logs.FilterMessageSnippet("Schema Registry unavailable").Len() != 0
	})
	if took, err := ittest.StopWithin(t, r, 10*time.Second); err != nil {
		t.Errorf("stop while the registry is retried: %v after %s, want nil", err, took)
	}
	if after := e.LSN(`SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'mooncdc_noreg'`); after >= inserted {
		t.Errorf("the slot was confirmed past the insert that was never written (%X ≥ %X)", after, inserted)
	}
}

// TestBrokerThatIsNotKafkaIsAConfigError: kafka.brokers pointing at
// Postgres' port gives "not a Kafka broker" and exit 2, not franz-go's
// "invalid large response size 1157627904".
func TestBrokerThatIsNotKafkaIsAConfigError(t *testing.T) {
	e := ittest.NewEnv(t)
	cfg := e.Config("notkafka", "public.t")
	cfg.Kafka.Brokers = []string{fmt.Sprintf("127.0.0.1:%d", e.PG.Port())}
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	select {
	case err = <-r.Done:
		r.Done <- err
	case <-time.After(60 * time.Second):
		t.Fatal("run did not stop within 60s")
	}
	if connector.ExitCode(err) != connector.ExitConfig || !strings.Contains(err.Error(), "not a Kafka broker") ||
		!strings.Contains(err.Error(), "check kafka.brokers") {
		t.Errorf("got %v (exit %d), want a config error saying not a Kafka broker", err, connector.ExitCode(err))
	}
}
