package snapshot

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds an incremental snapshot's start: the floor its windows
// must see (computed by pure functions, read by readFloor, on a hot
// standby once it has replayed what the stream passed), the server it
// reads on, the chunk size, and the byte budget its windows share.

// floorSQL reads what floorOf needs, on any connection, after the table
// is watched: the current snapshot, and the top-level xids that are
// assigned and not yet visible to every new snapshot: those of running
// transactions (pg_stat_activity's backend_xid, which a backend keeps
// while its commit waits for a synchronous standby, F6) and of prepared
// ones (pg_prepared_xacts, kept until COMMIT PREPARED's wait ends, F2).
// On a hot standby only the snapshot matters (its backends assign no
// xid; prepared transactions it lists only raise Z, which is safe), and
// it is read once the standby has replayed past the stream's position at
// the watch (floorWait).
const floorSQL = `SELECT pg_current_snapshot()::text,
	coalesce((SELECT array_agg(backend_xid::text) FROM pg_stat_activity WHERE backend_xid IS NOT NULL), '{}'),
	coalesce((SELECT array_agg(transaction::text) FROM pg_prepared_xacts), '{}')`

// replaySQL tells whether the server is a hot standby, and how far it has
// replayed (NULL outside recovery).
const replaySQL = `SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn()::text, '')`

