package progress

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
)

// syncBuf is a bytes.Buffer safe for mpb's goroutines and the test's.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func copyOf(table string, rows, estimated int64, started time.Time) connector.CopyProgress {
	return connector.CopyProgress{Table: table, Rows: rows, EstimatedRows: estimated, Started: started}
}

// waitFor waits until out has a line containing every one of want, and
// returns it. mpb renders asynchronously: a frame follows an update soon,
// not at once.
func waitFor(t *testing.T, out *syncBuf, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, line := range strings.Split(out.String(), "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(line, w)
			}
			if all {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no line with %q after 10s in:\n%s", want, out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// lastFrameLine returns the last line of out that mentions table: the bar
// as it was last drawn.
func lastFrameLine(t *testing.T, out, table string) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], table) {
			return lines[i]
		}
	}
	t.Fatalf("no line mentions %s in:\n%s", table, out)
	return ""
}

func TestProgressLogLinesCarryRowsEstimateRateAndETA(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := newLogLines(zap.New(core))

	// 100k of 1M rows 10s after the start: 10k rows/s, 90s to go.
	l.update(at(10*time.Second), []connector.CopyProgress{copyOf("public.orders", 100_000, 1_000_000, t0)})
	// 10s later 300k: the rate is over the last interval, 20k rows/s.
	l.update(at(20*time.Second), []connector.CopyProgress{copyOf("public.orders", 300_000, 1_000_000, t0)})
	// The copy ended: no more lines for it.
	l.update(at(30*time.Second), nil)

	entries := logs.All()
	if len(entries) != 2 {
		t.Fatalf("%d log lines, want 2: %v", len(entries), entries)
	}
	want := []map[string]any{
		{"table": "public.orders", "rows": int64(100_000), "estimated_rows": int64(1_000_000), "rows_per_sec": 10_000.0, "eta": 90 * time.Second},
		{"table": "public.orders", "rows": int64(300_000), "estimated_rows": int64(1_000_000), "rows_per_sec": 20_000.0, "eta": 35 * time.Second},
	}
	for i, e := range entries {
		if e.Message != "copy progress" || e.Level != zapcore.InfoLevel {
			t.Errorf("line %d: %s %q, want info \"copy progress\"", i, e.Level, e.Message)
		}
		got := e.ContextMap()
		for k, v := range want[i] {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("line %d: %s = %v, want %v (all: %v)", i, k, got[k], v, got)
			}
		}
	}
}

func TestProgressLogLinesOmitUnknownETA(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	l := newLogLines(zap.New(core))
	l.update(at(10*time.Second), []connector.CopyProgress{
		copyOf("public.never_analyzed", 5_000, 0, t0),     // no estimate
		copyOf("public.underestimated", 5_000, 1_000, t0), // past the estimate
	})
	if n := logs.Len(); n != 2 {
		t.Fatalf("%d lines, want 2", n)
	}
	for _, e := range logs.All() {
		m := e.ContextMap()
		if _, ok := m["eta"]; ok {
			t.Errorf("%s: eta %v logged, want none (unknown)", m["table"], m["eta"])
		}
		if m["rows_per_sec"] != 500.0 {
			t.Errorf("%s: rows_per_sec %v, want 500", m["table"], m["rows_per_sec"])
		}
	}
}

func TestProgressRunLogsPeriodicallyWithoutATerminalAndStops(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	var out syncBuf
	r := New(Options{Out: &out, LogInterval: 10 * time.Millisecond})
	if r.Writer() != &out {
		t.Error("without a terminal, Writer is not Out itself")
	}
	src := func() []connector.CopyProgress {
		return []connector.CopyProgress{copyOf("public.orders", 42, 100, time.Now().Add(-time.Second))}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, src, zap.New(core)) }()
	deadline := time.Now().Add(10 * time.Second)
	for logs.FilterMessage("copy progress").Len() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d progress lines after 10s, want 3", logs.Len())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if out.String() != "" {
		t.Errorf("log mode drew on the output: %q", out.String())
	}
}

func TestProgressBarShowsTableCountsRateAndETA(t *testing.T) {
	var out syncBuf
	b := newBars(&out, 120)
	b.update(at(10*time.Second), []connector.CopyProgress{copyOf("public.orders", 100_000, 1_000_000, t0)})
	b.update(at(11*time.Second), []connector.CopyProgress{copyOf("public.orders", 120_000, 1_000_000, t0)})
	// The frame of the second update: over its 5s window the rate is
	// (120k-0)/11s ≈ 10.9k rows/s, so 880k rows are 81s away.
	running := waitFor(t, &out, "public.orders", "[===>", "120k / ~1.00M rows", "10.9k rows/s", "ETA 1m21s")
	b.stop(at(11*time.Second), []connector.CopyProgress{copyOf("public.orders", 120_000, 1_000_000, t0)})
	text := out.String()
	if r := []rune(running); len(r) > 120 {
		t.Errorf("bar line is %d wide, want at most 120: %q", len(r), running)
	}
	// Stopped while copying: the bar says so.
	if last := lastFrameLine(t, text, "public.orders"); !strings.Contains(last, "stopped after 11s") {
		t.Errorf("interrupted bar %q does not say it stopped", last)
	}
	if b.p != nil {
		t.Error("stop left the container running")
	}
}

