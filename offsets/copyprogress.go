package offsets

import (
	"errors"
	"fmt"
	"slices"
)

// CopyProgress is how far a resumable table copy got ([Table.Copy]): its
// plan of heap-page chunks, the chunks whose records Kafka holds, and what
// a later attempt needs to resume from there instead of from zero. The
// connector writes it at each checkpoint of a copy and drops it at the
// handover; a record without it (older versions, a copy never
// checkpointed) has no progress. This package only stores it: what the
// fields guarantee is the connector's (connector/internal/snapshot/copy_resume.go).
//
// A value is treated as immutable: the With* methods return changed
// copies, so a *CopyProgress may be shared between table states.
type CopyProgress struct {
	// Slot is the copy's persistent replication slot, created with the
	// snapshot of the first attempt; it retains the WAL from BaseLSN on.
	Slot string `json:"slot"`
	// SnapshotLSN is the first attempt's snapshot: where Slot was created.
	SnapshotLSN uint64 `json:"snapshot_lsn"`
	// BaseLSN (B): the records in Kafka hold the rows of the done chunks as
	// they are at B (after every change committed before B); the changes
	// from B on are still to be written.
	BaseLSN uint64 `json:"base_lsn"`
	// ChunkPages and Chunks are the plan: chunk i holds heap pages
	// [i*ChunkPages, (i+1)*ChunkPages), the last one every page from its
	// start on.
	ChunkPages int64 `json:"chunk_pages"`
	Chunks     int   `json:"chunks"`
	// Done lists the done chunks as sorted, disjoint, non-adjacent
	// inclusive ranges [first, last].
	Done []ChunkRange `json:"done,omitempty"`
	// Rows is the number of rows in the done chunks (as copied).
	Rows int64 `json:"rows"`
	// RelFileNode and Shape identify the table's storage and published
	// shape at the first attempt: a rewrite (VACUUM FULL, CLUSTER,
	// TRUNCATE, ALTER TABLE … TYPE) or a new shape makes the progress void.
	RelFileNode uint32 `json:"relfilenode"`
	Shape       string `json:"shape"`
	// StaleMark is the data topic's end offset per partition when the
	// first attempt read the topic's keys: a key whose last record lies
	// before it was not written by this copy (a missing partition: 0).
	StaleMark map[int32]int64 `json:"stale_mark,omitempty"`
	// ResnapshotMs is the table's ResnapshotMs when the copy began: a newer
	// resnapshot request is a new copy, which does not resume this one.
	ResnapshotMs int64 `json:"resnapshot_ms,omitempty"`
}

// ChunkRange is an inclusive range of chunk numbers [first, last],
// written as a JSON array of two numbers.
type ChunkRange [2]int

// Validate reports why p cannot describe a copy's progress, or nil.
func (p *CopyProgress) Validate() error {
	var errs []error
	if p.Slot == "" {
		errs = append(errs, errors.New("no slot"))
	}
	if p.Chunks < 1 || p.ChunkPages < 1 {
		errs = append(errs, fmt.Errorf("plan of %d chunks of %d pages", p.Chunks, p.ChunkPages))
	}
	if p.BaseLSN < p.SnapshotLSN {
		errs = append(errs, fmt.Errorf("base_lsn %d before snapshot_lsn %d", p.BaseLSN, p.SnapshotLSN))
	}
	if p.Rows < 0 {
		errs = append(errs, fmt.Errorf("rows %d", p.Rows))
	}
	for i, r := range p.Done {
		switch {
		case r[0] < 0 || r[1] < r[0] || r[1] >= p.Chunks:
			errs = append(errs, fmt.Errorf("done range %v outside the %d chunks", r, p.Chunks))
		case i > 0 && r[0] <= p.Done[i-1][1]+1:
			errs = append(errs, fmt.Errorf("done ranges %v and %v not sorted, disjoint and apart", p.Done[i-1], r))
		}
	}
	return errors.Join(errs...)
}

// IsDone reports whether chunk i is done.
func (p *CopyProgress) IsDone(i int) bool {
	for _, r := range p.Done {
		if i >= r[0] && i <= r[1] {
			return true
		}
	}
	return false
}

// DoneCount is the number of done chunks.
func (p *CopyProgress) DoneCount() int {
	n := 0
	for _, r := range p.Done {
		n += r[1] - r[0] + 1
	}
	return n
}

// WithDone returns a copy of p with the chunks in done added to the done
// set and rows added to Rows.
func (p *CopyProgress) WithDone(done []int, rows int64) *CopyProgress {
	q := *p
	var all []int
	for _, r := range p.Done {
		for i := r[0]; i <= r[1]; i++ {
			all = append(all, i)
		}
	}
	all = append(all, done...)
	q.Done = ChunkRanges(all)
	q.Rows += rows
	return &q
}

// ChunkRanges returns the chunk numbers in chunks (any order, repeats
// allowed) as sorted, disjoint, non-adjacent ranges; nil for none.
func ChunkRanges(chunks []int) []ChunkRange {
	s := slices.Clone(chunks)
	slices.Sort(s)
	s = slices.Compact(s)
	var out []ChunkRange
	for _, c := range s {
		if n := len(out); n > 0 && out[n-1][1]+1 == c {
			out[n-1][1] = c
			continue
		}
		out = append(out, ChunkRange{c, c})
	}
	return out
}
