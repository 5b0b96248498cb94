package snapshot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// This file bounds every connection to Postgres against a half-open link
// (a peer gone while the socket stays open: a NAT, firewall or load
// balancer that dropped its state, a partition). The replication
// sessions guard themselves (stream/silence.go); here:
//   - every socket gets TCP_USER_TIMEOUT (config/dial.go: unacknowledged writes fail after
//     it, not after ~15 minutes of retransmissions) and TCP keepalives
//     (an idle connection is probed), for real partitions;
//   - a query has a deadline (pgsource/querydeadline.go);
//   - a COPY that receives nothing for the timeout is aborted (copyWatch),
//     and its chunk is retried with the copy.
// On loopback through a black-holing proxy the proxy's kernel acknowledges
// everything, so TCP_USER_TIMEOUT never fires there: the deadlines are what
// end such a connection.

// LinkSilentError is a COPY that received nothing for the timeout: the
// copy connection is taken for dead, and the copy retried. A net.Error
// with Timeout() true, so retryable.
type LinkSilentError struct {
	What  string
	After time.Duration
}

func (e *LinkSilentError) Error() string {
	return fmt.Sprintf("%s: no data from Postgres for %s (postgres.replication_timeout): the link is half-open or the server hangs", e.What, e.After)
}

// Timeout reports true: the error is a timeout.
func (e *LinkSilentError) Timeout() bool { return true }

// Temporary reports true: a new connection may work.
func (e *LinkSilentError) Temporary() bool { return true }

var _ net.Error = (*LinkSilentError)(nil)

// copyWatch cancels a COPY's context when the server sends nothing for
// timeout. The writer calls enter and leave around each write it handles
// (two uncontended atomic adds per row): the count is odd while a write is
// being handled, and time spent there (encoding, waiting for room in
// Kafka) is not the server's silence. A goroutine looks every timeout/4.
type copyWatch struct {
	beats  atomic.Uint64
	cancel context.CancelCauseFunc
	stop   chan struct{}
	done   chan struct{}
}

// watchCopy returns a context for a COPY that ends with a
// *LinkSilentError (its cause) after timeout of silence, and the watch.
// Call w.close when the COPY is over.
func watchCopy(ctx context.Context, what string, timeout time.Duration) (context.Context, *copyWatch) {
	cctx, cancel := context.WithCancelCause(ctx)
	w := &copyWatch{cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(max(timeout/4, 10*time.Millisecond))
		defer tick.Stop()
		last, since := w.beats.Load(), time.Now()
		for {
			select {
			case <-w.stop:
				return
			case <-cctx.Done():
				return
			case now := <-tick.C:
				b := w.beats.Load()
				if b != last || b%2 == 1 {
					last, since = b, now
					continue
				}
				if now.Sub(since) >= timeout {
					cancel(&LinkSilentError{What: what, After: timeout})
					return
				}
			}
		}
	}()
	return cctx, w
}

func (w *copyWatch) enter() { w.beats.Add(1) }
func (w *copyWatch) leave() { w.beats.Add(1) }

// close stops the watch and releases its context.
func (w *copyWatch) close() {
	close(w.stop)
	<-w.done
	w.cancel(nil)
}

// silenceCause returns the *LinkSilentError that ended ctx, if one did.
func silenceCause(ctx context.Context) error {
	var le *LinkSilentError
	if errors.As(context.Cause(ctx), &le) {
		return le
	}
	return nil
}
