package connector_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector/group"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestStandbyWaitsWhenItCannotEndAnotherRolesWalsender: a new active
// instance ends the walsender still holding its slot (standby.go
// waitSlotFree), but Postgres refuses when that walsender runs as another
// role and mooncdc's role has no pg_signal_backend. The instance then
// says so once, with the fix, keeps waiting for the slot (writing
// nothing), and does not ask again; the walsender lives on.
func TestStandbyWaitsWhenItCannotEndAnotherRolesWalsender(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE ROLE other LOGIN REPLICATION; CREATE ROLE moon LOGIN REPLICATION`)
	e.exec(`SELECT pg_create_logical_replication_slot('mooncdc_held', 'pgoutput')`)
	e.exec(`CREATE PUBLICATION held_pub FOR ALL TABLES`)

	// The slot's walsender, as role other.
	ctx := context.Background()
	otherURL := strings.Replace(e.pg.URL("postgres"), "postgres@", "other@", 1)
	rc, err := pgconn.Connect(ctx, otherURL+"&replication=database")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close(ctx)
	if err := pglogrepl.StartReplication(ctx, rc, "mooncdc_held", 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names 'held_pub'"}}); err != nil {
		t.Fatal(err)
	}

	cfg := e.config("held", "public.t")
	cfg.Postgres.URL = strings.Replace(e.pg.URL("postgres"), "postgres@", "moon@", 1)
	cfg.Postgres.Slot = "mooncdc_held"
	cfg.HA.Enabled = true
	core, logs := observer.New(zap.InfoLevel)
	s, err := group.NewStandby(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	group.WaitSlotFreeForTest(wctx, s)

	refused := logs.FilterMessageSnippet("cannot end the walsender still holding the slot").All()
	if len(refused) != 1 || !strings.Contains(refused[0].Message, "pg_signal_backend") {
		for _, l := range logs.All() {
			t.Logf("%s %s %v", l.Level, l.Message, l.ContextMap())
		}
		t.Fatalf("%d warnings of the refused termination, want 1 naming the fix", len(refused))
	}
	if n := logs.FilterMessageSnippet("cannot see whether the slot is free").Len(); n != 0 {
		t.Errorf("the refusal was reported as an unreadable slot %d times", n)
	}
	var active bool
	conn, err := e.pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = 'mooncdc_held'`).Scan(&active); err != nil || !active {
		t.Errorf("the other role's walsender: active %v (%v), want still holding the slot", active, err)
	}
}

// TestStandbyEndsAWalsenderWhoseClientStoppedReading is issue 27's paused
// active instance seen from Postgres: the slot's walsender (same role)
// streams to a client that stopped reading (a SIGSTOP: its socket stays
// open, its receive buffer fills), so the walsender waits to write. A new
// active instance must still end it and have the slot within seconds, not
// after wal_sender_timeout (60 s).
func TestStandbyEndsAWalsenderWhoseClientStoppedReading(t *testing.T) {
	e := newEnv(t)
	e.exec(`CREATE TABLE public.t (id int PRIMARY KEY, pad text)`)
	e.exec(`SELECT pg_create_logical_replication_slot('mooncdc_stopped', 'pgoutput')`)
	e.exec(`CREATE PUBLICATION stopped_pub FOR ALL TABLES`)

	ctx := context.Background()
	rc, err := pgconn.Connect(ctx, e.pg.URL("postgres")+"&replication=database")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close(ctx)
	if err := pglogrepl.StartReplication(ctx, rc, "mooncdc_stopped", 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names 'stopped_pub'"}}); err != nil {
		t.Fatal(err)
	}
	// The client reads nothing from here on: more changes than the
	// sockets' buffers hold.
	for i := range 4 {
		e.exec(`INSERT INTO t SELECT g, repeat(md5(g::text), 16) FROM generate_series($1::int, $2::int) g`, i*50000, i*50000+49999)
	}
	var wait string
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the walsender does not wait to write", func() bool {
		e.scan(`SELECT coalesce(a.wait_event, '') FROM pg_replication_slots s JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE s.slot_name = 'mooncdc_stopped'`, &wait)
		return wait == "WalSenderWriteData"
	})

	cfg := e.config("stopped", "public.t")
	cfg.Postgres.Slot = "mooncdc_stopped"
	cfg.HA.Enabled = true
	core, logs := observer.New(zap.InfoLevel)
	s, err := group.NewStandby(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	group.WaitSlotFreeForTest(wctx, s)
	took := time.Since(began)
	var active bool
	e.scan(`SELECT active FROM pg_replication_slots WHERE slot_name = 'mooncdc_stopped'`, &active)
	if active {
		for _, l := range logs.All() {
			t.Logf("%s %s %v", l.Level, l.Message, l.ContextMap())
		}
		t.Fatalf("the slot is still held %v after the takeover began, want free within 5 s", took.Round(time.Millisecond))
	}
	if took > 5*time.Second {
		t.Errorf("the slot was free %v after the takeover began, want within 5 s", took.Round(time.Millisecond))
	}
	t.Logf("slot free %v after the takeover began", took.Round(time.Millisecond))
}
