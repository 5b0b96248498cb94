package watermark

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestPlanCoversEveryPageOnce(t *testing.T) {
	for _, c := range []struct {
		pages, per uint32
		want       []Chunk
	}{
		{0, 4, nil},
		{1, 4, []Chunk{{0, 1}}},
		{8, 4, []Chunk{{0, 4}, {4, 8}}},
		{10, 4, []Chunk{{0, 4}, {4, 8}, {8, 10}}},
		{3, 1, []Chunk{{0, 1}, {1, 2}, {2, 3}}},
		{1<<32 - 1, 1 << 31, []Chunk{{0, 1 << 31}, {1 << 31, 1<<32 - 1}}}, // no overflow at the top
	} {
		got, err := Plan(c.pages, c.per)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Plan(%d, %d) = %v, %v; want %v", c.pages, c.per, got, err, c.want)
		}
	}
	if _, err := Plan(5, 0); err == nil {
		t.Error("Plan with chunks of 0 pages")
	}
}

func TestChunkPagesKeepsReadersWithinTheBudget(t *testing.T) {
	for _, c := range []struct {
		budget, perPage int64
		readers         int
		maxPages, want  uint32
	}{
		{64 << 20, 8 << 10, 4, 1 << 20, 2048}, // 64 MiB over 4 readers of 8 KiB pages: 16 MiB each
		{64 << 20, 8 << 10, 4, 1000, 1000},    // capped
		{1 << 10, 8 << 10, 4, 1000, 1},        // at least a page: a window always holds one
		{0, 8 << 10, 4, 1000, 1},
		{64 << 20, 0, 4, 1000, 1},
	} {
		if got := ChunkPages(c.budget, c.perPage, c.readers, c.maxPages); got != c.want {
			t.Errorf("ChunkPages(%d, %d, %d, %d) = %d, want %d", c.budget, c.perPage, c.readers, c.maxPages, got, c.want)
		}
	}
}

func TestSplitCutsAtAPageInside(t *testing.T) {
	a, b, err := Chunk{4, 12}.Split(7)
	if err != nil || a != (Chunk{4, 7}) || b != (Chunk{7, 12}) {
		t.Fatalf("Split = %v %v %v", a, b, err)
	}
	for _, at := range []uint32{4, 12, 3, 13} {
		if _, _, err := (Chunk{4, 12}).Split(at); err == nil {
			t.Errorf("Split at %d taken", at)
		}
	}
}

func TestProgressResumesFromTheChunksNotDone(t *testing.T) {
	p := Progress{Pages: 20, Relfilenode: 16390, ChunkPages: 3, StartedMs: 1764670000000, StaleMark: map[string]int64{"0": 4711}}
	for _, c := range []Chunk{{4, 8}, {0, 4}, {12, 14}, {14, 16}} { // done out of order, as parallel windows end
		if err := p.MarkDone(c, 10); err != nil {
			t.Fatal(err)
		}
	}
	if want := [][2]uint32{{0, 8}, {12, 16}}; !slices.Equal(p.Done, want) {
		t.Fatalf("done %v, want %v", p.Done, want)
	}
	if err := p.MarkDone(Chunk{6, 10}, 1); err == nil {
		t.Error("a chunk overlapping a done one was marked done")
	}
	if err := p.MarkDone(Chunk{18, 21}, 1); err == nil {
		t.Error("a chunk past the plan was marked done")
	}
	rest, err := p.Remaining()
	if want := []Chunk{{8, 11}, {11, 12}, {16, 19}, {19, 20}}; err != nil || !slices.Equal(rest, want) {
		t.Fatalf("remaining %v %v, want %v", rest, err, want)
	}
	// The offsets record's shape, read back after a restart.
	data, _ := json.Marshal(p)
	if string(data) != `{"pages":20,"relfilenode":16390,"done":[[0,8],[12,16]],"rows":40,"chunk_pages":3,"started_ms":1764670000000,"stale_mark":{"0":4711},"paused":false}` {
		t.Fatalf("record %s", data)
	}
	back, err := ParseProgress(data)
	if err != nil || !slices.Equal(back.Done, p.Done) || back.Rows != 40 || back.ChunkPages != 3 || back.StaleMark["0"] != 4711 || back.Finished() {
		t.Fatalf("read back %+v %v", back, err)
	}
	for _, c := range rest {
		if err := back.MarkDone(c, 0); err != nil {
			t.Fatal(err)
		}
	}
	if !back.Finished() {
		t.Fatalf("not finished: %+v", back)
	}
	for _, bad := range []string{
		`{"pages":20,"chunk_pages":2,"done":[[8,4]]}`, `{"pages":20,"chunk_pages":2,"done":[[0,21]]}`,
		`{"pages":20,"chunk_pages":2,"done":[[4,8],[0,2]]}`, `{"pages":20,"chunk_pages":2,"done":[[0,4],[4,8]]}`,
		`{"pages":20,"chunk_pages":2,"done":[[0,4],[2,8]]}`, `{"pages":"x"}`, `{"pages":20,"done":[]}`,
	} {
		if _, err := ParseProgress([]byte(bad)); err == nil {
			t.Errorf("%s taken", bad)
		}
	}
}
