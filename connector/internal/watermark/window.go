package watermark

import (
	"time"

	"github.com/jackc/pglogrepl"
)

// Key is a record's key as a window compares it: the encoded message key
// (the primary key, the replica identity index, or format.message_key_columns),
// as a string so that it is comparable. Two rows with the same Key are
// one key to the window, whether or not the key columns are unique.
type Key string

// Row is one row a chunk read, with its key and its size in bytes (what
// it holds of kafka.max_inflight_bytes until it is written).
type Row[R any] struct {
	Key   Key
	Value R
	Size  int
}

// Window is one chunk's watermark window: the chunk's transaction
// snapshot, the stream position from which every transaction that
// snapshot sees has been streamed (High), the keys that transactions the
// snapshot does not see changed (they must not be written as `r`
// records), and, once the chunk is read, its rows. A Tracker owns its
// windows; the methods here only read.
type Window[R any] struct {
	id    uint64
	table uint32
	chunk Chunk
	snap  Snapshot
	high  pglogrepl.LSN
	// opened is when Open made the window (the Tracker's clock): Expire
	// voids a window past its longest life.
	opened time.Time

	dropped  map[Key]struct{}
	void     string // why the window cannot be written; its chunk is read again
	complete bool
	rows     []Row[R]
	bytes    int

	// The last stream xid this window judged, and the verdict: a
	// transaction's changes arrive one by one with the same xid.
	lastXid     uint32
	lastVisible bool
}

// ID is the window's number, in the order the Tracker opened them.
func (w *Window[R]) ID() uint64 { return w.id }

// Table is the oid of the window's table.
func (w *Window[R]) Table() uint32 { return w.table }

// Chunk is the page range the window's rows were read from.
func (w *Window[R]) Chunk() Chunk { return w.chunk }

// Snapshot is the chunk's transaction snapshot (the low watermark, in
// DBLog's words: what the rows reflect).
func (w *Window[R]) Snapshot() Snapshot { return w.snap }

// High is the high watermark: the WAL position read right after the
// snapshot was taken. Every transaction the snapshot sees has a commit
// record before it, so once the stream has passed High nothing the rows
// reflect is still to come.
func (w *Window[R]) High() pglogrepl.LSN { return w.high }

// Closable reports whether Advance(pos) would return w: its chunk is
// read (or abandoned) and pos is at or past its high watermark (or it is
// void).
func (w *Window[R]) Closable(pos pglogrepl.LSN) bool {
	return w.complete && (w.void != "" || pos >= w.high)
}

// Bytes is the size of the rows the window holds.
func (w *Window[R]) Bytes() int { return w.bytes }

// Rows is the number of rows the window holds (0 before its chunk is
// read, and once void).
func (w *Window[R]) Rows() int { return len(w.rows) }

// Opened is when the window was opened, by the Tracker's clock.
func (w *Window[R]) Opened() time.Time { return w.opened }

// Read reports whether the window's chunk was read (Complete) or given
// up (Abandon): from then on it waits for the stream to pass High.
func (w *Window[R]) Read() bool { return w.complete }

// Void is why the window will write nothing ("" while it may).
func (w *Window[R]) Void() string { return w.void }

// drop records that key changed in a transaction the snapshot does not
// see: a row of the chunk with that key is older than a change the stream
// has written, and is not written.
func (w *Window[R]) drop(key Key, limit int) {
	if w.void != "" {
		return
	}
	if _, ok := w.dropped[key]; ok {
		return
	}
	if len(w.dropped) >= limit {
		w.voidBecause("more keys changed during the window than the tracker keeps")
		return
	}
	w.dropped[key] = struct{}{}
}

// voidBecause gives up the window: a change it could not attribute to a
// key (a TRUNCATE, a key column left out as unchanged TOAST, a
// transaction whose keys were not recorded) may have touched any of its
// rows, and dropping them all would lose rows whose keys the stream does
// not carry. Its chunk is read again under a new snapshot instead.
func (w *Window[R]) voidBecause(why string) {
	if w.void == "" {
		w.void = why
		w.dropped = nil
		w.rows = nil
		w.bytes = 0
	}
}

// Closed is what a window hands back when it ends: either the rows to
// write as `r` records, at the stream position where Advance returned it
// and before anything the stream writes after, or Void with the reason
// and no rows (read the chunk again).
type Closed[R any] struct {
	ID      uint64
	Table   uint32
	Chunk   Chunk
	Rows    []Row[R] // in the order the chunk read them
	Dropped int      // rows left out: their keys changed in transactions the snapshot does not see
	Void    string   // non-empty: nothing to write, read Chunk again
}
