package pipeline

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// holeProxy forwards TCP to target until hole is called: from then on the
// connections open at that moment forward nothing in either direction and
// stay open (what a NAT, firewall or load balancer that dropped its state
// does), while new connections go through. Bytes sent into a hole are
// read and dropped, so the sender's writes succeed, as the kernel of a
// proxy on loopback acknowledges them.
type holeProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	gen   int // the newest connection's number
	holed int // connections numbered below are black-holed
	conns []net.Conn
}

func startHoleProxy(t *testing.T, target string) *holeProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &holeProxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *holeProxy) addr() string { return p.ln.Addr().String() }

// hole black-holes every connection open now.
func (p *holeProxy) hole() {
	p.mu.Lock()
	p.holed = p.gen + 1
	p.mu.Unlock()
}

func (p *holeProxy) serve(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	p.gen++
	gen := p.gen
	p.conns = append(p.conns, client, server)
	p.mu.Unlock()
	holed := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return gen < p.holed
	}
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 && !holed() {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if err != io.EOF || !holed() {
					_ = dst.Close()
				}
				return
			}
		}
	}
	go pipe(server, client)
	go pipe(client, server)
}

// halfOpenRun is a pipeline streaming table (one row in Kafka) from a
// cluster whose wal_sender_timeout is senderTimeout, through a proxy the
// test can black-hole; logs keeps the lines at level and above.
type halfOpenRun struct {
	p     *connector.Pipeline
	r     *ittest.Running
	proxy *holeProxy
	logs  *observer.ObservedLogs
	topic string
}

func startHalfOpen(t *testing.T, e *ittest.Env, name, table, senderTimeout string, level zapcore.Level, tune func(*config.Config)) *halfOpenRun {
	t.Helper()
	e.Exec(`ALTER SYSTEM SET wal_sender_timeout = '` + senderTimeout + `'`)
	e.Exec(`SELECT pg_reload_conf()`)
	e.Exec(`CREATE TABLE ` + table + ` (id int PRIMARY KEY, n int)`)
	proxy := startHoleProxy(t, fmt.Sprintf("127.0.0.1:%d", e.PG.Port()))
	cfg := e.Config(name, "public."+table)
	cfg.Postgres.URL = strings.Replace(e.PG.URL("postgres"), fmt.Sprintf("127.0.0.1:%d", e.PG.Port()), proxy.addr(), 1)
	if tune != nil {
		tune(&cfg)
	}
	core, logs := observer.New(level)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Core(), core))
	p, err := connector.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	topic := name + ".public." + table
	e.Exec(`INSERT INTO ` + table + ` VALUES (1, 1)`)
	ittest.Consume(t, e.Kafka, 1, topic)
	return &halfOpenRun{p: p, r: r, proxy: proxy, logs: logs, topic: topic}
}

