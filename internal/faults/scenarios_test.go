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

// runTwoInstances: a second instance with the same config (ha.enabled)
// starts while the first runs, copying the big table. In both modes the
// second must wait as a standby (/readyz 200 "standby", never resuming the
// slot) while the first goes on; then the first stops cleanly (SIGTERM: it
// leaves the group) and the second takes over from the durable LSN. (Without
// ha, exactly-once fences the first and at-least-once makes the second
// retry the slot; connector's TestSecondInstanceFencesTheFirst covers the
// fence.)
func runTwoInstances(e *env) int {
	a := e.startFirst()
	for !a.has("copying table", bigTable) && a.running() && time.Since(a.started) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	e.sleep(e.rnd(200*time.Millisecond, 1500*time.Millisecond))
	aPhase := e.phase()
	b := e.startInstance("B")
	e.note("twoinstances: second instance B started while A was in %s", aPhase)
	if err := b.waitStandby(30 * time.Second); err != nil {
		e.t.Fatalf("%v; the end of its log:\n%s", err, b.tail(20))
	}
	e.note("twoinstances: B is a standby %v after its start", time.Since(b.started).Round(100*time.Millisecond))

	// Watch both for 10 s: A goes on (e.sleep fails if it exits), B waits.
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		e.sleep(100 * time.Millisecond)
		if !b.running() {
			e.t.Fatalf("the standby B exited with code %d while A ran; the end of its log:\n%s", b.code(), b.tail(20))
		}
		if b.ready() || b.has("resuming", "") {
			e.t.Fatalf("the standby B resumed the pipeline while A was active; the end of its log:\n%s\nA's:\n%s", b.tail(20), a.tail(20))
		}
	}
	e.note("twoinstances: for 10s A ran (streaming=%v) and B waited (standby=%v); B's warnings: %s", a.ready(), b.standby(), warnings(b))

	stopped := time.Now()
	code, err := a.stop(60 * time.Second)
	if err != nil || code != 0 {
		e.t.Errorf("clean stop of the active instance A: exit code %d, %v; the end of its log:\n%s", code, err, a.tail(20))
	}
	e.cur = b
	if err := b.waitReady(90 * time.Second); err != nil {
		e.t.Fatalf("the standby B after A stopped: %v; the end of its log:\n%s", err, b.tail(20))
	}
	e.note("twoinstances: A stopped in %v (exit %d); B streams %v after A's SIGTERM",
		a.exitedAt.Sub(stopped).Round(100*time.Millisecond), code, time.Since(stopped).Round(100*time.Millisecond))
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
