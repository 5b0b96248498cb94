// The report of "mooncdc status": what the sources said, merged (buildStatusReport),
// and printed for people (writeStatus) or as JSON.

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// statusReport is the output of status, and with --json its exact form:
// the field names are a public contract (statusUsage documents them).
// Unknown numbers are null; unknown LSNs and times are absent.
type statusReport struct {
	Name          string          `json:"name"`
	Time          time.Time       `json:"time"`
	Running       string          `json:"running"` // yes, no, unknown
	RunningDetail string          `json:"running_detail,omitempty"`
	Version       string          `json:"version,omitempty"`
	Streaming     *bool           `json:"streaming"`
	DurableLSN    string          `json:"durable_lsn,omitempty"`
	DurableFrom   string          `json:"durable_lsn_from,omitempty"` // live or offsets
	Offsets       offsetsReport   `json:"offsets"`
	Heartbeat     heartbeatReport `json:"heartbeat"`
	Postgres      postgresReport  `json:"postgres"`
	Lag           lagReport       `json:"lag"`
	Tables        []tableReport   `json:"tables"`
}

type offsetsReport struct {
	Topic      string     `json:"topic"`
	Error      string     `json:"error,omitempty"`
	Found      bool       `json:"found"` // a pipeline record exists for the name
	DurableLSN string     `json:"durable_lsn,omitempty"`
	UpdatedAt  *time.Time `json:"updated_at,omitempty"`
	// DurableSince is when the durable LSN last moved (absent in records
	// of older versions).
	DurableSince *time.Time `json:"durable_since,omitempty"`
}

// heartbeatReport is the configured heartbeat: its interval (0: off) and
// the topic its records go to ("" when there are none).
type heartbeatReport struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	Topic           string  `json:"topic,omitempty"`
}

type postgresReport struct {
	Error      string      `json:"error,omitempty"`
	Standby    bool        `json:"standby"`
	CurrentLSN string      `json:"current_lsn,omitempty"`
	Slot       *slotReport `json:"slot"` // null when Postgres could not be read
}

type slotReport struct {
	Name              string `json:"name"`
	Exists            bool   `json:"exists"`
	Active            bool   `json:"active"`
	ActivePID         *int32 `json:"active_pid"`
	ConfirmedFlushLSN string `json:"confirmed_flush_lsn,omitempty"`
	RestartLSN        string `json:"restart_lsn,omitempty"`
	WALStatus         string `json:"wal_status,omitempty"`
	SafeWALSizeBytes  *int64 `json:"safe_wal_size_bytes"`
	RetainedWALBytes  *int64 `json:"retained_wal_bytes"`
}

type lagReport struct {
	Bytes       *int64     `json:"bytes"`
	Seconds     *float64   `json:"seconds"`
	BehindSince *time.Time `json:"behind_since,omitempty"`
}

type tableReport struct {
	Table         string      `json:"table"`
	Phase         string      `json:"phase"`
	LSN           string      `json:"lsn,omitempty"`
	Attempts      int         `json:"attempts"`
	LastError     string      `json:"last_error,omitempty"`
	Retry         string      `json:"retry,omitempty"`
	UpdatedAt     *time.Time  `json:"updated_at,omitempty"`
	EstimatedRows *int64      `json:"estimated_rows"`
	Copy          *copyReport `json:"copy"`
	// Incremental is a running incremental snapshot's progress
	// (status_incremental.go).
	Incremental *incrementalReport `json:"incremental,omitempty"`
	// Windows are its incremental snapshot's open windows, from the
	// running process (connector.LiveStatus.Windows).
	Windows []connector.IncrementalWindow `json:"incremental_windows,omitempty"`
	// StaleKeys is why the table's last re-copy left keys it no longer
	// has untombstoned (connector.LiveStatus.StaleKeys).
	StaleKeys string `json:"stale_keys_not_tombstoned,omitempty"`
	// LeftAt is when the table, which still exists, left the pipeline
	// (no longer published or selected: offsets.Table.LeftMs).
	LeftAt *time.Time `json:"left_at,omitempty"`
}

