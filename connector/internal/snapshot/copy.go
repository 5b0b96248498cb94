package snapshot

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// DescribeTable returns the relation of table name ("schema.table") as
// the copy describes it (describeTable), as publication pub streams it:
// the *schema.Relation the encoders get for that table.
func DescribeTable(ctx context.Context, conn *pgx.Conn, name, pub string) (*schema.Relation, error) {
	info, err := describeTable(ctx, conn, name, 0, pub, nil)
	return info.rel, err
}

// copier copies one table at a time for a copy worker: a temporary slot
// with an exported snapshot, COPY of the table under that snapshot (in ctid
// ranges over several connections for a big table), tombstones for keys an
// earlier copy left behind, then a private catch-up on the temporary slot
// until the durable handover (handover.go). Copy workers share one copier;
// each copyTable call is independent. Its records go to the copy sinks the
// delivery makes (connector/internal/delivery).
type copier struct {
	cfg      copierConfig
	pgcfg    *pgconn.Config
	delivery delivery.Mode
	formats  *record.Formats
	plans    *record.Planner
	topics   *delivery.TopicMaker
	phases   *phases.Rules
	src      offsets.Pipeline
	// main is the main worker's tracker: the copies' in-flight bytes count
	// against its bound too, and a re-copy settles on its durable LSN.
	main     *delivery.Tracker
	progress *Copies // running copies, for /status and the progress bars
	counts   Counts
	hook     func(point, table string) // the test hooks (Hooks); nil: none
	log      *zap.Logger
	slotSeq  atomic.Uint64
	slots    copySlots // the persistent copy slots in use (copyslot.go)
}

// Counts are the pipeline's counters a copy adds to (Metrics).
type Counts struct {
	Emitter     emit.Counts // of its catch-up and resume streams
	Duration    *prometheus.GaugeVec
	Rows        *prometheus.CounterVec
	RowsResumed *prometheus.CounterVec
}

// call runs the test hook at point for table, if one is set.
func (c *copier) call(point, table string) {
	if c.hook != nil {
		c.hook(point, table)
	}
}

// copierConfig is the copies' part of the configuration.
type copierConfig struct {
	snapshot    config.SnapshotConfig
	slot        string // postgres.slot: the copies' slots are named after it
	publication string
	keys        record.KeyRule
	kafka       []kgo.Opt // the base of the Kafka clients that read a topic's live keys
	maxInflight int64     // kafka.max_inflight_bytes, shared by the copy workers
	prefix      string    // kafka.topic_prefix
	opts        record.Options
	// replicationTimeout is postgres.replication_timeout (0: derived per
	// session); linkTimeout what a COPY may stay silent (link.go).
	replicationTimeout, linkTimeout time.Duration
	// checkpointEvery is how often, at most, a resumable copy stores its
	// progress (0: at every chunk's end): tuning's, resolved.
	checkpointEvery time.Duration
	tuning          Tuning // the test's settings (tuning.go); zero in production
}

// snapshotPoint is where a copy's snapshot sits in the WAL.
type snapshotPoint struct {
	slot     string
	snapshot string     // exported snapshot name
	lsn      schema.LSN // consistent point: the snapshot sees exactly the transactions committed before it
	// persistent: slot is a resumable copy's persistent slot (copyslot.go),
	// never confirmed past lsn.
	persistent bool
}

