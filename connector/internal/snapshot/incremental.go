package snapshot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file runs incremental snapshots (docs/incremental-snapshots.md): a
// `ready` table's rows read again in chunks of heap pages, each under its
// own snapshot, on snapshot.connections_per_table connections, while the
// table's changes keep streaming. Readers write nothing: they hand their
// rows to the main worker (emit: Incremental), the table's one emitter,
// which writes each window's rows when the stream passes its high
// watermark, less the keys the stream changed meanwhile. Progress (the
// page ranges whose windows are durable) lives in the table's offsets
// record, so that a snapshot resumes by chunk after a restart.

// incrementalShared is what every table's incremental snapshot of the
// pipeline shares: the lock under which readers take their snapshots and
// hand them over (the Tracker must get them in the order taken), and the
// windows' byte budget.
type incrementalShared struct {
	snapMu sync.Mutex
	budget *byteBudget
}

// incrementalTable is one table's running incremental snapshot.
type incrementalTable struct {
	s      *Snapshotter
	c      *copier
	q      *emit.Incremental
	shared *incrementalShared
	name   string
	oid    uint32
	log    *zap.Logger
	info   tableInfo
	plan   record.Plan
	// rowsPerPage is the rows a chunk's page holds by the statistics
	// (sizeSQL), 0 when unknown.
	rowsPerPage float64
	filter      string // the chunk query's WHERE beyond the ctid range: the publication's row filter and additional-conditions
	// reqMs is the request's ResnapshotMs, carried into the table's
	// record so that a restart, which reads the offsets topic's requests
	// again, does not take it for a new one.
	reqMs int64

	mu   sync.Mutex
	prog watermark.Progress
	// closed are the chunks whose windows were written, with the end of
	// the unit that holds their rows: done once that is durable.
	closed []closedChunk
}

type closedChunk struct {
	chunk watermark.Chunk
	rows  int
	unit  *delivery.TxAck // emit.WindowResult.Unit
	// stored: the progress with it done was written in its unit
	// (inUnit): once the unit is durable, so is that record.
	stored bool
}

// errWindowLost: the unit of durability that held a window's rows was
// lost (its session ended before its commit, or its Kafka transaction was
// aborted): the snapshot starts again from its stored progress, which
// does not count that chunk as done.
var errWindowLost = errors.New("a window's rows were written in a unit of durability that was lost (the session ended, or its Kafka transaction was aborted): resuming from the stored progress")

// errIncrementalStopped ends a snapshot whose table left the ready phase
// (parked, errored, dropped, or copied again).
var errIncrementalStopped = errors.New("the table is no longer streamed (parked, dropped or copied again): the incremental snapshot stops")

// startIncremental starts an incremental snapshot of table t (ready), or
// resumes the one its record holds. It runs on its own goroutine, owned
// by Run; a second request for a table whose snapshot runs is ignored.
func (s *Snapshotter) startIncremental(ctx context.Context, t offsets.Table) {
	name := t.Table
	s.incMu.Lock()
	defer s.incMu.Unlock()
	if _, running := s.incRunning[name]; running {
		s.log.Info("incremental snapshot requested while one of the table runs; it goes on", zap.String("table", name))
		return
	}
	fresh, id := requestOf(t)
	repair := repairOf(t.Incremental)
	s.incRunning[name] = id
	tctx, stop := context.WithCancel(ctx)
	s.incStop[name] = stop
	s.incWG.Add(1)
	go func() {
		defer s.incWG.Done()
		if fresh {
			s.note(id, func(src notify.Source, now int64) notify.Notification { return src.StartedOf([]string{name}, now) })
		}
		// scanned: TABLE_SCAN_COMPLETED is written once the chunks are
		// durable, before the stale keys' tombstones (once per request).
		scanned := false
		onScanned := func(rows int64) {
			if !scanned {
				scanned = true
				s.note(id, func(src notify.Source, now int64) notify.Notification {
					return src.ScanCompletedOf([]string{name}, name, rows, scanStatus(nil, rows), now)
				})
			}
		}
		err := s.runIncremental(tctx, t, onScanned)
		for wait := 100 * time.Millisecond; rerun(err) && tctx.Err() == nil; {
			s.log.Warn("incremental snapshot: "+err.Error()+"; it goes on from its stored progress", zap.String("table", name))
			if recoveryConflict(err) && !fault.Sleep(tctx, wait) {
				break
			}
			wait = min(2*wait, 5*time.Second)
			if ts := s.phases.Get(name); ts != nil {
				t.Incremental = ts.Incremental
			}
			err = s.runIncremental(tctx, t, onScanned)
		}
		// Told before stop(), which would make every failure look like a
		// stop-snapshot and hide its error.
		stopped := ctx.Err() == nil && tctx.Err() != nil // stop-snapshot, not the pipeline's stop
		s.incMu.Lock()
		delete(s.incRunning, name)
		delete(s.incStop, name)
		s.incMu.Unlock()
		stop()
		switch {
		case err == nil:
			s.note(id, func(src notify.Source, now int64) notify.Notification { return src.CompletedOf(now) })
		case stopped:
			s.log.Info("incremental snapshot stopped (stop-snapshot): its progress is removed, the rows written stay", zap.String("table", name))
			s.note(id, func(src notify.Source, now int64) notify.Notification { return src.AbortedOf([]string{name}, now) })
			s.clearIncremental(context.Background(), name)
		case ctx.Err() != nil:
			s.log.Info("incremental snapshot stopped with the pipeline; it resumes at the next start", zap.String("table", name))
		default:
			if !scanned {
				s.note(id, func(src notify.Source, now int64) notify.Notification {
					return src.ScanCompletedOf([]string{name}, name, 0, scanStatus(err, 0), now)
				})
			}
			s.note(id, func(src notify.Source, now int64) notify.Notification { return src.CompletedOf(now) })
			if ts := s.phases.Get(name); repair && ts != nil && ts.Phase == offsets.PhaseReady {
				s.log.Error("the incremental snapshot of a repair (a lost slot's gap, or a table added back) failed: the table is copied with the blocking copy instead, so that the gap is repaired",
					zap.String("table", name), zap.Error(err))
				s.repairBlocking(ctx, t)
				return
			}
			s.log.Error("incremental snapshot failed; the table streams on, ask for it again (or for a blocking one) once the cause is fixed",
				zap.String("table", name), zap.Error(err))
			s.clearIncremental(context.Background(), name)
		}
	}()
}

