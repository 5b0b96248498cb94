package group

import "context"

// WaitSlotFreeForTest runs the standby's wait for its slot (a takeover's
// first step: waitSlotFree) until the slot is free or ctx ends. It is
// exported for the integration tests that share package connector's
// Postgres harness (connector/standby_slot_test.go); nothing else calls it.
func WaitSlotFreeForTest(ctx context.Context, s *Standby) { s.waitSlotFree(ctx) }
