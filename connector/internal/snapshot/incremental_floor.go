package snapshot

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/watermark"
)

// This file holds the pure parts of an incremental snapshot's start: the
// floor its windows must see, the chunk size, and the byte budget its
// windows share.

// floorSQL reads what floorOf needs, on any connection, after the table
// is watched: the current snapshot, whether the server is in recovery,
// and the top-level xids that are assigned and not yet visible to every
// new snapshot: those of running transactions (pg_stat_activity's
// backend_xid, which a backend keeps while its commit waits for a
// synchronous standby, F6) and of prepared ones (pg_prepared_xacts, kept
// until COMMIT PREPARED's wait ends, F2).
const floorSQL = `SELECT pg_current_snapshot()::text, pg_is_in_recovery(),
	coalesce((SELECT array_agg(backend_xid::text) FROM pg_stat_activity WHERE backend_xid IS NOT NULL), '{}'),
	coalesce((SELECT array_agg(transaction::text) FROM pg_prepared_xacts), '{}')`

// floorOf returns Z, one past the largest transaction id assigned when
// the table was watched: snap's xmax (one past the latest completed id)
// or one past a running or prepared id (32-bit, widened against snap's
// xmax), whichever is larger. Every transaction the stream carried
// before the Tracker recorded it was committed by then, so it has an id
// below Z; a window whose snapshot sees every id below Z sees them all
// (docs/incremental-snapshots.md, "The floor").
func floorOf(snapText string, inRecovery bool, running []string) (uint64, error) {
	s, err := watermark.ParseSnapshot(snapText)
	if err != nil {
		return 0, err
	}
	if inRecovery {
		// A standby's pg_stat_activity shows none of the primary's
		// transactions; the wiring for a standby source is not done.
		return 0, fmt.Errorf("incremental snapshots on a hot standby are not wired yet (pg_is_in_recovery() is true): ask for a blocking one (\"type\": \"blocking\")")
	}
	z := s.Xmax
	for _, text := range running {
		x, err := strconv.ParseUint(text, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("a running transaction id %q: %w", text, err)
		}
		if f := watermark.FullXid(uint32(x), s.Xmax) + 1; f > z {
			z = f
		}
	}
	return z, nil
}

// incrementalChunkPages is the chunk size in pages when set (tests ask
// for small chunks: many windows); 0 sizes chunks from the budget.
var incrementalChunkPages uint32

// SetIncrementalChunkPages sets the chunk size of incremental snapshots
// in pages (0: from the memory budget) and returns the previous value.
// For tests.
func SetIncrementalChunkPages(n uint32) uint32 {
	prev := incrementalChunkPages
	incrementalChunkPages = n
	return prev
}

// incrementalReadDelay is a pause before each chunk's read (tests: a
// snapshot slow enough to be stopped midway); 0 in production.
var incrementalReadDelay time.Duration

// SetIncrementalReadDelay sets a pause before each chunk an incremental
// snapshot reads and returns the previous one. For tests.
func SetIncrementalReadDelay(d time.Duration) time.Duration {
	prev := incrementalReadDelay
	incrementalReadDelay = d
	return prev
}

// maxChunkPages bounds a chunk: a window holds its rows until the stream
// passes its high watermark, and a small chunk closes sooner.
const maxChunkPages = 1024

// chunkPagesFor sizes chunks so that readers windows fit in budget
// (half of kafka.max_inflight_bytes) at pageBytes(rowsPerPage) a page.
func chunkPagesFor(budget int64, rowsPerPage float64, readers int) uint32 {
	if incrementalChunkPages > 0 {
		return incrementalChunkPages
	}
	return watermark.ChunkPages(budget, pageBytes(rowsPerPage), readers, maxChunkPages)
}

// rowBytes is what a row takes in a window once encoded, beyond its heap
// bytes: the envelope (source block, op, timestamps; the key) and the
// record's in-flight cost (delivery's recordCost, 320). Measured: a row of
// (bigint, bigint, 40-character text) as a JSON record held 1,104 bytes.
const rowBytes = 1024

// pageBytes estimates the bytes a heap page's rows take once encoded:
// the page's bytes twice (a value's text is at most about twice its heap
// form) plus rowBytes a row.
func pageBytes(rowsPerPage float64) int64 {
	return int64(2*8192 + rowsPerPage*rowBytes)
}

// byteBudget is the bytes the windows of incremental snapshots hold
// together: a reader takes its chunk's estimate before it reads, and
// gives back what it holds when its window ends. One reader may always
// go when nothing is held, so a chunk larger than the budget still
// reads (alone).
type byteBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	held  int64
}

func newByteBudget(limit int64) *byteBudget {
	b := &byteBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// take waits until n bytes fit (or nothing is held), or ctx ends.
func (b *byteBudget) take(ctx context.Context, n int64) error {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.held > 0 && b.held+n > b.limit {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	b.held += n
	return nil
}

// adjust changes what a reader holds by d (its rows' actual size minus
// its estimate; negative gives back).
func (b *byteBudget) adjust(d int64) {
	b.mu.Lock()
	b.held += d
	b.mu.Unlock()
	if d < 0 {
		b.cond.Broadcast()
	}
}