type copyReport struct {
	Stage         string `json:"stage"` // starting, copying, catching up
	Rows          int64  `json:"rows"`
	EstimatedRows int64  `json:"estimated_rows"`
	// ResumedRows: the copy resumed from chunks an earlier attempt copied,
	// of that many rows (not in Rows nor EstimatedRows).
	ResumedRows   int64     `json:"resumed_rows,omitempty"`
	Started       time.Time `json:"started"`
	RowsPerSecond float64   `json:"rows_per_second"`
	ETASeconds    *float64  `json:"eta_seconds"`
}

// buildStatusReport merges what the sources said. It does no I/O.
func buildStatusReport(cfg config.Config, in statusInputs) statusReport {
	r := statusReport{Name: cfg.Name, Time: in.now.UTC(), Tables: []tableReport{}}

	r.Offsets.Topic = cfg.Kafka.OffsetsTopic
	r.Heartbeat.IntervalSeconds = cfg.Heartbeat.Interval.Seconds()
	if cfg.Heartbeat.Interval > 0 && cfg.Heartbeat.Records {
		r.Heartbeat.Topic = cfg.Heartbeat.Topic
	}
	var pipeline *offsets.Pipeline
	if in.offsetsErr != nil {
		r.Offsets.Error = in.offsetsErr.Error()
	} else if pipeline = in.state.Pipeline; pipeline != nil {
		r.Offsets.Found = true
		r.Offsets.DurableLSN = schema.LSN(pipeline.DurableLSN).String()
		r.Offsets.UpdatedAt = msTime(pipeline.UpdatedMs)
		if pipeline.DurableMs > 0 {
			r.Offsets.DurableSince = msTime(pipeline.DurableMs)
		}
	}

	var slot *slotRow
	if in.pgErr != nil {
		r.Postgres.Error = config.RedactURL(in.pgErr.Error())
	} else {
		r.Postgres.Slot = &slotReport{Name: cfg.Postgres.Slot}
		r.Postgres.Standby = in.pg.standby
		if in.pg.current != 0 {
			r.Postgres.CurrentLSN = in.pg.current.String()
		}
		if slot = in.pg.slot; slot != nil {
			s := r.Postgres.Slot
			s.Exists, s.Active, s.ActivePID, s.WALStatus, s.SafeWALSizeBytes = true, slot.active, slot.activePID, slot.walStatus, slot.safeWALSize
			if slot.confirmedFlush != 0 {
				s.ConfirmedFlushLSN = slot.confirmedFlush.String()
			}
			if slot.restart != 0 {
				s.RestartLSN = slot.restart.String()
				if in.pg.current != 0 {
					s.RetainedWALBytes = ptr(lsnDiff(in.pg.current, slot.restart))
				}
			}
		}
	}

	switch {
	case in.live != nil:
		r.Running, r.Version, r.Streaming = "yes", in.live.Version, &in.live.Streaming
		switch {
		case in.live.Role == connector.RoleStandby:
			r.RunningDetail = "a standby (ha.enabled): another instance is active"
		case in.live.NotReady != "":
			r.RunningDetail = "not ready: " + in.live.NotReady // a half-open link (README)
		}
	case in.liveSilent && !(slot != nil && slot.active):
		r.Running, r.RunningDetail = "no", in.liveNote
	default:
		r.Running, r.RunningDetail = "unknown", in.liveNote
		if slot != nil && slot.active {
			r.RunningDetail += fmt.Sprintf("; but the slot is active (pid %d): something streams from it", deref(slot.activePID))
		}
	}
	if in.live != nil && in.live.DurableLSN != "" {
		r.DurableLSN, r.DurableFrom = in.live.DurableLSN, "live"
	} else if pipeline != nil {
		r.DurableLSN, r.DurableFrom = r.Offsets.DurableLSN, "offsets"
	}

	// Lag: the WAL the slot still has to confirm. As a duration, only what
	// is known: none when caught up, else the time since the durable LSN
	// last moved (durable_ms in the offsets; records of older versions
	// have only the time of the write, ts_ms).
	if slot != nil && slot.confirmedFlush != 0 && in.pg.current != 0 {
		lag := lsnDiff(in.pg.current, slot.confirmedFlush)
		r.Lag.Bytes = &lag
		switch {
		case lag == 0:
			r.Lag.Seconds = ptr(0.0)
		case pipeline != nil && (pipeline.DurableMs > 0 || pipeline.UpdatedMs > 0):
			since := msTime(pipeline.DurableMs)
			if pipeline.DurableMs == 0 {
				since = msTime(pipeline.UpdatedMs)
			}
			r.Lag.BehindSince = since
			r.Lag.Seconds = ptr(max(0, in.now.Sub(*since).Seconds()))
		}
	}

	r.Tables = tableReports(in)
	return r
}

