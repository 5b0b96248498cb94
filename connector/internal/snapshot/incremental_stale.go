package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is an incremental snapshot's stale keys (keys the topic holds
// that the table no longer has): from the start, the main worker strikes
// every key it writes to each topic the table's records go to; then the
// topic's end offsets are read (the mark, kept in the progress for a
// resume), and the topic is read up to the mark (a resumed snapshot: to
// its end) while the chunks are read (staleKeys holds the keys live
// before the mark, less those struck); at the end the main worker
// tombstones the keys left (docs/incremental-snapshots.md, "Stale keys").

// stalePasses are an incremental snapshot's reads of the keys of every
// topic the table's records go to (its own, and those the transform
// chain routes them to), run on one goroutine of their own while the
// chunks are read.
type stalePasses struct {
	it     *incrementalTable
	passes []*stalePass
	// skipped says why a topic's stale keys are left (status); "" if none.
	skipped string
	cancel  context.CancelFunc
	done    chan struct{} // closed once the reads ended; then err is set
	err     error
}

// stalePass is one topic's read.
type stalePass struct {
	topic string
	keys  *staleKeys
	pos   schema.LSN      // StrikeFrom's: the read waits until it is durable
	mark  map[int32]int64 // records at or past it strike their keys
	// resumed: the mark was read by an earlier run, whose windows and
	// stream wrote past it without these strikes: the read goes on past
	// the mark to the topic's end, and those records strike. A first run
	// reads up to the mark only: the main worker strikes whatever it
	// writes past it.
	resumed bool
}

// beginStale starts striking the keys of every topic the table's records
// go to, then (a first run) reads the marks into prog, and starts reading
// the topics' keys. Where the chain's topics cannot be listed (a
// *transform.RouteError), nothing is tombstoned and an error log names the
// table, the transform and the fix: it returns nil then. A routed topic
// without a mark (a snapshot begun before the chain routed there) is left
// alone, with an error log naming it and the fix (docs/snapshots.md,
// "Stale keys and transforms"). end must follow.
func (it *incrementalTable) beginStale(ctx context.Context, prog *watermark.Progress, resumed bool) (*stalePasses, error) {
	c := it.c
	topics, err := chainTopics(c.formats.Chain(), it.plan.Topic)
	if err != nil {
		it.log.Error("stale keys are not tombstoned: the transforms route the table's records where a re-copy cannot follow them, so keys the table no longer has may stay live there; make the router's topic.regex the table's topic (dots escaped) and its topic.expression give literal names or names built from `topic`",
			zap.String("table", it.name), zap.Error(err))
		c.progress.staleSkipped(it.name, err.Error()+": limit the router with topic.regex and name its topics from literals or `topic`, or clear the routed topics before a resnapshot")
		return nil, nil
	}
	sp := &stalePasses{it: it, done: make(chan struct{})}
	// The strikes begin before the mark is read (and before the watch):
	// whatever the main worker writes past the mark for a change streamed
	// after the watch, or for a window, strikes its key. What it wrote
	// before the strikes is of changes streamed before the watch, which
	// the argument does not need (a key of them still live is written
	// again by a window or the stream).
	for _, t := range topics {
		keys := newStaleKeys(it.c.staleKeysLimit())
		pos, err := it.q.StrikeFrom(ctx, t, keys)
		if err != nil {
			sp.end()
			return nil, err
		}
		sp.passes = append(sp.passes, &stalePass{topic: t, keys: keys, pos: pos, resumed: resumed})
	}
	if !resumed {
		if prog.StaleMark, err = endOffsets(ctx, c.cfg.kafka, topics[0]); err != nil {
			sp.end()
			return nil, err
		}
		if len(topics) > 1 {
			prog.StaleMarks = map[string]map[string]int64{}
			for _, t := range topics[1:] {
				if prog.StaleMarks[t], err = endOffsets(ctx, c.cfg.kafka, t); err != nil {
					sp.end()
					return nil, err
				}
			}
		}
	}
	kept := make([]*stalePass, 0, len(sp.passes))
	for i, p := range sp.passes {
		raw, ok := prog.StaleMark, true
		if i > 0 {
			raw, ok = prog.StaleMarks[p.topic]
		}
		if !ok {
			sp.skipped = "the incremental snapshot began before the transforms routed the table to " + p.topic + ", so its keys there were not read: run the snapshot again"
			it.log.Error("stale keys are not tombstoned in a topic the transforms route the table to: the snapshot began before they did, so its keys cannot be told stale; run the snapshot again",
				zap.String("table", it.name), zap.String("topic", p.topic))
			it.q.EndStrike(p.topic, p.keys)
			continue
		}
		if p.mark, err = parseMark(raw); err != nil {
			sp.end()
			return nil, err
		}
		kept = append(kept, p)
	}
	sp.passes = kept
	rctx, cancel := context.WithCancel(ctx)
	sp.cancel = cancel
	go func() {
		defer close(sp.done)
		sp.err = sp.read(rctx)
	}()
	return sp, nil
}

