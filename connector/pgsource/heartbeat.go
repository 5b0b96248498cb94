package pgsource

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
)

// Heartbeats keep an idle slot moving. Two things hold a slot's WAL back
// when no captured change flows: the durable LSN only moves when Postgres
// tells the stream where its WAL ends (keepalives; AdvanceIdle confirms
// that position when nothing is pending), and a walsender whose database
// writes nothing may not send one for a long time while other databases
// fill the WAL. So, when the stream has been idle for heartbeat.interval,
// the heartbeater writes a tiny non-transactional logical message into the
// captured database: the stream receives it, everything before it is
// decided, and its LSN becomes durable like a transaction's. When
// heartbeat.records is on, the message also becomes a record on
// heartbeat.topic, which shows consumers that the pipeline is alive from
// Postgres to Kafka.

// Heartbeater emits heartbeat messages while the stream is idle. It owns
// one SQL connection, opened when first needed and reopened after an error.
type Heartbeater struct {
	PgConfig *pgconn.Config
	Name     string // the connector's: its heartbeats are told from other connectors'
	Interval time.Duration
	Activity *atomic.Uint64 // transactions the emitter has seen
	Ready    func() bool    // the main worker streams
	Log      *zap.Logger

	conn   *pgx.Conn
	failed bool // the last attempt failed (logged once per outage)
	// standby is set when a heartbeat failed on a server in recovery: the
	// next attempts first ask pg_is_in_recovery(), which logs nothing,
	// and write only once the server is promoted, instead of an ERROR in
	// the server's log at every interval.
	standby bool
}

// errStillStandby is an attempt skipped because the server is still in
// recovery (not logged: the first refusal was).
var errStillStandby = errors.New("the server is still a standby")

// Run emits a heartbeat every interval in which the stream was up and saw
// no transaction, until ctx ends. Failures are logged, never fatal: a
// standby or a role without EXECUTE on pg_logical_emit_message only loses
// the heartbeats.
func (h *Heartbeater) Run(ctx context.Context) error {
	t := time.NewTicker(h.Interval)
	defer t.Stop()
	defer func() {
		if h.conn != nil {
			_ = h.conn.Close(context.Background())
		}
	}()
	seen := h.Activity.Load()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := h.Activity.Load()
		idle := now == seen
		seen = now
		if !idle || !h.Ready() {
			continue
		}
		h.emit(ctx)
	}
}

func (h *Heartbeater) emit(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, max(h.Interval, 5*time.Second))
	defer cancel()
	err := h.emitOnce(ctx)
	if errors.Is(err, errStillStandby) {
		return
	}
	if err == nil {
		h.standby = false
		if h.failed {
			h.Log.Info("heartbeats written again")
			h.failed = false
		}
		return
	}
	if parent.Err() != nil {
		return // stopping
	}
	// A standby refuses with one error or another (XX000 "cannot make new
	// WAL entries during recovery" from pg_logical_emit_message, 25006 from
	// others): ask the server rather than read the code.
	h.standby = false
	if h.conn != nil {
		if err := h.conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&h.standby); err != nil {
			h.standby = false
		}
		if !h.standby {
			_ = h.conn.Close(context.Background())
			h.conn = nil
		}
	}
	if !h.failed {
		fix := "check the connection, or set heartbeat.interval: 0 to turn heartbeats off"
		var pgErr *pgconn.PgError
		switch {
		case h.standby:
			fix = "the server is a standby: heartbeats cannot be written there, mooncdc tries again only after a promotion; " +
				"set heartbeat.interval: 0 to turn them off"
		case errors.As(err, &pgErr) && pgErr.Code == "42501": // insufficient_privilege
			fix = "GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) TO the role, or set heartbeat.interval: 0"
		}
		h.Log.Warn("cannot write a heartbeat into Postgres; an idle slot may retain WAL while other databases write ("+fix+")", zap.Error(err))
		h.failed = true
	}
}

func (h *Heartbeater) emitOnce(ctx context.Context) error {
	if h.conn == nil {
		conn, err := Dial(ctx, h.PgConfig)
		if err != nil {
			return err
		}
		h.conn = conn
	}
	if h.standby {
		var recovery bool
		if err := h.conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovery); err != nil {
			return err
		}
		if recovery {
			return errStillStandby
		}
	}
	content := string(HeartbeatContentPrefix(h.Name)) + strconv.FormatInt(time.Now().UnixMilli(), 10) + `}`
	_, err := h.conn.Exec(ctx, "SELECT pg_logical_emit_message(false, $1, $2::text)", config.HeartbeatMessagePrefix, content)
	return err
}

// HeartbeatContentPrefix is how the content of connector name's heartbeat
// messages begins: {"name":"<name>","ts_ms":. Every connector streaming the
// database receives every heartbeat message; each writes records for its
// own only.
func HeartbeatContentPrefix(name string) []byte {
	return []byte(`{"name":` + strconv.Quote(name) + `,"ts_ms":`)
}
