package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// TestCheckFailoverSlotSettings: with postgres.slot_failover, check reads
// what PostgreSQL 17's failover slots need on the primary and on each
// standby of a multi-host postgres.url, names each setting missing, and
// skips a host it cannot reach.
func TestCheckFailoverSlotSettings(t *testing.T) {
	bin, err := pgtest.MajorBinDir(t.Context(), 17)
	if err != nil {
		t.Fatalf("PostgreSQL 17 server binaries: %v", err)
	}
	primary := pgtest.New(t, func(o *pgtest.Options) { o.BinDir = bin })
	standby := pgtest.NewStandby(t, primary, "standby1", nil)
	broker := kafkatest.New(t)
	gone := checkClosedAddr(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d,%s/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.Port(), standby.Port(), gone)
	cfg := writeConfig(t, "name: fo\npostgres:\n  slot_failover: true\nmetrics:\n  listen: \"\"\n")
	args := []string{"--config", cfg, "--postgres-url", url, "--brokers", broker.Addr()}
	sbWhat := fmt.Sprintf("standby 127.0.0.1:%d", standby.Port())

	_, lines := checkRun(t, args...)
	checkWantLine(t, lines, "! synchronized_standby_slots: is empty", "ALTER SYSTEM SET synchronized_standby_slots")
	checkWantLine(t, lines, "✗ "+sbWhat+": does not synchronize the failover slot: it needs sync_replication_slots = on")
	checkWantLine(t, lines, "- standby "+gone+" skipped: unreachable")

	ctx := context.Background()
	for _, c := range []struct {
		pg  *pgtest.Cluster
		sql string
	}{
		{primary, `ALTER SYSTEM SET synchronized_standby_slots = 'standby1'`}, {primary, `SELECT pg_reload_conf()`},
		{standby, `ALTER SYSTEM SET sync_replication_slots = on`}, {standby, `SELECT pg_reload_conf()`},
	} {
		if err := c.pg.Exec(ctx, "", c.sql); err != nil {
			t.Fatal(err)
		}
	}
	_, lines = checkRun(t, args...)
	checkWantLine(t, lines, "✓ synchronized_standby_slots: logical decoding waits for standby1")
	checkWantLine(t, lines, "✓ "+sbWhat+`: synchronizes the failover slot (through physical slot "standby1")`)
}
