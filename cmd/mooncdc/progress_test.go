//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// openPTY opens a pseudo-terminal: the master end, which reads what is
// written to the terminal, and the terminal itself. cols 0 leaves its size
// unset.
func openPTY(t *testing.T, cols uint16) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = tty.Close() })
	if cols > 0 {
		if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: cols}); err != nil {
			t.Fatalf("size the pseudo-terminal: %v", err)
		}
	}
	return master, tty
}

func TestProgressBarsOnlyOnATerminalWithConsoleLogs(t *testing.T) {
	_, sized := openPTY(t, 120)
	_, unsized := openPTY(t, 0)
	tests := []struct {
		name   string
		stderr io.Writer
		format string
		bars   bool
	}{
		{"terminal, console log", sized, "console", true},
		{"terminal, json log", sized, "json", false},
		{"terminal of unknown width", unsized, "console", false},
		{"pipe or file", &bytes.Buffer{}, "console", false},
	}
	for _, tt := range tests {
		r := newProgress(config.LogConfig{Level: "info", Format: tt.format}, tt.stderr)
		if r.Bars() != tt.bars {
			t.Errorf("%s: bars %v, want %v", tt.name, r.Bars(), tt.bars)
		}
		if !tt.bars && r.Writer() != tt.stderr {
			t.Errorf("%s: without bars the log is not written to stderr itself", tt.name)
		}
	}
}

// startBigTable starts Postgres with public.big, rows narrow rows,
// analyzed so that the copy has an estimate, and a Kafka; it returns the
// run arguments.
func startBigTable(t *testing.T, rows int) []string {
	t.Helper()
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	err := pg.Exec(context.Background(), "postgres", fmt.Sprintf(`
		CREATE TABLE big (id bigint PRIMARY KEY, n int NOT NULL);
		INSERT INTO big SELECT i, i %% 1000 FROM generate_series(1, %d) i;
		ANALYZE big;`, rows))
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "name: progress\npostgres:\n  tables: [public.big]\nmetrics:\n  listen: \"\"\n")
	return []string{"run", "--config", cfg, "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--log-format", "console"}
}

// runUntil runs mooncdc with args until stderr (as read by read) contains
// until, then stops it as SIGTERM would and checks it exits 0.
func runUntil(t *testing.T, args []string, stderr io.Writer, read func() string, until string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, nil, &bytes.Buffer{}, stderr) }()
	reached := eventually.Within(90*time.Second, 20*time.Millisecond, func() bool {
		if strings.Contains(read(), until) {
			return true
		}
		select {
		case code := <-done:
			t.Fatalf("mooncdc exited %d before %q:\n%s", code, until, read())
		default:
		}
		return false
	})
	if !reached {
		cancel()
		<-done
		t.Fatalf("no %q after 90s:\n%s", until, read())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("mooncdc exited %d:\n%s", code, read())
	}
}

func TestProgressRunLogsCopyProgressWhenStderrIsNotATerminal(t *testing.T) {
	defer func(d time.Duration) { progressLogInterval = d }(progressLogInterval)
	progressLogInterval = 50 * time.Millisecond
	args := startBigTable(t, 20_000)

	var stderr syncBuf
	runUntil(t, args, &stderr, stderr.String, "table copied")

	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "copy progress") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no copy progress lines:\n%s", stderr.String())
	}
	fields := regexp.MustCompile(`"table": "public.big", "rows": \d+, "estimated_rows": 20000, "rows_per_sec": \d+`)
	for _, l := range lines {
		if !fields.MatchString(l) {
			t.Errorf("progress line lacks a field: %s", l)
		}
	}
	if strings.Contains(stderr.String(), "\x1b[") {
		t.Error("escape codes written to a stderr that is not a terminal")
	}
}

func TestProgressRunDrawsBarsOnATerminalWithLogLinesAbove(t *testing.T) {
	// The bars redrawn every 5 ms, so that a copy of 40,000 rows (about
	// 0.5 s under -race) outlasts many redraws even on a quiet machine; at
	// the 200 ms default 20,000 rows were copied in one tick or less and
	// the test saw no bar one run in two, and 400,000 rows cost 35 s.
	defer func(d time.Duration) { progressInterval = d }(progressInterval)
	progressInterval = 5 * time.Millisecond
	args := startBigTable(t, 40_000)
	master, tty := openPTY(t, 120)
	var screen syncBuf
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, err := io.Copy(&screen, master)
		if err != nil && !errors.Is(err, syscall.EIO) { // EIO: the terminal is closed
			t.Errorf("read the terminal: %v", err)
		}
	}()

	runUntil(t, args, tty, screen.String, "table copied")
	_ = tty.Close()
	<-copied

	out := screen.String()
	lines := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	ansi := regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	var bars, logs int
	for _, l := range lines {
		l = ansi.ReplaceAllString(l, "")
		isBar := strings.Contains(l, "public.big") && strings.Contains(l, "rows/s")
		isLog := strings.Contains(l, "\tINFO\t")
		switch {
		case isBar && isLog:
			t.Errorf("a log line is drawn into a bar: %q", l)
		case isBar:
			bars++
			if !strings.Contains(l, "[") || !strings.Contains(l, "rows") {
				t.Errorf("bar without its counts: %q", l)
			}
		case isLog:
			logs++
			if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT`).MatchString(l) {
				t.Errorf("log line does not start a line: %q", l)
			}
		}
	}
	if bars == 0 {
		t.Fatalf("no bar for public.big on the terminal:\n%q", out)
	}
	if logs == 0 || !strings.Contains(out, "table copied") {
		t.Errorf("the log lines are missing from the terminal:\n%q", out)
	}
	if strings.Contains(out, "copy progress") {
		t.Error("progress log lines on a terminal that shows bars")
	}
}
