//go:build faults

package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

const bigTable = "public.big"

// runKill9: kill -9 of mooncdc at >= 20 moments spread over the big
// table's copy, its catch-up and handover, and streaming, restarting it
// each time, under load.
func runKill9(e *env) int {
	const (
		copyKills    = 8
		catchupKills = 4
		totalKills   = 20
	)
	kills := 0
	byPhase := map[string]int{}
	// killRestart kills the current instance, whatever it is doing, and
	// starts the next one.
	killRestart := func() {
		e.ensure()
		byPhase[e.phase()]++
		e.cur.kill9()
		kills++
		e.restart()
	}
	e.startFirst()
	// The copy: random moments 200 ms – 2 s after each start, or after the
	// start of the big table's copy (which begins later and later: the
	// copy first reads the keys earlier copies left in the topic).
	for kills < copyKills {
		if kills%2 == 1 {
			for !e.cur.has("copying table", bigTable) && e.cur.running() && time.Since(e.cur.started) < time.Minute {
				time.Sleep(5 * time.Millisecond)
			}
			e.sleep(e.rnd(200*time.Millisecond, 2*time.Second))
		} else {
			e.sleep(time.Until(e.cur.started.Add(e.rnd(200*time.Millisecond, 2*time.Second))))
		}
		killRestart()
	}
	// Catch-up and handover: just after the big table's rows are copied
	// (until a kill comes too late and the table is handed over).
	for range catchupKills {
		if !e.waitCopied(3 * time.Minute) {
			break
		}
		e.sleep(e.rnd(0, 60*time.Millisecond))
		killRestart()
	}
	// Streaming: once every table is ready, random moments again.
	e.waitAllReady(3 * time.Minute)
	for kills < totalKills {
		e.sleep(time.Until(e.cur.started.Add(e.rnd(200*time.Millisecond, 2*time.Second))))
		killRestart()
	}
	e.sleep(2 * time.Second)
	e.note("kill9: %d kills by phase of the big table: %s", kills, fmtCounts(byPhase))
	return kills
}

// runPGRestart: Postgres stopped (-m immediate, fast, immediate) and
// started again 3 times under load: during the big table's copy, around
// its handover, while streaming.
func runPGRestart(e *env) int {
	e.startFirst()
	modes := []string{"immediate", "fast", "immediate"}
	restarts := 0
	restart := func(mode string) {
		e.t.Helper()
		ph := e.phase()
		if err := e.pg.Stop(mode); err != nil {
			e.t.Fatal(err)
		}
		down := e.rnd(500*time.Millisecond, 3*time.Second)
		time.Sleep(down)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.pg.StartAgain(ctx); err != nil {
			e.t.Fatal(err)
		}
		restarts++
		e.note("pgrestart %d: -m %s during %s, down %v", restarts, mode, ph, down.Round(time.Millisecond))
	}
	e.sleep(e.rnd(time.Second, 3*time.Second))
	restart(modes[0])
	e.waitCopied(3 * time.Minute)
	e.sleep(e.rnd(0, 500*time.Millisecond))
	restart(modes[1])
	e.waitAllReady(3 * time.Minute)
	e.sleep(e.rnd(time.Second, 3*time.Second))
	restart(modes[2])
	e.sleep(3 * time.Second)
	return restarts
}

// runBrokerRestart: the broker process killed (SIGKILL) and started again
// 3 times under load: during the copy, around the handover, streaming.
func runBrokerRestart(e *env) int {
	e.startFirst()
	restarts := 0
	restart := func() {
		e.t.Helper()
		ph := e.phase()
		e.broker.Kill()
		down := e.rnd(500*time.Millisecond, 3*time.Second)
		time.Sleep(down)
		e.broker.Start(e.t)
		restarts++
		e.note("brokerrestart %d: kill -9 during %s, down %v", restarts, ph, down.Round(time.Millisecond))
	}
	e.sleep(e.rnd(time.Second, 3*time.Second))
	restart()
	e.waitCopied(3 * time.Minute)
	e.sleep(e.rnd(0, 500*time.Millisecond))
	restart()
	e.waitAllReady(3 * time.Minute)
	e.sleep(e.rnd(time.Second, 3*time.Second))
	restart()
	e.sleep(3 * time.Second)
	return restarts
}

