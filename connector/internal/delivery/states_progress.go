package delivery

import (
	"encoding/json"
	"slices"

	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file keeps the ordered writer of table states from taking back an
// incremental snapshot's chunks in exactly-once mode.
//
// There a window's progress is committed in the main worker's Kafka
// transaction with its rows (MainSink.WithUnit), and only noted in the
// table's state in memory later (within a second: snapshot's
// incrementalTable.note). Any other change of the table's state while its
// snapshot runs (a shape change, a park: made on the main worker's
// goroutine, or by the snapshotter) is written by the ordered writer of
// table states, another client, with the state in memory. Two orders
// made that record take chunks back:
//
//	the main worker commits window k's progress Pk ── the table's shape
//	changes: the ordered writer writes its state with the progress in
//	memory, Pk-1 or older (not noted yet) ── a crash
//
//	the ordered writer is handed the state with Pk ── the main worker
//	commits window k+1's progress Pk+1 ── the ordered writer's record
//	lands after it ── a crash before the next commit
//
// and the next run read those chunks again (their `r` rows twice). So:
// the ordered writer writes, for a table whose progress the main worker
// committed, the newest committed progress when it is ahead of the one the
// state holds (newestProgress); and a commit that holds a table's progress
// first waits for every record handed to the ordered writer before
// (eosMain.commit: settled). A progress taken into a transaction not yet
// committed is never written here: that transaction may be aborted.

// The other way round: the state a window takes into the main worker's
// transaction is made when the window closes, and written at the commit,
// after any record the ordered writer was handed meanwhile:
//
//	window k closes: its state (ready, Pk, shape S1) is taken ── the
//	table's shape changes to S2, or the main worker parks it (errored at
//	the change it cannot write): the ordered writer writes that ── the
//	commit writes the window's state
//
// and the table's last record went back to S1, or to ready: a parked
// table read back as streaming, whose changes after the park the main
// worker had skipped. So the commit writes the newest state the ordered
// writer was handed since the window's was made, with the window's
// progress when it is ahead (overlay), and nothing when that state has no
// progress (the snapshot was given up: its state stands).

// handedState is a state handed to the ordered writer, and its number.
type handedState struct {
	ts  *phases.State
	seq uint64
}

// seq returns the number of records handed to the ordered writer so far.
func (w *StateWriter) seq() uint64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// handed counts ts, handed over, and keeps it as its table's newest
// while the table's incremental snapshot runs. w.mu is held.
func (w *StateWriter) handed(ts *phases.State) {
	w.n++
	table := ts.Table.Table
	if _, ok := w.latest[table]; !ok && ts.Incremental == "" {
		return
	}
	if w.latest == nil {
		w.latest = map[string]handedState{}
	}
	w.latest[table] = handedState{ts, w.n}
}

// overlay returns the state to write at the commit for ts, a state a
// window took into the main worker's transaction when the ordered writer
// had been handed seq records: ts, or the newest state handed over since
// with ts's progress when ts's is ahead, or nil when that state has no
// progress.
func (w *StateWriter) overlay(ts *phases.State, seq uint64) *phases.State {
	if w == nil {
		return ts
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.latest[ts.Table.Table]
	if !ok || l.seq <= seq {
		return ts
	}
	if l.ts.Incremental == "" {
		return nil
	}
	next := *l.ts
	var p, q watermark.Progress
	if json.Unmarshal([]byte(ts.Incremental), &p) == nil && json.Unmarshal([]byte(l.ts.Incremental), &q) == nil && ahead(p, q) {
		next.Incremental = ts.Incremental
	}
	next.ResnapshotMs = max(next.ResnapshotMs, ts.ResnapshotMs)
	return &next
}

// committedProgress records that the main worker committed ts, a table's
// state with its incremental progress, in its Kafka transaction.
func (w *StateWriter) committedProgress(ts *phases.State) {
	if w == nil || ts.Incremental == "" {
		return
	}
	var p watermark.Progress
	if json.Unmarshal([]byte(ts.Incremental), &p) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.committed == nil {
		w.committed = map[string]watermark.Progress{}
	}
	w.committed[ts.Table.Table] = p
}

// newestProgress returns ts, or a copy of it with the newest committed
// progress of its table when that one is ahead of ts's: the same plan
// (started at the same time, the same pages of the same relfilenode), with
// every range ts's has done and more. A state without progress (the
// snapshot ended or was given up) forgets the table's. w.mu is held.
func (w *StateWriter) newestProgress(ts *phases.State) *phases.State {
	table := ts.Table.Table
	c, ok := w.committed[table]
	if !ok {
		return ts
	}
	if ts.Incremental == "" {
		delete(w.committed, table)
		return ts
	}
	var p watermark.Progress
	if json.Unmarshal([]byte(ts.Incremental), &p) != nil || !ahead(c, p) {
		return ts
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return ts
	}
	next := *ts
	next.Incremental = offsets.RawJSON(raw)
	return &next
}

// ahead reports whether c is p's plan with more pages done, every range of
// p's among them.
func ahead(c, p watermark.Progress) bool {
	if c.StartedMs != p.StartedMs || c.Pages != p.Pages || c.Relfilenode != p.Relfilenode || c.ChunkPages != p.ChunkPages {
		return false
	}
	for _, d := range p.Done {
		if !slices.ContainsFunc(c.Done, func(e [2]uint32) bool { return e[0] <= d[0] && d[1] <= e[1] }) {
			return false
		}
	}
	return donePages(c) > donePages(p)
}

func donePages(p watermark.Progress) uint32 {
	var n uint32
	for _, d := range p.Done {
		n += d[1] - d[0]
	}
	return n
}