// fileSQL is the identity of the files of table c that a plan's chunks
// read, which progress keeps as its relfilenode: a plain table's
// relfilenode (a rewrite changes it); for a partitioned root, whose rows
// are in its leaf partitions, a hash of every leaf's oid and relfilenode,
// which an ATTACH or DETACH PARTITION (rows that come or go without change
// records) or a leaf's rewrite changes. Either way, a new identity plans
// again from page 0.
const fileSQL = `CASE WHEN c.relkind = 'p' THEN coalesce((SELECT hashtext(string_agg(l.relid::text || ':' || coalesce(pg_relation_filenode(l.relid), 0)::text, ',' ORDER BY l.relid))::bigint & 4294967295
		FROM pg_partition_tree(c.oid) l WHERE l.isleaf), 0)
	ELSE coalesce(pg_relation_filenode(c.oid), 0)::bigint END`

// sizeSQL is the plan's N (pages), its files' identity (fileSQL) and the
// rows a chunk's page holds (statistics; 0 unknown) of table $1. A chunk's
// ctid range [first, end) of a partitioned root reads those pages of every
// leaf (a TID range scan each), so N is the largest leaf's, and a page of a
// chunk holds a page of each leaf: the sum of the leaves' rows a page.
const sizeSQL = `SELECT CASE WHEN c.relkind = 'p' THEN coalesce((SELECT max(pg_relation_size(l.relid)) FROM pg_partition_tree(c.oid) l WHERE l.isleaf), 0)
		ELSE pg_relation_size(c.oid) END / current_setting('block_size')::bigint,
	` + fileSQL + `,
	(CASE WHEN c.relkind = 'p' THEN coalesce((SELECT sum(p.reltuples / p.relpages) FROM pg_partition_tree(c.oid) l JOIN pg_class p ON p.oid = l.relid
		WHERE l.isleaf AND p.relpages > 0 AND p.reltuples > 0), 0)
	WHEN c.relpages > 0 AND c.reltuples > 0 THEN c.reltuples / c.relpages ELSE 0 END)::float8
	FROM pg_class c WHERE c.oid = $1::oid`

// rerun reports whether a run of an incremental snapshot that ended with
// err is run again, from the progress stored: a window lost; a rewrite
// (runIncremental sees the new relfilenode and plans again from page 0);
// a hot standby that cancelled one of the run's own short queries (the
// table's description, its size, the floor) for a conflict with its
// recovery, as it cancels a chunk's read, which is read again
// (incReader.again) — before, that failed the snapshot.
func rerun(err error) bool {
	return errors.Is(err, errWindowLost) || errors.Is(err, errRewritten) || recoveryConflict(err)
}

