package emit

import (
	"time"

	"github.com/jackc/pglogrepl"
	"go.uber.org/zap"
)

// This file is what the main worker shows of its open watermark windows
// (LiveStatus, `mooncdc status`) and a window's longest life: one open
// longer than WindowLife is voided, and its chunk read again.

// WindowLife is a window's longest life: one open longer is voided and its
// chunk read again (docs/incremental-snapshots.md, "A window's longest
// life"). A window lives from its chunk's snapshot until the stream
// passes the snapshot's high watermark, milliseconds to seconds; one that
// lives minutes is held by a stalled stream or a blocked read, and would
// hold up to a chunk's share of kafka.max_inflight_bytes (and its dropped
// keys) as long as that lasts. Debezium has no equivalent: its window is
// the stream's events between two signal-table writes, buffered until the
// close marker arrives, with no bound on how long that takes
// (AbstractIncrementalSnapshotChangeEventSource.java:111-120 at
// v3.6.1.Final, closeWindow; no timeout in its package). A constant: a
// window that lives that long is wrong whatever the table, and reading its
// chunk again costs one chunk.
const WindowLife = 5 * time.Minute

// WindowStatus is an open window as status shows it.
type WindowStatus struct {
	ID uint64 `json:"id"`
	// FirstPage and EndPage are its chunk's page range [FirstPage, EndPage).
	FirstPage uint32    `json:"first_page"`
	EndPage   uint32    `json:"end_page"`
	Opened    time.Time `json:"opened"`
	// AgeSeconds is how long it has been open, when the status was taken.
	AgeSeconds float64 `json:"age_seconds"`
	// Rows and Bytes are what it holds (0 while its chunk is read).
	Rows  int `json:"rows"`
	Bytes int `json:"bytes"`
	// Read: its chunk is read; WaitingForStream: read, and the stream has
	// not passed High, its high watermark, yet.
	Read             bool   `json:"read"`
	WaitingForStream bool   `json:"waiting_for_stream"`
	High             string `json:"high_watermark"`
	// Void is why it will write nothing (its chunk is read again).
	Void string `json:"void,omitempty"`
}

// shownWindow is a window as the stream goroutine last published it.
type shownWindow struct {
	table uint32
	st    WindowStatus
}

// SetName names table in status and logs (the reader calls it before
// Watch). Safe for concurrent use.
func (q *Incremental) SetName(table uint32, name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.names == nil {
		q.names = map[uint32]string{}
	}
	q.names[table] = name
}

// name is table's name, or its oid. Callers hold q.mu.
func (q *Incremental) nameLocked(table uint32) string {
	if n, ok := q.names[table]; ok {
		return n
	}
	return "oid " + itoa(table)
}

func itoa(n uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			return string(b[i:])
		}
	}
}

// OpenWindows returns the open windows by table name, as the stream
// goroutine last published them (at most a transaction or a tick of the
// session loop ago), with their ages at now. Safe for concurrent use; nil
// when none is open.
func (q *Incremental) OpenWindows(now time.Time) map[string][]WindowStatus {
	if q == nil {
		return nil
	}
	shown := q.shown.Load()
	if shown == nil || len(*shown) == 0 {
		return nil
	}
	out := map[string][]WindowStatus{}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, w := range *shown {
		st := w.st
		st.AgeSeconds = max(now.Sub(st.Opened).Seconds(), 0)
		name := q.nameLocked(w.table)
		out[name] = append(out[name], st)
	}
	return out
}

// show publishes the open windows for OpenWindows, when they changed since
// the last time (stream goroutine only).
func (q *Incremental) show() {
	if !q.changed {
		return
	}
	q.changed = false
	if q.t == nil || q.t.OpenWindows() == 0 {
		q.shown.Store(nil)
		return
	}
	ws := q.t.Windows()
	out := make([]shownWindow, len(ws))
	for i, w := range ws {
		out[i] = shownWindow{table: w.Table(), st: WindowStatus{ID: w.ID(), FirstPage: w.Chunk().First, EndPage: w.Chunk().End,
			Opened: w.Opened(), Rows: w.Rows(), Bytes: w.Bytes(), Read: w.Read(), High: w.High().String(), Void: w.Void(),
			WaitingForStream: w.Read() && w.Void() == "" && pglogrepl.LSN(q.pos) < w.High()}}
	}
	q.shown.Store(&out)
}

// expire voids the windows open longer than their longest life, with a
// warning each (stream goroutine only).
func (q *Incremental) expire(now time.Time) {
	if q.t == nil || q.t.OpenWindows() == 0 {
		return
	}
	life := q.Life
	if life <= 0 {
		life = WindowLife
	}
	gone := q.t.Expire(now, life, pglogrepl.LSN(q.pos))
	if len(gone) == 0 {
		return
	}
	q.changed = true
	if q.Log == nil {
		return
	}
	q.mu.Lock()
	names := make([]string, len(gone))
	for i, x := range gone {
		names[i] = q.nameLocked(x.Table)
	}
	q.mu.Unlock()
	for i, x := range gone {
		q.Log.Warn("an incremental snapshot's window lived past its longest life and is voided; its chunk is read again",
			zap.String("table", names[i]), zap.Uint64("window", x.ID), zap.Stringer("chunk", x.Chunk),
			zap.Duration("age", x.Age), zap.String("why", x.Why))
	}
}
