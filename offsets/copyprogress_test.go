package offsets

import (
	"reflect"
	"strings"
	"testing"
)

// TestCopyProgressEncodeDecode: a table record with a copy's progress
// reads back as written, and a record without one (an older version's)
// reads back as no progress.
func TestCopyProgressEncodeDecode(t *testing.T) {
	full := &CopyProgress{Slot: "mooncdc_shop_copy_16384", SnapshotLSN: 100, BaseLSN: 250, ChunkPages: 1200, Chunks: 50,
		Done: []ChunkRange{{0, 3}, {5, 5}, {9, 49}}, Rows: 4_100_000, RelFileNode: 16390, Shape: "1x2y3z",
		StaleMark: map[int32]int64{0: 120, 1: 0, 11: 98765}, ResnapshotMs: 1700000000123}
	tests := []struct {
		name  string
		table Table
		json  string // the value as written
	}{
		{name: "no progress (older records)", table: Table{Table: "public.orders", OID: 1, Phase: PhaseCopying, Attempts: 2, UpdatedMs: 9},
			json: `{"oid":1,"phase":"copying","lsn":0,"attempts":2,"ts_ms":9}`},
		{name: "progress", table: Table{Table: "public.orders", OID: 1, Phase: PhaseCopying, Attempts: 1, UpdatedMs: 9, Copy: full},
			json: `{"oid":1,"phase":"copying","lsn":0,"attempts":1,"ts_ms":9,"copy":{"slot":"mooncdc_shop_copy_16384","snapshot_lsn":100,` +
				`"base_lsn":250,"chunk_pages":1200,"chunks":50,"done":[[0,3],[5,5],[9,49]],"rows":4100000,"relfilenode":16390,"shape":"1x2y3z",` +
				`"stale_mark":{"0":120,"1":0,"11":98765},"resnapshot_ms":1700000000123}}`},
		{name: "progress without chunks done or marks", table: Table{Table: "public.orders", OID: 1, Phase: PhaseErrored, Retry: "2030-01-01T00:00:00Z",
			Copy: &CopyProgress{Slot: "s_copy_1", SnapshotLSN: 7, BaseLSN: 7, ChunkPages: 1, Chunks: 2}},
			json: `{"oid":1,"phase":"errored","lsn":0,"attempts":0,"retry":"2030-01-01T00:00:00Z","ts_ms":0,"copy":{"slot":"s_copy_1","snapshot_lsn":7,` +
				`"base_lsn":7,"chunk_pages":1,"chunks":2,"rows":0,"relfilenode":0,"shape":""}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := TableRecord("t", "shop", tt.table)
			if string(rec.Value) != tt.json {
				t.Fatalf("written as\n%s\nwant\n%s", rec.Value, tt.json)
			}
			var st State
			if err := Decode("shop", rec.Key, rec.Value, &st); err != nil {
				t.Fatal(err)
			}
			if got := st.Tables["public.orders"]; !reflect.DeepEqual(got, tt.table) {
				t.Fatalf("read back %+v (copy %+v), want %+v (copy %+v)", got, got.Copy, tt.table, tt.table.Copy)
			}
			if tt.table.Copy != nil {
				if err := st.Tables["public.orders"].Copy.Validate(); err != nil {
					t.Fatalf("a valid progress reads back invalid: %v", err)
				}
			}
		})
	}
}

func TestCopyProgressValidate(t *testing.T) {
	ok := CopyProgress{Slot: "s", SnapshotLSN: 5, BaseLSN: 9, ChunkPages: 10, Chunks: 4, Done: []ChunkRange{{0, 1}, {3, 3}}}
	tests := []struct {
		name    string
		change  func(p *CopyProgress)
		wantErr string
	}{
		{name: "valid", change: func(*CopyProgress) {}},
		{name: "all done", change: func(p *CopyProgress) { p.Done = []ChunkRange{{0, 3}} }},
		{name: "none done", change: func(p *CopyProgress) { p.Done = nil }},
		{name: "no slot", change: func(p *CopyProgress) { p.Slot = "" }, wantErr: "no slot"},
		{name: "no chunks", change: func(p *CopyProgress) { p.Chunks = 0 }, wantErr: "plan of 0 chunks"},
		{name: "no pages", change: func(p *CopyProgress) { p.ChunkPages = 0 }, wantErr: "of 0 pages"},
		{name: "base before snapshot", change: func(p *CopyProgress) { p.BaseLSN = 4 }, wantErr: "base_lsn 4 before snapshot_lsn 5"},
		{name: "negative rows", change: func(p *CopyProgress) { p.Rows = -1 }, wantErr: "rows -1"},
		{name: "range past the plan", change: func(p *CopyProgress) { p.Done = []ChunkRange{{2, 4}} }, wantErr: "outside the 4 chunks"},
		{name: "negative range", change: func(p *CopyProgress) { p.Done = []ChunkRange{{-1, 0}} }, wantErr: "outside"},
		{name: "reversed range", change: func(p *CopyProgress) { p.Done = []ChunkRange{{2, 1}} }, wantErr: "outside"},
		{name: "unsorted", change: func(p *CopyProgress) { p.Done = []ChunkRange{{3, 3}, {0, 1}} }, wantErr: "not sorted"},
		{name: "overlapping", change: func(p *CopyProgress) { p.Done = []ChunkRange{{0, 2}, {2, 3}} }, wantErr: "not sorted"},
		{name: "adjacent", change: func(p *CopyProgress) { p.Done = []ChunkRange{{0, 1}, {2, 3}} }, wantErr: "apart"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.change(&p)
			err := p.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("want an error with %q, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestCopyProgressDoneSet(t *testing.T) {
	tests := []struct {
		name      string
		done      []ChunkRange
		add       []int
		want      []ChunkRange
		wantCount int
	}{
		{name: "first", add: []int{0}, want: []ChunkRange{{0, 0}}, wantCount: 1},
		{name: "unordered with repeats", add: []int{4, 2, 3, 2, 9}, want: []ChunkRange{{2, 4}, {9, 9}}, wantCount: 4},
		{name: "bridges two ranges", done: []ChunkRange{{0, 1}, {3, 4}}, add: []int{2}, want: []ChunkRange{{0, 4}}, wantCount: 5},
		{name: "already done", done: []ChunkRange{{0, 4}}, add: []int{3}, want: []ChunkRange{{0, 4}}, wantCount: 5},
		{name: "nothing new", done: []ChunkRange{{1, 1}}, want: []ChunkRange{{1, 1}}, wantCount: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &CopyProgress{Slot: "s", ChunkPages: 1, Chunks: 10, Done: tt.done, Rows: 7}
			q := p.WithDone(tt.add, 3)
			if !reflect.DeepEqual(q.Done, tt.want) || q.DoneCount() != tt.wantCount || q.Rows != 10 {
				t.Fatalf("done %v (%d chunks, %d rows), want %v (%d, 10)", q.Done, q.DoneCount(), q.Rows, tt.want, tt.wantCount)
			}
			if !reflect.DeepEqual(p.Done, tt.done) || p.Rows != 7 {
				t.Fatalf("WithDone changed its receiver: %v, %d rows", p.Done, p.Rows)
			}
			for i := 0; i < 10; i++ {
				want := false
				for _, r := range tt.want {
					want = want || i >= r[0] && i <= r[1]
				}
				if q.IsDone(i) != want {
					t.Errorf("IsDone(%d) = %v", i, !want)
				}
			}
			if err := q.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
