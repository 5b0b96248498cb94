//go:build faults

package faults

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionHold is how long a partition lasts: past the group's session
// timeout (10 s) and a takeover, so that the new active has written for
// a while when the old one's link comes back.
const partitionHold = 20 * time.Second

// linked is an instance that reaches Postgres and the broker through
// links of its own, which the scenario can cut.
type linked struct {
	in        *instance
	pg, kafka *cutProxy
}

func (e *env) startLinked(label string) *linked {
	e.t.Helper()
	pg := startCutProxy(e.t, e.proxy.addr(), false)
	k := startCutProxy(e.t, e.broker.Addr(), true)
	cfg := e.writeConfig("mooncdc-"+label+".yaml", pg.addr(), k.addr())
	return &linked{in: e.startInstanceWith(label, cfg), pg: pg, kafka: k}
}

func (l *linked) setCut(cut bool) {
	l.pg.setCut(cut)
	l.kafka.setCut(cut)
}

// runPartition: standby instances (ha.enabled) under load, each reaching
// Postgres and the broker through a link of its own; the active one's
// links are cut (a black hole both ways, sockets left open) while it runs,
// FAULTS_PARTITIONS times (default 1), the instances swapping roles each
// time. Each time the standby must write its first record within
// maxTakeover of the cut; the partition lasts partitionHold, then the link
// heals, and the old active must come back as a standby and must not have
// a single write acknowledged after the cut (its changes-written counter
// stays where it was). The records checked after the run (verifyPartition)
// show no write of the old active landing after the new one's.
func runPartition(e *env) int {
	insts := []*linked{e.startLinked("A")}
	if err := insts[0].in.waitReady(60 * time.Second); err != nil {
		e.t.Fatalf("%v; the end of its log:\n%s", err, insts[0].in.tail(20))
	}
	e.cur = insts[0].in
	insts = append(insts, e.startLinked("B"))
	if err := insts[1].in.waitStandby(30 * time.Second); err != nil {
		e.t.Fatalf("%v; the end of its log:\n%s", err, insts[1].in.tail(20))
	}
	rounds := envInt(e.t, "FAULTS_PARTITIONS", 1)
	var took []time.Duration
	for i := range rounds {
		old, next := insts[i%2], insts[(i+1)%2]
		e.sleep(e.rnd(time.Second, 3*time.Second))
		ph := e.phase()
		before := next.in.written()
		cut := time.Now()
		old.setCut(true)
		for next.in.written() <= before {
			if !next.in.running() {
				e.t.Fatalf("standby mooncdc %s exited with code %d after the partition of %s; the end of its log:\n%s", next.in.label, next.in.code(), old.in.label, next.in.tail(25))
			}
			if time.Since(cut) > time.Minute {
				e.t.Fatalf("the standby %s wrote nothing a minute after the partition of the active %s; the end of its log:\n%s\nthe end of %s's:\n%s",
					next.in.label, old.in.label, next.in.tail(25), old.in.label, old.in.tail(25))
			}
			time.Sleep(20 * time.Millisecond)
		}
		d := time.Since(cut)
		took = append(took, d)
		oldWritten := old.in.written() // nothing acknowledged can reach it now
		e.cur = next.in
		e.note("partition %d: the active %s cut off during %s; %s wrote its first record %v after the cut",
			i+1, old.in.label, ph, next.in.label, d.Round(10*time.Millisecond))
		if d > maxTakeover {
			e.t.Errorf("partition %d: the standby's first record came %v after the cut, want <= %v", i+1, d.Round(10*time.Millisecond), maxTakeover)
		}
		// The old active stopped before the new one started, each by its
		// own log (one clock: this machine's).
		stopped := old.in.lastAt("pipeline stopped; no longer active")
		started := next.in.lastAt("active: this instance holds the group's partition")
		if stopped.Before(cut) || !stopped.Before(started) {
			e.t.Errorf("partition %d: the old active %s stopped its pipeline at %s (cut at %s), not before %s started its own at %s",
				i+1, old.in.label, fmtTS(stopped), fmtTS(cut), next.in.label, fmtTS(started))
		} else {
			e.note("partition %d: %s stopped its pipeline %v after the cut, %v before %s started its own",
				i+1, old.in.label, stopped.Sub(cut).Round(10*time.Millisecond), started.Sub(stopped).Round(10*time.Millisecond), next.in.label)
		}
		e.sleep(time.Until(cut.Add(partitionHold)))
		if !old.in.running() {
			e.t.Fatalf("the partitioned mooncdc %s exited with code %d; the end of its log:\n%s", old.in.label, old.in.code(), old.in.tail(25))
		}
		old.setCut(false)
		healed := time.Now()
		if err := old.in.waitStandby(45 * time.Second); err != nil {
			code, word := old.in.readyz()
			e.t.Fatalf("after the heal, the old active %s: %v (/readyz %d %q); the end of its log:\n%s", old.in.label, err, code, word, old.in.tail(25))
		}
		e.note("partition %d: healed after %v; %s is a standby again %v after the heal; its warnings: %s",
			i+1, time.Since(cut).Round(100*time.Millisecond), old.in.label, time.Since(healed).Round(100*time.Millisecond), warnings(old.in))
		e.sleep(2 * time.Second)
		if w := old.in.written(); w != oldWritten {
			e.t.Errorf("partition %d: the old active %s had %v changes acknowledged when %s wrote its first, %v after the heal: it wrote after the takeover",
				i+1, old.in.label, oldWritten, next.in.label, w)
		}
		if !next.in.ready() {
			e.t.Errorf("partition %d: after the heal, %s does not stream (/readyz)", i+1, next.in.label)
		}
	}
	// A stop must not wait on the network: the standby cut off, then
	// SIGTERM; it must exit cleanly within stopWhileCut.
	sb := insts[(rounds-1)%2]
	sb.setCut(true)
	e.sleep(2 * time.Second)
	termAt := time.Now()
	code, err := sb.in.stop(time.Minute)
	d := time.Since(termAt)
	if err != nil || code != 0 || d > stopWhileCut {
		e.t.Errorf("SIGTERM to the standby %s while cut off: exit code %d after %v (%v), want 0 within %v; the end of its log:\n%s",
			sb.in.label, code, d.Round(10*time.Millisecond), err, stopWhileCut, sb.in.tail(15))
	}
	e.note("partition: the standby %s, cut off, stopped %v after SIGTERM (exit %d)", sb.in.label, d.Round(10*time.Millisecond), code)
	e.sleep(3 * time.Second)
	e.note("partition: takeover times %v (limit %v)", took, maxTakeover)
	return rounds
}

