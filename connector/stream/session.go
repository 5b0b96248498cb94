package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/schema"
)

// Progress is what the session needs from the rest of the pipeline.
// Its methods are called from the session's goroutine and must not block,
// except WaitRoom.
type Progress interface {
	// Durable is the flush position to report to Postgres: the end LSN of
	// the newest transaction whose records Kafka has acknowledged.
	Durable() schema.LSN
	// AdvanceIdle is called with the server's WAL end when the session is
	// between transactions and has decoded everything before walEnd; when
	// nothing is in flight the durable LSN may move there, so an idle slot
	// does not hold WAL.
	AdvanceIdle(walEnd schema.LSN)
	// WaitRoom blocks while the in-flight byte budget is used up. It returns
	// true when there is room, false when deadline passed or ctx is done.
	WaitRoom(ctx context.Context, deadline time.Time) bool
	// Drain blocks until every record handed over so far is acknowledged
	// (or failed), so that Durable covers every committed transaction. The
	// session calls it on a graceful stop, before its last status update.
	Drain(ctx context.Context) error
}

// Ticker is an optional part of a Progress: Tick is called on the session
// goroutine between transactions, at least every 100 ms while a
// transaction waits to become durable, so that exactly-once delivery can
// commit a Kafka transaction when the stream goes quiet. An error ends the
// session.
type Ticker interface {
	Tick() error
}

// Positioner is an optional part of a Progress: WantPosition, asked on the
// session goroutine between transactions, reports that something waits
// for the stream to pass a WAL position (an incremental snapshot's window
// waits for its high watermark). The session then asks the server for a
// reply (a keepalive with its WAL end, which reaches AdvanceIdle) at most
// every 100 ms, so that a wait on an idle server ends in a fraction of a
// second rather than at the next status the silence timeout asks a reply
// for.
type Positioner interface {
	WantPosition() bool
}

// Observer receives the session's measurements (metrics). Called from the
// session's goroutine; must not block.
type Observer interface {
	Streaming(on bool)
	Received(payloadBytes int)
	ServerWALEnd(lsn schema.LSN)
	// Silence is the session's silence timeout, told once it is known
	// (before Streaming(true)).
	Silence(timeout time.Duration)
	// Heard is when the server was last heard from (any message), told at
	// most every heardEvery.
	Heard(at time.Time)
}

// Config says which slot to stream and from where.
type Config struct {
	// ConnConfig is a parsed Postgres connection config; the session adds
	// replication=database and the session settings pgoutput's text values
	// are decoded with (UTC, ISO dates, full float precision).
	ConnConfig *pgconn.Config
	// Conn, when set, is an open replication connection to stream on
	// instead of connecting (a temporary slot lives only on the
	// connection that created it). The caller keeps it and closes it.
	Conn        *pgconn.PgConn
	Slot        string
	Publication string
	StartLSN    schema.LSN
	// StatusInterval is how often a standby status update goes out even
	// when the server does not ask (default 1s).
	StatusInterval time.Duration
	// Timeout is how long the server may stay silent (no message at all)
	// before the session ends with a *SilenceError; after a quarter of it
	// the status updates ask for a reply. 0 derives it from the server's
	// wal_sender_timeout (DeriveTimeout).
	Timeout  time.Duration
	Log      *zap.Logger
	Progress Progress
	Observer Observer
}

// Session is one replication connection. Build it with NewSession; Run
// connects and streams.
type Session struct {
	cfg      Config
	conn     *pgconn.PgConn
	dec      *Decoder
	received schema.LSN
	walEnd   schema.LSN
	started  bool

	sentDurable schema.LSN
	sentAt      time.Time

	pid     uint32        // the walsender's process ID (BackendPID)
	timeout time.Duration // the silence timeout in force (silence.go)
	heardAt time.Time     // when the last message arrived (or streaming began)
	toldAt  time.Time     // when Observer.Heard was last called

	// reading is the connection while the loop reads from it, for Wake.
	reading atomic.Pointer[net.Conn]
}

