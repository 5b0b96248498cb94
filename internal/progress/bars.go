package progress

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/mooncdc/mooncdc/connector"
)

// barWidth is the width of a bar's [===>---] part; the line also holds the
// table name, the counts, the rate and the ETA.
const barWidth = 32

// bars draws one bar per running copy with mpb. A container exists only
// while copies run: it is created for the first bar and shut down when the
// last one ends, so that log lines between copies go straight to out.
//
// The container is refreshed manually, by update, rather than by mpb's own
// ticker: that way the last frame can be rendered and the container shut
// down at a moment of our choosing (see shutdown).
type bars struct {
	out   io.Writer
	width int

	// mu guards p for logWriter. The Run goroutine changes p only while
	// holding mu, and holds it while rendering the last frame.
	mu sync.Mutex
	p  *mpb.Progress

	// Owned by the Run goroutine.
	refresh chan any // to the container's manual refresh
	shut    chan any // closed by mpb when the container has shut down
	shown   map[string]*bar
}

// bar is one copy's bar. stats is written by the Run goroutine and read by
// the decorators, which run on mpb's goroutines.
type bar struct {
	b     *mpb.Bar
	meter *meter
	stats atomic.Pointer[stats]
}

func newBars(out io.Writer, width int) *bars {
	return &bars{out: out, width: width, shown: map[string]*bar{}}
}

// update brings the bars in line with copies, observed at now: a bar for
// each new copy, new counts for the others, and the bars of copies that
// are gone ended (complete, at the count last seen). Then it renders.
func (b *bars) update(now time.Time, copies []connector.CopyProgress) {
	if b.p != nil && closed(b.shut) {
		b.dropDead()
	}
	seen := make(map[string]bool, len(copies))
	for _, c := range copies {
		seen[c.Table] = true
		br := b.shown[c.Table]
		if br != nil && !br.meter.started.Equal(c.Started) { // the table is being copied again
			b.end(br, now, false)
			br = nil
		}
		if br == nil {
			br = b.add(c)
		}
		br.meter.observe(now, c.Rows)
		s := br.meter.stats(c)
		br.stats.Store(&s)
		// The bar's total is the estimate, grown to the rows copied when
		// the estimate was low; 0 (an empty bar) when there is none.
		total := s.Estimated
		if total > 0 && s.Rows > total {
			total = s.Rows
		}
		br.b.SetTotal(total, false)
		br.b.SetCurrent(s.Rows)
	}
	for table, br := range b.shown {
		if !seen[table] {
			b.end(br, now, false)
		}
	}
	switch {
	case len(b.shown) > 0:
		b.render()
	case b.p != nil:
		b.shutdown()
	}
}

// stop ends the bars, given the copies running at now: those of copies
// that are gone complete, the others show where their copy stopped. Then
// it flushes the last frame and shuts the container down. No bar is added.
func (b *bars) stop(now time.Time, copies []connector.CopyProgress) {
	running := make(map[string]connector.CopyProgress, len(copies))
	for _, c := range copies {
		running[c.Table] = c
	}
	for table, br := range b.shown {
		c, ok := running[table]
		still := ok && c.Started.Equal(br.meter.started) // not a later copy of the table
		if still {
			br.meter.observe(now, c.Rows)
			s := br.meter.stats(c)
			br.stats.Store(&s)
			br.b.SetCurrent(s.Rows)
		}
		b.end(br, now, still)
	}
	if b.p != nil {
		b.shutdown()
	}
}

// add starts a bar for c, and the container if there is none.
func (b *bars) add(c connector.CopyProgress) *bar {
	if b.p == nil {
		b.start()
	}
	br := &bar{meter: newMeter(c.Started)}
	br.stats.Store(&stats{Table: c.Table, Estimated: max(c.EstimatedRows, 0), ETA: -1})
	// Total 0 makes mpb's own completion trigger never fire: only end
	// completes a bar, whatever the estimate said.
	br.b = b.p.New(0, mpb.BarStyle(),
		mpb.BarWidth(barWidth),
		mpb.PrependDecorators(decor.Name(c.Table, decor.WC{C: decor.DSyncSpaceR})),
		mpb.AppendDecorators(
			decor.Any(br.counts, decor.WC{C: decor.DSyncSpace}),
			decor.Any(br.rate, decor.WC{C: decor.DSyncSpace}),
			decor.Any(br.eta, decor.WC{C: decor.DSyncWidthR}),
		),
	)
	b.shown[c.Table] = br
	return br
}