// stopIncremental ends the running incremental snapshots of the tables
// match selects (stop-snapshot); it reports how many.
func (s *Snapshotter) stopIncremental(match func(string) bool) int {
	s.incMu.Lock()
	defer s.incMu.Unlock()
	n := 0
	for name, stop := range s.incStop {
		if match(name) {
			stop()
			n++
		}
	}
	kept := s.incHeld[:0]
	for _, t := range s.incHeld {
		if match(t.Table) {
			n++
			continue
		}
		kept = append(kept, t)
	}
	s.incHeld = kept
	return n
}

// clearIncremental removes the table's incremental progress from its
// record.
func (s *Snapshotter) clearIncremental(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if ts := s.phases.Get(name); ts == nil || ts.Incremental == "" {
		return
	}
	s.setPhase(ctx, name, func(ts *phases.State) { ts.Incremental = "" })
}

// runIncremental is one table's incremental snapshot, from the request to
// the last window and the stale keys' tombstones; onScanned is called
// once every chunk's rows are durable, with the rows written.
func (s *Snapshotter) runIncremental(ctx context.Context, req offsets.Table, onScanned func(rows int64)) error {
	c, q := s.c, s.inc
	name := req.Table
	ts := s.phases.Get(name)
	if ts == nil || ts.Phase != offsets.PhaseReady {
		return fmt.Errorf("incremental snapshot of %s: the table is not streamed (phase %v)", name, phaseOf(ts))
	}
	log := s.log.With(zap.String("table", name))
	conn, err := pgsource.Dial(ctx, c.readConfig())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	info, err := describeTable(ctx, conn, name, ts.OID, c.cfg.publication, c.cfg.keys)
	if err != nil {
		return err
	}
	plan := c.plans.Plan(info.rel, true)
	plan.WithKey(info.rel, nil)
	if err := s.eligible(ctx, conn, name, info, plan); err != nil {
		return err
	}
	it := &incrementalTable{s: s, c: c, q: q, shared: s.incShared, name: name, oid: info.rel.OID, log: log, info: info, plan: plan, reqMs: req.ResnapshotMs}
	repair := repairOf(ts.Incremental)
	prog, resumed := it.stored(ts.Incremental)
	filter := req.ResnapshotFilter
	if resumed {
		filter = prog.Filter
	}
	it.filter = info.rowFilter
	if filter != "" {
		if it.filter != "" {
			it.filter = "(" + it.filter + ") AND (" + filter + ")"
		} else {
			it.filter = filter
		}
	}
	if plan.OwnTopic() {
		// The windows' rows go to it before any change of the table may
		// have made it (snapshot.mode never, a quiet table).
		if err := c.topics.Ensure(plan.Topic); err != nil {
			return err
		}
	}
	// The stale-key rule rests on "a key changed since the watch has a
	// record past the mark, the stream's": an update skipped
	// (format.skipped_operations: u) that moves a row past the plan, or to
	// a chunk read before, leaves its key with neither a window's row nor
	// a stream record, and would tombstone a live row.
	tombstones := filter == "" && plan.OwnTopic() && !plan.Routed && !c.cfg.opts.Skip.Has(schema.OpUpdate)
	if repair && c.cfg.opts.Skip.Has(schema.OpUpdate) {
		// The blocking copy tombstones the keys the gap deleted whatever
		// the pipeline skips.
		return errRepairNeedsTombstones
	}
	var stale *stalePasses
	if tombstones {
		// Before the watch: the strikes, the mark, and the read of the
		// keys, which runs while the chunks are read.
		if stale, err = it.beginStale(ctx, &prog, resumed); err != nil {
			return err
		}
		defer stale.end()
	}
	q.SetName(it.oid, it.name)
	watched, err := q.Watch(ctx, it.oid, it.inUnit)
	if err != nil {
		return err
	}
	defer q.Unwatch(it.oid)
	z, err := readFloor(ctx, conn, watched, log)
	if err != nil {
		return err
	}
	if err := q.SetFloor(ctx, z); err != nil {
		return err
	}
	// N is read after the watch (docs: Claim 2 needs this order).
	var pages int64
	var filenode uint32
	if err := conn.QueryRow(ctx, sizeSQL, it.oid).Scan(&pages, &filenode, &it.rowsPerPage); err != nil {
		return fmt.Errorf("read the size of %s: %w", name, err)
	}
	if resumed && prog.Relfilenode != filenode {
		log.Info("the table was rewritten since its incremental snapshot began: planning again from page 0")
		resumed = false
	}
	readers := max(1, c.cfg.snapshot.ConnectionsPerTable)
	if !resumed {
		mark, marks := prog.StaleMark, prog.StaleMarks
		prog = watermark.Progress{Pages: uint32(pages), Relfilenode: filenode, ChunkPages: c.chunkPages(s.incShared.budget.limit, it.rowsPerPage, readers),
			StartedMs: time.Now().UnixMilli(), Filter: filter, StaleMark: mark, StaleMarks: marks, CorrelationID: cmp.Or(req.SignalID, prog.CorrelationID),
			Repair: repair}
	}
	it.prog = prog
	chunks, err := prog.Remaining()
	if err != nil {
		return err
	}
	if err := it.store(ctx); err != nil {
		return err
	}
	log.Info("incremental snapshot", zap.Bool("resumed", resumed), zap.Uint32("pages", prog.Pages), zap.Int("chunks", len(chunks)),
		zap.Uint32("chunk_pages", prog.ChunkPages), zap.Int("readers", readers), zap.String("filter", filter))
	readStart := time.Now()
	if err := it.read(ctx, chunks, readers, filenode); err != nil {
		return err
	}
	if err := it.settle(ctx); err != nil {
		return err
	}
	read := time.Since(readStart)
	onScanned(it.prog.Rows) // settled: every chunk is in it.prog
	if stale != nil {
		if err := stale.tombstones(ctx); err != nil {
			return err
		}
	}
	// read: the chunks of this run, from the first read to the last
	// window durable (rows_per_s is of them); took: since the snapshot
	// began (a resumed one's earlier runs, the stale keys' read included).
	log.Info("incremental snapshot done", zap.Int64("rows", it.prog.Rows), zap.Duration("read", read),
		zap.Float64("rows_per_s", float64(it.prog.Rows)/read.Seconds()), zap.Duration("took", time.Since(time.UnixMilli(it.prog.StartedMs))))
	s.clearIncremental(ctx, name)
	return nil
}