// parseMark turns a mark of the progress (partitions as text) into one by
// partition; a nil mark (a snapshot stored without one) is empty: every
// record is past it, so no key is stale.
func parseMark(raw map[string]int64) (map[int32]int64, error) {
	mark := map[int32]int64{}
	for p, o := range raw {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("stale mark partition %q: %w", p, err)
		}
		mark[int32(n)] = o
	}
	return mark, nil
}

// errStaleKeysOutgrown ends the read of a topic whose keys outgrew
// their bound (copier.staleKeysLimit).
var errStaleKeysOutgrown = errors.New("stale keys outgrew their bound")

// read reads each topic's keys into its staleKeys: a record before the
// mark makes its key live (a tombstone, gone), one at or past it strikes
// its key (a resumed snapshot's earlier runs wrote it).
func (sp *stalePasses) read(ctx context.Context) error {
	it := sp.it
	for _, p := range sp.passes {
		// Every record the main worker wrote before the strikes began is
		// in the topic once its position is durable: the read sees it (a
		// resumed snapshot's stream may have written a key since the mark
		// before striking it).
		for it.c.main.Durable() < p.pos {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		it.c.call(HookStaleKeysRead, it.name)
		began := time.Now()
		upTo := p.mark
		if p.resumed {
			upTo = nil
		}
		_, err := scanKeys(ctx, it.c.cfg.kafka, p.topic, upTo, func(r *kgo.Record) error {
			if !p.keys.see(r.Key, r.Value == nil, pastMark(p.mark, r)) {
				return errStaleKeysOutgrown
			}
			return nil
		})
		p.keys.readDone()
		switch {
		case errors.Is(err, errStaleKeysOutgrown):
			it.log.Error("the topic holds more keys than an incremental snapshot keeps to find the stale ones: none will be tombstoned there",
				zap.String("table", it.name), zap.String("topic", p.topic), zap.Int64("bound_bytes", it.c.staleKeysLimit()))
		case err != nil:
			return err
		default:
			it.log.Info("stale keys read", zap.String("topic", p.topic), zap.Int("keys", p.keys.size()), zap.Duration("took", time.Since(began)))
		}
	}
	return nil
}

// end stops the reads and the strikes that tombstones did not end. Safe
// on nil.
func (sp *stalePasses) end() {
	if sp == nil {
		return
	}
	if sp.cancel != nil {
		sp.cancel()
		<-sp.done
	}
	for _, p := range sp.passes {
		sp.it.q.EndStrike(p.topic, p.keys)
	}
}

// tombstones waits for the reads, then has the main worker write, in
// each topic, tombstones for the keys left (emit: Incremental.Tombstones),
// and returns once they are durable. A key present at the end was either
// unchanged since the watch (a window wrote it after the strikes began)
// or changed (the stream wrote it after the watch, likewise), so a
// tombstone never hides a row.
func (sp *stalePasses) tombstones(ctx context.Context) error {
	it := sp.it
	select {
	case <-sp.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if sp.err != nil {
		return sp.err
	}
	skipped := sp.skipped
	for _, p := range sp.passes {
		if p.keys.outgrown() && it.prog.Repair {
			// A repair must tombstone the keys its gap deleted: the
			// blocking copy holds them without the bound (the caller
			// falls back to it).
			return fmt.Errorf("topic %s holds more keys than an incremental snapshot keeps (about %d MiB of them) to find the stale ones, and a repair must tombstone those its gap deleted", p.topic, it.c.staleKeysLimit()>>20)
		}
		if p.keys.outgrown() {
			skipped = fmt.Sprintf("topic %s holds more keys than an incremental snapshot keeps (about %d MiB of them) to find the stale ones: none were tombstoned there; a blocking resnapshot (which holds them without that bound) tombstones them", p.topic, it.c.staleKeysLimit()>>20)
			it.q.EndStrike(p.topic, p.keys)
			continue
		}
		n, unit, err := it.q.Tombstones(ctx, p.topic)
		if err != nil {
			return err
		}
		// The snapshot ends (its progress removed) once they are durable.
		if err := it.settleUnit(ctx, unit); err != nil {
			return err
		}
		it.log.Info("stale keys tombstoned", zap.String("topic", p.topic), zap.Int("keys", n))
	}
	it.c.progress.staleSkipped(it.name, skipped)
	return nil
}