// Wake makes a receive the session's loop is blocked in return at once,
// so that the loop asks its Progress again (an incremental snapshot's
// reader has a request for the stream goroutine). Safe for concurrent
// use; a no-op while the loop is not streaming.
func (s *Session) Wake() {
	if c := s.reading.Load(); c != nil {
		_ = (*c).SetReadDeadline(time.Now())
	}
}

const earlyStatus = 100 * time.Millisecond

// Started reports whether Run got as far as streaming. Call it after Run
// returns.
func (s *Session) Started() bool { return s.started }

// BackendPID is the process ID of the walsender that served the session (0
// if Run did not connect). Call it after Run returns: after a
// *SilenceError that walsender may still hold the slot, unaware that its
// client has gone.
func (s *Session) BackendPID() uint32 { return s.pid }

// NewSession returns a session for cfg; it starts nothing.
func NewSession(cfg Config) *Session {
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Session{cfg: cfg, dec: NewDecoder()}
}

// ReplicationConnConfig returns a copy of base set up for a logical
// replication connection with the session settings mooncdc decodes with.
func ReplicationConnConfig(base *pgconn.Config) *pgconn.Config {
	c := SessionConnConfig(base, "mooncdc")
	c.RuntimeParams["replication"] = "database"
	return c
}

// SessionConnConfig returns a copy of base with application name app and
// the session settings whose text forms the value parsers expect, so that
// COPY rows and streamed rows read the same whatever the server's
// defaults.
func SessionConnConfig(base *pgconn.Config, app string) *pgconn.Config {
	c := base.Copy()
	if c.RuntimeParams == nil {
		c.RuntimeParams = map[string]string{}
	}
	c.RuntimeParams["application_name"] = app
	c.RuntimeParams["TimeZone"] = "UTC"
	c.RuntimeParams["DateStyle"] = "ISO, YMD"
	c.RuntimeParams["IntervalStyle"] = "postgres"
	c.RuntimeParams["extra_float_digits"] = "3"
	c.RuntimeParams["lc_monetary"] = "C" // money as $1,234.56 whatever the server locale
	return c
}

// Run connects, starts replication at cfg.StartLSN and streams into h
// until an error, or until soft is done (a graceful stop: it returns nil at
// the next transaction boundary, after a last status update) or hard is done
// (it returns hard's error at once). It blocks; it owns the connection and
// closes it before returning.
func (s *Session) Run(hard, soft context.Context, h Handler) (err error) {
	cfg := s.cfg
	conn := cfg.Conn
	if conn == nil {
		c, err := pgconn.ConnectConfig(hard, ReplicationConnConfig(cfg.ConnConfig))
		if err != nil {
			return &ConnError{Op: "connect for replication", Err: err}
		}
		conn = c
		defer func() {
			closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = conn.Close(closeCtx)
		}()
	}
	s.conn = conn
	s.pid = conn.PID()
	timeout, err := s.resolveTimeout(hard)
	if err != nil {
		return err
	}
	s.timeout = timeout
	if cfg.Observer != nil {
		cfg.Observer.Silence(timeout)
	}
	defer func() {
		if cfg.Observer != nil {
			cfg.Observer.Streaming(false)
		}
	}()

	args := []string{
		"proto_version '" + strconv.Itoa(protoVersion(conn)) + "'",
		"publication_names '" + quotePublication(cfg.Publication) + "'",
		"messages 'true'",
	}
	if err := pglogrepl.StartReplication(hard, conn, cfg.Slot, pglogrepl.LSN(cfg.StartLSN),
		pglogrepl.StartReplicationOptions{Mode: pglogrepl.LogicalReplication, PluginArgs: args}); err != nil {
		return &ConnError{Op: fmt.Sprintf("start replication on slot %q at %s", cfg.Slot, cfg.StartLSN), Err: err}
	}
	s.started = true
	cfg.Log.Info("streaming", zap.String("slot", cfg.Slot), zap.Stringer("lsn", cfg.StartLSN))
	if cfg.Observer != nil {
		cfg.Observer.Streaming(true)
	}
	s.received = cfg.StartLSN
	s.heard(time.Now())
	return s.loop(hard, soft, h)
}

