package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/notify"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is an incremental snapshot's chunk reader: one connection,
// one chunk at a time, each in its own REPEATABLE READ READ ONLY
// transaction whose first statement takes the snapshot and the high
// watermark.

// incReader reads chunks of one table on its own connection.
type incReader struct {
	it       *incrementalTable
	conn     *pgx.Conn
	w        *record.Writer
	sp       *schema.Plan
	rel      *schema.Relation
	filenode uint32
	query    string // COPY (SELECT … WHERE <filter>) with %s for the ctid range
	from     string // what it reads and locks (tableInfo.from)
	// columns is the table's attributes and key (columnsSQL) as the
	// snapshot the reader described it under saw them; stale asks for a
	// new description before the next chunk (a chunk's snapshot saw
	// others).
	columns string
	stale   bool
	// perPage is the bytes a page's rows are estimated to take once
	// encoded: what a reader asks of the budget before it reads.
	perPage int64
	// standby: the connection's server was in recovery when the reader
	// began (pg_is_in_recovery()); its snapshots are judged with
	// InRecovery (windowSnapshot), even after a promotion, which is safe.
	standby bool
}

// snapshotSQL is a chunk transaction's first statement: its snapshot, and
// the high watermark read after it exists. On a primary the WAL insert
// position; on a hot standby the replay position, past every commit the
// snapshot sees (a commit becomes visible on a standby when its record is
// replayed, and the replay position moves past the record after that,
// ApplyWalRecord in xlogrecovery.c). The CASE keeps it right across a
// promotion: in recovery when evaluated, the snapshot was taken in
// recovery (which only ends); out of it, the insert position is past
// everything replayed.
func snapshotSQL(standby bool) string {
	if !standby {
		return "SELECT pg_current_snapshot()::text, pg_current_wal_insert_lsn()::text, CURRENT_TIMESTAMP"
	}
	return "SELECT pg_current_snapshot()::text, (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_insert_lsn() END)::text, CURRENT_TIMESTAMP"
}

// windowSnapshot is the snapshot the Tracker judges a window by: the
// server's, or on a standby the part of it that holds there
// (Snapshot.InRecovery: a standby's pg_current_snapshot() lists no
// running id, F7).
func windowSnapshot(standby bool, snapText string) (watermark.Snapshot, error) {
	s, err := watermark.ParseSnapshot(snapText)
	if err != nil || !standby {
		return s, err
	}
	return s.InRecovery(), nil
}

// newReader opens a reader's connection and its record writer (a codec
// is not safe for concurrent use: one per reader, as the blocking copy's
// chunk writers have), with the table's schema plan prepared as the
// blocking copy prepares it.
func (it *incrementalTable) newReader(ctx context.Context, filenode uint32) (*incReader, error) {
	conn, err := pgsource.Dial(ctx, it.c.readConfig())
	if err != nil {
		return nil, err
	}
	r := &incReader{it: it, conn: conn, filenode: filenode,
		w: record.NewWriter(it.c.formats.Codec(), nil, record.NewAcks(it.c.main, new(record.Pool), nil))}
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&r.standby); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("read whether the server is a standby: %w", err)
	}
	if err := r.describe(ctx); err != nil {
		if recoveryConflict(err) {
			// Described at its first chunk (try), which reads again
			// after a conflict.
			r.stale = true
			return r, nil
		}
		conn.Close(context.Background())
		return nil, err
	}
	return r, nil
}

// columnsSQL is a table's attributes, replica identity and key indexes,
// to tell whether a chunk's snapshot sees the columns and key the reader
// described (read in the chunk's transaction, it sees the catalog as the
// snapshot does).
const columnsSQL = `SELECT coalesce((SELECT string_agg(attname || ':' || atttypid || ':' || atttypmod || ':' || attgenerated::text, ',' ORDER BY attnum)
		FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped), '')
	|| '|' || coalesce((SELECT relreplident::text FROM pg_class WHERE oid = $1::oid), '')
	|| '|' || coalesce((SELECT string_agg(indkey::text || ':' || indisprimary::text || ':' || indisreplident::text, ',' ORDER BY indexrelid)
		FROM pg_index WHERE indrelid = $1::oid AND (indisprimary OR indisreplident)), '')`

