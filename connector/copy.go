package connector

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

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// copier copies one table at a time for a copy worker: a temporary slot
// with an exported snapshot, COPY of the table under that snapshot (in ctid
// ranges over several connections for a big table), tombstones for keys an
// earlier copy left behind, then a private catch-up on the temporary slot
// until the durable handover (handover.go). Copy workers share one copier;
// each copyTable call is independent.
type copier struct {
	p       *Pipeline
	pgcfg   *pgconn.Config
	client  *kgo.Client
	topics  *topicMaker
	phases  *phases
	src     offsets.Pipeline
	log     *zap.Logger
	slotSeq atomic.Uint64
	// txns are the copy workers' transactional producers, one per worker
	// (exactly-once mode; nil otherwise), and newTxn makes a replacement.
	txns   []*kgo.Client
	newTxn func(ctx context.Context, n int) (*kgo.Client, error)
}

// snapshotPoint is where a copy's snapshot sits in the WAL.
type snapshotPoint struct {
	slot     string
	snapshot string     // exported snapshot name
	lsn      schema.LSN // consistent point: the snapshot sees exactly the transactions committed before it
}

// copyTable copies table and hands it over. It returns nil once the table
// is catchup or ready, and an error otherwise (the caller decides retry).
func (c *copier) copyTable(ctx context.Context, ts *tableState, worker int) error {
	name := ts.Table.Table
	log := c.log.With(zap.String("table", name))
	started := time.Now()

	// Where the copy's records go: in exactly-once mode, one Kafka
	// transaction of this worker's producer, committed with the handover.
	out, tx := c.client, (*kgo.Client)(nil)
	if c.txns != nil {
		var err error
		if tx, err = c.beginCopyTxn(ctx, worker); err != nil {
			return err
		}
		out = tx
		defer c.endCopyTxn(tx)
	}

	// The replication connection exports the snapshot and, later, streams
	// the private catch-up: a temporary slot lives only on its connection,
	// and dies with it, so nothing leaks whatever happens below.
	repl, err := connectReplication(ctx, c.pgcfg)
	if err != nil {
		return err
	}
	defer repl.Close(context.Background())
	// Identify before the slot: any command on repl after
	// CREATE_REPLICATION_SLOT ends the exported snapshot.
	id, err := identify(ctx, repl)
	if err != nil {
		return err
	}
	point, err := c.createSnapshot(ctx, repl)
	if err != nil {
		return err
	}
	if err := c.checkSource(id, point); err != nil {
		return err
	}
	c.p.hooks.call(HookSnapshotCreated, name)

	tracker := NewTracker(point.lsn, c.p.cfg.Kafka.MaxInflightBytes/int64(max(1, c.p.cfg.Snapshot.Workers)), nil)
	prog := c.p.copies.start(name)
	defer prog.end(name)
	rows, rel, err := c.copyRows(ctx, ts, point, tracker, log, out, prog)
	if err != nil {
		return err
	}
	prog.catchingUp()
	log.Info("table copied", zap.Int64("rows", rows), zap.Duration("took", time.Since(started)),
		zap.Float64("rows_per_s", float64(rows)/time.Since(started).Seconds()), zap.Stringer("lsn", point.lsn))
	c.p.metrics.TableCopyDuration.WithLabelValues(name).Set(time.Since(started).Seconds())
	c.p.hooks.call(HookCopied, name)

	if done, err := c.handover(ctx, ts, point.lsn, nil, tx); err != nil || done {
		return err
	}
	return c.catchUp(ctx, ts, rel, repl, point, tracker, log, out, tx)
}

// createSnapshot creates the temporary slot with an exported snapshot. The
// snapshot stays importable while repl stays idle.
func (c *copier) createSnapshot(ctx context.Context, repl *pgconn.PgConn) (snapshotPoint, error) {
	slot := fmt.Sprintf("%s_copy_%d_%d", c.p.cfg.Postgres.Slot, time.Now().UnixNano()%1e9, c.slotSeq.Add(1))
	if len(slot) > 63 {
		slot = slot[len(slot)-63:]
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return snapshotPoint{}, fmt.Errorf("create temporary slot for the copy: %w", err)
	}
	lsn, err := schema.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return snapshotPoint{}, err
	}
	return snapshotPoint{slot: slot, snapshot: res.SnapshotName, lsn: lsn}, nil
}

