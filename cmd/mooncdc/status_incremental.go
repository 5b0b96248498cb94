package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/offsets"
)

// This file is `mooncdc status`'s view of a running incremental snapshot
// (docs/incremental-snapshots.md): the progress the table's offsets record
// holds ("incremental"), stored as its chunks' windows become durable.

// incrementalReport is an incremental snapshot's progress.
type incrementalReport struct {
	Pages     uint32     `json:"pages"`      // the plan's, 0 before it is made
	PagesDone uint32     `json:"pages_done"` // of the chunks whose rows are durable
	Rows      int64      `json:"rows"`
	Started   *time.Time `json:"started,omitempty"`
	// RowsPerSecond and ETASeconds are from the pages done since Started.
	RowsPerSecond float64  `json:"rows_per_second"`
	ETASeconds    *float64 `json:"eta_seconds"`
	Filter        string   `json:"filter,omitempty"`
}

// incrementalProgress reads the table record's progress (nil for none, or
// one that does not parse: status shows what it can). It is pure.
func incrementalProgress(raw offsets.RawJSON, now time.Time) *incrementalReport {
	if raw == "" {
		return nil
	}
	var p struct {
		Pages     uint32      `json:"pages"`
		Done      [][2]uint32 `json:"done"`
		Rows      int64       `json:"rows"`
		StartedMs int64       `json:"started_ms"`
		Filter    string      `json:"filter"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil
	}
	r := &incrementalReport{Pages: p.Pages, Rows: p.Rows, Filter: p.Filter}
	for _, d := range p.Done {
		if d[1] > d[0] {
			r.PagesDone += d[1] - d[0]
		}
	}
	if p.StartedMs > 0 {
		r.Started = msTime(p.StartedMs)
		if el := now.Sub(*r.Started).Seconds(); el > 0 && r.PagesDone > 0 {
			r.RowsPerSecond = float64(p.Rows) / el
			left := float64(r.Pages-min(r.PagesDone, r.Pages)) / float64(r.PagesDone) * el
			r.ETASeconds = &left
		}
	}
	return r
}

// incrementalText is the PROGRESS column of a table whose incremental
// snapshot runs.
func incrementalText(r *incrementalReport) string {
	if r.Pages == 0 {
		return "incremental snapshot requested"
	}
	s := fmt.Sprintf("incremental snapshot: %d/%d pages (%d%%), %d rows", r.PagesDone, r.Pages, r.PagesDone*100/r.Pages, r.Rows)
	if r.RowsPerSecond > 0 {
		s += fmt.Sprintf(", %.0f rows/s", r.RowsPerSecond)
	}
	if r.ETASeconds != nil {
		s += ", ETA " + humanDuration(time.Duration(*r.ETASeconds*float64(time.Second)))
	}
	return s
}

// windowsText is what the PROGRESS column adds of a running incremental
// snapshot's open windows (the running process's, LiveStatus.Windows):
// "; window #12 pages 4096-5119, 1.2 s, 3,400 rows / 2.1 MiB, waiting for
// the stream". Empty without any.
func windowsText(ws []connector.IncrementalWindow) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "; window #%d pages %d-%d, %s", w.ID, w.FirstPage, max(w.EndPage, w.FirstPage+1)-1, windowAge(w.AgeSeconds))
		switch {
		case w.Void != "":
			b.WriteString(", void (its chunk is read again): " + singleLine(w.Void))
		case !w.Read:
			b.WriteString(", reading its chunk")
		default:
			fmt.Fprintf(&b, ", %s rows / %s", thousands(int64(w.Rows)), humanBytes(int64(w.Bytes)))
			if w.WaitingForStream {
				b.WriteString(", waiting for the stream to pass " + w.High)
			}
		}
	}
	return b.String()
}

// windowAge prints a window's age: tenths of a second under a minute
// (windows live milliseconds to seconds), humanDuration's above.
func windowAge(sec float64) string {
	if sec < 60 {
		return strconv.FormatFloat(sec, 'f', 1, 64) + " s"
	}
	return humanDuration(time.Duration(sec * float64(time.Second)))
}

// thousands prints n with commas between groups of three digits: 3,400.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
