package watermark

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// TestPostgresFactsTheArgumentRestsOn checks on a real server the facts of
// docs/incremental-snapshots.md that the pure tests take as given. The
// primary has a synchronous standby that never answers
// (synchronous_standby_names = 'nobody'), so a commit waits in SyncRep
// for as long as a test wants: written and streamable, not visible.
// Sessions that only set things up commit with synchronous_commit =
// local. One cluster (and one hot standby) for all cases.
func TestPostgresFactsTheArgumentRestsOn(t *testing.T) {
	c := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"synchronous_standby_names": "nobody", "max_prepared_transactions": "4"}
	})
	standby := pgtest.NewStandby(t, c, "facts_standby", map[string]string{"max_prepared_transactions": "4"})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	f := &facts{t: t, c: c, ctx: ctx}
	f.obs = f.conn(true)
	f.exec(f.obs, `CREATE TABLE f (id int PRIMARY KEY, v int)`)
	f.exec(f.obs, `INSERT INTO f VALUES (1, 0), (2, 0)`)
	f.exec(f.obs, `SELECT pg_create_logical_replication_slot('facts', 'test_decoding')`)

	t.Cleanup(func() {
		// A failed case may leave a commit waiting for the standby.
		f.obs.Exec(context.Background(), `SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`)
	})
	t.Run("F7 a hot standby's snapshot lists no running transaction", func(t *testing.T) { f.standbySnapshot(t, standby) })
	t.Run("a commit waiting for a standby is visible there first once replayed", func(t *testing.T) { f.visibleOnTheStandbyFirst(t, standby) })
	t.Run("F6 and F1 a commit is streamed before it is visible", func(t *testing.T) { f.streamedBeforeVisible(t) })
	t.Run("a prepared transaction is streamed at COMMIT PREPARED under its own xid", func(t *testing.T) { f.prepared(t) })
	t.Run("the slot's exported snapshot waits for commits before its consistent point", func(t *testing.T) { f.exportedSnapshot(t) })
}

type facts struct {
	t   *testing.T
	c   *pgtest.Cluster
	ctx context.Context
	obs *pgx.Conn // an observer: synchronous_commit = local
}

// conn opens a session; local: its commits do not wait for the standby.
func (f *facts) conn(local bool) *pgx.Conn {
	f.t.Helper()
	conn, err := f.c.Connect(f.ctx, "postgres")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { conn.Close(context.Background()) })
	if local {
		f.exec(conn, `SET synchronous_commit = local`)
	}
	return conn
}

