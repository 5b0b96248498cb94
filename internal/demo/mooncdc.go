package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mooncdc is the mooncdc binary running as a child process, its output
// going to a log file.
type mooncdc struct {
	cmd        *exec.Cmd
	logPath    string
	metricsURL string // http://host:port

	exited  chan struct{} // closed when the process has exited (ProcessState is set)
	stopped bool
}

// startMooncdc runs `bin run --config configPath`, stdout and stderr into
// logPath. The child gets its own process group, so a Ctrl-C in the
// terminal reaches only the demo, which then stops mooncdc with one SIGTERM
// (a second signal would make mooncdc exit at once, without a clean stop).
func startMooncdc(bin, configPath, logPath, metricsAddr string) (*mooncdc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create mooncdc's log file: %w", err)
	}
	cmd := exec.Command(bin, "run", "--config", configPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = environWithoutMooncdc()
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	m := &mooncdc{cmd: cmd, logPath: logPath, metricsURL: "http://" + metricsAddr, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the exit code is in ProcessState
		_ = logFile.Close()
		close(m.exited)
	}()
	return m, nil
}

// environWithoutMooncdc is our environment minus MOONCDC_* variables, which
// would override the demo's config file.
func environWithoutMooncdc() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MOONCDC_") {
			env = append(env, kv)
		}
	}
	return env
}

// Pid returns the process id.
func (m *mooncdc) Pid() int { return m.cmd.Process.Pid }

// exitCode returns the exit code once the process has exited: -1 if a
// signal killed it.
func (m *mooncdc) exitCode() int { return m.cmd.ProcessState.ExitCode() }

// diedError describes an unexpected exit, with the end of the log.
func (m *mooncdc) diedError(doing string) error {
	return fmt.Errorf("mooncdc exited with code %d %s; the end of its log:\n%s",
		m.exitCode(), doing, m.tail(20))
}

// waitReady polls /readyz until it answers 200 (mooncdc is streaming), the
// process exits, ctx ends or timeout passes.
func (m *mooncdc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: time.Second}
	for {
		if resp, err := client.Get(m.metricsURL + "/readyz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.exited:
			return m.diedError("before it was streaming")
		case <-deadline.C:
			return fmt.Errorf("mooncdc is not streaming after %s (%s/readyz is not 200); the end of its log:\n%s",
				timeout, m.metricsURL, m.tail(20))
		case <-tick.C:
		}
	}
}

// metrics reads the given counters and gauges from /metrics (unlabelled
// series only). Missing names are left out of the result.
func (m *mooncdc) metrics(ctx context.Context, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.metricsURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read mooncdc's metrics: %w", err)
	}
	defer resp.Body.Close()
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	got := make(map[string]float64)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			got[name] = v
		}
	}
	return got, sc.Err()
}

// stop asks mooncdc for a clean stop with SIGTERM and waits up to timeout
// for it to exit, then kills it. It returns how long the stop took and an
// error if mooncdc had to be killed. Calling it again does nothing.
func (m *mooncdc) stop(timeout time.Duration) (time.Duration, error) {
	if m.stopped {
		return 0, nil
	}
	m.stopped = true
	start := time.Now()
	select {
	case <-m.exited:
		return 0, nil // it had exited already
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return 0, fmt.Errorf("send SIGTERM to mooncdc: %w", err)
	}
	select {
	case <-m.exited:
		return time.Since(start), nil
	case <-time.After(timeout):
		_ = m.cmd.Process.Kill()
		<-m.exited
		return time.Since(start), fmt.Errorf("mooncdc did not stop within %s of SIGTERM and was killed; the end of its log:\n%s",
			timeout, m.tail(20))
	}
}

// tail returns the last n lines of the log, indented.
func (m *mooncdc) tail(n int) string {
	data, err := os.ReadFile(m.logPath)
	if err != nil {
		return "    (cannot read the log: " + err.Error() + ")"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return "    (the log is empty)"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// waitCopied waits until mooncdc reports a finished copy of every table
// (mooncdc_table_copy_duration_seconds{table=…} appears once a copy is
// handed over), so that the load that follows streams as changes rather
// than racing the (empty) snapshot.
func (m *mooncdc) waitCopied(ctx context.Context, timeout time.Duration, tables ...string) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	for {
		missing := tables
		if resp, err := client.Get(m.metricsURL + "/metrics"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			missing = nil
			for _, t := range tables {
				if !strings.Contains(string(body), `mooncdc_table_copy_duration_seconds{table="`+t+`"}`) {
					missing = append(missing, t)
				}
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mooncdc has not copied %s after %s; the end of its log:\n%s", strings.Join(missing, ", "), timeout, m.tail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.exited:
			return m.diedError("while copying the tables")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