// stopWhileCut bounds a clean stop of an instance cut off from the network.
const stopWhileCut = 10 * time.Second

func fmtTS(t time.Time) string {
	if t.IsZero() {
		return "(never)"
	}
	return t.UTC().Format("15:04:05.000")
}

// written is the instance's mooncdc_changes_written_total (changes Kafka
// acknowledged), -1 when /metrics does not answer.
func (in *instance) written() float64 {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + in.metricsAddr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "mooncdc_changes_written_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return 0
}

// verifyPartition: per key, the change records in topic order step back
// (a record older, by commit LSN and sequence, than the one before it)
// only where a new active instance sent again from the durable LSN: at
// most once per takeover in at-least-once mode, never in exactly-once. A
// write of the old active landing after the new active's is one more step
// back.
func verifyPartition(e *env, raw map[string][]*kgo.Record, takeovers int) {
	allowed := takeovers
	if e.mode == modeExactlyOnce {
		allowed = 0
	}
	verifySteps(e, raw, allowed, "partition")
}

// verifySteps fails every key whose change records, in topic order, step
// back more than allowed times (scenario: the note's prefix).
func verifySteps(e *env, raw map[string][]*kgo.Record, allowed int, scenario string) {
	worst, keys := 0, 0
	for _, s := range tables {
		type pos struct{ commit, seq int64 }
		last := map[int64]pos{}
		steps := map[int64]int{}
		for _, r := range raw[s.name] {
			d, err := decode(r)
			if err != nil || d.tombstone || d.op == "r" {
				continue
			}
			p := pos{int64(d.commit), d.seq}
			if l, ok := last[d.id]; ok && (p.commit < l.commit || p.commit == l.commit && p.seq < l.seq) {
				steps[d.id]++
			}
			last[d.id] = p
		}
		for id, n := range steps {
			keys++
			worst = max(worst, n)
			if n > allowed {
				e.t.Errorf("%s id %d: its change records step back %d times, want <= %d (%s): a write of an old active landed after a newer one",
					s.name, id, n, allowed, e.mode)
			}
		}
	}
	e.note("%s: %d keys whose records step back (a resend from the durable LSN), at most %s times per key", scenario, keys, fmt.Sprint(worst))
}