// copyTable copies table and hands it over. It returns nil once the table
// is catchup or ready, and an error otherwise (the caller decides retry).
// run is the snapshot the table belongs to, for source.snapshot's markers
// (nil: a run of this table alone).
func (c *copier) copyTable(ctx context.Context, ts *phases.State, worker int, run *snapshotRun) error {
	name := ts.Table.Table
	log := c.log.With(zap.String("table", name))
	started := time.Now()
	// A table of more than one chunk resumes from its progress, or starts
	// a copy that can (copy_resume.go).
	rs, err := c.resumeFor(ctx, ts, log)
	if err != nil {
		return err
	}
	defer rs.end() // after repl is closed: a handed-over copy's slot is dropped

	// The replication connection exports the snapshot and, later, streams
	// the private catch-up: a temporary slot lives only on its connection,
	// and dies with it, so nothing leaks whatever happens below.
	repl, err := pgsource.ConnectReplication(ctx, c.pgcfg)
	if err != nil {
		return err
	}
	defer repl.Close(context.Background())
	// Identify before the slot: any command on repl after
	// CREATE_REPLICATION_SLOT ends the exported snapshot.
	id, err := pgsource.Identify(ctx, repl)
	if err != nil {
		return err
	}
	point, err := c.takeSnapshot(ctx, repl, rs)
	if err != nil {
		return err
	}
	if err := c.checkSource(id, point); err != nil {
		return err
	}
	c.call(HookSnapshotCreated, name)

	prog := c.progress.start(name)
	defer prog.end(name)
	tracker := delivery.NewTracker(point.lsn, c.cfg.maxInflight/int64(max(1, c.cfg.snapshot.Workers)), nil)
	tracker.ShareBudget(c.main) // max_inflight_bytes bounds the process, copies included
	// Where the copy's records go: in exactly-once mode, one Kafka
	// transaction of this worker's producer, committed with the handover.
	out, err := c.delivery.Copy(ctx, worker, tracker)
	if err != nil {
		return err
	}
	defer out.Close()
	if run == nil {
		run = newSnapshotRun([]string{name})
	}
	rs.bind(point, repl, tracker, out)
	rows, rel, err := c.copyRows(ctx, ts, point, tracker, out, prog, run, rs)
	if err != nil {
		return err
	}
	prog.catchingUp()
	log.Info("table copied", zap.Int64("rows", rows), zap.Duration("took", time.Since(started)),
		zap.Float64("rows_per_s", float64(rows)/time.Since(started).Seconds()), zap.Stringer("lsn", point.lsn),
		zap.Int64("resumed_rows", rs.resumedRows()))
	c.counts.Duration.WithLabelValues(name).Set(time.Since(started).Seconds())
	c.call(HookCopied, name)

	if done, err := c.handover(ctx, ts, point.lsn, out, prog); err != nil || done {
		return err
	}
	return c.catchUp(ctx, ts, rel, rs.catchupConn(repl), rs.catchupPoint(point), tracker, log, out, prog)
}

