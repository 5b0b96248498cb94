package connector

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/offsets"
)

// Copies returns the table copies running now, by table name.
func (p *Pipeline) Copies() []CopyProgress { return p.copies.Snapshot() }

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
	// StaleKeys says, by table, why its last re-copy left keys the table
	// no longer has untombstoned in some topic: a transform chain that
	// routes its records where the re-copy cannot follow them
	// (docs/snapshots.md, "Stale keys and transforms").
	StaleKeys map[string]string `json:"stale_keys_not_tombstoned,omitempty"`
	// Windows are, by table, the open windows of its incremental
	// snapshot (docs/incremental-snapshots.md, "Status").
	Windows map[string][]IncrementalWindow `json:"incremental_windows,omitempty"`
	Time    time.Time                      `json:"time"`
}

// IncrementalWindow is an open window of an incremental snapshot: its
// chunk's pages, age, the rows and bytes it holds, and whether it waits
// for the stream to pass its high watermark.
type IncrementalWindow = emit.WindowStatus

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
	st.StaleKeys = p.copies.StaleKeysSkipped()
	st.Windows = p.incAt.Load().OpenWindows(st.Time)
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