// tableReports lists every table of the offsets and of the running
// pipeline (whose phases, being newer, win), by name.
func tableReports(in statusInputs) []tableReport {
	tables := maps.Clone(in.state.Tables)
	if tables == nil {
		tables = map[string]offsets.Table{}
	}
	copies := map[string]connector.CopyProgress{}
	if in.live != nil {
		for name, t := range in.live.Tables {
			t.Table = name
			tables[name] = t
		}
		for _, c := range in.live.Copies {
			copies[c.Table] = c
		}
	}
	out := []tableReport{}
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		t := tables[name]
		tr := tableReport{Table: name, Phase: t.Phase, Attempts: t.Attempts, LastError: t.LastError, Retry: t.Retry, UpdatedAt: msTime(t.UpdatedMs)}
		if t.LSN != 0 {
			tr.LSN = schema.LSN(t.LSN).String()
		}
		if n, ok := in.pg.estimates[name]; ok && n >= 0 {
			tr.EstimatedRows = ptr(n)
		}
		if c, ok := copies[name]; ok {
			tr.Copy = copyProgress(c, in.live.Time)
		}
		tr.Incremental = incrementalProgress(t.Incremental, in.now)
		tr.LeftAt = msTime(t.LeftMs)
		if in.live != nil {
			tr.StaleKeys = in.live.StaleKeys[name]
			tr.Windows = in.live.Windows[name]
		}
		out = append(out, tr)
	}
	for _, t := range in.pg.keyless {
		if _, known := tables[t.String()]; known {
			continue
		}
		out = append(out, tableReport{Table: t.String(), Phase: phaseNotCaptured,
			LastError: "no primary key or replica identity, so it is left out of the publication (Postgres would refuse UPDATE and DELETE on it); " +
				pgsource.KeylessFix(t)})
	}
	slices.SortFunc(out, func(a, b tableReport) int { return strings.Compare(a.Table, b.Table) })
	return out
}

// phaseNotCaptured is status's phase for a table that postgres.tables
// selects and run leaves out of the publication (it is never stored).
const phaseNotCaptured = "not_captured"

// copyProgress adds a rate and an ETA to a running copy, measured with the
// running process's clock (now is its time of the answer).
func copyProgress(c connector.CopyProgress, now time.Time) *copyReport {
	cr := &copyReport{Stage: c.Stage, Rows: c.Rows, EstimatedRows: c.EstimatedRows, ResumedRows: c.ResumedRows, Started: c.Started}
	if c.Stage != connector.CopyStageCopying {
		return cr // no rate or ETA: no rows are read now
	}
	if el := now.Sub(c.Started).Seconds(); el > 0 {
		cr.RowsPerSecond = float64(c.Rows) / el
	}
	if cr.RowsPerSecond > 0 && c.EstimatedRows > c.Rows {
		cr.ETASeconds = ptr(float64(c.EstimatedRows-c.Rows) / cr.RowsPerSecond)
	}
	return cr
}

