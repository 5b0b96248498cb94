package config

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every Postgres socket carries TCP_USER_TIMEOUT, read back from the
// kernel: a real partition fails unacknowledged writes after the timeout,
// not after ~15 minutes of retransmissions.
func TestPostgresSocketsCarryTCPUserTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	for _, c := range []struct {
		set  time.Duration
		want time.Duration
	}{
		{0, DefaultReplicationTimeout},
		{7 * time.Second, 7 * time.Second},
	} {
		cfg := DefaultConfig()
		cfg.Name = "t"
		cfg.Postgres.URL = "postgres://u@" + ln.Addr().String() + "/db"
		cfg.Postgres.ReplicationTimeout = c.set
		pgcfg, err := cfg.PostgresConnConfig()
		if err != nil {
			t.Fatal(err)
		}
		if pgcfg.ConnectTimeout != c.want {
			t.Errorf("replication_timeout %v: ConnectTimeout %v, want %v", c.set, pgcfg.ConnectTimeout, c.want)
		}
		conn, err := pgcfg.DialFunc(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := conn.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var ms, keep int
		var gerr, kerr error
		_ = raw.Control(func(fd uintptr) {
			ms, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
			keep, kerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		})
		conn.Close()
		if gerr != nil || kerr != nil {
			t.Fatal(gerr, kerr)
		}
		if time.Duration(ms)*time.Millisecond != c.want || keep != 1 {
			t.Errorf("replication_timeout %v: TCP_USER_TIMEOUT %d ms, SO_KEEPALIVE %d; want %v and 1", c.set, ms, keep, c.want)
		}
	}
}

// Kafka's sockets carry TCP_USER_TIMEOUT and keepalives too (links.go).
func TestKafkaSocketsCarryTCPUserTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	links := NewKafkaLinks()
	conn, err := links.dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*linkConn).tcp.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ms, keep int
	var gerr, kerr error
	_ = raw.Control(func(fd uintptr) {
		ms, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT)
		keep, kerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	})
	if gerr != nil || kerr != nil {
		t.Fatal(gerr, kerr)
	}
	if time.Duration(ms)*time.Millisecond != kafkaUserTimeout || keep != 1 {
		t.Errorf("TCP_USER_TIMEOUT %d ms, SO_KEEPALIVE %d; want %v and 1", ms, keep, kafkaUserTimeout)
	}
}
