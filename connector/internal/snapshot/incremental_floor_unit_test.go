package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/schema"
)

// The floor is one past the largest id assigned when the table was
// watched: a commit waiting for a synchronous standby is above the
// snapshot's xmax and not in its xip (F6: "736:736:" while 736 waits), so
// only its backend_xid shows it. On a hot standby (read once it has
// replayed past the stream's position at the watch: floorWait) the same
// formula: its xmax is one past the latest commit it replayed, and its
// backends have no xid.
func TestFloorIsOnePastTheLargestAssignedId(t *testing.T) {
	for _, tc := range []struct {
		name    string
		snap    string
		running []string
		want    uint64
		err     bool
	}{
		{"idle: xmax", "740:740:", nil, 740, false},
		{"a running id below xmax", "736:740:736", []string{"736"}, 740, false},
		{"a commit waiting in SyncRep at xmax (F6)", "736:736:", []string{"736"}, 737, false},
		{"prepared and running ids above xmax", "736:736:", []string{"738", "737"}, 739, false},
		{"widened into the snapshot's epoch", "4294967296:4294967300:", []string{"5"}, 4294967302, false},
		// F7: the primary's "747:749:747" is "747:749:" on its standby;
		// 747 is below the floor either way, and a window must see it.
		{"a standby's snapshot: its xmax", "747:749:", nil, 749, false},
		{"a standby listing a replayed prepared transaction", "747:749:", []string{"747"}, 749, false},
		{"not an id", "736:736:", []string{"x"}, 0, true},
		{"not a snapshot", "736", nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := floorOf(tc.snap, tc.running)
			if (err != nil) != tc.err || z != tc.want {
				t.Fatalf("floorOf(%q, %v) = %d, %v; want %d (error %v)", tc.snap, tc.running, z, err, tc.want, tc.err)
			}
		})
	}
}

// On a hot standby the floor waits until the standby has replayed past
// the stream's position at the watch: a stream from another server (the
// primary, through a multi-host postgres.url) may have carried commits the
// standby has not replayed, hence does not see, and whose ids may be at
// or above its xmax. A primary never waits.
func TestFloorWaitsForTheStandbyToReplayWhatTheStreamPassed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		inRecovery bool
		replay     string
		watched    schema.LSN
		wait, err  bool
	}{
		{"a primary", false, "", 0x3000, false, false},
		{"a standby that replayed past the stream", true, "0/3008", 0x3000, false, false},
		{"a standby exactly at the stream's position", true, "0/3000", 0x3000, false, false},
		{"a standby behind the stream", true, "0/2FF8", 0x3000, true, false},
		{"a standby that replayed nothing yet", true, "", 0x3000, true, false},
		{"a replay position that is not one", true, "3000", 0x3000, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, err := floorWait(tc.inRecovery, tc.replay, tc.watched)
			if wait != tc.wait || (err != nil) != tc.err {
				t.Fatalf("floorWait(%v, %q, %s) = %v, %v; want %v (error %v)", tc.inRecovery, tc.replay, tc.watched, wait, err, tc.wait, tc.err)
			}
		})
	}
}

// A chunk read on a standby is judged by the part of its snapshot that
// holds there (F7), with the replay position as its high watermark; on a
// primary, the snapshot as the server gave it, with the insert position.
func TestAWindowOnAStandbyIsJudgedByItsInRecoverySnapshot(t *testing.T) {
	for _, tc := range []struct {
		standby  bool
		snap     string
		want     string
		function string
	}{
		{false, "747:749:747", "747:749:747", "pg_current_wal_insert_lsn()::text"},
		{true, "747:749:", "747:747:", "pg_last_wal_replay_lsn()"},
		{true, "760:760:", "760:760:", "pg_last_wal_replay_lsn()"},
	} {
		s, err := windowSnapshot(tc.standby, tc.snap)
		if err != nil || s.String() != tc.want {
			t.Errorf("windowSnapshot(%v, %q) = %s, %v; want %s", tc.standby, tc.snap, s, err, tc.want)
		}
		if q := snapshotSQL(tc.standby); !strings.Contains(q, tc.function) || !strings.HasPrefix(q, "SELECT pg_current_snapshot()::text, ") {
			t.Errorf("snapshotSQL(%v) = %q: want the snapshot first, then %s", tc.standby, q, tc.function)
		}
	}
	if _, err := windowSnapshot(true, "747"); err == nil {
		t.Error("a snapshot text that is not one was taken")
	}
}