// writeStatus prints r for people: a header, then one line per table.
func writeStatus(w io.Writer, r statusReport) {
	tw := tabwriter.NewWriter(w, len("durable LSN")+2, 8, 2, ' ', 0) // the same layout whichever lines there are
	line := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }

	line("connector", "%s", r.Name)
	running := r.Running
	switch {
	case r.Running == "yes" && r.Streaming != nil && *r.Streaming:
		running += " (streaming, version " + r.Version + ")"
	case r.Running == "yes" && r.RunningDetail != "":
		running += " (" + r.RunningDetail + ", version " + r.Version + ")"
	case r.Running == "yes":
		running += " (not streaming yet, version " + r.Version + ")"
	case r.RunningDetail != "":
		running += " (" + r.RunningDetail + ")"
	}
	line("running", "%s", running)

	switch {
	case r.Offsets.Error != "":
		line("offsets", "could not be read: %s", singleLine(r.Offsets.Error))
	case !r.Offsets.Found:
		line("offsets", "nothing stored for %q in topic %s ('mooncdc run' has not started against these brokers?)", r.Name, r.Offsets.Topic)
	}
	switch {
	case r.Heartbeat.IntervalSeconds == 0:
		line("heartbeats", "off (heartbeat.interval 0)")
	case r.Heartbeat.Topic == "":
		line("heartbeats", "every %gs, no records (heartbeat.records false)", r.Heartbeat.IntervalSeconds)
	default:
		line("heartbeats", "every %gs, records on topic %s", r.Heartbeat.IntervalSeconds, r.Heartbeat.Topic)
	}
	if r.DurableLSN != "" {
		d := r.DurableLSN
		if r.DurableFrom == "live" {
			d += " (acknowledged by Kafka, from the running pipeline)"
			if r.Offsets.DurableLSN != "" && r.Offsets.DurableLSN != r.DurableLSN {
				d += "; " + r.Offsets.DurableLSN + " in the offsets"
			}
		} else if r.Offsets.UpdatedAt != nil {
			d += fmt.Sprintf(" (offsets, recorded %s, %s ago)", r.Offsets.UpdatedAt.Format(time.RFC3339), humanDuration(r.Time.Sub(*r.Offsets.UpdatedAt)))
		}
		line("durable LSN", "%s", d)
	}

	p := r.Postgres
	switch {
	case p.Error != "":
		line("postgres", "could not be read: %s", singleLine(p.Error))
	case !p.Slot.Exists:
		line("slot", "%s does not exist ('mooncdc run' creates it)", p.Slot.Name)
	default:
		s := p.Slot
		state := "inactive"
		if s.Active {
			state = fmt.Sprintf("active (pid %d)", deref(s.ActivePID))
		}
		line("slot", "%s, %s: confirmed_flush %s, restart %s", s.Name, state, orDash(s.ConfirmedFlushLSN), orDash(s.RestartLSN))
		safe := "unlimited"
		if s.WALStatus == "lost" {
			safe = "-"
		}
		if s.SafeWALSizeBytes != nil {
			safe = humanBytes(*s.SafeWALSizeBytes)
		}
		retained := "-"
		if s.RetainedWALBytes != nil {
			retained = humanBytes(*s.RetainedWALBytes)
		}
		line("WAL", "current %s%s; retained for the slot %s; wal_status %s, safe_wal_size %s",
			orDash(p.CurrentLSN), map[bool]string{true: " (standby: received)"}[p.Standby], retained, orDash(s.WALStatus), safe)
	}
	if r.Lag.Bytes != nil {
		lag := humanBytes(*r.Lag.Bytes) + " of WAL not yet confirmed"
		switch {
		case *r.Lag.Bytes == 0:
			lag = "0 B (caught up)"
		case r.Lag.BehindSince != nil:
			lag += fmt.Sprintf("; behind since %s (%s ago), when the durable LSN last moved",
				r.Lag.BehindSince.Format(time.RFC3339), humanDuration(time.Duration(*r.Lag.Seconds*float64(time.Second))))
		case r.Offsets.Error != "":
			lag += " (for how long is unknown: the offsets could not be read)"
		default:
			lag += " (for how long is unknown: no durable LSN recorded yet)"
		}
		line("lag", "%s", lag)
	}
	_ = tw.Flush()

	fmt.Fprintln(w)
	if len(r.Tables) == 0 {
		if r.Offsets.Error != "" && r.Running != "yes" {
			fmt.Fprintln(w, "tables unknown: the offsets could not be read")
		} else {
			fmt.Fprintln(w, "no tables known")
		}
		return
	}
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tPHASE\tLSN\tPROGRESS\tATTEMPTS\tLAST ERROR")
	for _, t := range r.Tables {
		lastErr := singleLine(t.LastError)
		if t.Retry != "" {
			lastErr += " (" + t.Retry + ")"
		}
		if t.StaleKeys != "" {
			lastErr += "; stale keys not tombstoned: " + singleLine(t.StaleKeys)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", t.Table, t.Phase, orDash(t.LSN), tableProgress(t, r.Running), t.Attempts, orDash(strings.TrimSpace(lastErr)))
	}
	_ = tw.Flush()
}