func TestProgressBarOfEndedCopyCompletesWhileOthersRun(t *testing.T) {
	var out syncBuf
	b := newBars(&out, 120)
	b.update(at(2*time.Second), []connector.CopyProgress{
		copyOf("public.customers", 2_000, 4_000, t0),
		copyOf("public.orders", 1_000, 500_000, t0),
	})
	// customers is done; orders goes on.
	b.update(at(4*time.Second), []connector.CopyProgress{copyOf("public.orders", 3_000, 500_000, t0)})
	if _, ok := b.shown["public.customers"]; ok || len(b.shown) != 1 {
		t.Fatalf("bars shown after customers ended: %v", b.shown)
	}
	if b.p == nil {
		t.Fatal("the container is gone while orders is still copying")
	}
	waitFor(t, &out, "public.customers", "in 4s")
	b.update(at(5*time.Second), []connector.CopyProgress{copyOf("public.orders", 4_000, 500_000, t0)})
	// orders is done too: the container goes away.
	b.update(at(6*time.Second), nil)
	if b.p != nil || len(b.shown) != 0 {
		t.Fatalf("container %v, bars %v after every copy ended", b.p, b.shown)
	}

	text := out.String()
	customers := lastFrameLine(t, text, "public.customers")
	for _, want := range []string{"2000 rows", "in 4s", "500 rows/s"} {
		if !strings.Contains(customers, want) {
			t.Errorf("ended bar %q lacks %q", customers, want)
		}
	}
	if strings.Contains(customers, "ETA") || strings.Contains(customers, "-]") {
		t.Errorf("ended bar %q is not complete", customers)
	}
	if orders := lastFrameLine(t, text, "public.orders"); !strings.Contains(orders, "4000 rows") || !strings.Contains(orders, "in 6s") {
		t.Errorf("last bar %q is not complete at 4000 rows in 6s", orders)
	}
}

func TestProgressStopCompletesTheBarsOfEndedCopiesOnly(t *testing.T) {
	var out syncBuf
	b := newBars(&out, 120)
	b.update(at(time.Second), []connector.CopyProgress{
		copyOf("public.done", 1_000, 2_000, t0),
		copyOf("public.running", 1_000, 2_000, t0),
	})
	// Stopped after done's copy ended and while running's goes on.
	b.stop(at(2*time.Second), []connector.CopyProgress{copyOf("public.running", 1_500, 2_000, t0)})
	text := out.String()
	if done := lastFrameLine(t, text, "public.done"); !strings.Contains(done, "in 2s") {
		t.Errorf("the bar of the copy that ended %q is not complete", done)
	}
	if running := lastFrameLine(t, text, "public.running"); !strings.Contains(running, "1500 rows") || !strings.Contains(running, "stopped after 2s") {
		t.Errorf("the bar of the running copy %q does not show where it stopped", running)
	}
}

func TestProgressBarTotalGrowsPastALowOrMissingEstimate(t *testing.T) {
	var out syncBuf
	b := newBars(&out, 120)
	b.update(at(10*time.Second), []connector.CopyProgress{
		copyOf("public.low", 5_000, 1_000, t0),
		copyOf("public.unknown", 5_000, 0, t0),
	})
	low := waitFor(t, &out, "public.low", "ETA")
	unknown := waitFor(t, &out, "public.unknown", "ETA")
	b.stop(at(10*time.Second), nil)
	// Past the estimate: the bar is full, the counts say the estimate was
	// low, the ETA is unknown.
	if !strings.Contains(low, "5000 / ~1000 rows") || !strings.Contains(low, "ETA ?") || strings.Contains(low, "-") {
		t.Errorf("bar past its estimate: %q", low)
	}
	// No estimate: an empty bar, the rows so far, the ETA unknown.
	if !strings.Contains(unknown, "5000 rows") || !strings.Contains(unknown, "ETA ?") || strings.Contains(unknown, "=") {
		t.Errorf("bar without an estimate: %q", unknown)
	}
}

