package connector

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/connector/stream"
)

// This file is the main worker's loop: replication sessions on the
// pipeline slot, one after another, each resuming at the durable LSN.

// stream runs replication sessions until a graceful stop or a critical
// error, reconnecting with capped exponential backoff from the durable LSN.
func (p *Pipeline) stream(hard, soft context.Context, pgcfg *pgconn.Config,
	tracker *delivery.Tracker, em *emit.Emitter, prog *progress, obs *observer) error {
	log := p.log.Named("stream")
	bo := fault.NewBackoff(500*time.Millisecond, 30*time.Second)
	down := false
	var silentPID uint32 // the walsender of a session ended for its silence, while it may hold the slot
	for {
		start := tracker.Durable()
		sess := stream.NewSession(stream.Config{
			ConnConfig: pgcfg, Slot: p.cfg.Postgres.Slot, Publication: p.cfg.Postgres.Publication,
			StartLSN: start, Timeout: p.cfg.Postgres.ReplicationTimeout, Log: log, Progress: prog, Observer: obs,
		})
		if em.Incremental != nil {
			// A chunk reader's request wakes the session's wait for the
			// server (emit: Incremental).
			em.Incremental.SetWake(sess.Wake)
		}
		err := sess.Run(hard, soft, em)
		if em.Incremental != nil {
			em.Incremental.SetWake(nil)
		}
		if errors.As(err, new(*stream.SilenceError)) {
			silentPID = sess.BackendPID()
		}
		// Whatever ended the session, the open transaction's rest will be
		// replayed from the durable LSN by the next session. In
		// exactly-once mode that is the last Kafka commit: the open Kafka
		// transaction is aborted.
		tracker.Abandon()
		em.Reset()
		if rerr := prog.sink.SessionEnded(hard, err); rerr != nil {
			// A fence outranks a retryable cause; a critical cause (a
			// transaction over its timeout, which the broker ends by
			// bumping the epoch: a fence too) says more.
			if err == nil || errors.As(rerr, new(*delivery.FencedError)) && fault.Classify(err) != fault.ClassCritical {
				err = rerr
			}
			if hard.Err() == nil && !fault.IsRetryable(rerr) {
				return err
			}
		}
		if err == nil {
			return nil
		}
		if hard.Err() != nil {
			return hard.Err()
		}
		if soft.Err() != nil && !fault.IsRetryable(err) {
			return nil
		}
		if sess.Started() {
			// It had streamed: this is a new outage, not another failed
			// attempt at the old one.
			down = false
			bo = fault.NewBackoff(500*time.Millisecond, 30*time.Second)
		}
		switch fault.Classify(err) {
		case fault.ClassRetryable:
			p.metrics.WorkerErrors.WithLabelValues("main", "transient").Inc()
			if !down {
				log.Warn("replication connection lost; reconnecting with backoff", zap.Error(err), zap.Stringer("durable_lsn", tracker.Durable()))
				down = true
			} else {
				log.Debug("reconnect failed", zap.Error(err))
			}
			// Let Kafka catch up first, so the next session resumes as late
			// as possible and repeats as little as possible.
			waitCtx, cancel := context.WithTimeout(hard, 10*time.Second)
			_ = tracker.Wait(waitCtx)
			cancel()
			if err := tracker.Err(); err != nil {
				return &fault.CriticalError{Err: err}
			}
			if soft.Err() != nil {
				return nil
			}
			if silentPID != 0 {
				silentPID = p.endSilentWalsender(soft, pgcfg, silentPID, log)
			}
			if !fault.Sleep(soft, bo.Next()) {
				return nil
			}
			if err := p.checkSlotStillThere(soft, pgcfg, nil); err != nil {
				if errors.As(err, new(*UnsafeResumeError)) {
					return err
				}
				log.Debug("slot check failed", zap.Error(err))
			}
			continue
		default:
			// A server error may be the slot's: invalidated (wal_status
			// lost) or dropped. Say so, with what to do, rather than
			// Postgres's bare "cannot read from logical replication slot".
			if errors.As(err, new(*pgconn.PgError)) {
				cctx, cancel := context.WithTimeout(hard, 10*time.Second)
				serr := p.checkSlotStillThere(cctx, pgcfg, err)
				cancel()
				if errors.As(serr, new(*UnsafeResumeError)) {
					return serr
				}
			}
			return err
		}
	}
}

// endSilentWalsender ends this instance's own walsender that still holds
// the slot after its session was ended for silence (a half-open link: the
// walsender cannot tell that its client has gone, and would keep the slot,
// refusing every new session, until wal_sender_timeout, which may be far
// longer than postgres.replication_timeout). Only that process is ended:
// the slot's active_pid must be the session's own backend. A walsender
// stuck writing to the dead link may need another SIGTERM (group.Standby
// found the same), so it returns pid while the slot is still held by it,
// and 0 once it is not, or when the query cannot be made.
func (p *Pipeline) endSilentWalsender(ctx context.Context, pgcfg *pgconn.Config, pid uint32, log *zap.Logger) uint32 {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := pgsource.Dial(ctx, pgcfg)
	if err != nil {
		log.Debug("cannot check the slot for the silent session's walsender", zap.Error(err))
		return pid
	}
	defer db.Close(context.Background())
	var ended bool
	err = db.QueryRow(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid = $2`,
		p.cfg.Postgres.Slot, int32(pid)).Scan(&ended)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0 // it let go
	case err != nil:
		log.Warn("cannot end the silent session's walsender, which still holds the slot; a new session can start once Postgres ends it (wal_sender_timeout)",
			zap.String("slot", p.cfg.Postgres.Slot), zap.Uint32("active_pid", pid), zap.Error(err))
		return 0
	}
	log.Info("ending the silent session's walsender, which still holds the slot", zap.String("slot", p.cfg.Postgres.Slot), zap.Uint32("active_pid", pid), zap.Bool("terminated", ended))
	return pid
}
