package config

import (
	"fmt"
	"net"
	"syscall"
	"time"
)

// linkTimeout is postgres.replication_timeout, or its default where it is
// 0 (derived from the server per replication session; other connections
// cannot ask the server before they need the bound).
func (c Config) LinkTimeout() time.Duration {
	if c.Postgres.ReplicationTimeout > 0 {
		return c.Postgres.ReplicationTimeout
	}
	return DefaultReplicationTimeout
}

// linkDialer returns the dialer of every Postgres connection: keepalives
// after 15 s idle, every 5 s, and TCP_USER_TIMEOUT userTimeout on TCP
// sockets (Linux; elsewhere only the keepalives).
func linkDialer(userTimeout time.Duration) *net.Dialer {
	return &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3},
		Control: func(network, _ string, rc syscall.RawConn) error {
			switch network {
			case "tcp", "tcp4", "tcp6":
			default:
				return nil // a Unix socket has no TCP options
			}
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = setUserTimeout(fd, userTimeout) }); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("set TCP_USER_TIMEOUT: %w", serr)
			}
			return nil
		},
	}
}
