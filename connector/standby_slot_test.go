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

	"github.com/mooncdc/mooncdc/connector"
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
	s, err := connector.NewStandby(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	connector.WaitSlotFreeForTest(wctx, s)

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
