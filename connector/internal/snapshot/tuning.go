package snapshot

import (
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Tuning is what tests change in one pipeline's copies and incremental
// snapshots to make a case happen soon (many windows, a checkpoint at
// every chunk, a snapshot slow enough to stop midway, chunks read on a
// standby). It is per pipeline (Config.Tuning, from connector.WithTuning),
// so tests that tune run in parallel with the others. The zero value is
// production's behaviour: every field's zero means "as without tuning".
type Tuning struct {
	// CheckpointEvery is how often, at most, a resumable copy stores its
	// progress: at the end of a chunk once this long has passed since the
	// last checkpoint. 0: DefaultCheckpointEvery; negative: at every
	// chunk's end.
	CheckpointEvery time.Duration
	// IncrementalChunkPages is the chunk size in pages of incremental
	// snapshots (small: many windows); 0 sizes chunks from the memory
	// budget (chunkPagesFor).
	IncrementalChunkPages uint32
	// IncrementalReadDelay is a pause before each chunk an incremental
	// snapshot reads (a snapshot slow enough to be stopped midway); 0:
	// none.
	IncrementalReadDelay time.Duration
	// IncrementalRead is the server incremental snapshots read their floor
	// and chunks on instead of postgres.url's (a primary's stream and its
	// standby's chunks, as a multi-host postgres.url can make happen); nil:
	// postgres.url's.
	IncrementalRead *pgconn.Config
	// StaleKeysLimit bounds, in bytes, one topic's stale keys an
	// incremental snapshot holds (a topic past it is left untombstoned,
	// loudly); 0: DefaultStaleKeysLimit.
	StaleKeysLimit int64
	// IncrementalWindowLife is how long an incremental snapshot's window
	// may stay open before it is voided (read by connector for the main
	// worker's queue, emit.Incremental.Life); 0: emit.WindowLife.
	IncrementalWindowLife time.Duration
}

// DefaultCheckpointEvery is how often, at most, a resumable copy stores
// its progress. In exactly-once mode each checkpoint commits the copy's
// Kafka transaction, and the chunk writers pause meanwhile.
const DefaultCheckpointEvery = 3 * time.Second

// checkpointEvery is t's checkpoint interval as copierConfig holds it
// (0 there: at every chunk's end).
func (t Tuning) checkpointEvery() time.Duration {
	switch {
	case t.CheckpointEvery == 0:
		return DefaultCheckpointEvery
	case t.CheckpointEvery < 0:
		return 0
	}
	return t.CheckpointEvery
}

// readConfig is the server the incremental snapshot's floor and chunks
// are read on.
func (c *copier) readConfig() *pgconn.Config {
	if r := c.cfg.tuning.IncrementalRead; r != nil {
		return r
	}
	return c.pgcfg
}

// chunkPages is the chunk size of an incremental snapshot: the tuning's
// when set, else chunkPagesFor's.
func (c *copier) chunkPages(budget int64, rowsPerPage float64, readers int) uint32 {
	if n := c.cfg.tuning.IncrementalChunkPages; n > 0 {
		return n
	}
	return chunkPagesFor(budget, rowsPerPage, readers)
}

// staleKeysLimit is the bound of one topic's stale keys an incremental
// snapshot holds: the tuning's when set, else DefaultStaleKeysLimit.
func (c *copier) staleKeysLimit() int64 {
	if n := c.cfg.tuning.StaleKeysLimit; n > 0 {
		return n
	}
	return DefaultStaleKeysLimit
}