// A half-open link to Postgres (issue 31): every connection open at the
// cut is black-holed, new ones go through. The replication session must
// notice the silence within its timeout, derived here from the server's
// wal_sender_timeout (3 s, postgres.replication_timeout left at 0), say so
// in a warning naming the timeout, go unready, reconnect and deliver a row
// written after the cut; the pipeline must not stop.
func TestHalfOpenPostgresLinkIsNoticedAndTheStreamResumes(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // ALTER SYSTEM (startHalfOpen)
	h := startHalfOpen(t, e, "halfopen", "half", "3s", zapcore.WarnLevel, nil)
	p, r, proxy, logs := h.p, h.r, h.proxy, h.logs
	eventually.True(t, 10*time.Second, 20*time.Millisecond, "not ready before the cut", func() bool {
		return p.Status().NotReady == "" && p.Ready()
	})

	proxy.hole()
	cut := time.Now()
	e.Exec(`INSERT INTO half VALUES (2, 2)`) // a connection of its own, not through the proxy
	var unready time.Duration
	var lastHeard float64
	deadline := cut.Add(60 * time.Second)
	for {
		st := p.Status()
		if (!st.Streaming || st.NotReady != "") && unready == 0 {
			unready = time.Since(cut)
		}
		if st.LastServerMessageSeconds != nil {
			lastHeard = max(lastHeard, *st.LastServerMessageSeconds)
		}
		evs := ittest.Consume(t, e.Kafka, -1, h.topic)
		if len(evs) >= 2 {
			break
		}
		if stopped, err := r.Stopped(); stopped {
			t.Fatalf("the pipeline stopped after the cut: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the row written after the cut did not reach Kafka within 60s; warnings: %v", logs.All())
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(cut)
	t.Logf("row written after the cut in Kafka after %v; unready after %v; last message %.1fs before", took.Round(10*time.Millisecond), unready.Round(10*time.Millisecond), lastHeard)
	if unready < 2*time.Second || unready > 6*time.Second {
		t.Errorf("unready %v after the cut; want about the 3 s timeout", unready)
	}
	if lastHeard < 2 {
		t.Errorf("last_server_message_seconds reached only %.1f during the cut", lastHeard)
	}
	if took > 20*time.Second {
		t.Errorf("the row took %v; want within the timeout plus a reconnect", took)
	}
	found := false
	for _, l := range logs.All() {
		if strings.Contains(fmt.Sprint(l.Message, l.ContextMap()), "no message from the server for 3s (postgres.replication_timeout: 0, the server's wal_sender_timeout)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning naming the 3s timeout; warnings: %v", logs.All())
	}
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "not ready again after the reconnect", func() bool {
		return p.Ready() && p.Status().NotReady == ""
	})
}

// TestSilentSessionsOwnWalsenderIsEndedAtTheReconnect: with
// postgres.replication_timeout far below the server's wal_sender_timeout,
// the walsender of the session mooncdc ended for its silence would hold the
// slot until wal_sender_timeout (it cannot tell that its client has gone),
// refusing every new session; mooncdc ends that walsender, its own, so the
// stream resumes within the timeout plus a reconnect, not a minute later.
func TestSilentSessionsOwnWalsenderIsEndedAtTheReconnect(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // ALTER SYSTEM (startHalfOpen)
	h := startHalfOpen(t, e, "halfopen2", "half2", "120s", zapcore.InfoLevel, func(cfg *config.Config) {
		cfg.Postgres.ReplicationTimeout = 3 * time.Second
	})
	logs := h.logs

	h.proxy.hole()
	cut := time.Now()
	e.Exec(`INSERT INTO half2 VALUES (2, 2)`)
	eventually.True(t, 40*time.Second, 100*time.Millisecond, "the row written after the cut in Kafka", func() bool {
		return len(ittest.Consume(t, e.Kafka, -1, h.topic)) >= 2
	})
	took := time.Since(cut)
	t.Logf("row written after the cut in Kafka after %v", took.Round(10*time.Millisecond))
	if took > 20*time.Second {
		t.Errorf("the row took %v; the old walsender held the slot (wal_sender_timeout 120s)", took)
	}
	if logs.FilterMessage("ending the silent session's walsender, which still holds the slot").Len() == 0 {
		t.Errorf("no log line for the ended walsender")
	}
}

// A query on a connection that went half-open fails within its deadline
// (QueryTimeout, shortened here) instead of waiting forever, and the
// connection is closed so that its owner opens a new one: what bounds the
// catalog and status queries, the heartbeat, slot checks and a copy's
// snapshot import.
func TestQueryOnAHalfOpenLinkFailsWithinItsDeadline(t *testing.T) {
	e := ittest.NewEnv(t)
	proxy := startHoleProxy(t, fmt.Sprintf("127.0.0.1:%d", e.PG.Port()))
	cfg := e.Config("querydeadline")
	cfg.Postgres.URL = strings.Replace(e.PG.URL("postgres"), fmt.Sprintf("127.0.0.1:%d", e.PG.Port()), proxy.addr(), 1)
	pgcfg, err := cfg.PostgresConnConfig()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgsource.ConnectSQLWithin(context.Background(), pgcfg, "t", 2*time.Second) // QueryTimeout, shortened
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	proxy.hole()
	began := time.Now()
	err = conn.QueryRow(context.Background(), "SELECT 1").Scan(&one)
	took := time.Since(began)
	if err == nil || took < 2*time.Second || took > 5*time.Second {
		t.Fatalf("query on the half-open link: %v after %v; want an error after the 2s deadline", err, took)
	}
	if !conn.IsClosed() {
		t.Error("the connection stays open after its query timed out")
	}
	// A new connection works.
	again, err := pgsource.ConnectSQLWithin(context.Background(), pgcfg, "t", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(context.Background())
	if err := again.QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

// On an idle database the walsender may send nothing for minutes: the
// session's status updates ask for a reply once it has been quiet for a
// quarter of the timeout, so a live link is never taken for a silent one.
func TestIdleLiveLinkIsNotTakenForSilent(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE idle (id int PRIMARY KEY)`)
	cfg := e.Config("idle", "public.idle")
	cfg.Postgres.ReplicationTimeout = 2 * time.Second
	cfg.Heartbeat.Interval = 0 // no heartbeat messages either
	core, logs := observer.New(zapcore.WarnLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Core(), core))
	p, err := connector.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	r.WaitReady(t)
	r.WaitHandedOver(t)
	var worst float64
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		st := p.Status()
		if !st.Streaming || st.NotReady != "" {
			t.Fatalf("idle but live: streaming %v, not ready %q; warnings %v", st.Streaming, st.NotReady, logs.All())
		}
		if st.LastServerMessageSeconds != nil {
			worst = max(worst, *st.LastServerMessageSeconds)
		}
	}
	if worst >= 2 {
		t.Errorf("the server was silent for %.1fs on an idle live link; the pings should keep it under the 2s timeout", worst)
	}
	if n := logs.FilterMessage("replication connection lost; reconnecting with backoff").Len(); n > 0 {
		t.Errorf("%d reconnects on an idle live link: %v", n, logs.All())
	}
}