// floorOf returns Z, one past the largest transaction id assigned when
// the table was watched: snap's xmax (one past the latest completed id)
// or one past a running or prepared id (32-bit, widened against snap's
// xmax), whichever is larger. Every transaction the stream carried
// before the Tracker recorded it was committed by then, so it has an id
// below Z; a window whose snapshot sees every id below Z sees them all
// (docs/incremental-snapshots.md, "The floor").
//
// On a hot standby the same formula holds for a snapshot taken once the
// standby has replayed every commit the stream carried before the watch
// (floorWait): replaying a commit record removes its xid from
// KnownAssignedXids and advances latestCompletedXid
// (ExpireTreeKnownAssignedTransactionIds, procarray.c) before the replay
// position moves past the record (ApplyWalRecord, xlogrecovery.c), and a
// snapshot's xmax is latestCompletedXid + 1 (GetSnapshotData), so each of
// them is below that snapshot's xmax.
func floorOf(snapText string, running []string) (uint64, error) {
	s, err := watermark.ParseSnapshot(snapText)
	if err != nil {
		return 0, err
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

// floorWait reports whether the floor must wait before it is read: on a
// hot standby (inRecovery) whose replay position (replaySQL's text; empty
// before anything was replayed) has not reached watched, the stream's
// position when the table was watched. The stream may come from another
// server than the one the floor and the chunks are read on (a multi-host
// postgres.url): a standby then may not have replayed, so may not see, a
// transaction the stream carried. On the standby the stream itself
// decodes only replayed WAL, so there it never waits.
func floorWait(inRecovery bool, replayText string, watched schema.LSN) (bool, error) {
	if !inRecovery {
		return false, nil
	}
	if replayText == "" {
		return true, nil
	}
	replay, err := pglogrepl.ParseLSN(replayText)
	if err != nil {
		return false, fmt.Errorf("pg_last_wal_replay_lsn() %q: %w", replayText, err)
	}
	return schema.LSN(replay) < watched, nil
}

// readFloor reads the floor Z on conn once the table is watched, the
// stream having been at watched then: on a hot standby, once its replay
// has passed watched (polled, backing off to 0.5 s; a warning after 30 s
// names the lag). Z is then read in a statement of its own, whose
// snapshot is taken after the replay position was seen there.
func readFloor(ctx context.Context, conn *pgx.Conn, watched schema.LSN, log *zap.Logger) (uint64, error) {
	wait := 10 * time.Millisecond
	since := time.Now()
	warned := false
	for {
		var inRecovery bool
		var replay string
		if err := conn.QueryRow(ctx, replaySQL).Scan(&inRecovery, &replay); err != nil {
			return 0, fmt.Errorf("read whether the server is a standby: %w", err)
		}
		again, err := floorWait(inRecovery, replay, watched)
		if err != nil {
			return 0, err
		}
		if !again {
			break
		}
		if !warned && time.Since(since) > 30*time.Second {
			log.Warn("the incremental snapshot waits for the standby it reads to replay the WAL the stream has passed; is its replay stalled or far behind?",
				zap.String("replayed", replay), zap.Stringer("stream", watched))
			warned = true
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
	var snapText string
	var running, prepared []string
	if err := conn.QueryRow(ctx, floorSQL).Scan(&snapText, &running, &prepared); err != nil {
		return 0, fmt.Errorf("read the incremental snapshot's floor: %w", err)
	}
	return floorOf(snapText, append(running, prepared...))
}

// maxChunkPages bounds a chunk: a window holds its rows until the stream
// passes its high watermark, and a small chunk closes sooner.
const maxChunkPages = 1024

// chunkPagesFor sizes chunks so that readers windows fit in budget
// (half of kafka.max_inflight_bytes) at pageBytes(rowsPerPage) a page.
func chunkPagesFor(budget int64, rowsPerPage float64, readers int) uint32 {
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
// reads (alone). limit caps the windows' share of kafka.max_inflight_bytes
// (half), so that the stream always has room; main, the main worker's
// tracker, counts what they hold in the same in-flight total as its
// records (delivery.Tracker.Reserve), so that together they stay within
// the bound.
type byteBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	held  int64
	main  *delivery.Tracker // nil: the windows' share alone (unit tests)
}

func newByteBudget(limit int64, main *delivery.Tracker) *byteBudget {
	b := &byteBudget{limit: limit, main: main}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// take waits until n bytes fit in the windows' share (or nothing is
// held), then until they fit in the main tracker's bound, or ctx ends.
// It never waits for the main tracker under the lock: readers that give
// back must not wait for one that waits.
func (b *byteBudget) take(ctx context.Context, n int64) error {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	for b.held > 0 && b.held+n > b.limit {
		if err := ctx.Err(); err != nil {
			b.mu.Unlock()
			return err
		}
		b.cond.Wait()
	}
	b.held += n
	windowsHeld.Add(n)
	b.mu.Unlock()
	if b.main != nil {
		if err := b.main.Reserve(ctx, n); err != nil {
			b.share(-n)
			return err
		}
	}
	return nil
}

// more adds n bytes to what a reader holds while it reads rows beyond its
// estimate: it waits for room in the main tracker (ReserveMore), not in
// the windows' share, whose readers may wait for this one's window.
func (b *byteBudget) more(ctx context.Context, n int64) error {
	if b.main != nil {
		if err := b.main.ReserveMore(ctx, n); err != nil {
			return err
		}
	}
	b.share(n)
	return nil
}

// adjust changes what a reader holds by d (its rows' actual size minus
// its estimate; negative gives back).
func (b *byteBudget) adjust(d int64) {
	if b.main != nil {
		if d > 0 {
			b.main.Grow(d) // the rows are read: counted, not waited for
		} else {
			b.main.Unreserve(-d)
		}
	}
	b.share(d)
}

// written gives back n bytes of the windows' share whose reservation
// the main worker took for the records it wrote (WindowResult.Reserved).
func (b *byteBudget) written(n int64) { b.share(-n) }

// windowsHeld is the bytes every byteBudget of the process holds: what
// the windows of incremental snapshots hold (WindowBytesHeld).
var windowsHeld atomic.Int64

// WindowBytesHeld returns the bytes the windows of every incremental
// snapshot of the process hold, estimated before a chunk's read and its
// rows' size once read. For tests, which check them against the
// in-flight bound.
func WindowBytesHeld() int64 { return windowsHeld.Load() }

// share changes the windows' share held by d.
func (b *byteBudget) share(d int64) {
	b.mu.Lock()
	b.held += d
	windowsHeld.Add(d)
	b.mu.Unlock()
	if d < 0 {
		b.cond.Broadcast()
	}
}
