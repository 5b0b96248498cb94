package stream

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file is the session's guard against a half-open link: a connection
// whose peer is gone (a NAT or firewall that dropped its state, a
// partition) while the socket stays open. Nothing arrives, and TCP alone
// notices nothing for a long time (the status updates keep the socket
// busy, so keepalives never start; retransmissions give up after about 15
// minutes on Linux defaults). Postgres ends its walsender after
// wal_sender_timeout of silence from us; the session does the same the
// other way, as Postgres's own subscriber does with wal_receiver_timeout:
//
//  1. Every message from the server (data or keepalive) counts as life.
//  2. After a quarter of the timeout without one, each status update asks
//     for a reply, which a live walsender answers with a keepalive at once
//     (walsender.c ProcessStandbyReplyMessage), even on an idle database.
//  3. After the whole timeout without one, the session ends with a
//     *SilenceError (retryable: the main worker reconnects and resumes at
//     the durable LSN, as after any lost connection).
//
// Time spent not reading (backpressure: the in-flight budget is used up; a
// Kafka commit between transactions; handling a message) is not silence:
// the server's messages wait in the socket meanwhile.

// DefaultTimeout is the silence timeout where the server's
// wal_sender_timeout is 0 (off): Postgres's default wal_sender_timeout
// and wal_receiver_timeout.
const DefaultTimeout = 60 * time.Second

// heardEvery is how often at most Observer.Heard is told.
const heardEvery = 100 * time.Millisecond

// SilenceError ends a session whose server sent nothing for After. It is
// a net.Error with Timeout() true: retryable.
type SilenceError struct {
	After time.Duration
	// Setting names the configuration that set After, for the message.
	Setting string
}

func (e *SilenceError) Error() string {
	return fmt.Sprintf("no message from the server for %s (%s): the link is half-open or the server hangs; ending the connection to reconnect",
		e.After, e.Setting)
}

// Timeout reports true: the error is a timeout.
func (e *SilenceError) Timeout() bool { return true }

// Temporary reports true: a new connection may work.
func (e *SilenceError) Temporary() bool { return true }

// DeriveTimeout turns the server's wal_sender_timeout (pg_settings.setting:
// milliseconds, "0" when off) into the session's silence timeout: the same
// span, since the server gives up on a silent client after it too, or
// DefaultTimeout when it is off.
func DeriveTimeout(walSenderTimeoutMS string) (time.Duration, error) {
	ms, err := strconv.ParseInt(strings.TrimSpace(walSenderTimeoutMS), 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("wal_sender_timeout %q is not a number of milliseconds", walSenderTimeoutMS)
	}
	if ms == 0 {
		return DefaultTimeout, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// resolveTimeout returns cfg.Timeout, or derives it from the server's
// wal_sender_timeout for this connection (a role or database may set its
// own). The query has a deadline of its own: the link may be half-open
// already.
func (s *Session) resolveTimeout(ctx context.Context) (time.Duration, error) {
	if s.cfg.Timeout > 0 {
		return s.cfg.Timeout, nil
	}
	qctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	res, err := s.conn.Exec(qctx, "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'wal_sender_timeout'").ReadAll()
	if err != nil {
		return 0, &ConnError{Op: "read wal_sender_timeout", Err: err}
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 1 {
		return DefaultTimeout, nil
	}
	d, err := DeriveTimeout(string(res[0].Rows[0][0]))
	if err != nil {
		return DefaultTimeout, nil
	}
	return d, nil
}

// heard notes a message received at now.
func (s *Session) heard(now time.Time) {
	s.heardAt = now
	if s.cfg.Observer != nil && now.Sub(s.toldAt) >= heardEvery {
		s.toldAt = now
		s.cfg.Observer.Heard(now)
	}
}

// notListening takes the time from..to, when the loop did not read (it
// waited for Kafka), out of the silence.
func (s *Session) notListening(from, to time.Time) {
	if d := to.Sub(from); d > time.Millisecond {
		s.heardAt = s.heardAt.Add(d)
		if s.cfg.Observer != nil {
			s.cfg.Observer.Heard(s.heardAt)
		}
	}
}

// wantReply reports whether the next status update asks for a reply: the
// server has been quiet for a quarter of the timeout.
func (s *Session) wantReply(now time.Time) bool {
	return s.timeout > 0 && now.Sub(s.heardAt) >= s.timeout/4
}

// checkSilence returns a *SilenceError (in a *ConnError) once the server
// has been silent for the timeout.
func (s *Session) checkSilence(now time.Time) error {
	if s.timeout <= 0 || now.Sub(s.heardAt) < s.timeout {
		return nil
	}
	setting := "postgres.replication_timeout"
	if s.cfg.Timeout <= 0 {
		setting = "postgres.replication_timeout: 0, the server's wal_sender_timeout"
	}
	return &ConnError{Op: "replication connection", Err: &SilenceError{After: s.timeout, Setting: setting}}
}