// describe describes the table (as the blocking copy does: describeTable)
// and its attributes in one snapshot, and prepares the reader's schema
// plan and chunk query from it: at the start, and again once a chunk's
// snapshot sees other columns or another key (ALTER TABLE … ADD COLUMN
// while the snapshot runs: the rows read after it carry the new column).
func (r *incReader) describe(ctx context.Context) error {
	it := r.it
	if _, err := r.conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("describe %s: %w", it.name, err)
	}
	defer func() { _, _ = r.conn.Exec(context.Background(), "ROLLBACK") }()
	var columns string
	if err := r.conn.QueryRow(ctx, columnsSQL, it.oid).Scan(&columns); err != nil {
		return fmt.Errorf("describe %s: %w", it.name, err)
	}
	info, err := describeTable(ctx, r.conn, it.name, it.oid, it.c.cfg.publication, it.c.cfg.keys)
	if err != nil {
		return err
	}
	plan := it.c.plans.Plan(info.rel, true)
	plan.WithKey(info.rel, nil)
	// A snapshot row meets today's NOT NULL; only the registry may hold
	// those columns as optional (record: nullable.go).
	sp, err := r.w.Codec.PrepareRelaxing(ctx, it.plan.Topic, plan.SchemaPlan)
	if err != nil {
		return fmt.Errorf("prepare the schemas of %s: %w", it.name, err)
	}
	rel := sp.Relation()
	r.from = info.from()
	cols := make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = config.QuoteIdent(c.Name)
	}
	where := "%s"
	if it.filter != "" {
		where = "%s AND (" + strings.ReplaceAll(it.filter, "%", "%%") + ")"
	}
	q := "COPY (SELECT " + strings.Join(cols, ", ") + " FROM " + r.from + " WHERE " + where + ") TO STDOUT"
	rowsPerPage := 1.0
	if it.rowsPerPage > 0 {
		rowsPerPage = it.rowsPerPage
	}
	r.sp, r.rel, r.query, r.columns, r.stale = sp, rel, q, columns, false
	r.perPage = pageBytes(rowsPerPage)
	return nil
}

func (r *incReader) close() { r.conn.Close(context.Background()) }

// recoveryConflict reports whether err is a hot standby's cancellation
// of a query that conflicts with its replay ("canceling statement due to
// conflict with recovery", or "terminating connection …" for an idle
// transaction: SQLSTATE 40001, or 40P01 for a buffer deadlock;
// ProcessRecoveryConflictInterrupt, postgres.c), as a VACUUM truncating
// the table on the primary (its ACCESS EXCLUSIVE lock, replayed) causes
// after max_standby_streaming_delay. The chunk is read again.
func recoveryConflict(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01") && strings.Contains(pg.Message, "conflict with recovery")
}

// again is a chunk read cancelled by a recovery conflict: the reader
// connects again if the standby ended its connection, describes the table
// anew, and the chunk is read again under a new snapshot.
func (r *incReader) again(ctx context.Context, cause error) (string, error) {
	why := "the standby cancelled the chunk's read for a conflict with its recovery (" + cause.Error() + "): read again"
	if !r.conn.IsClosed() {
		return why, nil
	}
	if err := r.reconnect(ctx); err != nil {
		return "", err
	}
	return why, nil
}

// reconnect replaces the reader's connection, which a standby ended for a
// conflict with its recovery; the table is described anew before the
// next chunk.
func (r *incReader) reconnect(ctx context.Context) error {
	conn, err := pgsource.Dial(ctx, r.it.c.readConfig())
	if err != nil {
		return err
	}
	r.conn, r.stale = conn, true
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&r.standby); err != nil {
		return fmt.Errorf("read whether the server is a standby: %w", err)
	}
	return nil
}

// errRewritten: the table's file is not the plan's any more.
var errRewritten = errors.New("the table was rewritten during its incremental snapshot (VACUUM FULL, CLUSTER, ALTER TABLE … TYPE, TRUNCATE, a partition attached or detached): its rows moved without change records")

