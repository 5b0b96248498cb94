//go:build faults

package faults

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// halfOpenTimeout is the scenario's postgres.replication_timeout, short to
// keep it fast (the default follows the server's wal_sender_timeout, 60 s:
// connector's TestHalfOpenPostgresLinkIsNoticedAndTheStreamResumes shows
// the derivation).
const halfOpenTimeout = 5 * time.Second

// runHalfOpen (issue 31): the links of one instance are made half-open
// under load, one at a time: every connection open at that moment is
// black-holed for good (sockets open, nothing forwarded either way), new
// connections go through, as when a NAT, a firewall or a load balancer
// drops its state. Postgres's link during the big table's copy and again
// while streaming, and the broker's link during the copy and while
// streaming. Each time, /readyz must turn 503 within the timeout (plus the
// one-second sampling and a margin), a row written after the cut must
// reach a read_committed consumer within the timeout plus a reconnect,
// /readyz must be 200 again, and the process must not exit; the harness
// then checks that nothing was lost (nor doubled in exactly-once) and the
// tables equal Postgres's.
func runHalfOpen(e *env) int {
	// Postgres ends the walsender of a silent client after its
	// wal_sender_timeout: as short as mooncdc's here, so that the reconnect
	// finds the slot free (with the defaults both are 60 s).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, sql := range []string{fmt.Sprintf("ALTER SYSTEM SET wal_sender_timeout = '%dms'", halfOpenTimeout.Milliseconds()), "SELECT pg_reload_conf()"} {
		if err := e.pg.Exec(ctx, "postgres", sql); err != nil {
			e.t.Fatal(err)
		}
	}
	l := e.startLinked("#1")
	if err := l.in.waitReady(60 * time.Second); err != nil {
		e.t.Fatalf("%v; the end of its log:\n%s", err, l.in.tail(20))
	}
	e.cur = l.in
	for !l.in.has("copying table", bigTable) && l.in.running() && time.Since(l.in.started) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	e.sleep(e.rnd(300*time.Millisecond, 1500*time.Millisecond))
	e.halfOpen(l, l.pg, "postgres")
	e.halfOpen(l, l.kafka, "kafka")
	e.waitAllReady(3 * time.Minute)
	e.sleep(e.rnd(time.Second, 2*time.Second))
	e.halfOpen(l, l.pg, "postgres")
	e.halfOpen(l, l.kafka, "kafka")
	e.sleep(2 * time.Second)
	return 4
}

// halfOpen black-holes the connections proxy holds now and waits for
// the instance to notice and recover, checking the bounds.
func (e *env) halfOpen(l *linked, proxy *cutProxy, what string) {
	e.t.Helper()
	ph := e.phase()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.broker.Addr()), kgo.ConsumeTopics(e.topics()...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		e.t.Fatal(err)
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(context.Background(), time.Second)
	cl.PollFetches(pctx) // the consumer knows the end offsets before the cut
	pcancel()
	g0 := e.gen.committed()
	cut := time.Now()
	proxy.hole()
	// Bounds: Postgres's silence is noticed after the timeout; a stalled
	// broker connection shows in readiness after the same time (the
	// tracker sampled each second), and franz-go replaces it after its
	// request timeout (10 s overhead + 10 s produce timeout).
	maxDown := halfOpenTimeout + 3*time.Second
	maxRow := halfOpenTimeout + 25*time.Second
	if what == "kafka" {
		maxRow = 20*time.Second + 25*time.Second
	}
	var down, back, row time.Duration
	var readyBeforeRow time.Duration // 200 polls between the first 503 and the row, as time
	for row == 0 || back == 0 {
		since := time.Since(cut)
		if !l.in.running() {
			e.t.Fatalf("mooncdc exited (code %d) %v after the %s link went half-open during %s; the end of its log:\n%s",
				l.in.code(), since.Round(time.Millisecond), what, ph, l.in.tail(25))
		}
		if since > 2*time.Minute {
			e.t.Fatalf("%s link half-open during %s: after %v, /readyz 503 after %v, 200 again after %v, a row written after the cut in Kafka after %v; the end of mooncdc's log:\n%s",
				what, ph, since.Round(time.Second), down, back, row, l.in.tail(25))
		}
		code, _ := l.in.readyz()
		if code == http.StatusOK && down != 0 && row == 0 {
			readyBeforeRow += 50 * time.Millisecond
		}
		switch {
		case code != http.StatusOK && code != 0 && down == 0:
			down = since
		case code == http.StatusOK && down != 0 && back == 0:
			back = since
		}
		fctx, fcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		fs := cl.PollFetches(fctx)
		fcancel()
		fs.EachRecord(func(r *kgo.Record) {
			if rc, err := decode(r); err == nil && !rc.tombstone && rc.op != "d" && rc.v > g0 && row == 0 {
				row = time.Since(cut)
			}
		})
	}
	e.note("halfopen %s during %s: /readyz 503 after %v, 200 again after %v (about %v of 200s before the row), a row written after the cut in Kafka after %v",
		what, ph, down.Round(10*time.Millisecond), back.Round(10*time.Millisecond), readyBeforeRow, row.Round(10*time.Millisecond))
	if what == "postgres" && ph == "copy" {
		// The big table's COPY was cut: its silence watch must have
		// aborted it, and the copy been retried.
		deadline := cut.Add(halfOpenTimeout + 10*time.Second)
		for !l.in.hasError("table copy failed; will retry", bigTable, "no data from Postgres for "+halfOpenTimeout.String()) {
			if time.Now().After(deadline) {
				e.t.Errorf("the big table's COPY was cut, but no copy failed for its silence within %v; the end of mooncdc's log:\n%s",
					halfOpenTimeout+10*time.Second, l.in.tail(25))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if down == 0 || down > maxDown {
		e.t.Errorf("%s link half-open during %s: /readyz turned 503 after %v; want within %v", what, ph, down, maxDown)
	}
	if row > maxRow {
		e.t.Errorf("%s link half-open during %s: a row written after the cut reached Kafka after %v; want within %v", what, ph, row, maxRow)
	}
}
