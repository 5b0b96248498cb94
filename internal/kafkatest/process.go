package kafkatest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/gobuild"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startTimeout bounds how long a (re)start may take to bind and answer
// metadata, and how long Stop waits for a clean shutdown.
const startTimeout = 30 * time.Second

// Process is a one-broker kfake cluster running as its own OS process (the
// kfakeserver command) and persisting to a data directory, so that a test
// can SIGKILL it and start it again on the same address with the same data.
//
// Its methods are not safe for concurrent use; drive it from the test
// goroutine. Kill, Stop and Start block until the process has exited or is
// ready.
type Process struct {
	t       testing.TB // the test that started it; reports errors from Kill and Stop
	bin     string
	dataDir string
	addr    string
	out     *syncBuffer // kfakeserver's stdout and stderr, across restarts

	cmd   *exec.Cmd
	stdin io.WriteCloser // held open: kfakeserver exits at EOF, i.e. when we die
	done  chan struct{}  // closed once cmd has exited and been waited for
}

// StartProcess builds kfakeserver (once per test binary, with the go
// command on PATH, which `go test` provides), starts it with dataDir, and
// returns once the broker answers a metadata request. The first start picks
// a free port on 127.0.0.1; restarts reuse it. The process is stopped
// (SIGTERM, then SIGKILL if it hangs) when the test ends, and its output is
// logged if the test failed.
func StartProcess(t testing.TB, dataDir string) *Process {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (a Kafka broker): -short (make test-unit) leaves it out; make test runs it")
	}
	bin := acquireBinary(t)
	t.Cleanup(releaseBinary) // registered first: runs after the stop below
	p := &Process{t: t, bin: bin, dataDir: dataDir, addr: "127.0.0.1:0", out: new(syncBuffer)}
	t.Cleanup(func() {
		if p.running() {
			p.stop()
		}
		if t.Failed() {
			t.Logf("kafkatest: kfakeserver output:\n%s", p.out.String())
		}
	})
	p.start(t)
	return p
}

// Addr returns "127.0.0.1:PORT"; it does not change across restarts.
func (p *Process) Addr() string { return p.addr }

// Kill sends SIGKILL and waits for the process to exit. kfake gets no
// chance to save anything; everything it acknowledged is on disk already
// (see the package doc).
func (p *Process) Kill() {
	p.t.Helper()
	if !p.running() {
		p.t.Errorf("kafkatest: Kill: kfakeserver on %s is not running", p.addr)
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Stop sends SIGTERM and waits for kfakeserver to save its state and exit;
// after startTimeout it reports an error and kills it.
func (p *Process) Stop() {
	p.t.Helper()
	if !p.running() {
		p.t.Errorf("kafkatest: Stop: kfakeserver on %s is not running", p.addr)
		return
	}
	p.stop()
}

// Start starts the process again with the same data directory and address
// and waits until it answers metadata requests. It fails t if the process is
// running or the address has been taken meanwhile.
func (p *Process) Start(t testing.TB) {
	t.Helper()
	if p.running() {
		t.Fatalf("kafkatest: Start: kfakeserver on %s is already running", p.addr)
	}
	p.start(t)
}

func (p *Process) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *Process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(startTimeout):
		p.t.Errorf("kafkatest: kfakeserver on %s did not exit %v after SIGTERM; killing it", p.addr, startTimeout)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *Process) start(t testing.TB) {
	t.Helper()
	addrs := make(chan string, 1)
	cmd := exec.Command(p.bin,
		"-addr", p.addr,
		"-data-dir", p.dataDir,
		"-log-level", "warn",
		"-exit-on-stdin-eof",
	)
	cmd.Stdout = &addrWatcher{w: p.out, addrs: addrs}
	cmd.Stderr = p.out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("kafkatest: kfakeserver stdin: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("kafkatest: start kfakeserver: %v", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // also closes stdin and finishes copying output
		close(done)
	}()
	p.cmd, p.stdin, p.done = cmd, stdin, done

	fail := func(format string, args ...any) {
		t.Helper()
		if p.running() {
			_ = cmd.Process.Kill()
			<-done
		}
		t.Fatalf("kafkatest: kfakeserver (data dir %s): %s; output:\n%s", p.dataDir, strings.TrimSpace(fmt.Sprintf(format, args...)), p.out.String())
	}
	select {
	case addr := <-addrs:
		p.addr = addr
	case <-done:
		fail("exited before listening (%v)", cmd.ProcessState)
	case <-time.After(startTimeout):
		fail("not listening after %v", startTimeout)
	}
	if err := waitReady(p.addr, done); err != nil {
		fail("%v", err)
	}
}

// waitReady polls a metadata request until the broker answers, the process
// exits, or startTimeout passes.
func waitReady(addr string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		reqCtx, reqCancel := context.WithTimeout(ctx, time.Second)
		_, err := adm.BrokerMetadata(reqCtx)
		reqCancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited while starting (last metadata error: %w)", err)
		case <-ctx.Done():
			return fmt.Errorf("no metadata answer on %s after %v: %w", addr, startTimeout, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// addrWatcher passes kfakeserver's stdout through to w and sends the
// address of its first "listening on HOST:PORT" line to addrs.
type addrWatcher struct {
	w     io.Writer
	addrs chan<- string
	line  []byte
	sent  bool
}

func (a *addrWatcher) Write(b []byte) (int, error) {
	if !a.sent {
		a.line = append(a.line, b...)
		for {
			i := bytes.IndexByte(a.line, '\n')
			if i < 0 {
				break
			}
			line := strings.TrimSpace(string(a.line[:i]))
			a.line = a.line[i+1:]
			if addr, ok := strings.CutPrefix(line, "listening on "); ok {
				a.addrs <- addr
				a.sent, a.line = true, nil
				break
			}
		}
	}
	return a.w.Write(b)
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of
// exec.Cmd's output copiers and reads from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(b)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The kfakeserver binary is built on first use and deleted when the last
// Process using it is cleaned up, so a test run leaves nothing in the temp
// directory; a later StartProcess rebuilds it from the build cache (~0.5s).
var server struct {
	mu   sync.Mutex
	refs int
	dir  string
	path string
}

func acquireBinary(t testing.TB) string {
	t.Helper()
	server.mu.Lock()
	defer server.mu.Unlock()
	if server.path == "" {
		dir, path, err := buildServer()
		if err != nil {
			t.Fatalf("kafkatest: build kfakeserver: %v", err)
		}
		server.dir, server.path = dir, path
	}
	server.refs++
	return server.path
}

func releaseBinary() {
	server.mu.Lock()
	defer server.mu.Unlock()
	server.refs--
	if server.refs == 0 {
		_ = os.RemoveAll(server.dir)
		server.dir, server.path = "", ""
	}
}

const serverPkg = "github.com/mooncdc/mooncdc/internal/kafkatest/kfakeserver"

// buildServer builds the broker with the test's race setting (gobuild:
// under make test a link from the cache).
func buildServer() (dir, path string, err error) {
	dir, err = os.MkdirTemp("", "kafkatest-kfakeserver-")
	if err != nil {
		return "", "", err
	}
	path, err = gobuild.BuildIn(dir, serverPkg, "kfakeserver")
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", "", err
	}
	return dir, path, nil
}