func (s *Session) loop(hard, soft context.Context, h Handler) error {
	cfg := s.cfg
	// Receives run without a context: pgconn would arm and disarm a context
	// watcher per message, a fifth of the stream's CPU. A read deadline on
	// the socket wakes the loop for status updates instead, and a stop
	// interrupts a blocked read by moving the deadline to now.
	netConn := s.conn.Conn()
	s.reading.Store(&netConn)
	defer s.reading.Store(nil)
	interrupt := func() { _ = netConn.SetReadDeadline(time.Now()) }
	defer context.AfterFunc(hard, interrupt)()
	defer context.AfterFunc(soft, interrupt)()
	defer func() { _ = netConn.SetReadDeadline(time.Time{}) }()

	next := time.Now().Add(cfg.StatusInterval)
	var armed time.Time
	ticker, _ := cfg.Progress.(Ticker)
	positioner, _ := cfg.Progress.(Positioner)
	heard := false // the last read returned a message
	for {
		now := time.Now()
		if heard {
			s.heard(now)
			heard = false
		} else if err := s.checkSilence(now); err != nil {
			return err
		}
		if ticker != nil && !s.dec.InTx() {
			if err := ticker.Tick(); err != nil {
				return err
			}
			// A Kafka commit that took long held the loop, not the
			// server: that time is not its silence.
			s.notListening(now, time.Now())
		}
		// A status goes out every interval, and early (at most every
		// 100 ms) once the durable LSN moved, so the slot trails Kafka by
		// little.
		wantPos := positioner != nil && !s.dec.InTx() && positioner.WantPosition()
		if !now.Before(next) || ((wantPos || s.sentDurable != cfg.Progress.Durable()) && now.After(s.sentAt.Add(earlyStatus))) {
			if err := s.sendStatus(s.wantReply(now) || wantPos); err != nil {
				return err
			}
			next = now.Add(cfg.StatusInterval)
		}
		if err := hard.Err(); err != nil {
			return err
		}
		inTx := s.dec.InTx()
		if !inTx && soft.Err() != nil {
			// Graceful stop between transactions: wait for Kafka, then
			// confirm what it made durable.
			if err := cfg.Progress.Drain(hard); err != nil {
				return err
			}
			return s.sendStatus(false)
		}
		// Backpressure: stop reading while the in-flight budget is used up.
		// Status updates still go out, so the walsender keeps the session.
		if !cfg.Progress.WaitRoom(hard, next) {
			// Not reading is not the server's silence: its messages wait
			// in the socket (and Postgres is not reported silent while
			// Kafka holds the stream up).
			s.notListening(now, time.Now())
			continue
		}
		wake := next
		if wantPos || s.dec.LastEnd() > s.sentDurable {
			// Transactions wait for Kafka: look again soon, to confirm
			// them without waiting for the next message or interval.
			if early := now.Add(earlyStatus); early.Before(wake) {
				wake = early
			}
		}
		if !armed.Equal(wake) {
			if err := netConn.SetReadDeadline(wake); err != nil {
				return &ConnError{Op: "set read deadline", Err: err}
			}
			armed = wake
		}
		msg, err := s.conn.ReceiveMessage(context.Background())
		if err != nil {
			if hard.Err() != nil {
				return hard.Err()
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// The status deadline, or a stop: re-arm and look again. A
				// message cut by the deadline is resumed by the next read.
				armed = time.Time{}
				continue
			}
			return &ConnError{Op: "receive replication message", Err: err}
		}
		heard = true
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := s.handleCopyData(m.Data, h); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return &ConnError{Op: "replication stream", Err: pgconn.ErrorResponseToPgError(m)}
		case *pgproto3.CopyDone:
			return &ConnError{Op: "replication stream", Err: errors.New("server ended the replication stream")}
		default:
			// NoticeResponse and ParameterStatus carry nothing for us.
		}
	}
}

