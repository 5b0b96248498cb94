package config

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestKafkaLinksResetLeavesNothingToArriveLater: reset ends every
// connection with RST (the peer reads ECONNRESET, not a FIN after the
// queued bytes) and refuses new dials, so that no retry opens one.
func TestKafkaLinksResetLeavesNothingToArriveLater(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	l := NewKafkaLinks()
	ctx := context.Background()
	c, err := l.dial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-accepted
	defer srv.Close()
	l.Reset()
	_ = srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = srv.Read(make([]byte, 16))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the broker side read %v after reset, want ECONNRESET (a plain close would let queued bytes through, then EOF)", err)
	}
	if _, err := l.dial(ctx, "tcp", ln.Addr().String()); !errors.Is(err, errLinksReset) {
		t.Errorf("dial after reset: %v, want errLinksReset", err)
	}
}
