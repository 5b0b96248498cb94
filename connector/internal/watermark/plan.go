package watermark

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Chunk is a range of a table's heap pages, [First, End): the rows whose
// ctid is at or after (First,0) and before (End,0). A chunk is read with
// one TID range scan under one snapshot.
type Chunk struct {
	First, End uint32
}

// Pages is the number of pages in the chunk.
func (c Chunk) Pages() uint32 { return c.End - c.First }

func (c Chunk) String() string { return fmt.Sprintf("pages [%d, %d)", c.First, c.End) }

// Plan splits pages [0, pages) into chunks of chunkPages pages (the last
// may be shorter). pages must be the table's size in pages read after
// the snapshot starts, that is after Tracker.Watch of the table
// (pg_relation_size(oid) / block_size, not the planner's estimate): a row that exists when the snapshot starts and is
// never changed after lies on a page that existed then, and any other row
// reaches the topic through its change record.
func Plan(pages, chunkPages uint32) ([]Chunk, error) {
	if chunkPages == 0 {
		return nil, errors.New("plan chunks of 0 pages")
	}
	var out []Chunk
	for first := uint32(0); first < pages; {
		end := first + min(chunkPages, pages-first)
		out = append(out, Chunk{First: first, End: end})
		first = end
	}
	return out, nil
}

// ChunkPages is the chunk size in pages that lets readers windows hold
// their rows at once within budget bytes (the share of
// kafka.max_inflight_bytes given to incremental snapshots), for rows
// that take bytesPerPage bytes per heap page once decoded: at least one
// page, at most maxPages.
func ChunkPages(budget, bytesPerPage int64, readers int, maxPages uint32) uint32 {
	if budget <= 0 || bytesPerPage <= 0 || readers <= 0 {
		return 1
	}
	n := budget / int64(readers) / bytesPerPage
	return uint32(max(1, min(n, int64(maxPages))))
}

// Split cuts c at page at, First < at < End: a reader whose rows outgrow
// its share of the budget stops at a page boundary, its window ends with
// [First, at), and [at, End) is read in a window of its own.
func (c Chunk) Split(at uint32) (Chunk, Chunk, error) {
	if at <= c.First || at >= c.End {
		return c, Chunk{}, fmt.Errorf("split %s at page %d: the page must be inside the chunk", c, at)
	}
	return Chunk{c.First, at}, Chunk{at, c.End}, nil
}

// Progress is an incremental snapshot's chunk progress, as the table's
// offsets record keeps it ("incremental": see docs/incremental-snapshots.md):
// the plan's page count and the table's relfilenode when it was made,
// and the page ranges whose windows are written (and acknowledged, or
// committed with this record). Done ranges are merged and ascending.
type Progress struct {
	Pages       uint32      `json:"pages"`
	Relfilenode uint32      `json:"relfilenode"`
	Done        [][2]uint32 `json:"done"` // [first, end) page ranges
	Rows        int64       `json:"rows"`
	ChunkPages  uint32      `json:"chunk_pages"`
	StartedMs   int64       `json:"started_ms"`
	// Filter is the additional-conditions filter of a filtered snapshot.
	Filter string `json:"filter,omitempty"`
	// StaleMark is the topic's end offset per partition when the stale
	// keys were first read: a key whose last record precedes it was left
	// by an earlier copy (docs/snapshots.md, the resumable copy's rule).
	StaleMark map[string]int64 `json:"stale_mark,omitempty"`
	// StaleMarks are the same marks of the other topics the transform
	// chain routes the table's records to, by topic (docs/snapshots.md,
	// "Stale keys and transforms").
	StaleMarks map[string]map[string]int64 `json:"stale_marks,omitempty"`
	Paused     bool                        `json:"paused"`
	// CorrelationID is the execute-snapshot signal's id ("" for another
	// request): the notifications' id, kept for a resume as Debezium keeps
	// its correlation id in its offsets (AbstractIncrementalSnapshotContext.java:295
	// at v3.6.1.Final).
	CorrelationID string `json:"correlation_id,omitempty"`
	// Repair marks the snapshot of a repair: a lost slot's gap, a table
	// added back (offsets.IncrementalRepair): if it cannot finish, the table is
	// copied with the blocking copy rather than left with the gap.
	Repair bool `json:"repair,omitempty"`
}

// MarkDone records that c's window was written with rows rows.
func (p *Progress) MarkDone(c Chunk, rows int) error {
	if c.End > p.Pages || c.First >= c.End {
		return fmt.Errorf("mark %s done in a plan of %d pages", c, p.Pages)
	}
	for _, d := range p.Done {
		if c.First < d[1] && d[0] < c.End {
			return fmt.Errorf("mark %s done: it overlaps [%d, %d), done already", c, d[0], d[1])
		}
	}
	p.Done = append(p.Done, [2]uint32{c.First, c.End})
	slices.SortFunc(p.Done, func(a, b [2]uint32) int { return int(int64(a[0]) - int64(b[0])) })
	merged := p.Done[:1]
	for _, d := range p.Done[1:] {
		if last := &merged[len(merged)-1]; last[1] == d[0] {
			last[1] = d[1]
			continue
		}
		merged = append(merged, d)
	}
	p.Done = merged
	p.Rows += int64(rows)
	return nil
}

// Remaining returns the chunks of at most ChunkPages pages that cover
// the pages not done, in page order: what a resumed snapshot still reads.
func (p *Progress) Remaining() ([]Chunk, error) {
	chunkPages := p.ChunkPages
	if chunkPages == 0 {
		return nil, errors.New("progress without chunk_pages: plan chunks of 0 pages")
	}
	var out []Chunk
	gap := func(first, end uint32) {
		for first < end {
			next := first + min(chunkPages, end-first)
			out = append(out, Chunk{first, next})
			first = next
		}
	}
	at := uint32(0)
	for _, d := range p.Done {
		gap(at, d[0])
		at = d[1]
	}
	gap(at, p.Pages)
	return out, nil
}

// Finished reports whether every page is done.
func (p *Progress) Finished() bool {
	return p.Pages == 0 || (len(p.Done) == 1 && p.Done[0] == [2]uint32{0, p.Pages})
}

// ParseProgress reads a Progress from its offsets record form, checking
// that the ranges are in the plan, ascending and not overlapping.
func ParseProgress(data []byte) (Progress, error) {
	var p Progress
	if err := json.Unmarshal(data, &p); err != nil {
		return Progress{}, fmt.Errorf("incremental snapshot progress: %w", err)
	}
	if p.ChunkPages == 0 {
		return Progress{}, errors.New("incremental snapshot progress: chunk_pages is 0")
	}
	at := uint32(0)
	for i, d := range p.Done {
		if d[0] >= d[1] || d[1] > p.Pages || (i > 0 && d[0] <= at) {
			return Progress{}, fmt.Errorf("incremental snapshot progress: done range %v is empty, out of the plan's %d pages, or out of order", d, p.Pages)
		}
		at = d[1]
	}
	return p, nil
}
