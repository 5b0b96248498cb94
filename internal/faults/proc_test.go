//go:build faults

package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// instance is one mooncdc process (`mooncdc run --config F`), in its own
// process group, its stdout and stderr in a log file of its own.
type instance struct {
	label       string // "#3", "B#1"
	cmd         *exec.Cmd
	logPath     string
	metricsAddr string
	started     time.Time

	exited   chan struct{} // closed once the process has exited
	killed   bool          // we sent SIGKILL or SIGTERM: an exit is expected
	exitedAt time.Time
}

// startInstance runs the binary with the scenario's config and its own
// metrics port. The child dies with the test process (Pdeathsig) and is
// killed by cleanup if still running.
func (e *env) startInstance(label string) *instance {
	e.t.Helper()
	return e.startInstanceWith(label, e.cfgPath)
}

// startInstanceWith is startInstance with the config at cfgPath.
func (e *env) startInstanceWith(label, cfgPath string) *instance {
	e.t.Helper()
	addr := freeAddr(e.t)
	logPath := filepath.Join(e.dir, fmt.Sprintf("mooncdc-%02d-%s.log", len(e.insts)+1, strings.Trim(label, "#")))
	f, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(mooncdcBin, "run", "--config", cfgPath, "--metrics-listen", addr)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = environWithoutMooncdc()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		e.t.Fatalf("start %s: %v", mooncdcBin, err)
	}
	in := &instance{label: label, cmd: cmd, logPath: logPath, metricsAddr: addr, started: time.Now(), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		in.exitedAt = time.Now()
		close(in.exited)
	}()
	e.insts = append(e.insts, in)
	return in
}

func environWithoutMooncdc() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MOONCDC_") {
			env = append(env, kv)
		}
	}
	return env
}

func freeAddr(t interface{ Fatal(...any) }) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (in *instance) running() bool {
	select {
	case <-in.exited:
		return false
	default:
		return true
	}
}

// code is the exit code once exited: -1 when a signal killed it.
func (in *instance) code() int { return in.cmd.ProcessState.ExitCode() }

// kill9 sends SIGKILL to the process group and waits for the exit.
func (in *instance) kill9() {
	in.killed = true
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	<-in.exited
}

// stop sends SIGTERM and waits up to timeout for a clean stop; it returns
// the exit code, or an error (after a SIGKILL) if mooncdc did not stop.
func (in *instance) stop(timeout time.Duration) (int, error) {
	in.killed = true
	if !in.running() {
		return in.code(), nil
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.exited:
		return in.code(), nil
	case <-time.After(timeout):
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
		<-in.exited
		return in.code(), fmt.Errorf("mooncdc %s did not stop within %v of SIGTERM and was killed", in.label, timeout)
	}
}

// readyz returns /readyz's status code and first word ("streaming",
// "standby"), or 0 when it does not answer.
func (in *instance) readyz() (int, string) {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + in.metricsAddr + "/readyz")
	if err != nil {
		return 0, ""
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_ = resp.Body.Close()
	word, _, _ := strings.Cut(strings.TrimSpace(string(body)), " ")
	return resp.StatusCode, word
}

// ready reports whether /readyz answers 200 "streaming" (the active
// instance, streaming from Postgres).
func (in *instance) ready() bool {
	code, word := in.readyz()
	return code == http.StatusOK && word == "streaming"
}

// standby reports whether /readyz answers 200 "standby" (ha.enabled: a
// member of the group, waiting).
func (in *instance) standby() bool {
	code, word := in.readyz()
	return code == http.StatusOK && word == "standby"
}

// waitReady waits until the instance streams, exits or timeout passes.
func (in *instance) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if in.ready() {
			return nil
		}
		if !in.running() {
			return fmt.Errorf("mooncdc %s exited with code %d before it was streaming", in.label, in.code())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mooncdc %s not streaming after %v", in.label, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitStandby waits until the instance waits as a standby (ha.enabled).
func (in *instance) waitStandby(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if in.standby() {
			return nil
		}
		if !in.running() {
			return fmt.Errorf("mooncdc %s exited with code %d before it was a standby", in.label, in.code())
		}
		if time.Now().After(deadline) {
			code, word := in.readyz()
			return fmt.Errorf("mooncdc %s not a standby after %v (/readyz %d %q)", in.label, timeout, code, word)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logLine is one JSON line of mooncdc's log (log.format json).
type logLine struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
	Table string `json:"table"`
	Phase string `json:"phase"`
	Error string `json:"error"`
	TS    string `json:"ts"` // ISO 8601, this machine's clock
	raw   string
}

// lastAt returns the time of the last log line whose msg starts with msg,
// or the zero time.
func (in *instance) lastAt(msg string) time.Time {
	var at time.Time
	for _, l := range in.lines() {
		if strings.HasPrefix(l.Msg, msg) {
			if t, err := time.Parse(time.RFC3339Nano, l.TS); err == nil {
				at = t
			}
		}
	}
	return at
}

// lines parses the log so far; non-JSON lines come back with only raw set.
func (in *instance) lines() []logLine {
	data, err := os.ReadFile(in.logPath)
	if err != nil {
		return nil
	}
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l logLine
		_ = json.Unmarshal(sc.Bytes(), &l)
		l.raw = sc.Text()
		out = append(out, l)
	}
	return out
}

// has reports whether the log has a line with msg (a prefix) for table
// ("" for any).
func (in *instance) has(msg, table string) bool {
	for _, l := range in.lines() {
		if strings.HasPrefix(l.Msg, msg) && (table == "" || l.Table == table) {
			return true
		}
	}
	return false
}

// tail returns the last n lines of the log, indented.
func (in *instance) tail(n int) string {
	data, err := os.ReadFile(in.logPath)
	if err != nil {
		return "    (cannot read the log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// hasError reports whether the log has a line msg (a prefix) for table
// whose error holds errPart.
func (in *instance) hasError(msg, table, errPart string) bool {
	for _, l := range in.lines() {
		if strings.HasPrefix(l.Msg, msg) && l.Table == table && strings.Contains(l.Error, errPart) {
			return true
		}
	}
	return false
}

// phase classifies the moment in this process's life by its log, for the
// big table: startup (no copy or stream yet), copy, catchup (rows copied,
// not handed over), handover (handed over in catchup, main not past it),
// streaming.
func (in *instance) phase(table string) string {
	var copying, copied, handedCatchup, ready bool
	var resumed bool
	for _, l := range in.lines() {
		switch {
		case l.Msg == "resuming" || strings.HasPrefix(l.Msg, "created replication slot"):
			resumed = true
		case strings.HasPrefix(l.Msg, "copying table") && l.Table == table:
			copying, copied, handedCatchup, ready = true, false, false, false
		case strings.HasPrefix(l.Msg, "table copied") && l.Table == table:
			copied = true
		case strings.HasPrefix(l.Msg, "handed over") && l.Table == table:
			if l.Phase == "ready" {
				ready = true
			} else {
				handedCatchup = true
			}
		case strings.HasPrefix(l.Msg, "table ready") && l.Table == table:
			ready = true
		}
	}
	switch {
	case ready:
		return "streaming"
	case handedCatchup:
		return "handover"
	case copied:
		return "catchup"
	case copying:
		return "copy"
	case resumed:
		return "streaming"
	default:
		return "startup"
	}
}