// end ends br: completed at the rows last seen, or, when interrupted,
// aborted where it is.
func (b *bars) end(br *bar, now time.Time, interrupted bool) {
	s := *br.stats.Load()
	s.Elapsed = max(now.Sub(br.meter.started), 0)
	if secs := s.Elapsed.Seconds(); secs > 0 {
		s.Rate = float64(s.Rows) / secs // the copy's average
	}
	br.stats.Store(&s)
	if interrupted {
		br.b.Abort(false)
	} else {
		br.b.SetTotal(-1, true) // total = current: complete
	}
	delete(b.shown, s.Table)
}

// start creates the container and routes the log writers through it.
func (b *bars) start() {
	b.refresh, b.shut = make(chan any), make(chan any)
	opts := []mpb.ContainerOption{
		mpb.WithOutput(b.out),
		mpb.WithManualRefresh(b.refresh),
		mpb.WithShutdownNotifier(b.shut),
		// Ended bars leave the container and stay on screen above it.
		mpb.PopCompletedMode(),
	}
	if b.width > 0 {
		opts = append(opts, mpb.WithWidth(b.width))
	}
	b.mu.Lock()
	b.p = mpb.New(opts...)
	b.mu.Unlock()
}

// render draws a frame: the lines written to the container since the last
// one, then the bars.
func (b *bars) render() {
	select {
	case b.refresh <- nil:
	case <-b.shut: // the container failed (a render error): dropped at the next update
	}
}

// shutdown renders the last frame and shuts the container down, holding
// the log writers off meanwhile: a line written after the last frame but
// before the shutdown would be lost, and one written straight to out
// before it would be overdrawn by it. Afterwards, log lines go to out.
func (b *bars) shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.render()
	b.p.Shutdown()
	b.p = nil
}

// dropDead forgets a container that shut itself down after a render error;
// the next copy gets a new one.
func (b *bars) dropDead() {
	b.mu.Lock()
	b.p.Shutdown()
	b.p = nil
	b.mu.Unlock()
	clear(b.shown)
}

func closed(ch chan any) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// logWriter is Reporter.Writer in bar mode.
type logWriter struct{ b *bars }

// Write prints p above the bars when they are shown, else to out.
func (w logWriter) Write(p []byte) (int, error) {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if w.b.p != nil {
		if n, err := w.b.p.Write(p); err == nil {
			return n, nil
		} // else the container failed: write directly
	}
	return w.b.out.Write(p)
}

// The decorators. Each shows one column of the bar's stats, synchronised
// in width across the bars; the leading spaces separate the columns.

func (br *bar) counts(st decor.Statistics) string {
	s := br.stats.Load()
	switch {
	case st.Completed || st.Aborted || s.Estimated == 0:
		return countString(s.Rows) + " rows"
	default:
		return countString(s.Rows) + " / ~" + countString(s.Estimated) + " rows"
	}
}

func (br *bar) rate(decor.Statistics) string {
	s := br.stats.Load()
	if s.Rate <= 0 {
		return " - rows/s"
	}
	return " " + countString(int64(s.Rate+0.5)) + " rows/s"
}

func (br *bar) eta(st decor.Statistics) string {
	s := br.stats.Load()
	switch {
	case st.Completed:
		return "  in " + elapsedString(s.Elapsed)
	case st.Aborted:
		return "  stopped after " + elapsedString(s.Elapsed)
	case s.ETA < 0:
		return "  ETA ?"
	default:
		return "  ETA " + durationString(s.ETA)
	}
}

// elapsedString is durationString with a tenth of a second below 10s.
func elapsedString(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return durationString(d)
}
