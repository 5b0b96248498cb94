package connector

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/schema"
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

// HeartbeatMessagePrefix is the logical message prefix of heartbeats; such
// messages are never written to the <prefix>.message topic.
const HeartbeatMessagePrefix = "mooncdc_heartbeat"

// heartbeater emits heartbeat messages while the stream is idle. It owns
// one SQL connection, opened when first needed and reopened after an error.
type heartbeater struct {
	p        *Pipeline
	pgcfg    *pgconn.Config
	interval time.Duration
	activity *atomic.Uint64 // transactions the emitter has seen
	log      *zap.Logger

	conn   *pgx.Conn
	failed bool // the last attempt failed (logged once per outage)
}

// run emits a heartbeat every interval in which the stream was up and saw
// no transaction, until ctx ends. Failures are logged, never fatal: a
// standby or a role without EXECUTE on pg_logical_emit_message only loses
// the heartbeats.
func (h *heartbeater) run(ctx context.Context) error {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	defer func() {
		if h.conn != nil {
			_ = h.conn.Close(context.Background())
		}
	}()
	seen := h.activity.Load()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := h.activity.Load()
		idle := now == seen
		seen = now
		if !idle || !h.p.Ready() {
			continue
		}
		h.emit(ctx)
	}
}

func (h *heartbeater) emit(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, max(h.interval, 5*time.Second))
	defer cancel()
	err := h.emitOnce(ctx)
	if err == nil {
		if h.failed {
			h.log.Info("heartbeats written again")
			h.failed = false
		}
		return
	}
	if parent.Err() != nil {
		return // stopping
	}
	if h.conn != nil {
		_ = h.conn.Close(context.Background())
		h.conn = nil
	}
	if !h.failed {
		fix := "check the connection, or set heartbeat.interval: 0 to turn heartbeats off"
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			switch pgErr.Code {
			case "42501": // insufficient_privilege
				fix = "GRANT EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) TO the role, or set heartbeat.interval: 0"
			case "25006": // read_only_sql_transaction: a standby
				fix = "the server is read-only (a standby?): heartbeats cannot be written there; set heartbeat.interval: 0 to stop trying"
			}
		}
		h.log.Warn("cannot write a heartbeat into Postgres; an idle slot may retain WAL while other databases write ("+fix+")", zap.Error(err))
		h.failed = true
	}
}

func (h *heartbeater) emitOnce(ctx context.Context) error {
	if h.conn == nil {
		conn, err := connectSQL(ctx, h.pgcfg)
		if err != nil {
			return err
		}
		h.conn = conn
	}
	content := string(heartbeatContentPrefix(h.p.cfg.Name)) + strconv.FormatInt(time.Now().UnixMilli(), 10) + `}`
	_, err := h.conn.Exec(ctx, "SELECT pg_logical_emit_message(false, $1, $2::text)", HeartbeatMessagePrefix, content)
	return err
}

// heartbeatContentPrefix is how the content of connector name's heartbeat
// messages begins: {"name":"<name>","ts_ms":. Every connector streaming the
// database receives every heartbeat message; each writes records for its
// own only.
func heartbeatContentPrefix(name string) []byte {
	return []byte(`{"name":` + strconv.Quote(name) + `,"ts_ms":`)
}

// heartbeat handles a heartbeat message in the main stream: its LSN becomes
// durable as its own unit, with a record on the heartbeat topic when
// heartbeat.records is on and the message is this connector's.
// Transactional messages with the prefix (not mooncdc's) go with their
// transaction and write nothing.
func (e *emitter) heartbeat(ch *schema.Change) error {
	if ch.Tx != nil {
		return nil
	}
	mine := bytes.HasPrefix(ch.Message.Content, e.heartbeatOf)
	return e.ownUnit(ch.LSN, func(a *txAck) error {
		if e.heartbeatFmt == nil || !mine {
			return nil
		}
		rec := e.pool.Get().(*kgo.Record)
		key, err := e.heartbeatFmt.appendKey(rec.Key[:0])
		if err != nil {
			return err
		}
		value, err := e.heartbeatFmt.appendValue(rec.Value[:0], time.Now().UnixMilli())
		if err != nil {
			return err
		}
		*rec = kgo.Record{Topic: e.heartbeatTopic, Key: key, Value: value, Context: a, Headers: rec.Headers[:0]}
		changeHeaders(rec, ch)
		e.send(a, rec)
		return nil
	})
}
