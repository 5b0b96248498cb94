package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds a copy's rows: the table split into chunks of heap pages,
// COPY of each chunk, and the records made of its rows.

// chunk is a range of heap pages [from, to); to < 0 means to the end. Only
// rows that pass filter (the publication's row filter, "" for none) are
// copied, as the stream carries only changes that pass it.
type chunk struct {
	from, to int64
	filter   string
}

func chunks(info tableInfo, chunkRows int64) []chunk {
	if info.reltuples <= chunkRows || info.relpages <= 1 || chunkRows <= 0 {
		return []chunk{{0, -1, info.rowFilter}}
	}
	n := (info.reltuples + chunkRows - 1) / chunkRows
	per := (info.relpages + n - 1) / n
	var out []chunk
	for from := int64(0); from < info.relpages; from += per {
		out = append(out, chunk{from, from + per, info.rowFilter})
	}
	// Pages added after the statistics were taken belong to the last chunk.
	out[len(out)-1].to = -1
	return out
}

func (ch chunk) where() string {
	var conds []string
	if ch.from > 0 || ch.to >= 0 {
		conds = append(conds, "ctid >= '("+strconv.FormatInt(ch.from, 10)+",0)'::tid")
	}
	if ch.to >= 0 {
		conds = append(conds, "ctid < '("+strconv.FormatInt(ch.to, 10)+",0)'::tid")
	}
	if ch.filter != "" {
		conds = append(conds, "("+ch.filter+")")
	}
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// copyRows streams the table's rows as op "r" records and tombstones keys
// left by an earlier copy, and waits until Kafka has acknowledged them all.
// A resumable copy (rs not nil, copy_resume.go) copies the chunks not
// done, and checkpoints as they are.
func (c *copier) copyRows(ctx context.Context, ts *phases.State, point snapshotPoint, tracker *delivery.Tracker, out delivery.CopySink,
	prog *runningCopy, run *snapshotRun, rs *resumable) (int64, *schema.Relation, error) {
	name := ts.Table.Table
	log := c.log.With(zap.String("table", name))
	first, err := c.importSnapshot(ctx, point.snapshot)
	if err != nil {
		return 0, nil, err
	}
	defer first.Close(context.Background())
	info, err := describeTable(ctx, first, name, ts.OID, c.cfg.publication, c.cfg.keys)
	if err != nil {
		return 0, nil, err
	}
	if err := rs.check(ctx, first, info); err != nil {
		return 0, nil, err
	}
	if f := ts.ResnapshotFilter; f != "" {
		// An execute-snapshot signal's filter (signals.go): only the rows
		// it selects, within the publication's own filter.
		if info.rowFilter != "" {
			f = "(" + info.rowFilter + ") AND (" + f + ")"
		}
		info.rowFilter = f
	}
	rel := info.rel
	// source.ts_* of the rows: when the snapshot transaction started, as
	// Debezium's CURRENT_TIMESTAMP of the table's read
	// (RelationalSnapshotChangeEventSource.java:823-831).
	var readAt time.Time
	if err := first.QueryRow(ctx, "SELECT CURRENT_TIMESTAMP").Scan(&readAt); err != nil {
		return 0, nil, fmt.Errorf("read the snapshot's timestamp: %w", err)
	}
	plan := c.plans.Plan(rel, true)
	plan.WithKey(rel, nil) // describeTable keyed it
	topic := plan.Topic
	if plan.OwnTopic() { // the outbox table's rows are events on the topics they name (record: outbox.go)
		if err := c.topics.Ensure(topic); err != nil {
			return 0, nil, err
		}
	}
	if err := c.settle(ctx, ts); err != nil {
		return 0, nil, err
	}
	if err := rs.beforeKeys(ctx, rel); err != nil {
		return 0, nil, err
	}
	stale, err := newKeySet(), error(nil) // the outbox table's topic has no records to tombstone
	topics, routeErr := c.staleTopics(topic)
	skipped := "" // why stale keys are left untombstoned (status)
	if plan.OwnTopic() {
		var ends map[int32]int64
		if ends, err = stale.add(ctx, c.cfg.kafka, topic, rs.staleMark()); err == nil {
			err = rs.keysRead(ctx, ends)
		}
		if err == nil && len(topics) > 1 && rs.staleMark() != nil {
			// A resumed copy has a mark for the table's own topic only: the
			// records earlier attempts routed elsewhere cannot be told from
			// stale ones there.
			skipped = "a resumed copy read the table's own topic only, not " + strings.Join(topics[1:], ", ") + " (the transforms route the table there): resnapshot the table again"
			c.log.Warn("a resumed copy tombstones stale keys in the table's own topic only: keys the table no longer has may stay live in the topics the transforms route it to; resnapshot the table again (a copy from the start reads them all)",
				zap.String("table", rel.QualifiedName()), zap.Strings("not_read", topics[1:]))
			topics = topics[:1]
		}
		for _, other := range topics[1:] {
			if err != nil {
				break
			}
			_, err = stale.add(ctx, c.cfg.kafka, other, nil)
		}
	}
	switch {
	case err != nil:
	case routeErr != nil && plan.OwnTopic():
		// Where the chain sends the table's records cannot be listed (or
		// other tables' records may be there): a key read from them may
		// be another table's, and a key the table no longer has may be
		// in a topic not read. Nothing is tombstoned, loudly.
		c.log.Error("stale keys are not tombstoned: the transforms route the table's records where a re-copy cannot follow them, so keys the table no longer has stay live in those topics; make the router's topic.regex the table's topic (dots escaped) and its topic.expression give literal names or names built from `topic`, or clear the routed topics before a resnapshot",
			zap.String("table", rel.QualifiedName()), zap.String("topic", topic), zap.Error(routeErr))
		skipped = routeErr.Error() + ": limit the router with topic.regex and name its topics from literals or `topic`, or clear the routed topics before a resnapshot"
		stale = newKeySet()
	case len(stale.keys) == 0:
	case ts.ResnapshotFilter != "":
		// A filtered re-copy sees only the rows it selects: the keys
		// outside the filter are alive.
		stale = newKeySet()
	case plan.Routed:
		// A routed topic may hold other tables' keys, which this copy
		// must not tombstone.
		c.log.Warn("the table's topic is set by kafka.routes and may hold other tables' keys: keys the copy no longer finds are not tombstoned",
			zap.String("table", rel.QualifiedName()), zap.String("topic", topic))
		stale = newKeySet()
	}
	if err != nil {
		return 0, nil, err
	}
	c.progress.staleSkipped(name, skipped)
	parts := rs.chunks(info, c.cfg.snapshot.ChunkRows)
	log.Info("copying table", zap.Int64("estimated_rows", info.reltuples), zap.Int("chunks", len(parts)),
		zap.Int("stale_keys", len(stale.keys)))

	snap := tracker.Begin()
	o := &snapshotOut{ctx: ctx, c: c, ack: snap, topic: topic, from: info.from(), lsn: point.lsn, stale: stale,
		acks: record.NewAcks(tracker, new(record.Pool), nil), sink: out,
		rows: c.counts.Rows.WithLabelValues(name), run: run, table: name, readAt: readAt, outbox: plan.Outbox, plan: plan.SchemaPlan,
		cp: rs.newCheckpoints(parts)}
	prog.copying(rs.estimate(info.reltuples, prog), &o.count)
	// Every copy has the series, 0 when it copies from zero.
	c.counts.RowsResumed.WithLabelValues(name).Add(float64(rs.resumedRows()))
	jobs := make(chan chunk, len(parts))
	for _, p := range parts {
		jobs <- p
	}
	close(jobs)
	conns := min(len(parts), max(1, c.cfg.snapshot.ConnectionsPerTable))
	copyCtx, cancelCopy := context.WithCancel(ctx)
	defer cancelCopy()
	g, gctx := errgroup.WithContext(copyCtx)
	for i := 0; i < conns; i++ {
		conn := first
		if i > 0 {
			if conn, err = c.importSnapshot(gctx, point.snapshot); err != nil {
				cancelCopy() // the chunks already running stop at once
				_ = g.Wait()
				return 0, nil, err
			}
		}
		g.Go(func() error {
			if conn != first {
				defer conn.Close(context.Background())
			}
			w := o.worker(rel)
			for ch := range jobs {
				if err := w.copyChunk(gctx, conn, rel, ch); err != nil {
					return err
				}
			}
			return w.finish()
		})
	}
	rs.imported() // every connection holds the snapshot: a resumed copy drops its temporary slot
	if err := g.Wait(); err != nil {
		return 0, nil, err
	}
	if err := o.finish(); err != nil {
		return 0, nil, err
	}
	tracker.Commit(snap, point.lsn)
	if err := tracker.Wait(ctx); err != nil {
		return 0, nil, err
	}
	if err := rs.finish(ctx); err != nil {
		return 0, nil, err
	}
	return o.count.Load(), rel, nil
}

// snapshotOut is the output of one table's copy, shared by its chunk
// writers: each has its own record writer (and codec) on the copy's sink.
type snapshotOut struct {
	// ctx is the copy's: a send waits for room at most until it ends.
	ctx   context.Context
	c     *copier
	sink  delivery.CopySink
	acks  *record.Acks // the copy's tracker, and its record pool
	ack   *delivery.TxAck
	topic string
	from  string // what the chunks read (tableInfo.from)
	lsn   schema.LSN
	stale *keySet
	rows  interface{ Add(float64) }
	count atomic.Int64

	// run is the snapshot the table belongs to (snapshotrun.go); started
	// is set once the table's first row has taken its marker; readAt is
	// source.ts_* of the rows.
	run     *snapshotRun
	table   string
	started atomic.Bool
	readAt  time.Time
	// outbox: the table is format.outbox.table; its rows are outbox
	// events, which carry no snapshot marker.
	outbox bool
	// plan is the table's schema plan, which its connections share.
	plan *schema.Plan
	// cp is a resumable copy's per-chunk checkpoints (copy_checkpoint.go),
	// nil for another copy.
	cp *checkpoints

	mu         sync.Mutex
	last       *kgo.Record // the last row of a finished chunk, held back to become the table's last
	lastMarker string      // the marker last was encoded with
	lastEnds   *chunkUnit  // the unit that ends when last is sent (chunkWriter.heldEnds)
	lastRow    *heldRow    // with a transform chain, the row last was made of
}

// heldRow is a held record's row, kept with a transform chain: its last
// marker is known only at the end, and a chain's output cannot be
// rewritten in place (MarkSnapshot), so the table's last record is made
// again from its row with that marker, through the chain (which may now
// drop it, or route it elsewhere, as Debezium's chain sees the marked
// record).
type heldRow struct {
	ch  schema.Change
	sp  *schema.Plan
	now time.Time
}

// keepRow copies ch (its tuple's bytes are the COPY buffer's, reused).
func keepRow(ch *schema.Change, sp *schema.Plan, now time.Time) *heldRow {
	h := &heldRow{ch: *ch, sp: sp, now: now}
	h.ch.After = make(schema.Tuple, len(ch.After))
	for i, v := range ch.After {
		h.ch.After[i] = schema.Value{Kind: v.Kind, Data: append([]byte(nil), v.Data...)}
	}
	return h
}

// chunkWriter turns COPY rows of one connection into records.
type chunkWriter struct {
	out   *snapshotOut
	w     *record.Writer
	rel   *schema.Relation
	plan  *schema.Plan // rel's: the copy's, or relaxed (record.Codec.PrepareRelaxing)
	ch    schema.Change
	tuple schema.Tuple
	buf   []byte
	held  *kgo.Record // this worker's newest record, produced when the next row arrives
	// heldRow is held's row, with a transform chain (heldRow).
	heldRow *heldRow
	// heldMarker is the source.snapshot held was encoded with.
	heldMarker string
	err        error
	ctx        context.Context
	watch      *copyWatch // the running COPY's silence watch (link.go)
	now        time.Time  // ts_* of the records, refreshed every 256 rows (time.Now costs)
	rows       int
	// uncounted rows are encoded but not yet in the table's copied-rows
	// metric, which gets them every 256 rows and at the chunk's end.
	uncounted int

	// unit is the current chunk's in a resumable copy (nil otherwise), and
	// heldEnds the unit of an ended chunk whose last record is held; pause
	// is its pause lock in exactly-once mode (copy_checkpoint.go).
	unit, heldEnds *chunkUnit
	pause          *sync.Mutex
}

// writer returns a record writer of its own (a codec is not safe for
// concurrent use) on the copy's sink.
func (o *snapshotOut) writer() *record.Writer {
	return record.NewWriter(o.c.formats.Codec(), o.sink, o.acks)
}

func (o *snapshotOut) worker(rel *schema.Relation) *chunkWriter {
	return &chunkWriter{out: o, rel: rel, w: o.writer(), ctx: context.Background(),
		ch: schema.Change{Op: schema.OpRead, Relation: rel, LSN: o.lsn, Snapshot: schema.SnapshotTrue, SourceTime: o.readAt}}
}

func (w *chunkWriter) copyChunk(ctx context.Context, conn *pgx.Conn, rel *schema.Relation, ch chunk) error {
	cols := make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = config.QuoteIdent(c.Name)
	}
	sql := "COPY (SELECT " + strings.Join(cols, ", ") + " FROM " + w.out.from + ch.where() + ") TO STDOUT"
	w.ctx = ctx
	// A snapshot row meets today's NOT NULL; only the registry may hold
	// those columns as optional (record: nullable.go).
	sp, err := w.w.Codec.PrepareRelaxing(ctx, w.out.topic, w.out.plan)
	if err != nil {
		// A stop ends the registry's retries (registry.sleep) a moment
		// before it ends ctx: that is no fault of the table's.
		return &CopyError{permanent: ctx.Err() == nil && !errors.Is(err, context.Canceled), Err: err}
	}
	w.plan, w.rel, w.ch.Relation = sp, sp.Relation(), sp.Relation()
	w.beginChunk(ch)
	// A COPY that receives nothing for the link timeout is aborted (its
	// connection closed) and the copy retried: a resumed copy keeps the
	// chunks Kafka has (copy_resume.go).
	cctx, watch := watchCopy(ctx, "copy "+rel.QualifiedName(), w.out.c.cfg.linkTimeout)
	w.watch = watch
	_, err = conn.PgConn().CopyTo(cctx, w, sql)
	watch.close()
	w.watch = nil
	w.countRows()
	if err != nil {
		if w.err != nil {
			return w.err
		}
		if serr := silenceCause(cctx); serr != nil {
			return &CopyError{Err: serr}
		}
		return fmt.Errorf("copy %s: %w", rel.QualifiedName(), err)
	}
	if w.err != nil {
		return w.err
	}
	return w.endChunk(ctx)
}

