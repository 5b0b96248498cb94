package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// liveInterval is the least time between two lines of live changes: four
// lines a second stay readable whatever the load's rate.
const liveInterval = 250 * time.Millisecond

// liveView prints the changes the consumer reads while the load runs, as
// they arrive: every liveInterval, a line for the newest change, with how
// many others arrived since the line before. offer is called by the
// consumer's goroutine, run by the demo's.
type liveView struct {
	u     ui
	width int // of the lines; 0 for maxLine
	start time.Time

	mu      sync.Mutex
	newest  *liveChange
	skipped int // changes since the last line, not shown
	total   int
	shown   int
}

// liveChange is a change record and when it arrived.
type liveChange struct {
	rec record
	lag time.Duration // from the commit in Postgres (source.ts_ms) to the consumer; -1 unknown
}

func newLiveView(u ui, width int) *liveView {
	if width <= 0 {
		width = maxLine
	}
	return &liveView{u: u, width: width, start: time.Now()}
}

// offer hands the view a record read at now. Tombstones are not changes.
func (v *liveView) offer(r record, now time.Time) {
	if r.Op == opTombstone {
		return
	}
	c := &liveChange{rec: r, lag: -1}
	if ts, ok := sourceTsMs(r.Value); ok {
		c.lag = max(now.Sub(time.UnixMilli(ts)), 0)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.newest != nil {
		v.skipped++
	}
	v.newest = c
	v.total++
}

// run prints the newest change every liveInterval until ctx ends, then
// once more if one is waiting.
func (v *liveView) run(ctx context.Context) {
	v.u.detail("%-7s %5s  %-2s %-10s %-11s %s", "time", "lag", "op", "table", "key", "change (+N: changes not shown that arrived since the line before)")
	tick := time.NewTicker(liveInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			v.print()
			return
		case <-tick.C:
			v.print()
		}
	}
}

// print prints the newest change, if one arrived since the last line.
func (v *liveView) print() {
	v.mu.Lock()
	c, skipped := v.newest, v.skipped
	v.newest, v.skipped = nil, 0
	if c != nil {
		v.shown++
	}
	v.mu.Unlock()
	if c == nil {
		return
	}
	lag := "?"
	if c.lag >= 0 {
		lag = fmt.Sprintf("%dms", c.lag.Milliseconds())
	}
	table := strings.TrimPrefix(strings.TrimPrefix(c.rec.Topic, topicPrefix+"."), "public.")
	line := fmt.Sprintf("  %-9s %6.2fs %5s  %-2s %-10s %-11s %s", "", time.Since(v.start).Seconds(), lag, c.rec.Op, table, c.rec.Key, condense(c.rec))
	more := ""
	if skipped > 0 {
		more = fmt.Sprintf("  +%d", skipped)
	}
	v.u.printf("%s%s\n", clip(line, v.width-len(more)), more)
}

// counts returns the changes offered and the lines printed.
func (v *liveView) counts() (total, shown int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.total, v.shown
}

// sourceTsMs returns a change value's source.ts_ms: when the change was
// committed in Postgres.
func sourceTsMs(value []byte) (int64, bool) {
	var env struct {
		Source struct {
			TsMs *int64 `json:"ts_ms"`
		} `json:"source"`
	}
	if json.Unmarshal(value, &env) != nil || env.Source.TsMs == nil {
		return 0, false
	}
	return *env.Source.TsMs, true
}
