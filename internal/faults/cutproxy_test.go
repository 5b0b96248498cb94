//go:build faults

package faults

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// cutProxy is one instance's network link to a server (Postgres, the
// broker), which the test can cut like a pulled cable and heal again.
//
// While cut, nothing flows in either direction, and no socket is closed
// (a black hole: no RST, no FIN), so the instance learns of the cut only
// from its own timeouts; new connections are accepted and black-holed
// too. What a side writes meanwhile is kept in the proxy, as it would be
// in that side's send queue, and delivered in order once the link is
// healed, as TCP retransmits it: so bytes the instance wrote during the
// cut can still land after the heal, unless the instance reset the
// connection (close with SO_LINGER 0, RST), which throws its send queue
// away. A plain close (FIN) delivers the queue, then the FIN.
//
// hole is the other way a link dies: the connections open at that moment
// are black-holed for good (sockets open, nothing forwarded), while new
// connections go through, as when a NAT gateway, a firewall or a load
// balancer drops its connection state (issue 31).
//
// For Kafka (kafka set), the broker's addresses in Metadata and
// FindCoordinator responses are rewritten to the proxy's own, so that
// every connection of the instance, not only the seed, goes through it.
type cutProxy struct {
	ln     net.Listener
	target string
	kafka  bool

	mu    sync.Mutex
	cond  *sync.Cond // signalled when cut changes or the proxy closes
	cut   bool
	done  bool
	conns map[net.Conn]struct{}
	gen   int // the newest connection's number
	holed int // connections numbered below are black-holed (hole)
	wg    sync.WaitGroup
}

func startCutProxy(t *testing.T, target string, kafka bool) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, kafka: kafka, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go p.serve(c)
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

// setCut cuts (true) or heals (false) the link.
func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	p.cond.Broadcast()
	p.mu.Unlock()
}

// hole black-holes, for good, every connection open now; new ones go
// through.
func (p *cutProxy) hole() {
	p.mu.Lock()
	p.holed = p.gen + 1
	p.cond.Broadcast()
	p.mu.Unlock()
}

// waitLink blocks while the link of connection gen is cut or holed; false
// once the proxy is closed.
func (p *cutProxy) waitLink(gen int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for (p.cut || gen < p.holed) && !p.done {
		p.cond.Wait()
	}
	return !p.done
}

func (p *cutProxy) close() {
	p.mu.Lock()
	p.done = true
	p.cond.Broadcast()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}

