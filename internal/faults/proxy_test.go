//go:build faults

package faults

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// pgProxy sits between mooncdc and Postgres and limits the bytes flowing
// from the server to mooncdc (all connections together) to a rate, so
// that copying the big table takes seconds, as a table a hundred times
// bigger would, instead of the 0.4 s 200k rows take on a loopback
// interface: long enough for kills, restarts and a second instance to land
// in the middle of the copy. The stream of changes is far below the rate.
// A connection closed on either side is closed on the other; a Postgres
// that is down makes the proxy close mooncdc's connection at once.
type pgProxy struct {
	ln     net.Listener
	target string
	lim    *limiter

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string, bytesPerSec int) *pgProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln, target: target, lim: newLimiter(bytesPerSec), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *pgProxy) addr() string { return p.ln.Addr().String() }

func (p *pgProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *pgProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *pgProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *pgProxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	server, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		return // Postgres is down: mooncdc sees the connection closed
	}
	defer server.Close()
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(server, client)
		done <- struct{}{}
	}()
	go func() {
		buf := make([]byte, 16<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				p.lim.wait(n)
				if _, werr := client.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}()
	<-done
	// Either side is gone: close both, which ends the other copy.
	_ = client.Close()
	_ = server.Close()
	<-done
}

func (p *pgProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

// limiter is a token bucket shared by all connections: wait(n) returns
// once n more bytes fit the rate (with a 64 KiB burst).
type limiter struct {
	mu   sync.Mutex
	rate float64 // bytes per second
	next time.Time
}

func newLimiter(bytesPerSec int) *limiter { return &limiter{rate: float64(bytesPerSec)} }

func (l *limiter) wait(n int) {
	const burst = 64 << 10
	l.mu.Lock()
	now := time.Now()
	if earliest := now.Add(-time.Duration(burst / l.rate * float64(time.Second))); l.next.Before(earliest) {
		l.next = earliest
	}
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	until := l.next
	l.mu.Unlock()
	if d := time.Until(until); d > 0 {
		time.Sleep(d)
	}
}
