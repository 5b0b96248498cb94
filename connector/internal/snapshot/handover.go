package snapshot

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/schema"
)

// handover ends a copy (seed: handover): a copy worker whose records up to
// P = pos are acknowledged may hand over only when P >= the main worker's
// position M, under the pipeline mutex (phases.handover): it stores
// ready(P) if P = M, else catchup(P), in the offsets topic through the
// copy's sink (the checkpoint), and only then does the main worker see the
// new phase. It returns false when the main worker is still ahead (keep
// catching up).
//
// Crash ordering: before the phase record is durable, the table reads back
// as copying, i.e. init, and is copied again from a new snapshot, or
// resumed from its progress (copy_resume.go; snapshot rows may repeat;
// they are upserts); after it, the main worker skips every transaction
// with commit LSN < P, which the copy worker emitted.
//
// The sink's handover waits (bounded) until the copy's records up to P are
// acknowledged, under the mutex: the main worker waits meanwhile and cannot
// move past P, so a copy worker that reaches the main worker hands over
// even under a steady stream of writes (waiting for the acks first would
// let the main worker move on every time). In exactly-once mode storing
// the phase is committing the copy's Kafka transaction: all of the copy's
// records and its handover become visible together, or none of them.
//
// The copy leaves the running copies (prog), and the handed-over hook
// runs, in the same hold of the mutex that changes its phase, so that
// /status never shows a table handed over and still being copied.
func (c *copier) handover(ctx context.Context, ts *phases.State, pos schema.LSN, out delivery.CopySink, prog *runningCopy) (bool, error) {
	name := ts.Table.Table
	c.call(HookBeforeHandover, name)
	next, _, err := c.phases.Handover(ts, pos, func(next *phases.State) error { return out.Handover(ctx, next) },
		func(next *phases.State, m schema.LSN) {
			prog.end(name)
			c.call(HookHandedOver+next.Phase, name)
			c.log.Info("handed over", zap.String("table", name), zap.String("phase", next.Phase),
				zap.Stringer("lsn", pos), zap.Stringer("main_lsn", m))
		})
	if err != nil {
		// Not visible yet: the table stays copying, this copy fails (or,
		// when the acknowledgements were late, tries again) and is retried
		// from a new snapshot (its records below P are upserts or changes
		// a new snapshot covers). If the write did land, the errored
		// record written next supersedes it.
		return false, fmt.Errorf("store the handover of %s: %w", name, err)
	}
	return next != nil, nil
}
