package snapshot

import (
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// TestCopySlotNames: a copy slot's name is valid for Postgres (at most 63
// bytes of a-z, 0-9 and _) whatever the pipeline slot's length, belongs to
// one pipeline slot and table, and the sweep recognises exactly the names
// it makes.
func TestCopySlotNames(t *testing.T) {
	long := strings.Repeat("s", 63)
	for _, slot := range []string{"mooncdc_shop", strings.Repeat("a", 40), strings.Repeat("a", 41), long} {
		for _, oid := range []uint32{1, 16384, 4294967295} {
			name := pgsource.CopySlotName(slot, oid)
			if len(name) > 63 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
				t.Errorf("CopySlotName(%q, %d) = %q: not a valid slot name", slot, oid, name)
			}
			if !strings.HasPrefix(name, pgsource.CopySlotPrefix(slot)) || !pgsource.IsCopySlot(slot, name) {
				t.Errorf("%q is not recognised as a copy slot of %q", name, slot)
			}
			if name == pgsource.CopySlotName(slot, oid+1) || name == pgsource.CopySlotName(slot+"x", oid) {
				t.Errorf("%q names two copies", name)
			}
		}
	}
	for _, name := range []string{
		"mooncdc_shop",                                     // the pipeline's own slot
		"mooncdc_shop_copy_16384",                          // looks like one, without the tag
		"mooncdc_shop_copy_16384_000000",                   // a wrong tag
		pgsource.CopySlotName("mooncdc_shop", 16384) + "x", // more after it
		"mooncdc_shop_copy_77_1_2",                         // a temporary copy slot (copy.go)
		pgsource.CopySlotName("mooncdc_shop2", 16384),      // another pipeline's
	} {
		if pgsource.IsCopySlot("mooncdc_shop", name) {
			t.Errorf("%q taken for a copy slot of mooncdc_shop", name)
		}
	}
}

// TestResumablePlan: a resumed copy's chunks are the plan's not done, the
// last one open-ended, numbered as in the plan.
func TestResumablePlan(t *testing.T) {
	p := &offsets.CopyProgress{Slot: "s", ChunkPages: 10, Chunks: 5, Done: []offsets.ChunkRange{{0, 1}, {3, 3}}}
	rs := &resumable{from: p, cur: p}
	got := rs.chunks(tableInfo{rowFilter: "a > 1"}, 100)
	want := []chunk{{20, 30, "a > 1"}, {40, -1, "a > 1"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("chunks %v, want %v", got, want)
	}
	if rs.indexOf(got[0]) != 2 || rs.indexOf(got[1]) != 4 {
		t.Fatalf("chunk numbers %d, %d; want 2, 4", rs.indexOf(got[0]), rs.indexOf(got[1]))
	}

	// A first attempt records the plan it copies.
	fresh := &resumable{}
	parts := fresh.chunks(tableInfo{reltuples: 1000, relpages: 100}, 250)
	if fresh.chunkCount != len(parts) || fresh.pages != parts[0].to-parts[0].from || parts[len(parts)-1].to != -1 {
		t.Fatalf("plan %d chunks of %d pages for %v", fresh.chunkCount, fresh.pages, parts)
	}
	for i, ch := range parts {
		if fresh.indexOf(ch) != i {
			t.Fatalf("chunk %v numbered %d, want %d", ch, fresh.indexOf(ch), i)
		}
	}
}

// TestSameTable: progress resumes only on the table it was made on.
func TestSameTable(t *testing.T) {
	p := &offsets.CopyProgress{RelFileNode: 7, Shape: "x"}
	for _, tt := range []struct {
		node  uint32
		shape string
		want  string
	}{
		{7, "x", ""},
		{8, "x", "rewritten"},
		{7, "y", "changed"},
	} {
		if got := sameTable(p, tt.node, tt.shape); tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("sameTable(%d, %q) = %q, want %q", tt.node, tt.shape, got, tt.want)
		}
	}
	rel := &schema.Relation{Schema: "public", Table: "t", Columns: []schema.Column{{Name: "id", TypeOID: 23, Key: true}}}
	a := copyShape(tableInfo{rel: rel}, "")
	if a == copyShape(tableInfo{rel: rel, rowFilter: "id > 1"}, "") || a == copyShape(tableInfo{rel: rel}, "id > 1") {
		t.Error("a row filter does not change the copy's shape")
	}
}

// TestConfirmAtMost: a session on a persistent copy slot never confirms
// past its start.
func TestConfirmAtMost(t *testing.T) {
	tr := &resumeProgress{Tracker: delivery.NewTracker(500, 1<<20, nil)}
	if got := (snapshotPoint{lsn: 100, persistent: true}).capped(tr).Durable(); got != 100 {
		t.Errorf("persistent slot: confirms %s, want 0/64", got)
	}
	if got := (snapshotPoint{lsn: 100}).capped(tr).Durable(); got != 500 {
		t.Errorf("temporary slot: confirms %s, want the durable LSN", got)
	}
}

// TestTopicChanged: a resumed copy trusts its topic only when it still has
// the partitions it had and none ends before the mark.
func TestTopicChanged(t *testing.T) {
	mark := map[int32]int64{0: 10, 1: 0}
	for _, tt := range []struct {
		mark, ends map[int32]int64
		changed    bool
	}{
		{mark, map[int32]int64{0: 10, 1: 0}, false},
		{mark, map[int32]int64{0: 50, 1: 7}, false},
		{nil, map[int32]int64{0: 5}, false},
		{mark, map[int32]int64{0: 9, 1: 7}, true},
		{mark, map[int32]int64{0: 50, 1: 7, 2: 0}, true},
		{mark, map[int32]int64{0: 50}, true},
		{mark, map[int32]int64{0: 50, 2: 7}, true},
	} {
		if got := topicChanged(tt.mark, tt.ends); (got != "") != tt.changed {
			t.Errorf("topicChanged(%v, %v) = %q, want changed %v", tt.mark, tt.ends, got, tt.changed)
		}
	}
}
