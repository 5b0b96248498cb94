package snapshot

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// CopyProgress is one table copy in progress.
type CopyProgress struct {
	Table string `json:"table"`
	// Stage is CopyStageCopying while rows are read, then
	// CopyStageCatchingUp while the copy streams the changes made since its
	// snapshot until it hands over to the main worker.
	Stage string `json:"stage"`
	// Rows is the rows copied so far (encoded and handed to the producer;
	// acknowledged by Kafka only once the stage is catching up).
	Rows int64 `json:"rows"`
	// EstimatedRows is pg_class.reltuples when the copy started: Postgres'
	// estimate, 0 for a table never analyzed or vacuumed. For a resumed
	// copy, the estimate less ResumedRows: what this attempt copies.
	EstimatedRows int64 `json:"estimated_rows"`
	// ResumedRows is, for a copy that resumed from the chunks earlier
	// attempts copied (copy_resume.go), the rows of those chunks: in Kafka
	// already, not copied again, and counted in neither Rows nor
	// EstimatedRows.
	ResumedRows int64     `json:"resumed_rows,omitempty"`
	Started     time.Time `json:"started"`
}

// The stages of a copy in CopyProgress.
const (
	CopyStageStarting   = "starting" // snapshot taken, reading the topic's live keys
	CopyStageCopying    = "copying"
	CopyStageCatchingUp = "catching up"
)

// Copies is the registry of running copies, read by Copies and /status.
type Copies struct {
	mu sync.Mutex
	m  map[string]*runningCopy
	// stale holds, by table, why its last re-copy left stale keys
	// untombstoned (stale.go: a transform chain it cannot follow).
	stale map[string]string
}

// staleSkipped records why the re-copy of table left its stale keys
// untombstoned; "" clears it (a later re-copy tombstoned them). Nil-safe.
func (c *Copies) staleSkipped(table, why string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if why == "" {
		delete(c.stale, table)
		return
	}
	if c.stale == nil {
		c.stale = map[string]string{}
	}
	c.stale[table] = why
}

// StaleKeysSkipped returns, by table, why its last re-copy (blocking or
// incremental) left keys the table no longer has untombstoned in some
// topic; nil when none did.
func (c *Copies) StaleKeysSkipped() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stale) == 0 {
		return nil
	}
	return maps.Clone(c.stale)
}

// runningCopy is one copy's entry; its fields are guarded by copies.mu
// except rows, which the copy's writers count.
type runningCopy struct {
	stage     string
	estimated int64
	resumedN  int64
	started   time.Time
	rows      *atomic.Int64
	reg       *Copies
}

// start registers a copy of table; end removes it.
func (c *Copies) start(table string) *runningCopy {
	rc := &runningCopy{stage: CopyStageStarting, started: time.Now(), rows: new(atomic.Int64), reg: c}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*runningCopy{}
	}
	c.m[table] = rc
	c.mu.Unlock()
	return rc
}

// copying moves the copy to CopyStageCopying, counting rows.
func (rc *runningCopy) copying(estimated int64, rows *atomic.Int64) {
	rc.reg.mu.Lock()
	rc.stage, rc.estimated, rc.rows = CopyStageCopying, estimated, rows
	rc.reg.mu.Unlock()
}

// resumed records the rows of the chunks earlier attempts copied.
func (rc *runningCopy) resumed(rows int64) {
	rc.reg.mu.Lock()
	rc.resumedN = rows
	rc.reg.mu.Unlock()
}

func (rc *runningCopy) catchingUp() {
	rc.reg.mu.Lock()
	rc.stage = CopyStageCatchingUp
	rc.reg.mu.Unlock()
}

func (rc *runningCopy) end(table string) {
	rc.reg.mu.Lock()
	if rc.reg.m[table] == rc {
		delete(rc.reg.m, table)
	}
	rc.reg.mu.Unlock()
}

// Snapshot returns the copies running now, by table name.
func (c *Copies) Snapshot() []CopyProgress {
	c.mu.Lock()
	out := make([]CopyProgress, 0, len(c.m))
	for name, rc := range c.m {
		out = append(out, CopyProgress{Table: name, Stage: rc.stage, Rows: rc.rows.Load(), EstimatedRows: rc.estimated, ResumedRows: rc.resumedN,
			Started: rc.started})
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b CopyProgress) int {
		switch {
		case a.Table < b.Table:
			return -1
		case a.Table > b.Table:
			return 1
		}
		return 0
	})
	return out
}