// Write receives COPY data: whole rows (Postgres sends one row per
// CopyData message).
func (w *chunkWriter) Write(data []byte) (int, error) {
	if w.watch != nil {
		// Time spent here (encoding, waiting for room) is not the
		// server's silence.
		w.watch.enter()
		defer w.watch.leave()
	}
	n := len(data)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := w.row(line); err != nil {
			w.err = err
			return 0, err
		}
	}
	return n, nil
}

func (w *chunkWriter) row(line []byte) error {
	var err error
	w.tuple, w.buf, err = schema.ParseCopyRow(line, len(w.rel.Columns), w.tuple[:0], w.buf[:0])
	if err != nil {
		return &CopyError{permanent: true, Err: fmt.Errorf("parse COPY row of %s: %w", w.rel.QualifiedName(), err)}
	}
	w.ch.After = w.tuple
	if w.rows&255 == 0 {
		w.now = time.Now()
		w.countRows()
	}
	w.rows++
	w.ch.Snapshot = w.out.run.marker()
	if !w.out.started.Load() && w.out.started.CompareAndSwap(false, true) {
		w.ch.Snapshot = w.out.run.firstMarker()
	}
	rec, err := w.out.encode(w.w, w.plan, &w.ch, w.now)
	if err != nil {
		return err
	}
	w.uncounted++
	w.tag(rec)
	// Hold this record and produce the one held before: the table's last
	// row gets a marker of its own, and only the end tells which it is.
	prev, ends := w.held, w.heldEnds
	w.held, w.heldMarker, w.heldEnds = rec, w.ch.Snapshot, nil
	if w.w.Codec.Chained() && !w.out.outbox { // an outbox event has no marker
		w.heldRow = keepRow(&w.ch, w.plan, w.now)
	}
	if prev != nil {
		err := w.produce(prev)
		w.out.cp.end(ends)
		return err
	}
	return nil
}

