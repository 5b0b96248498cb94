package connector

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
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

// copies is the registry of running copies, read by Copies and /status.
type copies struct {
	mu sync.Mutex
	m  map[string]*runningCopy
}

// runningCopy is one copy's entry; its fields are guarded by copies.mu
// except rows, which the copy's writers count.
type runningCopy struct {
	stage     string
	estimated int64
	resumedN  int64
	started   time.Time
	rows      *atomic.Int64
	reg       *copies
}

// start registers a copy of table; end removes it.
func (c *copies) start(table string) *runningCopy {
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

// Copies returns the table copies running now, by table name.
func (p *Pipeline) Copies() []CopyProgress {
	p.copies.mu.Lock()
	out := make([]CopyProgress, 0, len(p.copies.m))
	for name, rc := range p.copies.m {
		out = append(out, CopyProgress{Table: name, Stage: rc.stage, Rows: rc.rows.Load(), EstimatedRows: rc.estimated, ResumedRows: rc.resumedN,
			Started: rc.started})
	}
	p.copies.mu.Unlock()
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

// LiveStatus is what a running pipeline serves on /status (JSON): what only
// the process knows. `mooncdc status` adds it to what the offsets topic and
// Postgres say.
type LiveStatus struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Streaming bool   `json:"streaming"`
	// Role is "active" or "standby" with ha.enabled, empty without.
	Role string `json:"role,omitempty"`
	// DurableLSN is the tracker's: what Kafka has acknowledged, which may
	// be ahead of the last offsets record.
	DurableLSN string `json:"durable_lsn,omitempty"`
	// NotReady is why /readyz answers 503 while the main worker streams:
	// Postgres silent past postgres.replication_timeout, or Kafka
	// acknowledging nothing for that long (linkwatch.go).
	NotReady string `json:"not_ready,omitempty"`
	// LastServerMessageSeconds is how long ago the main replication
	// connection last heard from Postgres (absent before it has).
	LastServerMessageSeconds *float64                 `json:"last_server_message_seconds,omitempty"`
	Copies                   []CopyProgress           `json:"copies"`
	Tables                   map[string]offsets.Table `json:"tables,omitempty"`
	Time                     time.Time                `json:"time"`
}

// The roles of an instance with ha.enabled (LiveStatus.Role).
const (
	RoleActive  = "active"
	RoleStandby = "standby"
)

// Status returns the pipeline's live status.
func (p *Pipeline) Status() LiveStatus {
	st := LiveStatus{Name: p.cfg.Name, Version: config.Version, Streaming: p.Ready(), Time: time.Now().UTC()}
	if ph := p.phasesAt.Load(); ph != nil {
		// One look at both: a handover ends its copy's entry under the
		// pipeline mutex, so no table shows handed over and still copying.
		ph.WithView(func(v phases.View) {
			st.Copies, st.Tables = p.Copies(), tablesOf(v)
		})
	} else {
		st.Copies = p.Copies()
	}
	if t := p.tracker.Load(); t != nil {
		st.DurableLSN = t.Durable().String()
	}
	now := time.Now()
	if st.Streaming {
		st.NotReady = p.linkWatch.notReady(now, p.cfg.LinkTimeout())
	}
	if quiet, timeout := p.linkWatch.silence(now); timeout > 0 {
		s := quiet.Seconds()
		st.LastServerMessageSeconds = &s
	}
	return st
}

func (p *Pipeline) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(p.Status())
}