// runTwoInstances: a second instance with the same name starts while the
// first runs (copying the big table). Exactly-once: the first must be
// fenced (exit code 4, a message saying so) and the second goes on.
// At-least-once: the second cannot take the slot while the first holds
// it; report what it does, then stop the first and let the second (or a
// new one, if it gave up) take over.
func runTwoInstances(e *env) int {
	a := e.startFirst()
	for !a.has("copying table", bigTable) && a.running() && time.Since(a.started) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	e.sleep(e.rnd(200*time.Millisecond, 1500*time.Millisecond))
	aPhase := e.phase()
	b := e.startInstance("B")
	e.note("twoinstances: second instance B started while A was in %s", aPhase)

	if e.mode == modeExactlyOnce {
		select {
		case <-a.exited:
		case <-time.After(90 * time.Second):
			e.t.Fatalf("exactly-once: the first instance still runs 90s after a second one started; the end of its log:\n%s\nB's:\n%s",
				a.tail(15), b.tail(15))
		}
		a.killed = true // its exit is the point
		e.note("twoinstances: A exited with code %d %v after B started: %s", a.code(), a.exitedAt.Sub(b.started).Round(time.Millisecond), a.lastError())
		if a.code() != 4 {
			e.t.Errorf("exactly-once: the fenced instance exited with code %d, want 4 (fenced); the end of its log:\n%s", a.code(), a.tail(15))
		} else if msg := strings.ToLower(a.lastError()); !strings.Contains(msg, "fenc") {
			e.t.Errorf("exactly-once: the fenced instance's last error does not say it was fenced: %s", a.lastError())
		}
		e.cur = b
		if err := b.waitReady(90 * time.Second); err != nil {
			e.t.Fatalf("exactly-once: the second instance after fencing the first: %v; the end of its log:\n%s", err, b.tail(20))
		}
		e.sleep(5 * time.Second)
		return 1
	}

	// At-least-once: watch both for 10 s.
	e.sleep(10 * time.Second)
	if !b.running() {
		e.note("twoinstances: B exited with code %d after %v: %s", b.code(), b.exitedAt.Sub(b.started).Round(time.Millisecond), b.lastError())
	} else {
		e.note("twoinstances: B still running after 10s (ready=%v); its warnings: %s", b.ready(), warnings(b))
	}
	if !a.running() {
		e.t.Errorf("the first instance exited with code %d while the second one ran; the end of its log:\n%s", a.code(), a.tail(20))
	} else {
		e.note("twoinstances: A still running (ready=%v); its warnings: %s", a.ready(), warnings(a))
	}
	code, err := a.stop(60 * time.Second)
	if err != nil || code != 0 {
		e.t.Errorf("clean stop of the first instance: exit code %d, %v; the end of its log:\n%s", code, err, a.tail(20))
	}
	if b.running() {
		e.cur = b
		took := time.Now()
		if err := b.waitReady(90 * time.Second); err != nil {
			e.t.Errorf("the second instance after the first stopped: %v; the end of its log:\n%s", err, b.tail(20))
			b.kill9()
			e.restart()
		} else {
			e.note("twoinstances: B streams %v after A stopped", time.Since(took).Round(100*time.Millisecond))
		}
	} else {
		e.restart()
	}
	e.sleep(3 * time.Second)
	return 1
}

// warnings summarises the distinct warning and error messages of a log.
func warnings(in *instance) string {
	counts := map[string]int{}
	for _, l := range in.lines() {
		if l.Level == "warn" || l.Level == "error" {
			msg := l.Msg
			if l.Error != "" {
				msg += ": " + l.Error
			}
			counts[msg]++
		}
	}
	if len(counts) == 0 {
		return "none"
	}
	return fmtCounts(counts)
}

func fmtCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, "; ")
}
