package connector_test

import (
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// startSeated runs cfg's pipeline as a standby seat runs it (ha.enabled:
// connector.SeatForTest) and waits until it streams.
func startSeated(t *testing.T, cfg config.Config, label string) *ittest.Running {
	t.Helper()
	p, err := connector.New(cfg, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Named(label))
	if err != nil {
		t.Fatalf("new pipeline: %v", err)
	}
	connector.SeatForTest(p)
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	return r
}

// lastN is the n of key id's last record in the topic (read_committed),
// -1 when there is none.
func lastN(t *testing.T, addr, topic string, id float64) float64 {
	t.Helper()
	n := -1.0
	for _, ev := range ittest.Consume(t, addr, -1, topic) {
		if ev.After != nil && ev.After["id"] == id {
			n = ev.After["n"].(float64)
		}
	}
	return n
}

// TestPausedActiveCannotWriteAfterItsSuccessor is issue 27's paused active
// instance in at-least-once mode with standby instances, in one process:
// the active A stops (a SIGSTOP, a stopped VM) between its sink opening a
// unit and sending its records, holding an UPDATE it decoded; its
// successor B takes the slot (ending A's walsender, as waitSlotFree does)
// and the transactional ids, and streams the same UPDATE and a newer one;
// then A goes on. A's late records must be refused by the broker (B's
// InitProducerID bumped the epoch of <name>-main), so the key's last value
// in Kafka stays B's newest, and A must stop as fenced (exit code 4). With
// a plain idempotent producer, A's stale n = 2 would land after B's n = 3
// (the compacted topic would end stale, as issue 27 saw).
func TestPausedActiveCannotWriteAfterItsSuccessor(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.t (id int PRIMARY KEY, n int NOT NULL)`)
	e.Exec(`INSERT INTO t VALUES (1, 0)`)
	cfg := e.Config("pause", "public.t")
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.ApplyDefaults() // the slot's name
	const topic = "pause.public.t"
	a := startSeated(t, cfg, "A")
	e.Exec(`UPDATE t SET n = 1 WHERE id = 1`)
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "A's first update is not in Kafka", func() bool {
		return lastN(t, e.Kafka, topic, 1) == 1
	})

	// A pauses on its next transaction, after its sink began the unit.
	paused, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a.P.Hooks().Set(func(point, _ string) {
		if point == connector.HookMainBegin {
			once.Do(func() {
				close(paused)
				<-release
			})
		}
	})
	e.Exec(`UPDATE t SET n = 2 WHERE id = 1`)
	select {
	case <-paused:
	case <-time.After(60 * time.Second):
		t.Fatal("A did not begin the update's transaction")
	}
	// B takes over, as a standby does once A's session expired.
	e.Exec(`SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, cfg.Postgres.Slot)
	eventually.True(t, 30*time.Second, 50*time.Millisecond, "A's walsender still holds the slot", func() bool {
		var active bool
		e.Scan(`SELECT active FROM pg_replication_slots WHERE slot_name = '`+cfg.Postgres.Slot+`'`, &active)
		return !active
	})
	b := startSeated(t, cfg, "B")
	e.Exec(`UPDATE t SET n = 3 WHERE id = 1`)
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "B's update is not in Kafka", func() bool {
		return lastN(t, e.Kafka, topic, 1) == 3
	})

	// A resumes: its records of n = 2 go to the broker now.
	close(release)
	select {
	case err := <-a.Done:
		a.Done <- err
		if code := connector.ExitCode(err); code != connector.ExitFenced {
			t.Errorf("A ended with exit code %d (%v), want %d (fenced)", code, err, connector.ExitFenced)
		}
	case <-time.After(60 * time.Second):
		t.Error("A, resumed after its successor took over, is still running")
	}
	// Give a late write every chance to land, then read the key's last value.
	time.Sleep(2 * time.Second)
	if n := lastN(t, e.Kafka, topic, 1); n != 3 {
		t.Fatalf("key 1's last value in Kafka is n = %v, want 3 (B's): the paused instance wrote after its successor", n)
	}
	if stopped, err := b.Stopped(); stopped {
		t.Fatalf("B stopped: %v", err)
	}
}
