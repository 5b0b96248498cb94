package config

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// kafkaLinks is the set of TCP connections a pipeline's Kafka clients have
// dialed, so that an abort can cut them the way that leaves nothing of
// this instance to arrive later.
//
// Why: a request written into a connection whose peer is unreachable (the
// network partitioned this instance away) sits in the kernel's send queue,
// and TCP retransmits it once the network heals, however long after. A
// produce request of an instance that lost its group membership would then
// land after the new active instance's records (for an idempotent,
// non-transactional producer nothing on the broker refuses it: at-least-once
// mode), and an offsets record of it after the new one's. Closing with
// SO_LINGER 0 resets the connection instead: the kernel throws the send
// queue away and sends RST, so nothing written on it can reach the broker
// after the close. reset does that to every connection and makes further
// dials fail, so no retry opens a new one.
type KafkaLinks struct {
	mu    sync.Mutex
	tls   *tls.Config // nil: plain TCP
	conns map[net.Conn]struct{}
	cut   bool
}

var errLinksReset = errors.New("kafka connections reset: the pipeline was aborted")

// Kafka's request bounds, set explicitly (they are franz-go's defaults) as
// the guard against a half-open broker connection: a request gets
// kafkaRequestOverhead (plus a produce request's kafkaProduceTimeout) to
// be written and answered, else its connection is closed and the request
// retried on a new one: idempotent, so nothing doubles. The sockets'
// TCP_USER_TIMEOUT lies above it.
const (
	KafkaRequestOverhead = 10 * time.Second
	KafkaProduceTimeout  = 10 * time.Second
	kafkaUserTimeout     = 30 * time.Second
)

func NewKafkaLinks() *KafkaLinks {
	return &KafkaLinks{conns: map[net.Conn]struct{}{}}
}

// setTLS makes the connections dialed from now on TLS with t (nil: plain).
func (l *KafkaLinks) setTLS(t *tls.Config) {
	l.mu.Lock()
	l.tls = t
	l.mu.Unlock()
}

// dial is the clients' kgo.Dialer. Safe for concurrent use.
func (l *KafkaLinks) dial(ctx context.Context, network, host string) (net.Conn, error) {
	l.mu.Lock()
	cut, tlsCfg := l.cut, l.tls
	l.mu.Unlock()
	if cut {
		return nil, errLinksReset
	}
	// Keepalives and TCP_USER_TIMEOUT, as for Postgres (snapshot: link.go): a real
	// partition fails the socket in tens of seconds.
	d := linkDialer(kafkaUserTimeout)
	d.Timeout = 10 * time.Second
	raw, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	c := &linkConn{Conn: raw, tcp: raw, links: l}
	if tlsCfg != nil {
		t := tlsCfg.Clone()
		if t.ServerName == "" { // as kgo's DialTLSConfig: the broker's host
			if h, _, err := net.SplitHostPort(host); err == nil {
				t.ServerName = h
			}
		}
		c.Conn = tls.Client(raw, t)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		_ = resetConn(raw)
		return nil, errLinksReset
	}
	l.conns[c] = struct{}{}
	return c, nil
}

// reset resets every connection (SO_LINGER 0: RST, send queue dropped) and
// refuses new ones. It does not block on the network. Safe for concurrent
// use; only the first call does anything.
func (l *KafkaLinks) Reset() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return
	}
	l.cut = true
	for c := range l.conns {
		_ = resetConn(c.(*linkConn).tcp)
	}
	l.conns = nil
}

func resetConn(c net.Conn) error {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	return c.Close()
}

// linkConn is a dialed connection (TLS over tcp, or tcp itself) that
// leaves its kafkaLinks when closed.
type linkConn struct {
	net.Conn
	tcp   net.Conn
	links *KafkaLinks
}

func (c *linkConn) Close() error {
	c.links.mu.Lock()
	delete(c.links.conns, c)
	c.links.mu.Unlock()
	return c.Conn.Close()
}