func phaseOf(ts *phases.State) string {
	if ts == nil {
		return "none"
	}
	return ts.Phase
}

// stored returns the progress the table's record holds, and whether it is
// a snapshot to resume (planned already).
func (it *incrementalTable) stored(raw offsets.RawJSON) (watermark.Progress, bool) {
	if len(raw) == 0 {
		return watermark.Progress{}, false
	}
	p, err := watermark.ParseProgress([]byte(raw))
	if err != nil {
		// A request not planned yet (`mooncdc resnapshot --incremental`
		// writes {"chunk_pages":0}), or unreadable: from page 0.
		it.log.Debug("no incremental progress to resume; starting from page 0", zap.Error(err))
		return watermark.Progress{}, false
	}
	return p, true
}

// eligible refuses a table an incremental snapshot cannot take
// (watermark.Eligible), naming it and the fix.
func (s *Snapshotter) eligible(ctx context.Context, conn *pgx.Conn, name string, info tableInfo, plan record.Plan) error {
	t := watermark.Table{Name: name, Outbox: plan.Outbox}
	if len(info.rel.KeyIndexes) > 0 {
		t.Key = watermark.KeyPrimary
	}
	p := &t.Publishes
	var viaRoot bool
	if err := conn.QueryRow(ctx, `SELECT pubinsert, pubupdate, pubdelete, pubtruncate, pubviaroot FROM pg_publication WHERE pubname = $1`,
		s.c.cfg.publication).Scan(&p.Insert, &p.Update, &p.Delete, &p.Truncate, &viaRoot); err != nil {
		return fmt.Errorf("read what publication %s publishes: %w", s.c.cfg.publication, err)
	}
	t.PartitionsAlone = info.partitioned && !viaRoot
	return watermark.Eligible(t)
}

// endOffsets reads topic's end offsets, by partition (as text: the
// progress is JSON).
func endOffsets(ctx context.Context, kafka []kgo.Opt, topic string) (map[string]int64, error) {
	cl, err := kgo.NewClient(kafka...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := map[string]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[strconv.Itoa(int(o.Partition))] = o.Offset
		}
	})
	return out, nil
}

// read reads chunks on readers connections at once; a chunk whose window
// is refused (ErrUnproven) or void is read again under a new snapshot.
func (it *incrementalTable) read(ctx context.Context, chunks []watermark.Chunk, readers int, filenode uint32) error {
	jobs := make(chan watermark.Chunk, len(chunks))
	for _, ch := range chunks {
		jobs <- ch
	}
	close(jobs)
	g, gctx := errgroup.WithContext(ctx)
	cpCtx, stopCP := context.WithCancel(gctx)
	defer stopCP()
	cp := make(chan error, 1)
	go func() { cp <- it.checkpoints(cpCtx) }()
	for i := 0; i < min(readers, max(1, len(chunks))); i++ {
		g.Go(func() error {
			r, err := it.newReader(gctx, filenode)
			if err != nil {
				return err
			}
			defer r.close()
			for ch := range jobs {
				if err := r.chunk(gctx, ch); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := g.Wait()
	stopCP()
	if cerr := <-cp; err == nil {
		err = cerr
	}
	return err
}
