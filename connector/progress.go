package connector

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mooncdc/mooncdc/offsets"
)

// CopyProgress is one table copy in progress.
type CopyProgress struct {
	Table string `json:"table"`
	// Rows is the rows copied so far (produced to Kafka, not necessarily
	// acknowledged yet).
	Rows int64 `json:"rows"`
	// EstimatedRows is pg_class.reltuples when the copy started: Postgres'
	// estimate, 0 for a table never analyzed or vacuumed.
	EstimatedRows int64     `json:"estimated_rows"`
	Started       time.Time `json:"started"`
}

// copies is the registry of running copies, read by Copies and /status.
type copies struct {
	mu sync.Mutex
	m  map[string]*runningCopy
}

type runningCopy struct {
	estimated int64
	started   time.Time
	rows      *atomic.Int64
}

// start registers a copy of table counting rows; the returned func ends it.
func (c *copies) start(table string, estimated int64, rows *atomic.Int64) func() {
	rc := &runningCopy{estimated: estimated, started: time.Now(), rows: rows}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*runningCopy{}
	}
	c.m[table] = rc
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.m[table] == rc {
			delete(c.m, table)
		}
		c.mu.Unlock()
	}
}

// Copies returns the table copies running now, by table name.
func (p *Pipeline) Copies() []CopyProgress {
	p.copies.mu.Lock()
	out := make([]CopyProgress, 0, len(p.copies.m))
	for name, rc := range p.copies.m {
		out = append(out, CopyProgress{Table: name, Rows: rc.rows.Load(), EstimatedRows: rc.estimated, Started: rc.started})
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
	// DurableLSN is the tracker's: what Kafka has acknowledged, which may
	// be ahead of the last offsets record.
	DurableLSN string                   `json:"durable_lsn,omitempty"`
	Copies     []CopyProgress           `json:"copies"`
	Tables     map[string]offsets.Table `json:"tables,omitempty"`
	Time       time.Time                `json:"time"`
}

// Status returns the pipeline's live status.
func (p *Pipeline) Status() LiveStatus {
	st := LiveStatus{Name: p.cfg.Name, Version: Version, Streaming: p.Ready(), Copies: p.Copies(),
		Tables: p.TablePhases(), Time: time.Now().UTC()}
	if t := p.tracker.Load(); t != nil {
		st.DurableLSN = t.Durable().String()
	}
	return st
}

func (p *Pipeline) serveStatus(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(p.Status())
}
