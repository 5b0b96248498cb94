package pgtest

import (
	"errors"
	"net"
	"sync"
)

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{} // ports freePort has returned in this process
)

// freePort asks the kernel for a free TCP port on 127.0.0.1 and releases it
// for the server to take. The kernel may hand the same port out again once
// it is released, so freePort also remembers what it has returned and never
// returns a port twice; that keeps parallel clusters apart. A port can still
// be taken by another process before the server binds it; Start retries with
// a new port when that happens.
func freePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()

		portsMu.Lock()
		fresh := !portsUsed[port]
		portsUsed[port] = true
		portsMu.Unlock()
		if fresh {
			return port, nil
		}
	}
	return 0, errors.New("no unused TCP port on 127.0.0.1 after 50 tries")
}