// tableProgress says how far the copy of t is.
func tableProgress(t tableReport, running string) string {
	if t.Incremental != nil && t.Copy == nil {
		return incrementalText(t.Incremental) + windowsText(t.Windows)
	}
	if t.LeftAt != nil && t.Copy == nil {
		return "left the pipeline at " + t.LeftAt.UTC().Format(time.RFC3339) + ": no longer published or selected; its rows are read again when it comes back"
	}
	if c := t.Copy; c != nil && c.Stage == connector.CopyStageStarting {
		return "copy starting (snapshot taken)"
	}
	if c := t.Copy; c != nil && c.Stage == connector.CopyStageCatchingUp {
		return fmt.Sprintf("%d rows copied, catching up to the stream", c.Rows)
	}
	if c := t.Copy; c != nil {
		s := fmt.Sprintf("%d rows", c.Rows)
		if c.EstimatedRows > 0 {
			s = fmt.Sprintf("%d/~%d rows (%d%%)", c.Rows, c.EstimatedRows, min(100, c.Rows*100/c.EstimatedRows))
		}
		if c.RowsPerSecond > 0 {
			s += fmt.Sprintf(", %.0f rows/s", c.RowsPerSecond)
		}
		if c.ETASeconds != nil {
			s += ", ETA " + humanDuration(time.Duration(*c.ETASeconds*float64(time.Second)))
		}
		if c.ResumedRows > 0 {
			s += fmt.Sprintf(" (resumed: %d rows copied before)", c.ResumedRows)
		}
		return s
	}
	est := ""
	if t.EstimatedRows != nil {
		est = fmt.Sprintf(" (~%d rows)", *t.EstimatedRows)
	}
	switch t.Phase {
	case offsets.PhaseReady:
		return "copied"
	case offsets.PhaseCatchup:
		return "copied, catching up"
	case offsets.PhaseInit:
		return "not copied yet" + est
	case offsets.PhaseCopying:
		if running == "yes" {
			return "copy starting" + est
		}
		return "copy interrupted, starts over on the next run" + est
	case offsets.PhaseErrored:
		return "copy failed" + est
	case offsets.PhaseDropped:
		return "dropped"
	}
	return "-"
}

// lsnDiff is pg_wal_lsn_diff(a, b), floored at 0.
func lsnDiff(a, b schema.LSN) int64 {
	if a <= b {
		return 0
	}
	return int64(a - b)
}

func msTime(ms int64) *time.Time {
	if ms <= 0 {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}

// humanBytes prints n in binary units: 512 B, 1.2 MiB.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, 0
	for v >= 1024 && unit < 4 {
		v /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[unit])
}

// humanDuration rounds d for reading: 850ms, 42s, 3m12s, 5h4m.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	default:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

// singleLine joins a multi-line message (pgconn lists every address it tried).
func singleLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
