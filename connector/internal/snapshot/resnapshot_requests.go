package snapshot

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/offsets"
)

// This file holds the snapshotter's side of `mooncdc resnapshot`: the
// requests read from the offsets topic and the tables they put back to
// init.

// watchRequests tails the offsets topic for `mooncdc resnapshot` requests
// (table records with resnapshot_ms). Tailing sees every record, so a
// request is not lost when the pipeline writes the table's record again
// before it would have polled.
func (s *Snapshotter) watchRequests(ctx context.Context) error {
	cl, err := kgo.NewClient(append(slices.Clip(s.cfg.kafka), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.cfg.offsetsTopic: {0: kgo.NewOffset().AtStart()}}))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		fs.EachError(func(_ string, _ int32, err error) {
			s.log.Debug("reading resnapshot requests", zap.Error(err))
		})
		fs.EachRecord(func(r *kgo.Record) {
			st := offsets.State{Tables: map[string]offsets.Table{}}
			if err := offsets.Decode(s.cfg.name, r.Key, r.Value, &st); err != nil {
				return
			}
			for name, t := range st.Tables {
				if t.ResnapshotMs == 0 {
					continue
				}
				t.Table = name
				select {
				case s.requests <- t:
				case <-ctx.Done():
				}
			}
		})
	}
}

// request acts on a resnapshot request newer than the last one seen for
// its table: at once, or after the copy in progress.
func (s *Snapshotter) request(t offsets.Table) {
	name := t.Table
	if t.ResnapshotMs <= s.seen[name] {
		return
	}
	s.seen[name] = t.ResnapshotMs
	if ts := s.phases.Get(name); ts != nil && ts.LeftMs != 0 {
		// Out of the pipeline: none of its changes would follow the rows
		// read; they are read again when it comes back (leave.go).
		s.log.Warn("snapshot requested for a table out of the pipeline (no longer published or selected): "+
			"nothing is read now; its rows are read again when it comes back", zap.String("table", name))
		return
	}
	if t.Incremental != "" {
		// An incremental snapshot (an execute-snapshot signal of type
		// incremental, `mooncdc resnapshot --incremental`) runs on a
		// ready table, whose stream it never holds; a table with no
		// stream to keep (init, copying, catchup, errored) is copied as
		// today.
		if ts := s.phases.Get(name); s.inc != nil && ts != nil && ts.Phase == offsets.PhaseReady && !s.busy[name] {
			if s.paused {
				s.incMu.Lock()
				s.incHeld = append(s.incHeld, t)
				s.incMu.Unlock()
				s.log.Info("incremental snapshot requested while snapshots are paused: it starts at resume-snapshot", zap.String("table", name))
				return
			}
			s.startIncremental(s.runCtx, t)
			return
		}
		t.Incremental = ""
		s.log.Info("incremental snapshot requested for a table that is not streamed: it is copied with the blocking copy", zap.String("table", name))
	}
	// A blocking copy replaces a running incremental snapshot of the
	// table: its windows are discarded before the copy starts.
	if n := s.stopIncremental(func(n string) bool { return n == name }); n > 0 {
		s.log.Info("a running incremental snapshot gives way to the blocking copy requested", zap.String("table", name))
	}
	if s.busy[name] {
		s.log.Info("resnapshot requested while the table is being copied; it is copied again afterwards", zap.String("table", name))
		s.pending[name] = t
		return
	}
	s.resnapshot(t)
}

// resnapshot puts a table back to init, keeping the request's time so
// that later records carry it forward.
func (s *Snapshotter) resnapshot(t offsets.Table) {
	s.phases.Request(t)
	s.log.Info("resnapshot requested: copy queued", zap.String("table", t.Table))
}