func (f *facts) exec(conn *pgx.Conn, sql string, args ...any) {
	f.t.Helper()
	if _, err := conn.Exec(f.ctx, sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

func (f *facts) one(conn *pgx.Conn, dst any, sql string, args ...any) {
	f.t.Helper()
	if err := conn.QueryRow(f.ctx, sql, args...).Scan(dst); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// xid assigns the open transaction of conn an xid and returns it.
func (f *facts) xid(tx pgx.Tx) uint64 {
	f.t.Helper()
	var x uint64
	if err := tx.QueryRow(f.ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&x); err != nil {
		f.t.Fatal(err)
	}
	return x
}

// waitFor polls until the backend pid waits on the wait event.
func (f *facts) waitFor(pid uint32, event string) {
	f.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		f.one(f.obs, &n, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event = $2`, int(pid), event)
		if n == 1 {
			return
		}
	}
	f.t.Fatalf("backend %d never waited on %s", pid, event)
}

// committing commits tx in the background (it waits in SyncRep) and
// returns a channel with Commit's error.
func (f *facts) committing(tx pgx.Tx, pid uint32) chan error {
	f.t.Helper()
	done := make(chan error, 1)
	go func() { done <- tx.Commit(f.ctx) }()
	f.waitFor(pid, "SyncRep")
	return done
}

// release cancels pid's wait for the standby: the transaction, committed
// locally, becomes visible.
func (f *facts) release(pid uint32, done chan error) {
	f.t.Helper()
	f.exec(f.obs, `SELECT pg_cancel_backend($1)`, int(pid))
	select {
	case err := <-done:
		if err != nil {
			f.t.Fatalf("the commit after its SyncRep wait was cancelled: %v", err)
		}
	case <-time.After(20 * time.Second):
		f.t.Fatal("the commit does not return after its SyncRep wait was cancelled")
	}
}

// streamed returns the LSNs of xid's BEGIN and COMMIT in the facts slot's
// stream (peeked, not consumed), or zero.
func (f *facts) streamed(xid uint64) (begin, commit pglogrepl.LSN) {
	f.t.Helper()
	rows, err := f.obs.Query(f.ctx, `SELECT lsn::text, data FROM pg_logical_slot_peek_changes('facts', NULL, NULL)`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var lsn, data string
		if err := rows.Scan(&lsn, &data); err != nil {
			f.t.Fatal(err)
		}
		l, err := pglogrepl.ParseLSN(lsn)
		if err != nil {
			f.t.Fatal(err)
		}
		switch data {
		case fmt.Sprintf("BEGIN %d", xid):
			begin = l
		case fmt.Sprintf("COMMIT %d", xid):
			commit = l
		}
	}
	if err := rows.Err(); err != nil {
		f.t.Fatal(err)
	}
	return begin, commit
}

func (f *facts) snapshot(conn *pgx.Conn) Snapshot {
	f.t.Helper()
	var text string
	f.one(conn, &text, `SELECT pg_current_snapshot()::text`)
	s, err := ParseSnapshot(text)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// F7: on a hot standby pg_current_snapshot() leaves xip empty, so a
// transaction still running on the primary reads as visible there; the
// rows say otherwise, and InRecovery agrees with the rows.
func (f *facts) standbySnapshot(t *testing.T, standby *pgtest.Cluster) {
	open, err := f.conn(true).Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback(context.Background())
	if _, err := open.Exec(f.ctx, `INSERT INTO f VALUES (100, 100)`); err != nil {
		t.Fatal(err)
	}
	running := f.xid(open)
	f.exec(f.obs, `INSERT INTO f VALUES (101, 101)`) // a later xid completes: xmax passes running
	primary := f.snapshot(f.obs)
	if primary.Visible(running) {
		t.Fatalf("the primary's snapshot %s sees running transaction %d", primary, running)
	}
	var lsn string
	f.one(f.obs, &lsn, `SELECT pg_current_wal_lsn()::text`)

	sconn, err := standby.Connect(f.ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close(context.Background())
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var replayed bool
		if err := sconn.QueryRow(f.ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, lsn).Scan(&replayed); err != nil {
			t.Fatal(err)
		}
		if replayed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby does not replay up to %s", lsn)
		}
	}
	var text string
	var rows int
	var serverSays bool
	if err := sconn.QueryRow(f.ctx, `SELECT pg_current_snapshot()::text, (SELECT count(*) FROM f WHERE id = 100),
		pg_visible_in_snapshot($1::text::xid8, pg_current_snapshot())`, fmt.Sprint(running)).Scan(&text, &rows, &serverSays); err != nil {
		t.Fatal(err)
	}
	s, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("primary %s, standby %s, transaction %d running", primary, s, running)
	if rows != 0 {
		t.Fatalf("the standby shows the row of transaction %d, still running", running)
	}
	if len(s.Xip) != 0 || !serverSays || !s.Visible(running) {
		t.Fatalf("the standby's snapshot %s (pg_visible_in_snapshot: %v) no longer hides running transaction %d: F7 is out of date", s, serverSays, running)
	}
	if s.InRecovery().Visible(running) {
		t.Fatalf("InRecovery() of %s sees running transaction %d", s, running)
	}
}

// Visibility grows per server, not across servers (docs: "The floor"):
// a commit that waits for a synchronous standby is invisible on the
// primary (F6) while a standby that replayed its record shows it. And
// once the standby's pg_last_wal_replay_lsn() is past the end of the
// commit record, a snapshot it takes afterwards has the xid below its
// xmax and sees the row (S1-S3: the redo removes the xid from
// KnownAssignedXids and advances latestCompletedXid before the replay
// position moves past the record): what the floor on a standby rests on.
func (f *facts) visibleOnTheStandbyFirst(t *testing.T, standby *pgtest.Cluster) {
	c := f.conn(false)
	tx, err := c.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `INSERT INTO f VALUES (150, 150)`); err != nil {
		t.Fatal(err)
	}
	x := f.xid(tx)
	done := f.committing(tx, c.PgConn().PID())
	defer f.release(c.PgConn().PID(), done)
	_, commit := f.streamed(x)
	if commit == 0 {
		t.Fatalf("transaction %d, waiting in SyncRep, is not in the stream", x)
	}
	sconn, err := standby.Connect(f.ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close(context.Background())
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var replayed bool
		if err := sconn.QueryRow(f.ctx, `SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn`, commit.String()).Scan(&replayed); err != nil {
			t.Fatal(err)
		}
		if replayed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby does not replay up to %s", commit)
		}
	}
	// A statement of its own: its snapshot is taken after the replay
	// position was seen past the commit.
	var text string
	var rows int
	if err := sconn.QueryRow(f.ctx, `SELECT pg_current_snapshot()::text, (SELECT count(*) FROM f WHERE id = 150)`).Scan(&text, &rows); err != nil {
		t.Fatal(err)
	}
	s, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	var primaryRows int
	f.one(f.obs, &primaryRows, `SELECT count(*) FROM f WHERE id = 150`)
	primary := f.snapshot(f.obs)
	t.Logf("transaction %d (commit record ends at %s) waits in SyncRep: primary %s (%d rows), standby %s (%d rows)", x, commit, primary, primaryRows, s, rows)
	if primaryRows != 0 || primary.Visible(x) {
		t.Fatalf("the primary sees transaction %d, still waiting for its standby", x)
	}
	if rows != 1 || x >= s.Xmax {
		t.Fatalf("the standby, replayed past %s, shows %d rows of transaction %d under %s: want its row, and the xid below xmax", commit, rows, x, s)
	}
}

// F6, F1 and F2: a commit waiting for the synchronous standby is in the
// stream, not visible, and indistinguishable from a running transaction;
// a second writer of its row waits for it to be visible, and is streamed
// after it.
func (f *facts) streamedBeforeVisible(t *testing.T) {
	c1 := f.conn(false)
	t1, err := c1.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := t1.Exec(f.ctx, `UPDATE f SET v = 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	x1 := f.xid(t1)
	done1 := f.committing(t1, c1.PgConn().PID())

	_, commit1 := f.streamed(x1)
	if commit1 == 0 {
		t.Fatalf("transaction %d, waiting in SyncRep, is not in the stream", x1)
	}
	var v int
	var status, high string
	f.one(f.obs, &v, `SELECT v FROM f WHERE id = 1`)
	s := f.snapshot(f.obs)
	f.one(f.obs, &status, `SELECT pg_xact_status($1::text::xid8)`, fmt.Sprint(x1))
	f.one(f.obs, &high, `SELECT pg_current_wal_insert_lsn()::text`)
	h, err := pglogrepl.ParseLSN(high)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("transaction %d streamed (COMMIT at %s), snapshot %s, status %q, insert LSN %s", x1, commit1, s, status, h)
	if v != 0 || s.Visible(x1) || status != "in progress" {
		t.Fatalf("transaction %d waiting in SyncRep: v = %d, visible to %s: %v, status %q; want 0, false, in progress", x1, v, s, s.Visible(x1), status)
	}
	// test_decoding's COMMIT row is at the end of the commit record
	// (logical.c, commit_cb_wrapper: write_location = txn->end_lsn).
	if h < commit1 {
		t.Fatalf("the insert LSN %s read after the commit is before the end of its record %s", h, commit1)
	}

	// F2: a second writer of the row waits for the first's lock.
	c2 := f.conn(false)
	t2, err := c2.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		var nv int
		if err := t2.QueryRow(f.ctx, `UPDATE f SET v = v + 10 WHERE id = 1 RETURNING v`).Scan(&nv); err != nil {
			nv = -1
		}
		got <- nv
	}()
	f.waitFor(c2.PgConn().PID(), "transactionid")
	select {
	case nv := <-got:
		t.Fatalf("the second writer went on (v = %d) while the first was not visible", nv)
	case <-time.After(200 * time.Millisecond):
	}
	f.release(c1.PgConn().PID(), done1)
	if nv := <-got; nv != 11 {
		t.Fatalf("the second writer wrote v = %d, want 11 (the first's 1, plus 10)", nv)
	}
	x2 := f.xid(t2)
	f.release(c2.PgConn().PID(), f.committing(t2, c2.PgConn().PID()))
	// Its first record (test_decoding's BEGIN row is at the
	// transaction's first record) is written after the first's commit
	// record ends, so its commit record and its place in the stream come
	// after the first's.
	begin2, _ := f.streamed(x2)
	if begin2 < commit1 {
		t.Fatalf("the second writer %d (first record at %s) wrote before the first's commit record ended (%s)", x2, begin2, commit1)
	}
}

// Two-phase commit, as mooncdc streams it (pgoutput without two_phase):
// the prepared transaction is running for every snapshot (its dummy proc
// is in the proc array), is not in the stream until
// COMMIT PREPARED, then is streamed under its own xid before it is
// visible (COMMIT PREPARED waits for the standby like a commit), and keeps
// its row locks until it is visible (F1, F2, F3).
func (f *facts) prepared(t *testing.T) {
	p := f.conn(true) // PREPARE TRANSACTION waits for the standby too
	tx, err := p.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `UPDATE f SET v = 50 WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	x := f.xid(tx)
	if _, err := tx.Exec(f.ctx, `PREPARE TRANSACTION 'facts_2pc'`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.obs.Exec(context.Background(), `ROLLBACK PREPARED 'facts_2pc'`) }) // if the case fails before COMMIT PREPARED
	// Running: in xip, or at or above xmax when no later xid has
	// completed (seen: "730:730:" for prepared 730).
	if s := f.snapshot(f.obs); s.Visible(x) {
		t.Fatalf("prepared transaction %d is visible to %s", x, s)
	}
	if b, c := f.streamed(x); b != 0 || c != 0 {
		t.Fatalf("prepared transaction %d is in the stream before COMMIT PREPARED", x)
	}
	cp := f.conn(false)
	done := make(chan error, 1)
	go func() {
		_, err := cp.Exec(f.ctx, `COMMIT PREPARED 'facts_2pc'`)
		done <- err
	}()
	f.waitFor(cp.PgConn().PID(), "SyncRep")
	_, commit := f.streamed(x)
	var v int
	f.one(f.obs, &v, `SELECT v FROM f WHERE id = 2`)
	s := f.snapshot(f.obs)
	t.Logf("prepared transaction %d streamed at COMMIT PREPARED (COMMIT at %s), snapshot %s, v = %d", x, commit, s, v)
	if commit == 0 || s.Visible(x) || v != 0 {
		t.Fatalf("COMMIT PREPARED of %d waiting in SyncRep: streamed at %s, visible to %s: %v, v = %d; want streamed, invisible, 0", x, commit, s, s.Visible(x), v)
	}
	w := f.conn(false)
	wtx, err := w.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan int, 1)
	go func() {
		var nv int
		if err := wtx.QueryRow(f.ctx, `UPDATE f SET v = v + 1 WHERE id = 2 RETURNING v`).Scan(&nv); err != nil {
			nv = -1
		}
		got <- nv
	}()
	f.waitFor(w.PgConn().PID(), "transactionid")
	f.release(cp.PgConn().PID(), done)
	if nv := <-got; nv != 51 {
		t.Fatalf("the writer after the prepared transaction wrote v = %d, want 51", nv)
	}
	f.release(w.PgConn().PID(), f.committing(wtx, w.PgConn().PID()))
}

// The slot's snapshot: a transaction commits between the snapshot
// builder's last two stages (so its commit record precedes the consistent
// point) and waits in SyncRep. CREATE_REPLICATION_SLOT … EXPORT_SNAPSHOT
// waits for it to be visible before it exports; without an exported
// snapshot the slot is made at once, the transaction still invisible and
// never in that slot's stream.
func (f *facts) exportedSnapshot(t *testing.T) {
	// Export: the replication protocol's CREATE_REPLICATION_SLOT.
	rconn, err := pgconn.Connect(f.ctx, f.c.ReplicationURL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer rconn.Close(context.Background())
	type made struct {
		res pglogrepl.CreateReplicationSlotResult
		err error
	}
	exported := make(chan made, 1)
	wpid, done, x := f.builderSchedule(t, "fx", func() uint32 {
		go func() {
			res, err := pglogrepl.CreateReplicationSlot(f.ctx, rconn, "fx", "test_decoding",
				pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
			exported <- made{res, err}
		}()
		return f.walsender("fx")
	})
	select {
	case m := <-exported:
		t.Fatalf("the slot was made (%+v, %v) while transaction %d, before its consistent point, waited in SyncRep", m.res, m.err, x)
	case <-time.After(time.Second):
	}
	f.waitFor(f.walsender("fx"), "transactionid")
	f.release(wpid, done)
	var m made
	select {
	case m = <-exported:
	case <-time.After(20 * time.Second):
		t.Fatal("the slot is not made after the transaction became visible")
	}
	if m.err != nil {
		t.Fatal(m.err)
	}
	cp, err := pglogrepl.ParseLSN(m.res.ConsistentPoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, commit := f.streamed(x); commit == 0 || commit >= cp {
		t.Fatalf("transaction %d's commit (%s) is not before the consistent point %s: the schedule did not happen", x, commit, cp)
	}
	imp := f.conn(true)
	tx, err := imp.BeginTx(f.ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(f.ctx, `SET TRANSACTION SNAPSHOT '`+m.res.SnapshotName+`'`); err != nil {
		t.Fatal(err)
	}
	var text string
	var rows int
	if err := tx.QueryRow(f.ctx, `SELECT pg_current_snapshot()::text, (SELECT count(*) FROM f WHERE id = 200)`).Scan(&text, &rows); err != nil {
		t.Fatal(err)
	}
	floor, err := ParseSnapshot(text)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exported snapshot %s at consistent point %s sees transaction %d", floor, cp, x)
	if !floor.Visible(x) || rows != 1 {
		t.Fatalf("the exported snapshot %s (rows %d) does not see transaction %d, committed before its consistent point %s", floor, rows, x, cp)
	}
	if !f.snapshot(f.obs).SeesAll(floor) {
		t.Fatalf("a snapshot taken after the export does not see all the exported snapshot %s sees", floor)
	}
	tx.Rollback(f.ctx)
	rconn.Close(f.ctx)

	// No export: pg_create_logical_replication_slot().
	plain := make(chan string, 1)
	pconn := f.conn(true)
	wpid, done, x = f.builderSchedule(t, "fy", func() uint32 {
		go func() {
			var lsn string
			if err := pconn.QueryRow(f.ctx, `SELECT lsn::text FROM pg_create_logical_replication_slot('fy', 'test_decoding')`).Scan(&lsn); err != nil {
				lsn = "error: " + err.Error()
			}
			plain <- lsn
		}()
		return pconn.PgConn().PID()
	})
	var lsn string
	select {
	case lsn = <-plain:
	case <-time.After(20 * time.Second):
		t.Fatal("pg_create_logical_replication_slot does not return")
	}
	if strings.HasPrefix(lsn, "error") {
		t.Fatal(lsn)
	}
	_, commit := f.streamed(x)
	var consistent string
	f.one(f.obs, &consistent, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'fy'`)
	cp, err = pglogrepl.ParseLSN(consistent)
	if err != nil {
		t.Fatal(err)
	}
	s := f.snapshot(f.obs)
	t.Logf("slot fy made at %s while transaction %d (COMMIT at %s) waits; snapshot now %s", cp, x, commit, s)
	if commit == 0 || commit >= cp || s.Visible(x) {
		t.Fatalf("want transaction %d committed before the consistent point %s (COMMIT at %s) and invisible after the slot was made (%s)", x, cp, commit, s)
	}
	var n int
	f.one(f.obs, &n, `SELECT count(*) FROM pg_logical_slot_peek_changes('fy', NULL, NULL) WHERE data = $1`, fmt.Sprintf("COMMIT %d", x))
	if n != 0 {
		t.Fatalf("slot fy streams transaction %d, committed before its consistent point", x)
	}
	f.release(wpid, done)
	f.exec(f.obs, `SELECT pg_drop_replication_slot('fy')`)
}

// walsender returns the pid of the backend making slot.
func (f *facts) walsender(slot string) uint32 {
	f.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var pid int
		err := f.obs.QueryRow(f.ctx, `SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, slot).Scan(&pid)
		if err == nil {
			return uint32(pid)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			f.t.Fatal(err)
		}
	}
	f.t.Fatalf("no backend makes slot %s", slot)
	return 0
}

// builderSchedule runs the schedule around a slot's creation (start
// creates it in the background and returns the pid of the backend that
// makes it): a transaction L1 holds an xid as the builder starts, so it
// waits for L1; L2 takes an xid; L1 ends, the builder reaches its full
// snapshot and waits for L2; W writes row 200+ and commits, waiting in
// SyncRep; L2 ends, and the builder finds its consistent point after W's
// commit record. It returns W's pid, Commit channel and xid.
func (f *facts) builderSchedule(t *testing.T, slot string, start func() uint32) (uint32, chan error, uint64) {
	t.Helper()
	l1, err := f.conn(true).Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	x1 := f.xid(l1)
	maker := start()
	f.waitFor(maker, "transactionid")
	l2, err := f.conn(true).Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	x2 := f.xid(l2)
	if err := l1.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	// The builder now waits for L2 (its full snapshot's stage).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		f.one(f.obs, &n, `SELECT count(*) FROM pg_locks WHERE pid = $1 AND locktype = 'transactionid' AND NOT granted AND transactionid::text = $2`, int(maker), fmt.Sprint(x2))
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the builder of slot %s does not wait for transaction %d (after %d)", slot, x2, x1)
		}
	}
	wc := f.conn(false)
	w, err := wc.Begin(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(f.ctx, `INSERT INTO f SELECT coalesce(max(id), 199) + 1, 0 FROM f WHERE id >= 200`); err != nil {
		t.Fatal(err)
	}
	x := f.xid(w)
	done := f.committing(w, wc.PgConn().PID())
	if err := l2.Rollback(f.ctx); err != nil {
		t.Fatal(err)
	}
	return wc.PgConn().PID(), done, x
}
