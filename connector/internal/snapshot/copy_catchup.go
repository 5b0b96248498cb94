package snapshot

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds a copy's private catch-up: the temporary slot streamed
// from the snapshot until the durable handover (handover.go).

// catchUp streams the temporary slot from the snapshot's consistent point,
// emitting only this table's changes, until the handover succeeds.
func (c *copier) catchUp(ctx context.Context, ts *phases.State, rel *schema.Relation, repl *pgconn.PgConn,
	point snapshotPoint, tracker *delivery.Tracker, log *zap.Logger, out delivery.CopySink, prog *runningCopy) error {
	name := ts.Table.Table
	c.call(HookCatchup, name)
	// The catch-up skips what the main worker skips; transaction metadata
	// is the main worker's alone, which sees every transaction whole (the
	// catch-up sees one table of it), so the catch-up's changes carry a
	// null transaction block.
	opts := c.cfg.opts
	opts.TxTopic = ""
	keys := emit.NewKeyResolver(c.pgcfg, c.cfg.keys)
	defer keys.Close()
	em := emit.New(emit.Config{Ctx: ctx, Sink: out, Tracker: tracker, Topics: c.topics, Enc: c.formats.Codec(),
		Counts: c.counts.Emitter, Prefix: c.cfg.prefix, Plans: c.plans, Keys: keys, Opts: opts,
		Include: func(s, t string) bool { return s == rel.Schema && t == rel.Table },
		OID:     ts.OID, // a rename during the catch-up: the table's changes go on under its new name
	})
	soft, stop := context.WithCancel(ctx)
	defer stop()
	h := &catchupHandler{Emitter: em, c: c, ts: ts, tracker: tracker, ctx: ctx, stop: stop, out: out, prog: prog}
	sess := stream.NewSession(stream.Config{
		Conn: repl, ConnConfig: c.pgcfg, Slot: point.slot, Publication: c.cfg.publication,
		StartLSN: point.lsn, Timeout: c.cfg.replicationTimeout, Log: log.Named("catchup"), Progress: point.capped(&catchupProgress{Tracker: tracker, h: h}),
	})
	err := sess.Run(ctx, soft, h)
	if h.err != nil {
		return h.err
	}
	if h.done {
		return nil
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = errors.New("private catch-up ended before the handover")
	}
	return err
}

// catchupHandler is the private catch-up's stream handler: the table's
// changes go out like the main worker's, and after each transaction (and at
// each idle keepalive) the copy worker tries to hand over.
type catchupHandler struct {
	out  delivery.CopySink // the copy's sink: the handover is its checkpoint
	prog *runningCopy      // the copy's entry in the running copies
	*emit.Emitter
	c       *copier
	ts      *phases.State
	tracker *delivery.Tracker
	ctx     context.Context
	stop    context.CancelFunc
	done    bool
	err     error
}

func (h *catchupHandler) Change(ch *schema.Change) error {
	if ch.Op == schema.OpMessage {
		if ch.Tx == nil && ch.Message.Prefix == config.DDLMessagePrefix {
			return &stream.ProtocolError{LSN: ch.LSN, Msg: "DDL message must be transactional"}
		}
		return nil // messages are the main worker's
	}
	return h.Emitter.Change(ch)
}

func (h *catchupHandler) Commit(tx *schema.Tx) error {
	if err := h.Emitter.Commit(tx); err != nil {
		return err
	}
	if err := h.tracker.Err(); err != nil {
		return err // a record of the copy failed: this copy cannot hand over
	}
	return h.tryHandover(tx.EndLSN)
}

func (h *catchupHandler) tryHandover(pos schema.LSN) error {
	if h.done {
		return nil
	}
	// The records up to pos must be acknowledged before the phase says so.
	// The sink's wait holds the pipeline mutex, so it is bounded: on
	// timeout the handover is tried again at the next commit or keepalive.
	done, err := h.c.handover(h.ctx, h.ts, pos, h.out, h.prog)
	if errors.Is(err, context.DeadlineExceeded) && h.ctx.Err() == nil {
		h.c.log.Warn("copy's records not acknowledged in time; handover tried again later", zap.String("table", h.ts.Table.Table))
		return nil
	}
	if err != nil {
		h.err = err
		h.stop()
		return err
	}
	if done {
		h.done = true
		h.stop()
	}
	return nil
}

// catchupProgress is the private catch-up's Progress: positions advance on
// idle keepalives too, so a copy of a quiet table can still hand over.
type catchupProgress struct {
	*delivery.Tracker
	h *catchupHandler
}

func (p *catchupProgress) AdvanceIdle(walEnd schema.LSN) {
	p.Tracker.AdvanceIdle(walEnd)
	if p.Tracker.Durable() >= walEnd {
		_ = p.h.tryHandover(walEnd)
	}
}

// Drain waits for the copy's own records only: the producer is shared, and
// flushing it would wait for every other table's copy too.
func (p *catchupProgress) Drain(ctx context.Context) error {
	return p.Tracker.Wait(ctx)
}
