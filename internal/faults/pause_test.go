//go:build faults

package faults

import (
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pauseHold is how long the active instance stays stopped (SIGSTOP): past
// the group's session timeout (10 s) and a takeover, so that the new
// active has written for a while when the old one goes on.
const pauseHold = 22 * time.Second

// pauseKeys is the pause scenario's load: one-row UPDATEs of ids
// [0, pauseKeys) of the big table, which then has just these rows.
const pauseKeys = 200

// runPause (issue 27): standby instances (ha.enabled) under a load of
// one-row UPDATEs on pauseKeys keys; once every table is handed over, the
// active instance A is stopped with SIGSTOP for pauseHold (a stopped VM, a
// frozen cgroup, a long GC pause: its sockets stay open, and it holds
// whatever it decoded or buffered). The standby B must take over and write
// its first record within maxTakeover of the pause; then the load stops
// and A goes on (SIGCONT). A's turn has passed: it must write nothing more
// (the broker refuses its transactional producer's old epoch) and must
// either exit as fenced (exit code 4) or come back as a standby. The
// records checked after the run (verifyPause) show no write of A landing
// after B's; check() shows the compacted state equal to the table, nothing
// lost and, in exactly-once mode, nothing duplicated.
func runPause(e *env) int {
	a := e.startFirst()
	b := e.startInstance("B")
	if err := b.waitStandby(30 * time.Second); err != nil {
		e.t.Fatalf("%v; the end of its log:\n%s", err, b.tail(20))
	}
	e.waitAllReady(2 * time.Minute)
	e.sleep(e.rnd(time.Second, 3*time.Second))

	before := b.written()
	paused := time.Now()
	if err := syscall.Kill(a.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		e.t.Fatalf("SIGSTOP mooncdc %s: %v", a.label, err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(a.cmd.Process.Pid, syscall.SIGCONT)
		}
	}
	defer resume() // a failure below must not leave it stopped
	for b.written() <= before {
		if !b.running() {
			e.t.Fatalf("standby mooncdc %s exited with code %d after the pause of %s; the end of its log:\n%s", b.label, b.code(), a.label, b.tail(25))
		}
		if time.Since(paused) > time.Minute {
			e.t.Fatalf("the standby %s wrote nothing a minute after the pause of the active %s; the end of its log:\n%s", b.label, a.label, b.tail(25))
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(paused)
	e.cur = b
	e.note("pause: the active %s stopped (SIGSTOP); %s wrote its first record %v after the pause (takeover_ms=%d)",
		a.label, b.label, took.Round(10*time.Millisecond), took.Milliseconds())
	if took > maxTakeover {
		e.t.Errorf("the standby's first record came %v after the pause, want <= %v; its log:\n%s", took.Round(10*time.Millisecond), maxTakeover, b.tail(25))
	}
	e.sleep(time.Until(paused.Add(pauseHold)))
	// The writer stops first, so that no later update can hide a stale
	// value A might still write.
	if err := e.gen.stopLoad(); err != nil {
		e.t.Fatalf("load generator: %v", err)
	}
	resume()
	cont := time.Now()
	// A learns its turn has passed: its lease lapsed while it was stopped
	// (it aborts and joins again as a standby), or the broker refuses its
	// producer's epoch (it exits, fenced).
	for {
		if !a.running() {
			if a.code() != 4 {
				e.t.Errorf("the paused mooncdc %s exited with code %d after SIGCONT, want 4 (fenced) or a standby; the end of its log:\n%s", a.label, a.code(), a.tail(25))
			}
			e.note("pause: %s exited with code %d %v after SIGCONT", a.label, a.code(), a.exitedAt.Sub(cont).Round(10*time.Millisecond))
			break
		}
		if a.standby() {
			e.note("pause: %s is a standby again %v after SIGCONT", a.label, time.Since(cont).Round(10*time.Millisecond))
			break
		}
		if time.Since(cont) > 45*time.Second {
			code, word := a.readyz()
			e.t.Fatalf("45 s after SIGCONT the old active %s is neither a standby nor exited (/readyz %d %q); the end of its log:\n%s", a.label, code, word, a.tail(25))
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.note("pause: %s's warnings: %s", a.label, warnings(a))
	if !b.ready() {
		e.t.Errorf("after %s resumed, %s does not stream (/readyz); the end of its log:\n%s", a.label, b.label, b.tail(25))
	}
	e.sleep(2 * time.Second)
	return 1
}

// verifyPause: per key, no change record steps back (older, by commit LSN
// and sequence, than the one before it): a write of the paused instance
// landing after its successor's would. In both modes a standby group
// writes in Kafka transactions (connector/internal/delivery/sink.go), and the successor
// resumes right after the last commit, so a read_committed reader sees no
// resend either.
func verifyPause(e *env, raw map[string][]*kgo.Record, _ int) {
	verifySteps(e, raw, 0, "pause")
}
