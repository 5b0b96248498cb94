package snapshot

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// TestProgressWrittenWithAUnitClaimsOnlyChunksNotLost: the progress an
// exactly-once delivery writes with a window's rows (inUnit) counts the
// chunks durable, those in units not lost (committed, or in the open
// Kafka transaction) and the window's own, never one of a unit an abort
// lost; once its units are durable it is noted in memory, not stored
// again (the ordered writer's record could land after a newer one).
func TestProgressWrittenWithAUnitClaimsOnlyChunksNotLost(t *testing.T) {
	tracker := delivery.NewTracker(100, 1<<20, nil)
	tracker.Gate()
	stored := 0
	rules := phases.New(100, map[string]*phases.State{"public.t": {Table: offsets.Table{Table: "public.t", Phase: offsets.PhaseReady}}})
	rules.Store = func(*phases.State) func(context.Context) error {
		stored++
		return func(context.Context) error { return nil }
	}
	it := &incrementalTable{s: &Snapshotter{phases: rules}, c: &copier{main: tracker}, name: "public.t", log: zap.NewNop(),
		prog: watermark.Progress{Pages: 10, ChunkPages: 1, Done: [][2]uint32{{0, 1}}}}
	unit := func(end schema.LSN) *delivery.TxAck {
		a := tracker.Begin()
		tracker.Commit(a, end)
		return a
	}
	done := func(ts *phases.State) [][2]uint32 {
		var p watermark.Progress
		if err := json.Unmarshal([]byte(ts.Incremental), &p); err != nil {
			t.Fatal(err)
		}
		return p.Done
	}

	lostUnit := unit(200) // its Kafka transaction is aborted below
	if ts := it.inUnit(watermark.Chunk{First: 1, End: 2}, 5, lostUnit); !slices.Equal(done(ts), [][2]uint32{{0, 2}}) {
		t.Fatalf("first window: done %v", done(ts))
	}
	tracker.Restart() // the abort
	open := unit(300)
	ts := it.inUnit(watermark.Chunk{First: 2, End: 3}, 5, open)
	if got, want := done(ts), [][2]uint32{{0, 1}, {2, 3}}; !slices.Equal(got, want) {
		t.Fatalf("after an abort: done %v, want %v (the aborted chunk left out)", got, want)
	}
	if ts.Phase != offsets.PhaseReady || ts.Table.Table != "public.t" {
		t.Fatalf("state %+v", ts)
	}
	same := unit(350) // a later unit in the same open Kafka transaction
	if got, want := done(it.inUnit(watermark.Chunk{First: 3, End: 4}, 5, same)), [][2]uint32{{0, 1}, {2, 4}}; !slices.Equal(got, want) {
		t.Fatalf("second window of the transaction: done %v, want %v", got, want)
	}
	if cur := rules.Get("public.t"); len(cur.Incremental) != 0 || stored != 0 {
		t.Fatalf("before the commit the state in memory has %s (stored %d), want nothing", cur.Incremental, stored)
	}

	tracker.SetCeiling(400) // the Kafka commit
	moved, inUnit, err := it.markDone()
	if err != errWindowLost || !moved || !inUnit {
		t.Fatalf("markDone: moved %v stored %v err %v, want the committed chunks moved and errWindowLost", moved, inUnit, err)
	}
	if err := it.keep(context.Background(), moved, inUnit); err != nil {
		t.Fatal(err)
	}
	if got, want := done(rules.Get("public.t")), [][2]uint32{{0, 1}, {2, 4}}; !slices.Equal(got, want) || stored != 0 {
		t.Fatalf("after the commit: done in memory %v (stored %d), want %v and nothing stored", got, stored, want)
	}
}