func (p *cutProxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.done {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

// serve links one client connection to a fresh server connection (dialed
// once the link is up: a connect during the cut hangs, as a SYN into a
// black hole does).
func (p *cutProxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	if !p.track(client, true) {
		return
	}
	defer p.track(client, false)
	p.mu.Lock()
	p.gen++
	gen := p.gen
	p.mu.Unlock()
	// Read from the client even before the link is up: its bytes queue.
	up := newQueue()
	go p.fill(client, up, p.kafka)
	if !p.waitLink(gen) {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	if !p.track(server, true) {
		return
	}
	defer p.track(server, false)
	down := newQueue()
	var corr sync.Map // correlation id → the request (Kafka)
	go p.fill(server, down, false)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.drain(gen, up, server, client, &corr, false) }()
	go func() { defer wg.Done(); p.drain(gen, down, client, server, &corr, true) }()
	wg.Wait()
}

// queue holds one direction's bytes (Kafka: whole frames) until the link
// lets them through; end is how the sending side ended.
type queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	chunks [][]byte
	end    error // io.EOF (FIN), errReset (RST), other
	ended  bool
}

var errReset = errors.New("connection reset by the sender")

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// fill reads src into q until src ends; a reset throws the queued bytes
// away, as the sender's kernel does with its send queue.
func (p *cutProxy) fill(src net.Conn, q *queue, frames bool) {
	buf := make([]byte, 32<<10)
	var err error
	for {
		var chunk []byte
		if frames {
			chunk, err = readFrame(src)
		} else {
			var n int
			n, err = src.Read(buf)
			chunk = append([]byte(nil), buf[:n]...)
		}
		q.mu.Lock()
		if len(chunk) > 0 {
			q.chunks = append(q.chunks, chunk)
		}
		if err != nil {
			q.ended, q.end = true, err
			if errors.Is(err, syscall.ECONNRESET) {
				q.chunks, q.end = nil, errReset
			}
		}
		q.cond.Broadcast()
		q.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// drain writes q to dst while the link is up; at q's end it ends dst the
// same way (a reset with a reset). fromServer: responses (Kafka: broker
// addresses rewritten), else requests (Kafka: their keys remembered).
func (p *cutProxy) drain(gen int, q *queue, dst, other net.Conn, corr *sync.Map, fromServer bool) {
	for {
		q.mu.Lock()
		for len(q.chunks) == 0 && !q.ended {
			q.cond.Wait()
		}
		q.mu.Unlock()
		// The link first, then the queue: a reset while the link was
		// cut has emptied it, and nothing of it goes through.
		if !p.waitLink(gen) {
			return
		}
		q.mu.Lock()
		var chunk []byte
		if len(q.chunks) > 0 {
			chunk = q.chunks[0]
			q.chunks = q.chunks[1:]
		}
		end := q.end
		ended := q.ended && chunk == nil
		q.mu.Unlock()
		if ended {
			if tc, ok := dst.(*net.TCPConn); ok && errors.Is(end, errReset) {
				_ = tc.SetLinger(0)
			}
			_ = dst.Close()
			_ = other.Close()
			return
		}
		if p.kafka {
			if fromServer {
				chunk = p.rewrite(chunk, corr)
			} else if len(chunk) >= 12 {
				key := int16(binary.BigEndian.Uint16(chunk[4:]))
				ver := int16(binary.BigEndian.Uint16(chunk[6:]))
				corr.Store(int32(binary.BigEndian.Uint32(chunk[8:])), [2]int16{key, ver})
			}
		}
		if _, err := dst.Write(chunk); err != nil {
			_ = other.Close()
			return
		}
	}
}

// readFrame reads one Kafka frame: a 4-byte size and the message.
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	frame := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
	copy(frame, size[:])
	if _, err := io.ReadFull(r, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// rewrite returns a response frame with the broker addresses of a
// Metadata or FindCoordinator response set to the proxy's; other frames
// as they are.
func (p *cutProxy) rewrite(frame []byte, corr *sync.Map) []byte {
	if len(frame) < 8 {
		return frame
	}
	v, ok := corr.LoadAndDelete(int32(binary.BigEndian.Uint32(frame[4:])))
	if !ok {
		return frame
	}
	kv := v.([2]int16)
	if kv[0] != 3 && kv[0] != 10 { // Metadata, FindCoordinator
		return frame
	}
	req := kmsg.RequestForKey(kv[0])
	req.SetVersion(kv[1])
	hdr := 8 // size, correlation id
	if req.IsFlexible() {
		if len(frame) <= hdr || frame[hdr] != 0 { // response header tags: none expected
			return frame
		}
		hdr++
	}
	resp := kmsg.ResponseForKey(kv[0])
	resp.SetVersion(kv[1])
	if err := resp.ReadFrom(frame[hdr:]); err != nil {
		return frame
	}
	host, portText, _ := net.SplitHostPort(p.addr())
	port64, _ := strconv.Atoi(portText)
	port := int32(port64)
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			r.Brokers[i].Host, r.Brokers[i].Port = host, port
		}
	case *kmsg.FindCoordinatorResponse:
		if r.Host != "" {
			r.Host, r.Port = host, port
		}
		for i := range r.Coordinators {
			r.Coordinators[i].Host, r.Coordinators[i].Port = host, port
		}
	}
	out := append([]byte(nil), frame[:hdr]...)
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out
}