// countRows adds the rows encoded since it last ran to the table's
// copied-rows metric (one contended atomic add per 256 rows, not per row).
func (w *chunkWriter) countRows() {
	if w.uncounted > 0 {
		w.out.rows.Add(float64(w.uncounted))
		w.uncounted = 0
	}
}

// finish hands this worker's held record to the table's "last" candidate.
func (w *chunkWriter) finish() error {
	if w.held == nil {
		return nil
	}
	o := w.out
	o.mu.Lock()
	prev, ends := o.last, o.lastEnds
	o.last, o.lastMarker, o.lastEnds, o.lastRow = w.held, w.heldMarker, w.heldEnds, w.heldRow
	o.mu.Unlock()
	w.held, w.heldEnds, w.heldRow = nil, nil, nil
	if prev != nil {
		err := w.produce(prev)
		o.cp.end(ends)
		return err
	}
	return nil
}

// finish produces the table's last row, with its marker
// (snapshotRun.finish), and tombstones for the keys an earlier copy left
// that this snapshot no longer has.
func (o *snapshotOut) finish() error {
	w := o.writer()
	to := o.run.finish(o.table, o.lastMarker)
	if o.last != nil {
		if to != o.lastMarker && o.lastRow != nil && !o.outbox {
			// With a transform chain: made again with its marker.
			row := o.lastRow
			row.ch.Snapshot = to
			rec, _, err := w.Change(nil, o.topic, row.sp, &row.ch, row.now, true, false)
			if err != nil {
				return &CopyError{permanent: true, Err: err}
			}
			rec.Context = o.last.Context
			w.Discard(o.last)
			o.last = rec
		} else if to != o.lastMarker && !o.outbox {
			var ok bool
			if o.last.Value, ok = w.Codec.MarkSnapshot(o.last.Value, o.lastMarker, to); !ok {
				return fmt.Errorf("internal: the last snapshot record of %s has no source.snapshot %q", o.table, o.lastMarker)
			}
			w.Codec.MarkSnapshotHeaders(o.last, o.lastMarker, to)
		}
		err := w.SendWhenRoom(o.ctx, o.last)
		o.cp.end(o.lastEnds)
		if err != nil {
			return err
		}
	}
	seq := o.count.Load() // stale-key tombstones number on after the rows
	for k := range o.stale.keys {
		// A tombstone goes to the topic and key it was read from, as
		// written (docs/snapshots.md, "Stale keys and transforms"): the
		// chain does not run on it.
		ts := w.Record(o.ack)
		ts.Topic, ts.Key, ts.Value = k.topic, append(ts.Key[:0], k.key...), nil // a null value: a tombstone
		record.SetHeaders(ts, o.lsn, o.lsn, seq)
		seq++
		if err := w.SendWhenRoom(o.ctx, ts); err != nil {
			return err
		}
	}
	return nil
}