// checkSource refuses a snapshot from another source, or one older than the
// pipeline slot's start (seed: UnsafeResume).
func (c *copier) checkSource(id sourceIdentity, point snapshotPoint) error {
	if id.SystemID != c.src.SystemID || id.Database != c.src.Database {
		return &UnsafeResumeError{Reason: fmt.Sprintf("a table copy connected to system %s database %q, but the pipeline streams system %s database %q",
			id.SystemID, id.Database, c.src.SystemID, c.src.Database)}
	}
	if uint64(point.lsn) < c.src.InitialLSN {
		return &UnsafeResumeError{Reason: fmt.Sprintf("table snapshot at %s precedes the pipeline slot's start %s", point.lsn, schema.LSN(c.src.InitialLSN))}
	}
	return nil
}

// importSnapshot opens a connection in a repeatable-read transaction on
// the exported snapshot.
func (c *copier) importSnapshot(ctx context.Context, snapshot string) (*pgx.Conn, error) {
	conn, err := connectSQL(ctx, c.pgcfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("begin snapshot transaction: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(snapshot, "'", "''")+"'"); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("import snapshot %s: %w", snapshot, err)
	}
	return conn, nil
}

// tableInfo is the catalog's description of a table as of the snapshot.
type tableInfo struct {
	rel       *schema.Relation
	reltuples int64
	relpages  int64
}

// describeTable reads the table named name ("schema.table", as the
// offsets and phases name tables) as of conn's snapshot. Schema and table
// names may themselves hold dots, so the name is never split: the table
// is found by oid (the one discovery saw) when that still carries the
// name, else by the joined name.
func describeTable(ctx context.Context, conn *pgx.Conn, name string, oid uint32) (tableInfo, error) {
	var info tableInfo
	rel := &schema.Relation{ReplicaIdentity: 'd'}
	var ident string
	rows, err := conn.Query(ctx, `SELECT c.oid, n.nspname, c.relname, greatest(`+EstimatedRowsSQL+`, 0)::bigint, c.relpages, c.relreplident::text
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname || '.' || c.relname = $1
		ORDER BY c.oid = $2 DESC`, name, oid)
	if err != nil {
		return info, fmt.Errorf("describe %s: %w", name, err)
	}
	found := 0
	for rows.Next() {
		found++
		if found > 1 {
			// Two tables join to the same name ("a.b"."c" and "a"."b.c"):
			// the oid discovery saw decides, and it sorted first.
			if rel.OID == oid {
				continue
			}
			rows.Close()
			return info, &copyError{permanent: true, err: fmt.Errorf("two tables are named %s (schema and table names that hold dots); rename one", name)}
		}
		if err := rows.Scan(&rel.OID, &rel.Schema, &rel.Table, &info.reltuples, &info.relpages, &ident); err != nil {
			rows.Close()
			return info, fmt.Errorf("describe %s: %w", name, err)
		}
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("describe %s: %w", name, err)
	}
	if found == 0 {
		return info, &copyError{permanent: true, err: fmt.Errorf("table %s does not exist (dropped?); remove it from the publication, or recreate it and run mooncdc resnapshot", name)}
	}
	if ident != "" {
		rel.ReplicaIdentity = ident[0]
	}
	rows, err = conn.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod
		FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		ORDER BY a.attnum`, rel.OID)
	if err != nil {
		return info, fmt.Errorf("describe columns of %s: %w", name, err)
	}
	for rows.Next() {
		var col schema.Column
		var typ uint32
		if err := rows.Scan(&col.Name, &typ, &col.TypeMod); err != nil {
			return info, err
		}
		col.TypeOID = typ
		rel.Columns = append(rel.Columns, col)
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("describe columns of %s: %w", name, err)
	}
	keys, err := keyColumns(ctx, conn, rel.OID)
	if err != nil {
		return info, fmt.Errorf("look up the key of %s: %w", name, err)
	}
	setKey(rel, keys)
	if rel, err = completeRelation(ctx, conn, rel, typeCache{}); err != nil {
		return info, err
	}
	info.rel = rel
	return info, nil
}

// settle waits, for a table that was streaming until a resnapshot, until
// the main worker's records of it up to the flip are acknowledged, so that
// the read of live keys sees them (a row inserted then deleted around the
// flip would otherwise escape both the read and the tombstones).
func (c *copier) settle(ctx context.Context, ts *tableState) error {
	if ts.settleAt == 0 {
		return nil
	}
	main := c.p.tracker.Load()
	deadline := time.Now().Add(time.Minute)
	for main != nil && main.Durable() < ts.settleAt {
		if time.Now().After(deadline) {
			c.log.Warn("the main worker's records are not acknowledged after a minute; reading the topic's keys anyway",
				zap.String("table", ts.Table.Table), zap.Stringer("lsn", ts.settleAt))
			return nil
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}

// chunk is a range of heap pages [from, to); to < 0 means to the end.
type chunk struct{ from, to int64 }

func chunks(info tableInfo, chunkRows int64) []chunk {
	if info.reltuples <= chunkRows || info.relpages <= 1 || chunkRows <= 0 {
		return []chunk{{0, -1}}
	}
	n := (info.reltuples + chunkRows - 1) / chunkRows
	per := (info.relpages + n - 1) / n
	var out []chunk
	for from := int64(0); from < info.relpages; from += per {
		out = append(out, chunk{from, from + per})
	}
	// Pages added after the statistics were taken belong to the last chunk.
	out[len(out)-1].to = -1
	return out
}

func (ch chunk) where() string {
	if ch.from == 0 && ch.to < 0 {
		return ""
	}
	w := " WHERE ctid >= '(" + strconv.FormatInt(ch.from, 10) + ",0)'::tid"
	if ch.to >= 0 {
		w += " AND ctid < '(" + strconv.FormatInt(ch.to, 10) + ",0)'::tid"
	}
	return w
}

// copyRows streams the table's rows as op "r" records and tombstones keys
// left by an earlier copy, and waits until Kafka has acknowledged them all.
func (c *copier) copyRows(ctx context.Context, ts *tableState, point snapshotPoint, tracker *Tracker, log *zap.Logger, cl *kgo.Client,
	prog *runningCopy) (int64, *schema.Relation, error) {
	name := ts.Table.Table
	first, err := c.importSnapshot(ctx, point.snapshot)
	if err != nil {
		return 0, nil, err
	}
	defer first.Close(context.Background())
	info, err := describeTable(ctx, first, name, ts.OID)
	if err != nil {
		return 0, nil, err
	}
	rel := info.rel
	topic := TopicName(c.p.cfg.Kafka.TopicPrefix, rel.Schema, rel.Table)
	if err := c.topics.ensure(topic); err != nil {
		return 0, nil, err
	}
	if err := c.settle(ctx, ts); err != nil {
		return 0, nil, err
	}
	stale, err := liveKeys(ctx, c.p.kafka, topic)
	if err != nil {
		return 0, nil, err
	}
	parts := chunks(info, c.p.cfg.Snapshot.ChunkRows)
	log.Info("copying table", zap.Int64("estimated_rows", info.reltuples), zap.Int("chunks", len(parts)),
		zap.Int("stale_keys", len(stale.keys)))

	snap := tracker.Begin()
	out := &snapshotOut{ctx: ctx, c: c, cl: cl, tracker: tracker, ack: snap, topic: topic, lsn: point.lsn, stale: stale,
		rows: c.p.metrics.TableCopyRows.WithLabelValues(name)}
	prog.copying(info.reltuples, &out.count)
	jobs := make(chan chunk, len(parts))
	for _, p := range parts {
		jobs <- p
	}
	close(jobs)
	conns := min(len(parts), max(1, c.p.cfg.Snapshot.ConnectionsPerTable))
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
			w := out.worker(rel)
			for ch := range jobs {
				if err := w.copyChunk(gctx, conn, rel, ch); err != nil {
					return err
				}
			}
			return w.finish()
		})
	}
	if err := g.Wait(); err != nil {
		return 0, nil, err
	}
	if err := out.finish(); err != nil {
		return 0, nil, err
	}
	tracker.Commit(snap, point.lsn)
	if err := tracker.Wait(ctx); err != nil {
		return 0, nil, err
	}
	return out.count.Load(), rel, nil
}

// snapshotOut is the sink of one table's copy, shared by its chunk workers.
type snapshotOut struct {
	cl *kgo.Client // the producer (the copy's transactional one in exactly-once mode)
	// ctx is the copy's: records are produced with it, and a record whose
	// context ends while buffered fails, so it must outlive the chunks.
	ctx     context.Context
	c       *copier
	tracker *Tracker
	ack     *txAck
	topic   string
	lsn     schema.LSN
	stale   *keySet
	rows    interface{ Add(float64) }
	count   atomic.Int64

	mu   sync.Mutex
	last *kgo.Record // the last row of a finished chunk, held back to become the table's "last"

	pool sync.Pool // *kgo.Record with reusable Key and Value buffers
}

// chunkWriter turns COPY rows of one connection into records.
type chunkWriter struct {
	out   *snapshotOut
	enc   *codec
	rel   *schema.Relation
	ch    schema.Change
	tuple schema.Tuple
	buf   []byte
	held  *kgo.Record // this worker's newest record, produced when the next row arrives
	err   error
	ctx   context.Context
	now   int64 // ts_ms of the records, refreshed every 256 rows (time.Now costs)
	rows  int
}

func (o *snapshotOut) worker(rel *schema.Relation) *chunkWriter {
	return &chunkWriter{out: o, rel: rel, enc: o.c.p.newCodec(), ctx: context.Background(),
		ch: schema.Change{Op: schema.OpRead, Relation: rel, LSN: o.lsn, Snapshot: "true"}}
}

func (w *chunkWriter) copyChunk(ctx context.Context, conn *pgx.Conn, rel *schema.Relation, ch chunk) error {
	cols := make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = QuoteIdent(c.Name)
	}
	sql := "COPY (SELECT " + strings.Join(cols, ", ") + " FROM " + QualifiedName(rel.Schema, rel.Table) + ch.where() + ") TO STDOUT"
	w.ctx = ctx
	// A snapshot row meets today's NOT NULL; only the registry may hold
	// those columns as optional (nullable.go).
	encRel, err := w.enc.prepareRelaxing(ctx, w.out.topic, rel)
	if err != nil {
		return &copyError{permanent: ctx.Err() == nil, err: err}
	}
	w.rel, w.ch.Relation = encRel, encRel
	if _, err := conn.PgConn().CopyTo(ctx, w, sql); err != nil {
		if w.err != nil {
			return w.err
		}
		return fmt.Errorf("copy %s: %w", rel.QualifiedName(), err)
	}
	return w.err
}

// Write receives COPY data: whole rows (Postgres sends one row per
// CopyData message).
func (w *chunkWriter) Write(data []byte) (int, error) {
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
		return &copyError{permanent: true, err: fmt.Errorf("parse COPY row of %s: %w", w.rel.QualifiedName(), err)}
	}
	w.ch.After = w.tuple
	if w.rows&255 == 0 {
		w.now = time.Now().UnixMilli()
	}
	w.rows++
	rec, err := w.out.encode(w.enc, &w.ch, w.now)
	if err != nil {
		return err
	}
	// Hold this record and produce the one held before: the table's last
	// row must say snapshot "last", and only the end tells which it is.
	prev := w.held
	w.held = rec
	if prev != nil {
		return w.out.produce(prev)
	}
	return nil
}

// finish hands this worker's held record to the table's "last" candidate.
func (w *chunkWriter) finish() error {
	if w.held == nil {
		return nil
	}
	o := w.out
	o.mu.Lock()
	prev := o.last
	o.last = w.held
	o.mu.Unlock()
	w.held = nil
	if prev != nil {
		return o.produce(prev)
	}
	return nil
}

// finish produces the table's last row, marked "last", and tombstones for
// the keys an earlier copy left that this snapshot no longer has.
func (o *snapshotOut) finish() error {
	if o.last != nil {
		o.c.p.newCodec().MarkLast(o.last.Value)
		if err := o.produce(o.last); err != nil {
			return err
		}
	}
	seq := o.count.Load() // stale-key tombstones number on after the rows
	for k := range o.stale.keys {
		ts := &kgo.Record{Topic: o.topic, Key: []byte(k), Context: o.ack}
		setHeaders(ts, o.lsn, o.lsn, seq)
		seq++
		if err := o.produce(ts); err != nil {
			return err
		}
	}
	return nil
}

// encode turns a snapshot row into a record, and strikes its key from the
// stale keys.
func (o *snapshotOut) encode(enc *codec, ch *schema.Change, now int64) (*kgo.Record, error) {
	rec, _ := o.pool.Get().(*kgo.Record)
	if rec == nil {
		rec = new(kgo.Record)
	}
	key, hasKey, err := enc.AppendKey(rec.Key[:0], ch)
	if err != nil {
		return nil, &copyError{permanent: true, err: &RecordError{Topic: o.topic, LSN: ch.LSN, Err: err}}
	}
	value, err := enc.AppendValue(rec.Value[:0], ch, now)
	if err == nil {
		err = enc.checkSize(key, value)
	}
	if err != nil {
		return nil, &copyError{permanent: true, err: &RecordError{Topic: o.topic, LSN: ch.LSN, Err: err}}
	}
	*rec = kgo.Record{Topic: o.topic, Value: value, Context: o.ack, Headers: rec.Headers}
	if hasKey {
		rec.Key = key
		o.stale.remove(key)
	}
	setHeaders(rec, ch.LSN, o.lsn, o.count.Add(1)-1)
	o.rows.Add(1)
	return rec, nil
}

// produce hands rec to the producer, waiting while the copy's in-flight
// bytes are over its bound.
func (o *snapshotOut) produce(rec *kgo.Record) error {
	ctx := o.ctx
	for o.tracker.Inflight() > o.tracker.maxBytes && !o.tracker.WaitRoom(ctx, time.Now().Add(time.Second)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := o.tracker.Err(); err != nil {
			return err
		}
	}
	o.tracker.Add(o.ack, len(rec.Key)+len(rec.Value))
	o.cl.Produce(ctx, rec, o.promise)
	return nil
}

func (o *snapshotOut) promise(rec *kgo.Record, err error) {
	if err != nil {
		err = fmt.Errorf("produce to topic %q: %w", rec.Topic, err)
	}
	o.tracker.Ack(rec.Context.(*txAck), len(rec.Key)+len(rec.Value), err)
	if rec.Value != nil {
		*rec = kgo.Record{Key: rec.Key[:0], Value: rec.Value[:0], Headers: rec.Headers[:0]}
		o.pool.Put(rec)
	}
}

// copyError marks a copy failure that retrying cannot fix.
type copyError struct {
	permanent bool
	err       error
}

func (e *copyError) Error() string { return e.err.Error() }
func (e *copyError) Unwrap() error { return e.err }

// catchUp streams the temporary slot from the snapshot's consistent point,
// emitting only this table's changes, until the handover succeeds.
func (c *copier) catchUp(ctx context.Context, ts *tableState, rel *schema.Relation, repl *pgconn.PgConn,
	point snapshotPoint, tracker *Tracker, log *zap.Logger, cl, tx *kgo.Client) error {
	name := ts.Table.Table
	c.p.hooks.call(HookCatchup, name)
	em := newEmitter(ctx, cl, tracker, c.topics, c.p.newCodec(), c.p.metrics, c.p.cfg.Kafka.TopicPrefix,
		func(s, t string) bool { return s == rel.Schema && t == rel.Table }, newKeyResolver(c.pgcfg))
	defer em.keys.close()
	soft, stop := context.WithCancel(ctx)
	defer stop()
	h := &catchupHandler{emitter: em, c: c, ts: ts, tracker: tracker, ctx: ctx, stop: stop, tx: tx}
	sess := stream.NewSession(stream.Config{
		Conn: repl, ConnConfig: c.pgcfg, Slot: point.slot, Publication: c.p.cfg.Postgres.Publication,
		StartLSN: point.lsn, Log: log.Named("catchup"), Progress: &catchupProgress{Tracker: tracker, h: h, client: cl},
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
	tx *kgo.Client // the copy's transactional producer (exactly-once mode), committed by the handover
	*emitter
	c       *copier
	ts      *tableState
	tracker *Tracker
	ctx     context.Context
	stop    context.CancelFunc
	done    bool
	err     error
}

func (h *catchupHandler) Change(ch *schema.Change) error {
	if ch.Op == schema.OpMessage {
		if ch.Tx == nil && ch.Message.Prefix == DDLMessagePrefix {
			return &stream.ProtocolError{LSN: ch.LSN, Msg: "DDL message must be transactional"}
		}
		return nil // messages are the main worker's
	}
	return h.emitter.Change(ch)
}

func (h *catchupHandler) Commit(tx *schema.Tx) error {
	if err := h.emitter.Commit(tx); err != nil {
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
	// The wait holds the pipeline mutex, so it is bounded: on timeout the
	// handover is tried again at the next commit or keepalive.
	done, err := h.c.handover(h.ctx, h.ts, pos, func() error {
		ctx, cancel := context.WithTimeout(h.ctx, handoverAckWait)
		defer cancel()
		return h.tracker.Wait(ctx)
	}, h.tx)
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
	*Tracker
	h      *catchupHandler
	client *kgo.Client
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

// handoverAckWait bounds how long a handover waits, holding the pipeline
// mutex (and so the main worker), for the copy's last acknowledgements.
const handoverAckWait = 5 * time.Second

// DDLMessagePrefix is the logical message prefix reserved for schema
// change messages; they must be transactional.
const DDLMessagePrefix = "mooncdc_ddl"
