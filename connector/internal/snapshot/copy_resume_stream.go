package snapshot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds a resumed copy's stream (copy_resume.go, step 2): the
// persistent copy slot streamed from the base B, every change of the table
// committed before L2, the attempt's snapshot, written as the catch-up
// writes them.

// errReachedSnapshot ends the resume's stream at the first transaction
// the attempt's snapshot holds.
var errReachedSnapshot = errors.New("reached the snapshot")

// streamToSnapshot streams the persistent slot from B and writes every
// change of the table committed before L2, the attempt's snapshot.
func (rs *resumable) streamToSnapshot(ctx context.Context, rel *schema.Relation) error {
	c := rs.c
	base, until := schema.LSN(rs.from.BaseLSN), rs.point.lsn
	// As in the catch-up: only this table, no transaction metadata.
	opts := c.cfg.opts
	opts.TxTopic = ""
	keys := emit.NewKeyResolver(c.pgcfg, c.cfg.keys)
	defer keys.Close()
	em := emit.New(emit.Config{Ctx: ctx, Sink: rs.out, Tracker: rs.tracker, Topics: c.topics, Enc: c.formats.Codec(),
		Counts: c.counts.Emitter, Prefix: c.cfg.prefix, Plans: c.plans, Keys: keys, Opts: opts,
		Include: func(s, t string) bool { return s == rel.Schema && t == rel.Table }, OID: rs.ts.OID})
	soft, stop := context.WithCancel(ctx)
	defer stop()
	h := &resumeStream{Emitter: em, rs: rs, ctx: ctx, until: until, stop: stop}
	sess := stream.NewSession(stream.Config{
		ConnConfig: c.pgcfg, Slot: rs.slot, Publication: c.cfg.publication, StartLSN: base, Timeout: c.cfg.replicationTimeout, Log: rs.log.Named("resume"),
		Progress: confirmAtMost{Progress: &resumeProgress{Tracker: rs.tracker, h: h}, max: base},
	})
	err := sess.Run(ctx, soft, h)
	if errors.Is(err, errReachedSnapshot) {
		err = nil
	}
	if err == nil && !h.reached {
		if err = ctx.Err(); err == nil {
			err = errors.New("the stream ended before the snapshot")
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// Whatever Postgres said (the slot vanished, a privilege), the
		// retry decides again whether the copy can resume.
		return &CopyError{Err: fmt.Errorf("stream the copy's slot %s from %s to %s: %v", rs.slot, base, until, err)}
	}
	if err := rs.tracker.Wait(ctx); err != nil {
		return err
	}
	rs.log.Info("resumed copy streamed the changes since its base", zap.Stringer("base_lsn", base), zap.Stringer("lsn", until),
		zap.Int("changes", h.changes))
	return nil
}

// resumeStream is the resume's stream handler: the table's changes go
// out like the catch-up's until the first transaction committed at or
// after until.
type resumeStream struct {
	*emit.Emitter
	rs      *resumable
	ctx     context.Context
	until   schema.LSN
	stop    context.CancelFunc
	reached bool
	changes int
}

func (h *resumeStream) Begin(tx *schema.Tx) error {
	if tx.CommitLSN >= h.until {
		h.reached = true
		return errReachedSnapshot
	}
	return h.Emitter.Begin(tx)
}

// Commit moves the base to the transaction's end at most every
// copierConfig.checkpointEvery: the done chunks' rows and the changes up to there
// are the table as of there, so a crash resumes from there, and in
// exactly-once mode a long stream is not one long Kafka transaction.
func (h *resumeStream) Commit(tx *schema.Tx) error {
	if err := h.Emitter.Commit(tx); err != nil {
		return err
	}
	k := h.rs.cp
	if time.Since(k.last) < k.rs.c.cfg.checkpointEvery {
		return nil
	}
	// The records up to there acknowledged (in exactly-once mode, written
	// into the open Kafka transaction, which the checkpoint commits).
	if err := h.rs.tracker.Wait(h.ctx); err != nil {
		return err
	}
	return k.checkpoint(h.ctx, tx.EndLSN, true)
}

func (h *resumeStream) Change(ch *schema.Change) error {
	if ch.Op == schema.OpMessage {
		if ch.Tx == nil && ch.Message.Prefix == config.DDLMessagePrefix {
			return &stream.ProtocolError{LSN: ch.LSN, Msg: "DDL message must be transactional"}
		}
		return nil // messages are the main worker's
	}
	h.changes++
	return h.Emitter.Change(ch)
}

// resumeProgress ends the resume's stream once the server has sent
// everything before until and no transaction is open.
type resumeProgress struct {
	*delivery.Tracker
	h *resumeStream
}

func (p *resumeProgress) AdvanceIdle(walEnd schema.LSN) {
	p.Tracker.AdvanceIdle(walEnd)
	if walEnd >= p.h.until {
		p.h.reached = true
		p.h.stop()
	}
}

// Drain waits for the copy's own records only (catchupProgress.Drain).
func (p *resumeProgress) Drain(ctx context.Context) error { return p.Tracker.Wait(ctx) }