func (s *Session) handleCopyData(data []byte, h Handler) error {
	if len(data) == 0 {
		return &ProtocolError{LSN: s.received, Msg: "empty CopyData"}
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return &ProtocolError{LSN: s.received, Msg: err.Error()}
		}
		s.serverWALEnd(schema.LSN(ka.ServerWALEnd))
		if !s.dec.InTx() {
			s.cfg.Progress.AdvanceIdle(schema.LSN(ka.ServerWALEnd))
		}
		if ka.ReplyRequested {
			return s.sendStatus(false)
		}
		return nil
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return &ProtocolError{LSN: s.received, Msg: err.Error()}
		}
		if s.cfg.Observer != nil {
			s.cfg.Observer.Received(len(xld.WALData))
		}
		s.serverWALEnd(schema.LSN(xld.ServerWALEnd))
		start := schema.LSN(xld.WALStart)
		if start > s.received {
			s.received = start
		}
		return s.dec.Decode(start, xld.WALData, h)
	default:
		return &ProtocolError{LSN: s.received, Msg: fmt.Sprintf("unknown CopyData message %q", data[0])}
	}
}

func (s *Session) serverWALEnd(l schema.LSN) {
	if l > s.walEnd {
		s.walEnd = l
		if s.cfg.Observer != nil {
			s.cfg.Observer.ServerWALEnd(l)
		}
	}
}

// sendStatus reports the durable LSN as flushed and applied. The write
// position is what was received, which Postgres only displays.
func (s *Session) sendStatus(reply bool) error {
	durable := s.cfg.Progress.Durable()
	if durable == 0 {
		// pglogrepl would report the write position as flushed; never do that.
		return nil
	}
	write := s.received
	if durable > write {
		write = durable
	}
	// A peer that stopped reading must not hold the session in a write:
	// the write, like the silence, is bounded by the timeout.
	if s.timeout > 0 {
		if err := s.conn.Conn().SetWriteDeadline(time.Now().Add(s.timeout)); err != nil {
			return &ConnError{Op: "set write deadline", Err: err}
		}
	}
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pglogrepl.LSN(write),
		WALFlushPosition: pglogrepl.LSN(durable),
		WALApplyPosition: pglogrepl.LSN(durable),
		ReplyRequested:   reply,
	})
	if err != nil {
		return &ConnError{Op: "send standby status", Err: err}
	}
	s.sentDurable, s.sentAt = durable, time.Now()
	return nil
}

// protoVersion picks pgoutput's protocol: 2 where the server has it (14+).
// mooncdc does not ask for streaming of in-progress transactions, so both
// versions carry the same messages.
func protoVersion(conn *pgconn.PgConn) int {
	v, err := strconv.Atoi(conn.ParameterStatus("server_version_num"))
	if err != nil {
		// server_version_num is reported from Postgres 12 on; older: "14.2 (Debian…)"
		major, _, _ := strings.Cut(conn.ParameterStatus("server_version"), ".")
		m, _ := strconv.Atoi(major)
		v = m * 10000
	}
	if v >= 140000 {
		return 2
	}
	return 1
}

// quotePublication quotes a publication name for the publication_names
// option: a string literal holding an identifier list.
func quotePublication(name string) string {
	ident := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	return strings.ReplaceAll(ident, `'`, `''`)
}

// ConnError is a failure of the replication connection: connect, start,
// receive or send. Whether it is worth a reconnect is decided by the caller
// (connector's error classification) from the wrapped error.
type ConnError struct {
	Op  string
	Err error
}

func (e *ConnError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *ConnError) Unwrap() error { return e.Err }