// The windows' budget: a reader waits while its estimate does not fit,
// except when nothing is held (a chunk larger than the budget reads alone).
func TestByteBudgetHoldsReadersBackUntilThereIsRoom(t *testing.T) {
	b := newByteBudget(100, nil)
	ctx := context.Background()
	if err := b.take(ctx, 150); err != nil {
		t.Fatal(err) // alone: goes over
	}
	got := make(chan error, 1)
	go func() { got <- b.take(ctx, 10) }()
	select {
	case err := <-got:
		t.Fatalf("a second reader went while the budget was over: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.adjust(-150)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- b.take(cctx, 95) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-got; err == nil {
		t.Fatal("a waiting reader did not give up when its context ended")
	}
}

// With the main worker's tracker, the windows' bytes are reserved there:
// a reader waits while records in flight leave no room for its estimate,
// though the windows' share has room, and what it holds, trued up to its
// rows, counts in the tracker's in-flight total until given back.
func TestByteBudgetReservesInTheMainTracker(t *testing.T) {
	main := delivery.NewTracker(0, 200_000, nil)
	b := newByteBudget(100_000, main)
	ctx := context.Background()
	a := main.Begin()
	main.Add(a, 150_000) // records in flight: room for less than 50,000 more
	got := make(chan error, 1)
	go func() { got <- b.take(ctx, 60_000) }()
	select {
	case err := <-got:
		t.Fatalf("a reader went beside records filling the bound: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	main.Ack(a, 150_000, nil)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	b.adjust(-10_000) // its rows took 50,000
	if main.Inflight() != 50_000 || main.Reserved() != 50_000 {
		t.Fatalf("main tracker: inflight %d, reserved %d; want 50000 and 50000", main.Inflight(), main.Reserved())
	}
	b.adjust(-50_000)
	if main.Inflight() != 0 || b.held != 0 {
		t.Fatalf("after the give back: inflight %d, held %d; want 0", main.Inflight(), b.held)
	}
}

func TestChunkPagesFitTheReadersInTheBudget(t *testing.T) {
	// 32 MiB (half of the default 64 MiB) for 4 readers of pages holding
	// 100 rows: (2*8192 + 100*1024) bytes a page.
	if got, want := chunkPagesFor(32<<20, 100, 4), uint32((32<<20)/4/(2*8192+100*1024)); got != want {
		t.Fatalf("chunkPagesFor = %d, want %d", got, want)
	}
	if got := chunkPagesFor(1<<40, 1, 1); got != maxChunkPages {
		t.Fatalf("chunkPagesFor with a huge budget = %d, want the cap %d", got, maxChunkPages)
	}
	if got := chunkPagesFor(1, 100, 8); got != 1 {
		t.Fatalf("chunkPagesFor with a tiny budget = %d, want 1 page", got)
	}
}

// A standby cancels a query that conflicts with its replay (a VACUUM
// truncating the table on the primary, replayed as an ACCESS EXCLUSIVE
// lock, after max_standby_streaming_delay): the chunk is read again.
// Anything else still fails the snapshot.
func TestARecoveryConflictReadsTheChunkAgain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Severity: "ERROR", Code: "40001", Message: "canceling statement due to conflict with recovery"}, true},
		{&pgconn.PgError{Severity: "FATAL", Code: "40001", Message: "terminating connection due to conflict with recovery"}, true},
		{fmt.Errorf("read (0,4) of t: %w", &pgconn.PgError{Code: "40P01", Message: "canceling statement due to conflict with recovery"}), true},
		{&pgconn.PgError{Code: "40001", Message: "could not serialize access due to concurrent update"}, false},
		{&pgconn.PgError{Code: "57014", Message: "canceling statement due to user request"}, false},
		{errors.New("canceling statement due to conflict with recovery"), false},
	} {
		if got := recoveryConflict(tc.err); got != tc.want {
			t.Errorf("recoveryConflict(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
