package ittest

import (
	"context"
	"time"
)

// Invalidate writes WAL past max_slot_wal_keep_size and checkpoints until
// Postgres marks slot lost.
func (e *Env) Invalidate(slot string) {
	e.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		e.Exec(`INSERT INTO filler SELECT g FROM generate_series(1, 2000) g`)
		e.Exec(`SELECT pg_switch_wal()`)
		if i%3 == 2 {
			e.Exec(`CHECKPOINT`)
			if e.WalStatus(slot) == "lost" {
				return
			}
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("slot %s not lost after 60s (wal_status %q)", slot, e.WalStatus(slot))
		}
	}
}

// WalStatus is slot's wal_status ("" when the slot has none).
func (e *Env) WalStatus(slot string) string {
	e.T.Helper()
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		e.T.Fatal(err)
	}
	defer conn.Close(context.Background())
	var s *string
	if err := conn.QueryRow(context.Background(), `SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&s); err != nil {
		e.T.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return *s
}

// DropSlot drops the replication slot, as a user would after stopping
// mooncdc: a stopped pipeline has closed its replication connection, but
// the server ends that walsender a moment later, and until then the slot
// is active and pg_drop_replication_slot refuses it (SQLSTATE 55006).
// DropSlot waits up to 30 s for the slot to be free.
func (e *Env) DropSlot(slot string) {
	e.T.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var active bool
		e.Scan(`SELECT coalesce((SELECT active FROM pg_replication_slots WHERE slot_name = '`+slot+`'), false)`, &active)
		if !active {
			break
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("slot %s still active 30 s after its pipeline stopped", slot)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.Exec(`SELECT pg_drop_replication_slot($1)`, slot)
}