// createSnapshot creates the temporary slot with an exported snapshot. The
// snapshot stays importable while repl stays idle.
func (c *copier) createSnapshot(ctx context.Context, repl *pgconn.PgConn) (snapshotPoint, error) {
	slot := fmt.Sprintf("%s_copy_%d_%d", c.cfg.slot, time.Now().UnixNano()%1e9, c.slotSeq.Add(1))
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
func (c *copier) checkSource(id pgsource.SourceIdentity, point snapshotPoint) error {
	if id.SystemID != c.src.SystemID || id.Database != c.src.Database {
		return &pgsource.UnsafeResumeError{Reason: fmt.Sprintf("a table copy connected to system %s database %q, but the pipeline streams system %s database %q",
			id.SystemID, id.Database, c.src.SystemID, c.src.Database)}
	}
	if uint64(point.lsn) < c.src.InitialLSN {
		return &pgsource.UnsafeResumeError{Reason: fmt.Sprintf("table snapshot at %s precedes the pipeline slot's start %s", point.lsn, schema.LSN(c.src.InitialLSN))}
	}
	return nil
}

// importSnapshot opens a connection in a repeatable-read transaction on
// the exported snapshot.
func (c *copier) importSnapshot(ctx context.Context, snapshot string) (*pgx.Conn, error) {
	conn, err := pgsource.Dial(ctx, c.pgcfg)
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
	rel         *schema.Relation
	reltuples   int64
	relpages    int64
	rowFilter   string // the publication's WHERE for the table, "" for none
	partitioned bool   // a partitioned root (relkind p), streamed through its root
}

// from is what a snapshot of the table reads: its own rows only (ONLY: an
// inheritance child, a TimescaleDB chunk say, is a table of its own whose
// changes pgoutput sends as the child's, so a parent's snapshot that read
// them put rows on the parent's topic no change of the parent ever
// updates or deletes), or a partitioned root's, held by its partitions
// (whose changes publish_via_partition_root sends as the root's; ONLY
// would read none).
func (info tableInfo) from() string {
	name := config.QualifiedName(info.rel.Schema, info.rel.Table)
	if info.partitioned {
		return name
	}
	return "ONLY " + name
}

// describeTable reads the table named name ("schema.table", as the
// offsets and phases name tables) as of conn's snapshot, as publication
// pub streams it: the columns pgoutput sends, and its row filter. Schema
// and table names may themselves hold dots, so the name is never split:
// the table is found by oid (the one discovery saw) when that still
// carries the name, else by the joined name.
func describeTable(ctx context.Context, conn *pgx.Conn, name string, oid uint32, pub string, keys record.KeyRule) (tableInfo, error) {
	var info tableInfo
	rel := &schema.Relation{ReplicaIdentity: 'd'}
	var ident string
	// By oid first, an index lookup; by the joined name only when the oid
	// no longer carries it (that scans pg_class: 35 ms a copy at 5,000
	// tables).
	found := 0
	for _, where := range []string{"AND c.oid = $2", "ORDER BY c.oid = $2 DESC"} {
		rows, err := conn.Query(ctx, `SELECT c.oid, n.nspname, c.relname, greatest(`+pgsource.EstimatedRowsSQL+`, 0)::bigint, c.relpages, c.relreplident::text, c.relkind = 'p'
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relkind IN ('r', 'p') AND n.nspname || '.' || c.relname = $1 `+where, name, oid)
		if err != nil {
			return info, fmt.Errorf("describe %s: %w", name, err)
		}
		for rows.Next() {
			found++
			if found > 1 {
				// Two tables join to the same name ("a.b"."c" and "a"."b.c"):
				// the oid discovery saw decides, and it sorted first.
				if rel.OID == oid {
					continue
				}
				rows.Close()
				return info, &CopyError{permanent: true, Err: fmt.Errorf("two tables are named %s (schema and table names that hold dots); rename one", name)}
			}
			if err := rows.Scan(&rel.OID, &rel.Schema, &rel.Table, &info.reltuples, &info.relpages, &ident, &info.partitioned); err != nil {
				rows.Close()
				return info, fmt.Errorf("describe %s: %w", name, err)
			}
		}
		if err := rows.Err(); err != nil {
			return info, fmt.Errorf("describe %s: %w", name, err)
		}
		if found > 0 {
			break
		}
	}
	if found == 0 {
		return info, &CopyError{permanent: true, Err: fmt.Errorf("table %s does not exist (dropped?); remove it from the publication, or recreate it and run mooncdc resnapshot", name)}
	}
	if ident != "" {
		rel.ReplicaIdentity = ident[0]
	}
	pc, err := pgsource.PublishedColumns(ctx, conn, pub, rel.Schema, rel.Table)
	if err != nil {
		return info, fmt.Errorf("describe %s: %w", name, err)
	}
	info.rowFilter = pc.RowFilter
	// Virtual generated columns (Postgres 18) are never published.
	rows, err := conn.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, a.attgenerated <> ''
		FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated <> 'v'
		ORDER BY a.attnum`, rel.OID)
	if err != nil {
		return info, fmt.Errorf("describe columns of %s: %w", name, err)
	}
	for rows.Next() {
		var col schema.Column
		var typ uint32
		var generated bool
		if err := rows.Scan(&col.Name, &typ, &col.TypeMod, &generated); err != nil {
			return info, err
		}
		if !pc.Has(col.Name, generated) {
			continue
		}
		col.TypeOID = typ
		rel.Columns = append(rel.Columns, col)
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("describe columns of %s: %w", name, err)
	}
	keyNames, err := emit.KeyColumns(ctx, conn, keys, rel)
	if err != nil {
		return info, fmt.Errorf("look up the key of %s: %w", name, err)
	}
	record.SetKey(rel, keyNames)
	if rel, err = pgsource.CompleteRelation(ctx, conn, rel, pgsource.TypeCache{}); err != nil {
		return info, err
	}
	info.rel = rel
	return info, nil
}

// settle waits, for a table that was streaming until a resnapshot, until
// the main worker's records of it up to the flip are acknowledged, so that
// the read of live keys sees them (a row inserted then deleted around the
// flip would otherwise escape both the read and the tombstones).
func (c *copier) settle(ctx context.Context, ts *phases.State) error {
	if ts.SettleAt == 0 {
		return nil
	}
	main := c.main
	deadline := time.Now().Add(time.Minute)
	for main != nil && main.Durable() < ts.SettleAt {
		if time.Now().After(deadline) {
			c.log.Warn("the main worker's records are not acknowledged after a minute; reading the topic's keys anyway",
				zap.String("table", ts.Table.Table), zap.Stringer("lsn", ts.SettleAt))
			return nil
		}
		if !fault.Sleep(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}

// CopyError marks a copy failure that retrying cannot fix.
type CopyError struct {
	permanent bool
	Err       error
}

func (e *CopyError) Error() string { return e.Err.Error() }
func (e *CopyError) Unwrap() error { return e.Err }
