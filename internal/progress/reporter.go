package progress

import (
	"context"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
)

// Source returns the table copies running now, such as
// connector.Pipeline.Copies. It is called from the Run goroutine only and
// must not block for long.
type Source func() []connector.CopyProgress

// Defaults of Options.
const (
	DefaultInterval    = 200 * time.Millisecond
	DefaultLogInterval = 10 * time.Second
)

// Options configure a Reporter.
type Options struct {
	// Out is the output: the terminal the bars are drawn on, and where
	// Writer's lines go while no bars are shown. Required.
	Out io.Writer
	// TTY draws bars on Out. Without it, Run logs a "copy progress" line
	// per running copy every LogInterval instead.
	TTY bool
	// Interval is how often the bars poll the source (DefaultInterval).
	Interval time.Duration
	// LogInterval is how often log lines are written (DefaultLogInterval).
	LogInterval time.Duration
	// Width is the width of the bars' lines; 0 is the terminal's width (80
	// when Out is not a terminal).
	Width int
	// Now is the clock (time.Now); the copies' start times come from the
	// same clock.
	Now func() time.Time
}

// Reporter shows the progress of table copies: see the package doc. Create
// it with New, log through Writer, and run it with Run.
type Reporter struct {
	o    Options
	bars *bars // nil unless o.TTY
}

// New returns a Reporter. It starts nothing.
func New(o Options) *Reporter {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.LogInterval <= 0 {
		o.LogInterval = DefaultLogInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &Reporter{o: o}
	if o.TTY {
		r.bars = newBars(o.Out, o.Width)
	}
	return r
}

// Bars reports whether r draws bars (Options.TTY) rather than log lines.
func (r *Reporter) Bars() bool { return r.bars != nil }

// Writer returns where the process's log should be written: Out, except
// that while bars are on screen, each write is printed above them (at the
// next refresh, within Interval). It is safe for concurrent use, and stays
// usable before, during and after Run.
func (r *Reporter) Writer() io.Writer {
	if r.bars == nil {
		return r.o.Out
	}
	return logWriter{r.bars}
}

// Run shows the copies src returns until ctx ends: bars on a terminal, log
// lines on log otherwise (log may be nil for bars). It blocks until ctx
// ends and, when it returns, every bar it drew is ended and flushed: after
// a last look at src, the bars of copies that are gone are complete, those
// of copies still running show where they stopped. Run may be called once.
func (r *Reporter) Run(ctx context.Context, src Source, log *zap.Logger) {
	src = readingRows(src)
	if r.bars != nil {
		r.runBars(ctx, src)
		return
	}
	if log == nil {
		log = zap.NewNop()
	}
	r.runLogs(ctx, src, log)
}

// readingRows keeps the copies that read rows: a copy's bar ends when its
// rows are copied, though the copy goes on catching up until its handover,
// and none is drawn while it starts (no count, no estimate yet).
func readingRows(src Source) Source {
	return func() []connector.CopyProgress {
		all := src()
		out := all[:0:0]
		for _, c := range all {
			if c.Stage == "" || c.Stage == connector.CopyStageCopying {
				out = append(out, c)
			}
		}
		return out
	}
}

func (r *Reporter) runBars(ctx context.Context, src Source) {
	tick := time.NewTicker(r.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			r.bars.stop(r.o.Now(), src())
			return
		case <-tick.C:
			r.bars.update(r.o.Now(), src())
		}
	}
}

func (r *Reporter) runLogs(ctx context.Context, src Source, log *zap.Logger) {
	lines := newLogLines(log)
	tick := time.NewTicker(r.o.LogInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			lines.update(r.o.Now(), src())
		}
	}
}
