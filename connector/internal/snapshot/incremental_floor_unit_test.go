package snapshot

import (
	"context"
	"testing"
	"time"
)

// The floor is one past the largest id assigned when the table was
// watched: a commit waiting for a synchronous standby is above the
// snapshot's xmax and not in its xip (F6: "736:736:" while 736 waits), so
// only its backend_xid shows it.
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
		{"not an id", "736:736:", []string{"x"}, 0, true},
		{"not a snapshot", "736", nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := floorOf(tc.snap, false, tc.running)
			if (err != nil) != tc.err || z != tc.want {
				t.Fatalf("floorOf(%q, %v) = %d, %v; want %d (error %v)", tc.snap, tc.running, z, err, tc.want, tc.err)
			}
		})
	}
	if _, err := floorOf("736:736:", true, nil); err == nil {
		t.Fatal("a standby's floor was computed; its pg_stat_activity shows none of the primary's transactions")
	}
}

// The windows' budget: a reader waits while its estimate does not fit,
// except when nothing is held (a chunk larger than the budget reads alone).
func TestByteBudgetHoldsReadersBackUntilThereIsRoom(t *testing.T) {
	b := newByteBudget(100)
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
