//go:build faults

package faults

import (
	"slices"
	"time"
)

// maxTakeover bounds a takeover, from the kill -9 of the active instance
// to a standby streaming: the group session (ha.session_timeout, 10 s),
// a rebalance and a start.
const maxTakeover = 15 * time.Second

// runStandby: standby instances (ha.enabled) under load, the active one
// killed with kill -9 three times: with two instances during the big
// table's copy, with three while streaming, and with two again. Each time
// a standby must take over within maxTakeover (measured from the kill to
// its /readyz "streaming"), and the others must stay standbys.
func runStandby(e *env) int {
	a := e.startFirst()
	standbys := []*instance{e.startInstance("S1")}
	waitStandbys := func() {
		e.t.Helper()
		for _, s := range standbys {
			if err := s.waitStandby(30 * time.Second); err != nil {
				e.t.Fatalf("%v; the end of its log:\n%s", err, s.tail(20))
			}
		}
	}
	waitStandbys()
	kills := 0
	var took []time.Duration
	takeover := func() {
		e.t.Helper()
		e.ensure()
		victim, ph, n := e.cur, e.phase(), len(standbys)+1
		killed := time.Now()
		victim.kill9()
		kills++
		var next *instance
		for next == nil {
			for _, s := range standbys {
				if !s.running() {
					e.t.Fatalf("standby mooncdc %s exited with code %d after the kill of %s; the end of its log:\n%s", s.label, s.code(), victim.label, s.tail(25))
				}
				if s.ready() {
					next = s
					break
				}
			}
			if time.Since(killed) > time.Minute {
				e.t.Fatalf("no standby streams a minute after the kill -9 of the active %s; the end of %s's log:\n%s", victim.label, standbys[0].label, standbys[0].tail(25))
			}
			time.Sleep(20 * time.Millisecond)
		}
		d := time.Since(killed)
		took = append(took, d)
		e.cur = next
		standbys = slices.DeleteFunc(standbys, func(s *instance) bool { return s == next })
		e.note("standby: takeover %d, %d instances: kill -9 of the active %s during %s; %s streams %v after the kill",
			kills, n, victim.label, ph, next.label, d.Round(10*time.Millisecond))
		if d >= maxTakeover {
			e.t.Errorf("takeover %d took %v from the kill to the new active streaming, want < %v", kills, d.Round(10*time.Millisecond), maxTakeover)
		}
		for _, s := range standbys {
			if !s.standby() {
				code, word := s.readyz()
				e.t.Errorf("after takeover %d, %s is not a standby (/readyz %d %q)", kills, s.label, code, word)
			}
		}
	}

	// Two instances, during the big table's copy.
	for !a.has("copying table", bigTable) && a.running() && time.Since(a.started) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	e.sleep(e.rnd(200*time.Millisecond, 1500*time.Millisecond))
	takeover()
	// Three: two more standbys, then a kill while streaming.
	standbys = append(standbys, e.startInstance("S2"), e.startInstance("S3"))
	waitStandbys()
	e.waitAllReady(3 * time.Minute)
	e.sleep(e.rnd(time.Second, 3*time.Second))
	takeover()
	// Two again.
	e.sleep(e.rnd(time.Second, 3*time.Second))
	takeover()
	e.sleep(3 * time.Second)
	e.note("standby: takeover times %v (limit %v)", took, maxTakeover)
	return kills
}