// chunk reads ch until its window is written: a window refused
// (watermark.ErrUnproven: a transaction the stream carried is not visible
// to the snapshot yet) or void (a TRUNCATE, a change of unknown key, the
// table's relation changed) is read again under a new snapshot.
func (r *incReader) chunk(ctx context.Context, ch watermark.Chunk) error {
	wait := 10 * time.Millisecond
	since := time.Now()
	warned := false
	for {
		if ts := r.it.s.phases.Get(r.it.name); ts == nil || ts.Phase != offsets.PhaseReady {
			return errIncrementalStopped
		}
		// pause-snapshot: no new window until resume-snapshot.
		for r.it.s.incPaused.Load() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		why, err := r.try(ctx, ch)
		if err != nil || why == "" {
			return err
		}
		if !warned && time.Since(since) > 30*time.Second {
			r.it.log.Warn("a chunk of the incremental snapshot is read again and again; a long-running transaction older than the snapshot's start holds it back",
				zap.Stringer("chunk", ch), zap.String("why", why))
			warned = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}

// try reads ch once; it returns why the window was not written ("" when
// it was).
func (r *incReader) try(ctx context.Context, ch watermark.Chunk) (string, error) {
	it := r.it
	if r.standby && r.conn.IsClosed() {
		// Ended by the standby after a conflict (while the reader was
		// described, say).
		if err := r.reconnect(ctx); err != nil {
			return "", err
		}
	}
	if r.stale {
		if err := r.describe(ctx); err != nil {
			if recoveryConflict(err) {
				return r.again(ctx, err)
			}
			return "", err
		}
	}
	if d := it.c.cfg.tuning.IncrementalReadDelay; d > 0 {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(d):
		}
	}
	budget := it.shared.budget
	held := int64(ch.Pages()) * r.perPage
	if err := budget.take(ctx, held); err != nil {
		return "", err
	}
	defer func() { budget.adjust(-held) }()

	if _, err := r.conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return "", fmt.Errorf("begin a chunk's transaction: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_, _ = r.conn.Exec(context.Background(), "ROLLBACK")
		}
	}()
	// The table's share lock before the snapshot (LOCK takes none): a DDL
	// of the table that committed before is seen by the snapshot, and
	// none commits until the chunk's transaction ends. The COPY parses its
	// query against the catalog as it is when it runs, not as the snapshot
	// sees it: without the lock a DROP COLUMN committed between the two
	// failed the read ("column … does not exist"), and an ALTER … TYPE or
	// a rewrite could pass unseen by the checks below. The COPY takes the
	// same lock anyway; this holds it a few statements longer.
	if _, err := r.conn.Exec(ctx, "LOCK TABLE "+r.from+" IN ACCESS SHARE MODE"); err != nil {
		if recoveryConflict(err) {
			return r.again(ctx, err)
		}
		return "", fmt.Errorf("lock %s for a chunk's read: %w", it.name, err)
	}
	// The transaction's first statement: its snapshot, and the high
	// watermark read after it exists (docs: step 1). Under the shared
	// lock, so that snapshots reach the Tracker in the order taken.
	var snapText, highText string
	var readAt time.Time
	it.shared.snapMu.Lock()
	err := r.conn.QueryRow(ctx, snapshotSQL(r.standby)).Scan(&snapText, &highText, &readAt)
	var tk *emit.Ticket
	if err == nil {
		var snap watermark.Snapshot
		var high pglogrepl.LSN
		if snap, err = windowSnapshot(r.standby, snapText); err == nil {
			if high, err = pglogrepl.ParseLSN(highText); err == nil {
				tk = it.q.Open(it.oid, ch, snap, schema.LSN(high))
			}
		}
	}
	it.shared.snapMu.Unlock()
	if err != nil {
		if recoveryConflict(err) {
			return r.again(ctx, err)
		}
		return "", fmt.Errorf("read a chunk's snapshot and high watermark: %w", err)
	}
	it.c.call(HookChunkSnapshot, it.name)
	// The file and the columns as the snapshot sees them, before the COPY
	// reads by the reader's description (the lock keeps them so until the
	// transaction ends).
	var filenode uint32
	var columns string
	cerr := r.conn.QueryRow(ctx, "SELECT "+fileSQL+", ("+columnsSQL+") FROM pg_class c WHERE c.oid = $1::oid", it.oid).Scan(&filenode, &columns)
	var rows []emit.Row
	var size int64
	if cerr == nil && filenode == r.filenode && columns == r.columns {
		rows, size, cerr = r.copy(ctx, ch, readAt, &held)
	}
	w, err := tk.Wait(ctx)
	if errors.Is(err, watermark.ErrUnproven) {
		return err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	if cerr == nil && filenode != r.filenode {
		cerr = errRewritten
	}
	if cerr == nil && columns != r.columns {
		// The snapshot sees columns or a key the reader did not describe:
		// its rows lack them, or are keyed by other columns than the
		// stream's. Read the chunk again once described anew.
		r.stale = true
		why := "the table's columns or key changed (" + r.columns + " → " + columns + "): described again"
		if err := tk.Abandon(ctx, w, why); err != nil {
			return "", err
		}
		return why, nil
	}
	if cerr != nil {
		_ = tk.Abandon(ctx, w, cerr.Error())
		if recoveryConflict(cerr) {
			return r.again(ctx, cerr)
		}
		return "", cerr
	}
	if _, err := r.conn.Exec(ctx, "COMMIT"); err != nil {
		_ = tk.Abandon(ctx, w, err.Error())
		if recoveryConflict(err) {
			return r.again(ctx, err)
		}
		return "", fmt.Errorf("end a chunk's transaction: %w", err)
	}
	committed = true
	budget.adjust(size - held)
	held = size
	// Later chunks reserve what this one's pages took, when the table's
	// statistics said less (none: a table not analyzed yet).
	r.perPage = max(r.perPage, size/max(int64(ch.Pages()), 1))
	res, err := tk.Complete(ctx, w, rows)
	if err != nil {
		return "", err
	}
	// The written rows' bytes are the records' now (in flight); the
	// deferred adjust gives back the rest (dropped rows, a void window).
	budget.written(res.Reserved)
	held -= res.Reserved
	if res.Void != "" {
		return res.Void, nil
	}
	it.mu.Lock()
	if !res.Stored { // else inUnit counted it
		it.closed = append(it.closed, closedChunk{chunk: ch, rows: res.Rows, unit: res.Unit})
	}
	pages, id := it.prog.Pages, it.prog.CorrelationID
	it.mu.Unlock()
	it.s.note(id, func(src notify.Source, now int64) notify.Notification {
		return src.InProgressOf([]string{it.name}, it.name, pages, ch.End, now)
	})
	it.c.counts.Rows.WithLabelValues(it.name).Add(float64(res.Rows))
	return "", nil
}

// copy reads ch's rows with COPY of a TID range scan, and encodes each as
// the blocking copy does: an `r` record, source.snapshot "incremental",
// without source.txId, lsn or xmin, as Debezium writes an incremental
// snapshot's rows (PostgresSourceInfoStructMaker.java:48-58 at
// v3.6.1.Final: they are put only when the snapshot is not INCREMENTAL).
//
// held is what the window holds in the byte budget: when its rows pass
// it, the read waits for room to hold more (byteBudget.more), so that
// the in-flight bound holds while a chunk's estimate is short.
func (r *incReader) copy(ctx context.Context, ch watermark.Chunk, readAt time.Time, held *int64) ([]emit.Row, int64, error) {
	cw := &incCopy{r: r, ch: schema.Change{Op: schema.OpRead, Relation: r.rel, Snapshot: schema.SnapshotIncremental, SourceTime: readAt},
		now: time.Now(), ctx: ctx, held: held}
	rng := "ctid >= '(" + strconv.FormatUint(uint64(ch.First), 10) + ",0)'::tid AND ctid < '(" + strconv.FormatUint(uint64(ch.End), 10) + ",0)'::tid"
	if _, err := r.conn.PgConn().CopyTo(ctx, cw, fmt.Sprintf(r.query, rng)); err != nil {
		if cw.err != nil {
			return nil, 0, cw.err
		}
		return nil, 0, fmt.Errorf("read %s of %s: %w", ch, r.it.name, err)
	}
	return cw.rows, cw.size, cw.err
}

// recordOverhead is what a record holds beyond its key and value buffers
// (delivery's recordCost): the window's rows count it against the budget.
const recordOverhead = 320

// incCopy turns COPY rows into window rows.
type incCopy struct {
	r     *incReader
	ch    schema.Change
	tuple schema.Tuple
	buf   []byte
	now   time.Time
	rows  []emit.Row
	size  int64
	err   error
	ctx   context.Context
	held  *int64 // the window's bytes in the budget (copy)
}

// moreStep is what a read whose rows passed their window's estimate adds
// to it at a time beyond the rows' size: few waits, little held idle.
const moreStep = 64 << 10

// Write receives COPY data: whole rows (Postgres sends one row per
// CopyData message).
func (c *incCopy) Write(data []byte) (int, error) {
	n := len(data)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := c.row(line); err != nil {
			c.err = err
			return 0, err
		}
	}
	return n, nil
}

func (c *incCopy) row(line []byte) error {
	rel := c.r.rel
	var err error
	c.tuple, c.buf, err = schema.ParseCopyRow(line, len(rel.Columns), c.tuple[:0], c.buf[:0])
	if err != nil {
		return fmt.Errorf("parse COPY row of %s: %w", rel.QualifiedName(), err)
	}
	key, ok := emit.AppendTupleKey(nil, rel, c.tuple)
	if !ok {
		return fmt.Errorf("a row of %s has no key to compare with the stream's", rel.QualifiedName())
	}
	c.ch.After = c.tuple
	var rec *kgo.Record
	rec, _, err = c.r.w.Change(nil, c.r.it.plan.Topic, c.r.sp, &c.ch, c.now, true, false)
	if err != nil {
		return err
	}
	sz := delivery.RecordBytes(rec) + recordOverhead
	c.rows = append(c.rows, emit.Row{Key: watermark.Key(key), Value: rec, Size: sz})
	c.size += int64(sz)
	if c.size > *c.held {
		n := c.size - *c.held + moreStep
		if err := c.r.it.shared.budget.more(c.ctx, n); err != nil {
			return err
		}
		*c.held += n
	}
	return nil
}
