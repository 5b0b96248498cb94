package connector_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// newSmallWALEnv is an env whose cluster invalidates a slot that holds
// more than 1 MB of WAL back (max_slot_wal_keep_size).
func newSmallWALEnv(t *testing.T) *env {
	t.Helper()
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"max_slot_wal_keep_size": "1MB", "min_wal_size": "32MB", "max_wal_size": "64MB"}
	})
	return &env{t: t, pg: pg, kafka: kafkatest.New(t).Addr()}
}

// invalidate writes WAL past max_slot_wal_keep_size and checkpoints until
// Postgres marks slot lost.
func (e *env) invalidate(slot string) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		e.exec(`INSERT INTO filler SELECT g FROM generate_series(1, 2000) g`)
		e.exec(`SELECT pg_switch_wal()`)
		if i%3 == 2 {
			e.exec(`CHECKPOINT`)
			if e.walStatus(slot) == "lost" {
				return
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("slot %s not lost after 60s (wal_status %q)", slot, e.walStatus(slot))
		}
	}
}

func (e *env) walStatus(slot string) string {
	e.t.Helper()
	conn, err := e.pg.Connect(context.Background(), "postgres")
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var s *string
	if err := conn.QueryRow(context.Background(), `SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&s); err != nil {
		e.t.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return *s
}

// wantSlotLost checks that err is the lost-slot unsafe resume: exit 3 and
// a message that says what is gone and names mooncdc reset.
func wantSlotLost(t *testing.T, err error) {
	t.Helper()
	if code := connector.ExitCode(err); code != connector.ExitUnsafeResume {
		t.Fatalf("exit code %d (%v), want %d", code, err, connector.ExitUnsafeResume)
	}
	for _, want := range []string{`replication slot "mooncdc_lost" was invalidated (wal_status lost)`, "max_slot_wal_keep_size",
		"mooncdc reset --config <your config> --drop-slot"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestInvalidatedSlotAtStartIsAnUnsafeResume: a slot that Postgres
// invalidated while mooncdc was stopped ends run with exit 3 and the
// advice, not exit 1 and a bare "cannot read from logical replication
// slot" that a supervisor would restart forever.
func TestInvalidatedSlotAtStartIsAnUnsafeResume(t *testing.T) {
	e := newSmallWALEnv(t)
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	e.exec(`CREATE TABLE public.filler (n int)`)
	cfg := e.config("lost", "public.t")
	r := start(t, cfg)
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	e.invalidate("mooncdc_lost")

	p, err := connector.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wantSlotLost(t, p.Run(ctx))
}

// TestInvalidatedSlotWhileStreamingIsAnUnsafeResume: Kafka holds every
// record, so nothing is confirmed and the slot keeps its WAL; Postgres
// invalidates it (ending the walsender), and run ends with exit 3 and the
// advice instead of reconnecting forever.
func TestInvalidatedSlotWhileStreamingIsAnUnsafeResume(t *testing.T) {
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"max_slot_wal_keep_size": "1MB", "min_wal_size": "32MB", "max_wal_size": "64MB"}
	})
	broker := kafkatest.New(t)
	e := &env{t: t, pg: pg, kafka: broker.Addr()}
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY)`)
	e.exec(`CREATE TABLE public.filler (n int)`)
	cfg := e.config("lost", "public.t")
	cfg.Heartbeat.Interval = 0
	r := start(t, cfg)

	holdProduce(t, broker, "lost.public.t")
	e.exec(`INSERT INTO t VALUES (1)`) // held by Kafka: the slot is confirmed no further
	time.Sleep(500 * time.Millisecond)
	e.invalidate("mooncdc_lost")

	var err error
	select {
	case err = <-r.done:
		r.done <- err
	case <-time.After(90 * time.Second):
		t.Fatal("run did not stop within 90s of the slot's invalidation")
	}
	wantSlotLost(t, err)
	if errors.Is(err, connector.ErrAborted) {
		t.Fatal("aborted, not stopped")
	}
}