func TestProgressLogLinesPrintAboveBarsThenStraightToOutput(t *testing.T) {
	var out syncBuf
	r := New(Options{Out: &out, TTY: true, Width: 100})
	w := r.Writer()
	b := r.bars
	fmt.Fprintln(w, "before the copy")
	b.update(at(time.Second), []connector.CopyProgress{copyOf("public.orders", 10, 100, t0)})
	waitFor(t, &out, "public.orders", "10 / ~100 rows")
	fmt.Fprintln(w, "while copying")
	b.update(at(2*time.Second), []connector.CopyProgress{copyOf("public.orders", 20, 100, t0)})
	waitFor(t, &out, "public.orders", "20 / ~100 rows")
	b.update(at(3*time.Second), nil)
	fmt.Fprintln(w, "after the copy")

	text := out.String()
	lines := strings.Split(text, "\n")
	index := func(s string) int {
		for i, l := range lines {
			if l == s {
				return i
			}
		}
		t.Fatalf("no whole line %q in:\n%s", s, text)
		return -1
	}
	before, during, after := index("before the copy"), index("while copying"), index("after the copy")
	firstBar := -1
	for i, l := range lines {
		if strings.Contains(l, "public.orders") {
			firstBar = i
			break
		}
	}
	if !(before < firstBar && firstBar < during && during < after) {
		t.Errorf("lines out of order (before %d, first bar %d, during %d, after %d):\n%s", before, firstBar, during, after, text)
	}
	// The line written while copying is printed in the next frame, above
	// its bar.
	if !strings.Contains(lines[during+1], "public.orders") {
		t.Errorf("the line after %q is %q, want the bar", lines[during], lines[during+1])
	}
	if after != len(lines)-2 {
		t.Errorf("the line written after the copy is not the last: %q", text)
	}
}

func TestProgressRunDrawsBarsAndReturnsWhenStopped(t *testing.T) {
	var out syncBuf
	r := New(Options{Out: &out, TTY: true, Width: 100, Interval: 5 * time.Millisecond})
	started := time.Now()
	src := func() []connector.CopyProgress {
		return []connector.CopyProgress{copyOf("public.orders", int64(time.Since(started)/time.Millisecond), 1_000_000, started)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, src, nil) }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "public.orders") {
		if time.Now().After(deadline) {
			t.Fatal("no bar after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if r.bars.p != nil {
		t.Error("Run returned with the container running")
	}
	if last := lastFrameLine(t, out.String(), "public.orders"); !strings.Contains(last, "stopped after") {
		t.Errorf("last frame %q does not show the copy stopped", last)
	}
}

func TestProgressNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, w := range map[string]any{"file": f, "buffer": &bytes.Buffer{}} {
		if IsTerminal(w.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

func TestProgressMeterRate(t *testing.T) {
	m := newMeter(t0)
	m.observe(at(2*time.Second), 2_000) // since the start: 1000/s
	if s := m.stats(copyOf("t", 2_000, 10_000, t0)); s.Rate != 1000 || s.ETA != 8*time.Second || s.Elapsed != 2*time.Second {
		t.Errorf("after 2s: %+v", s)
	}
	for i := 3; i <= 10; i++ { // from 2s on, 3000 rows a second
		m.observe(at(time.Duration(i)*time.Second), 2_000+int64(i-2)*3_000)
	}
	if s := m.stats(copyOf("t", 26_000, 100_000, t0)); s.Rate != 3000 {
		t.Errorf("rate %v, want 3000: the window is the last 5s, not the whole copy", s.Rate)
	}
	if len(m.samples) > 7 {
		t.Errorf("%d samples kept, want the window's only", len(m.samples))
	}
}

func TestProgressFormats(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 9_999: "9999", 10_000: "10.0k", 123_456: "123k", 1_500_000: "1.50M", 12_340_000: "12.3M", 2_000_000_000: "2.00G",
	} {
		if got := countString(n); got != want {
			t.Errorf("countString(%d) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		4 * time.Second: "4s", 125 * time.Second: "2m05s", 3720 * time.Second: "1h02m",
	} {
		if got := durationString(d); got != want {
			t.Errorf("durationString(%s) = %q, want %q", d, got, want)
		}
	}
}

// A copy that has copied its rows and catches up, or that is still
// starting, draws no bar and logs no progress: only copies reading rows do.
func TestOnlyCopiesReadingRowsAreShown(t *testing.T) {
	t0 := time.Now()
	src := func() []connector.CopyProgress {
		return []connector.CopyProgress{
			{Table: "public.a", Stage: connector.CopyStageStarting, Started: t0},
			{Table: "public.b", Stage: connector.CopyStageCopying, Rows: 5, EstimatedRows: 10, Started: t0},
			{Table: "public.c", Stage: connector.CopyStageCatchingUp, Rows: 10, EstimatedRows: 10, Started: t0},
		}
	}
	got := readingRows(src)()
	if len(got) != 1 || got[0].Table != "public.b" {
		t.Fatalf("shown copies %+v, want only public.b", got)
	}
}