// encode turns a snapshot row into a record, and strikes its key from the
// stale keys. A record that cannot be made fails the copy for good.
func (o *snapshotOut) encode(w *record.Writer, sp *schema.Plan, ch *schema.Change, now time.Time) (*kgo.Record, error) {
	if o.outbox {
		return o.encodeOutbox(w, sp, ch, now)
	}
	ch.Seq = int(o.count.Add(1) - 1) // a snapshot row's number in its copy (HeaderTxSeq)
	rec, _, err := w.Change(o.ack, o.topic, sp, ch, now, true, false)
	if err != nil {
		return nil, &CopyError{permanent: true, Err: err}
	}
	if rec.Key != nil && rec.Topic != "" { // not dropped by the chain
		o.stale.remove(rec.Topic, rec.Key)
	}
	return rec, nil
}

// encodeOutbox turns a snapshot row of the outbox table into its event's
// record: Debezium's EventRouter takes a read (op r) as it takes an insert
// (EventRouterDelegate.java:111-123 sets aside only d and u).
func (o *snapshotOut) encodeOutbox(w *record.Writer, sp *schema.Plan, ch *schema.Change, now time.Time) (*kgo.Record, error) {
	ev, err := w.Codec.Outbox().Event(sp, ch)
	if err == nil {
		err = record.CheckRoutedTopic(ev.Topic)
	}
	if err != nil {
		return nil, &CopyError{permanent: true, Err: &record.RecordError{Topic: o.topic, LSN: ch.LSN, Err: err}}
	}
	if err := o.c.topics.EnsureEvent(ev); err != nil {
		err = emit.OutboxEventError(err, ev, ch.LSN)
		if errors.As(err, new(*record.RecordError)) {
			return nil, &CopyError{permanent: true, Err: err}
		}
		return nil, err
	}
	rec, err := w.Outbox(o.ctx, o.ack, ch, ev, now, o.lsn, o.count.Add(1)-1)
	if err != nil {
		if errors.As(err, new(*record.RecordError)) || errors.As(err, new(*record.TableSchemaError)) {
			return nil, &CopyError{permanent: true, Err: err}
		}
		return nil, err // the registry is unreachable: the copy is retried
	}
	return rec, nil
}
