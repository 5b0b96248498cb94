package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

const (
	// ctlWait is how long pg_ctl waits for a start or stop, in seconds.
	ctlWait = "60"
	// ctlTimeout bounds a pg_ctl stop or status call that we give no context.
	ctlTimeout = 90 * time.Second
	// exitGrace is how long we wait, after pg_ctl says the server is gone, for
	// its last children to close the log pipe.
	exitGrace = 10 * time.Second
)

// Stop shuts the server down with pg_ctl stop -m mode, where mode is "smart",
// "fast" (also "") or "immediate", and blocks until it has exited. Smart waits
// for clients to disconnect and fails after a minute if they do not.
// Committed data survives every mode; immediate skips the shutdown
// checkpoint, so the next start runs crash recovery.
func (c *Cluster) Stop(mode string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pgtest: stop: cluster is closed")
	}
	if err := c.stop(mode); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// StartAgain starts a stopped server on the same data and port, blocking
// until it accepts connections. ctx bounds pg_ctl only.
func (c *Cluster) StartAgain(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pgtest: start again: cluster is closed")
	}
	if err := c.start(ctx); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// Restart is Stop(mode) followed by StartAgain(ctx), with no other lifecycle
// call in between. Connections do not survive it; the port does.
func (c *Cluster) Restart(ctx context.Context, mode string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pgtest: restart: cluster is closed")
	}
	if err := c.stop(mode); err != nil {
		return fmt.Errorf("pgtest: restart: %w", err)
	}
	if err := c.start(ctx); err != nil {
		return fmt.Errorf("pgtest: restart: %w", err)
	}
	return nil
}

// start runs pg_ctl start -w. The server inherits the write end of a fresh
// log pipe as its stdout and stderr; see logSink.pipe.
func (c *Cluster) start(ctx context.Context) error {
	mark := c.log.Mark()
	w, done, err := c.log.pipe()
	if err != nil {
		return fmt.Errorf("pg_ctl start: %w", err)
	}
	cmd := c.serverCommand(ctx, "pg_ctl", "start", "-w", "-t", ctlWait, "-D", c.dataDir)
	cmd.Env = c.user.env()
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Run()
	_ = w.Close() // the server holds its own copy
	c.serverDone = done
	if err != nil {
		// A server that failed to start is exiting; let its last words
		// reach the tail before quoting it.
		waitClosed(done, 2*time.Second)
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return fmt.Errorf("pg_ctl start on port %d: %w\n--- end of server log ---\n%s", c.port, err, c.log.TailSince(mark))
	}
	return nil
}

// stop runs pg_ctl stop -w and waits for the server's children to go.
func (c *Cluster) stop(mode string) error {
	switch mode {
	case "":
		mode = "fast"
	case "smart", "fast", "immediate":
	default:
		return fmt.Errorf("stop: unknown shutdown mode %q (want smart, fast or immediate)", mode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ctlTimeout)
	defer cancel()
	out, err := c.run(ctx, true, "pg_ctl", "stop", "-w", "-t", ctlWait, "-m", mode, "-D", c.dataDir)
	if err != nil {
		return fmt.Errorf("pg_ctl stop -m %s: %w: %s", mode, err, strings.TrimSpace(out))
	}
	waitClosed(c.serverDone, exitGrace)
	c.serverDone = nil
	return nil
}

// running asks pg_ctl status whether a server runs on the data directory.
// A stale postmaster.pid counts as not running.
func (c *Cluster) running() (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ctlTimeout)
	defer cancel()
	out, err := c.run(ctx, false, "pg_ctl", "status", "-D", c.dataDir)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && (exit.ExitCode() == 3 || exit.ExitCode() == 4):
		return false, nil // 3: no server running; 4: no data directory
	}
	return false, fmt.Errorf("pg_ctl status: %w: %s", err, strings.TrimSpace(out))
}

// run runs a server binary to completion and returns its combined output,
// which also goes to the log when toLog is set. The program must not leave
// children holding its output open (pg_ctl start does; see start).
func (c *Cluster) run(ctx context.Context, toLog bool, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := c.serverCommand(ctx, name, args...)
	cmd.Env = c.user.env()
	var w io.Writer = &out
	if toLog && c.log != nil {
		w = io.MultiWriter(&out, c.log)
	}
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	return out.String(), err
}
