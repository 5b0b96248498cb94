package snapshot

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/watermark"
)

// This file is an incremental snapshot's end: the stale keys of every
// topic the table's records go to, tombstoned through the main worker.

// tombstones tombstones the stale keys of every topic the table's records
// go to (its own, and those the transform chain routes them to, each
// with its mark: tombstone), each where it was read.
//
// Where the chain's topics cannot be listed (a *transform.RouteError),
// nothing is tombstoned and an error log names the table, the transform
// and the fix; a routed topic without a mark (a snapshot begun before the
// chain routed there) is left alone, with an error log naming it and the
// fix (docs/snapshots.md, "Stale keys and transforms").
func (it *incrementalTable) tombstones(ctx context.Context, prog watermark.Progress) error {
	topics, err := chainTopics(it.c.formats.Chain(), it.plan.Topic)
	if err != nil {
		it.log.Error("stale keys are not tombstoned: the transforms route the table's records where a re-copy cannot follow them, so keys the table no longer has may stay live there; make the router's topic.regex the table's topic (dots escaped) and its topic.expression give literal names or names built from `topic`",
			zap.String("table", it.name), zap.Error(err))
		it.c.progress.staleSkipped(it.name, err.Error()+": limit the router with topic.regex and name its topics from literals or `topic`, or clear the routed topics before a resnapshot")
		return nil
	}
	if err := it.tombstone(ctx, topics[0], prog.StaleMark); err != nil {
		return err
	}
	skipped := ""
	for _, t := range topics[1:] {
		mark, ok := prog.StaleMarks[t]
		if !ok {
			skipped = "the incremental snapshot began before the transforms routed the table to " + t + ", so its keys there were not read: run the snapshot again"
			it.log.Error("stale keys are not tombstoned in a topic the transforms route the table to: the snapshot began before they did, so its keys cannot be told stale; run the snapshot again",
				zap.String("table", it.name), zap.String("topic", t))
			continue
		}
		if err := it.tombstone(ctx, t, mark); err != nil {
			return err
		}
	}
	it.c.progress.staleSkipped(it.name, skipped)
	return nil
}

// tombstone writes, through the main worker, tombstones for the keys the
// topic holds that the table no longer has: those whose every record
// precedes the mark (read before the watch), the last not a tombstone.
// A key present at the end was either unchanged since the watch (a
// window wrote it: a record past the mark) or changed (the stream wrote
// it: likewise), so a tombstone never hides a row; a key the stream
// writes while the topic is read is struck by the main worker before it
// writes the tombstones (emit: Incremental.Tombstones).
func (it *incrementalTable) tombstone(ctx context.Context, topic string, mark map[string]int64) error {
	pos, err := it.q.StrikeFrom(ctx, topic)
	if err != nil {
		return err
	}
	// Every record the main worker wrote before the strikes began is in
	// the topic once durable: the read below sees it.
	for it.c.main.Durable() < pos {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	before := map[int32]int64{}
	for p, o := range mark {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return fmt.Errorf("stale mark partition %q: %w", p, err)
		}
		before[int32(n)] = o
	}
	stale, _, err := liveKeys(ctx, it.c.cfg.kafka, topic, before)
	if err != nil {
		_, _, _ = it.q.Tombstones(ctx, topic, nil)
		return err
	}
	keys := make([][]byte, 0, len(stale.keys))
	for k := range stale.keys {
		keys = append(keys, []byte(k.key))
	}
	n, unit, err := it.q.Tombstones(ctx, topic, keys)
	if err != nil {
		return err
	}
	// The snapshot ends (its progress removed) once they are durable.
	if err := it.settleUnit(ctx, unit); err != nil {
		return err
	}
	it.log.Info("stale keys tombstoned", zap.String("topic", topic), zap.Int("keys", n))
	return nil
}
