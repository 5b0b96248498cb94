package progress

import (
	"fmt"
	"time"

	"github.com/mooncdc/mooncdc/connector"
)

// rateWindow is how far back the rate looks: long enough to smooth out
// batching, short enough to follow a copy that speeds up or slows down.
const rateWindow = 5 * time.Second

// sample is a copy's row count at one moment.
type sample struct {
	at   time.Time
	rows int64
}

// meter follows one copy's row count and estimates its rate. It is pure:
// the caller passes the time of each observation.
type meter struct {
	started time.Time
	samples []sample // oldest first; the first is dropped once the window passes it
}

// newMeter starts following a copy that started at started with no rows.
func newMeter(started time.Time) *meter {
	return &meter{started: started, samples: []sample{{at: started, rows: 0}}}
}

// observe records rows at now, keeping the samples of the last rateWindow
// and at least one before now, so that the rate always spans an interval.
func (m *meter) observe(now time.Time, rows int64) {
	m.samples = append(m.samples, sample{at: now, rows: rows})
	keep := 0
	for keep < len(m.samples)-2 && now.Sub(m.samples[keep+1].at) >= rateWindow {
		keep++
	}
	m.samples = m.samples[keep:]
}

// stats is what a bar or a log line shows of one copy.
type stats struct {
	Table     string
	Rows      int64
	Estimated int64         // Postgres' estimate; 0 unknown
	Rate      float64       // rows/s over the last rateWindow; 0 unknown
	ETA       time.Duration // negative when unknown
	Elapsed   time.Duration
}

// stats returns the copy's figures as of its last observation.
func (m *meter) stats(c connector.CopyProgress) stats {
	last, first := m.samples[len(m.samples)-1], m.samples[0]
	s := stats{Table: c.Table, Rows: last.rows, Estimated: max(c.EstimatedRows, 0), ETA: -1,
		Elapsed: max(last.at.Sub(m.started), 0)}
	if dt := last.at.Sub(first.at).Seconds(); dt > 0 && last.rows >= first.rows {
		s.Rate = float64(last.rows-first.rows) / dt
	}
	if left := s.Estimated - s.Rows; s.Estimated > 0 && left >= 0 && s.Rate > 0 {
		s.ETA = time.Duration(float64(left) / s.Rate * float64(time.Second))
	}
	return s
}

// countString renders a row count compactly: exact below 10,000, then three
// significant digits with k, M or G ("12.3k", "1.50M").
func countString(n int64) string {
	v := float64(n)
	switch {
	case n < 10_000:
		return fmt.Sprintf("%d", n)
	case v < 999.5e3:
		return sig3(v/1e3) + "k"
	case v < 999.5e6:
		return sig3(v/1e6) + "M"
	default:
		return sig3(v/1e9) + "G"
	}
}

// sig3 formats v (at least 1) with three significant digits.
func sig3(v float64) string {
	switch {
	case v < 9.995:
		return fmt.Sprintf("%.2f", v)
	case v < 99.95:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// durationString renders d to the second: "4s", "2m05s", "1h02m".
func durationString(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
