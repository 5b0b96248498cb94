//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The three tables: big is still being copied (in chunks) when the load
// starts, the others are copied quickly. Every row has a version v: the
// generator's global event number of the statement that wrote it.
var tables = []tableSpec{
	{name: "big", seed: 200000, weight: 40},
	{name: "mid", seed: 20000, weight: 30},
	{name: "small", seed: 2000, weight: 30},
}

type tableSpec struct {
	name   string
	seed   int64 // rows [0,seed) with v = 0 before mooncdc starts
	weight int   // share of the load's statements
}

const hotKeys = 50 // ids [0,hotKeys) of each table take a large share of the load

func qualified(table string) string { return "public." + table }

// event is one committed write of one row: op c (insert), u (update) or d
// (delete); g is its global number, in commit order (one connection writes
// everything, and g grows statement by statement); v is the row's version
// after an insert or update (= g), and the deleted row's version for a
// delete (REPLICA IDENTITY FULL puts it in the delete's "before").
type event struct {
	g  int64
	op byte
	v  int64
}

func (ev event) String() string { return fmt.Sprintf("%c%d@%d", ev.op, ev.v, ev.g) }

// tableLog is the truth for one table: per id, its events in commit order,
// and the live rows.
type tableLog struct {
	spec   tableSpec
	events map[int64][]event
	live   map[int64]int64 // id → v
	ids    []int64         // live ids, for a random pick
	pos    map[int64]int   // id → index in ids
	nextID int64
}

func newTableLog(s tableSpec) *tableLog {
	l := &tableLog{spec: s, events: make(map[int64][]event, s.seed+10000), live: make(map[int64]int64, s.seed+10000),
		pos: make(map[int64]int, s.seed+10000), nextID: s.seed}
	for id := int64(0); id < s.seed; id++ {
		l.events[id] = []event{{g: 0, op: 'c', v: 0}}
		l.setLive(id, 0)
	}
	return l
}

func (l *tableLog) setLive(id, v int64) {
	if _, ok := l.live[id]; !ok {
		l.pos[id] = len(l.ids)
		l.ids = append(l.ids, id)
	}
	l.live[id] = v
}

func (l *tableLog) setDeleted(id int64) {
	i, ok := l.pos[id]
	if !ok {
		return
	}
	last := l.ids[len(l.ids)-1]
	l.ids[i] = last
	l.pos[last] = i
	l.ids = l.ids[:len(l.ids)-1]
	delete(l.pos, id)
	delete(l.live, id)
}

// generator writes random transactions of 1–4 statements over the three
// tables at a fixed rate on one connection, surviving Postgres restarts:
// a transaction whose outcome is unknown (the connection broke, maybe in
// COMMIT) is looked up with txid_status after reconnecting.
type generator struct {
	url   string
	tps   int
	rng   *rand.Rand
	specs []tableSpec // tables, or the scenario's (a bigger big table)
	// updateKeys > 0: every transaction is one UPDATE of one of the big
	// table's ids [0, updateKeys) (the pause scenario).
	updateKeys int64
	logs       []*tableLog

	mu      sync.Mutex // guards logs after start, and the counters
	g       int64
	lastG   int64 // the newest g committed
	txs     int
	ops     map[byte]int
	errs    int
	lastErr error
	stop    context.CancelFunc
	done    chan struct{}
	failure error // a harness failure: the generator stopped
}

func newGenerator(url string, tps int, seed uint64, specs []tableSpec) *generator {
	gen := &generator{url: url, tps: tps, rng: rand.New(rand.NewPCG(seed, 0x5eed)), specs: specs, ops: map[byte]int{}}
	for _, s := range specs {
		gen.logs = append(gen.logs, newTableLog(s))
	}
	return gen
}

// setup creates and seeds the tables.
func (gen *generator) setup(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, gen.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, s := range gen.specs {
		sql := fmt.Sprintf(`CREATE TABLE %[1]s (id bigint PRIMARY KEY, v bigint NOT NULL, pad text);
			ALTER TABLE %[1]s REPLICA IDENTITY FULL;
			INSERT INTO %[1]s (id, v, pad) SELECT g, 0, md5(g::text) || md5((g+1)::text) FROM generate_series(0, %[2]d) g;
			ANALYZE %[1]s;`, s.name, s.seed-1)
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("create %s: %w", s.name, err)
		}
	}
	return nil
}

// start runs the load until stopLoad.
func (gen *generator) start() {
	ctx, cancel := context.WithCancel(context.Background())
	gen.stop, gen.done = cancel, make(chan struct{})
	go func() {
		defer close(gen.done)
		gen.loop(ctx)
	}()
}

// stopLoad stops the load and waits for the last transaction to be settled.
func (gen *generator) stopLoad() error {
	gen.stop()
	<-gen.done
	return gen.failure
}

type stmt struct {
	table int
	id    int64
	ev    event
}

func (gen *generator) loop(ctx context.Context) {
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	tick := time.NewTicker(time.Second / time.Duration(gen.tps))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if conn == nil {
			c, err := pgx.Connect(ctx, gen.url)
			if err != nil {
				gen.noteErr(err)
				sleepCtx(ctx, 100*time.Millisecond)
				continue
			}
			conn = c
		}
		var stmts []stmt
		if gen.updateKeys > 0 {
			stmts = gen.planUpdate()
		} else {
			stmts = gen.plan(1 + gen.rng.IntN(4))
		}
		if err := gen.apply(ctx, &conn, stmts); err != nil {
			gen.failure = err
			return
		}
	}
}

// sentinel writes one last transaction, an update of a live row in every
// table, and returns pg_current_wal_insert_lsn() taken inside it after the
// updates: once the slot's confirmed position reaches it, mooncdc has made
// everything up to and including this transaction durable.
func (gen *generator) sentinel(ctx context.Context) (string, error) {
	conn, err := pgx.Connect(ctx, gen.url)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var stmts []stmt
	for ti, l := range gen.logs {
		id := l.ids[gen.rng.IntN(len(l.ids))]
		gen.g++
		stmts = append(stmts, stmt{ti, id, event{g: gen.g, op: 'u', v: gen.g}})
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	for _, s := range stmts {
		if err := gen.exec(ctx, tx, s); err != nil {
			return "", err
		}
	}
	var lsn string
	if err := tx.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&lsn); err != nil {
		return "", err
	}
	if err := tx.Commit(ctx); err != nil {
		return "", fmt.Errorf("commit the sentinel transaction: %w", err)
	}
	gen.commit(stmts)
	return lsn, nil
}

// plan picks n statements. A key is picked among the hot ids, the live ids
// or a new id; a key that is not live is inserted, a live one updated (3 in
// 4) or deleted. Statements of one transaction may touch the same key.
func (gen *generator) plan(n int) []stmt {
	type key struct {
		t  int
		id int64
	}
	overlay := map[key]*int64{} // this transaction's view: nil = deleted
	var out []stmt
	for range n {
		ti := gen.pickTable()
		l := gen.logs[ti]
		var id int64
		switch r := gen.rng.IntN(10); {
		case r < 4:
			id = int64(gen.rng.IntN(hotKeys))
		case r < 8 && len(l.ids) > 0:
			id = l.ids[gen.rng.IntN(len(l.ids))]
		default:
			id = l.nextID
			l.nextID++
		}
		k := key{ti, id}
		var cur *int64
		if v, ok := overlay[k]; ok {
			cur = v
		} else if v, ok := l.live[id]; ok {
			cur = &v
		}
		gen.g++
		var ev event
		switch {
		case cur == nil:
			ev = event{g: gen.g, op: 'c', v: gen.g}
		case gen.rng.IntN(4) < 3 || len(l.ids) < 100:
			ev = event{g: gen.g, op: 'u', v: gen.g}
		default:
			ev = event{g: gen.g, op: 'd', v: *cur}
		}
		if ev.op == 'd' {
			overlay[k] = nil
		} else {
			v := ev.v
			overlay[k] = &v
		}
		out = append(out, stmt{ti, id, ev})
	}
	return out
}

// planUpdate is one UPDATE of one of the big table's ids [0, updateKeys).
func (gen *generator) planUpdate() []stmt {
	gen.g++
	return []stmt{{0, gen.rng.Int64N(gen.updateKeys), event{g: gen.g, op: 'u', v: gen.g}}}
}

func (gen *generator) pickTable() int {
	total := 0
	for _, s := range gen.specs {
		total += s.weight
	}
	r := gen.rng.IntN(total)
	for i, s := range gen.specs {
		if r < s.weight {
			return i
		}
		r -= s.weight
	}
	return len(gen.specs) - 1
}

func (gen *generator) exec(ctx context.Context, tx pgx.Tx, s stmt) error {
	name := gen.logs[s.table].spec.name
	var sql string
	var args []any
	switch s.ev.op {
	case 'c':
		sql, args = "INSERT INTO "+name+" (id, v, pad) VALUES ($1, $2, $3)", []any{s.id, s.ev.v, fmt.Sprintf("row %d version %d", s.id, s.ev.v)}
	case 'u':
		sql, args = "UPDATE "+name+" SET v = $2, pad = $3 WHERE id = $1", []any{s.id, s.ev.v, fmt.Sprintf("row %d version %d", s.id, s.ev.v)}
	case 'd':
		sql, args = "DELETE FROM "+name+" WHERE id = $1", []any{s.id}
	}
	tag, err := tx.Exec(ctx, sql, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("generator bug: %s id %d (%v) affected %d rows", name, s.id, s.ev, tag.RowsAffected())
	}
	return nil
}

// apply runs one transaction and records it if it committed. It returns
// an error only for a harness failure.
func (gen *generator) apply(ctx context.Context, connp **pgx.Conn, stmts []stmt) error {
	conn := *connp
	var xid int64
	err := func() error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if err := tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&xid); err != nil {
			return err
		}
		for _, s := range stmts {
			if err := gen.exec(ctx, tx, s); err != nil {
				return err
			}
		}
		return tx.Commit(ctx)
	}()
	if err == nil {
		gen.commit(stmts)
		return nil
	}
	if strings.HasPrefix(err.Error(), "generator bug") {
		return err
	}
	if ctx.Err() == nil {
		gen.noteErr(err) // not the load being stopped
	}
	conn.Close(context.Background())
	*connp = nil
	if xid == 0 {
		return nil // no xid yet: nothing was written
	}
	// The outcome is unknown (the error may have come after the server
	// committed): ask, on a new connection, with its own deadline since
	// the load may be stopping.
	rctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	asked := time.Now()
	for {
		status, err := txStatus(rctx, gen.url, xid)
		switch {
		case err != nil:
			if rctx.Err() != nil {
				return fmt.Errorf("cannot learn the outcome of transaction %d: %w", xid, err)
			}
			sleepCtx(rctx, 200*time.Millisecond)
			continue
		case status == "committed":
			gen.commit(stmts)
			return nil
		case status == "in progress":
			// The session that ran it may outlive its broken client
			// connection (idle in transaction): end it, so the outcome
			// becomes known (aborted) instead of waiting forever.
			if time.Since(asked) > 5*time.Second {
				terminateXid(rctx, gen.url, xid)
			}
			sleepCtx(rctx, 100*time.Millisecond)
			continue
		default: // aborted, or null (never assigned)
			return nil
		}
	}
}

// terminateXid ends the backend whose transaction has id xid, if any.
func terminateXid(ctx context.Context, url string, xid int64) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, url)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	_, _ = conn.Exec(cctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_xid::text::bigint = $1 % 4294967296`, xid)
}

func txStatus(ctx context.Context, url string, xid int64) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, url)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var status *string
	if err := conn.QueryRow(cctx, `SELECT txid_status($1)`, xid).Scan(&status); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && strings.Contains(pgErr.Message, "is in the future") {
			// After a crash restart the xid was never WAL-logged: the
			// transaction wrote nothing durable, so it did not commit.
			return "aborted", nil
		}
		return "", err
	}
	if status == nil {
		return "", errors.New("txid_status is null")
	}
	return *status, nil
}

// commit records a committed transaction's statements.
func (gen *generator) commit(stmts []stmt) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	gen.txs++
	for _, s := range stmts {
		gen.lastG = max(gen.lastG, s.ev.g)
		l := gen.logs[s.table]
		l.events[s.id] = append(l.events[s.id], s.ev)
		if s.ev.op == 'd' {
			l.setDeleted(s.id)
		} else {
			l.setLive(s.id, s.ev.v)
		}
		gen.ops[s.ev.op]++
	}
}

// committed returns the newest global number of a committed write: a
// record with v above it was written later.
func (gen *generator) committed() int64 {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	return gen.lastG
}

func (gen *generator) noteErr(err error) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	gen.errs++
	gen.lastErr = err
}

func (gen *generator) stats() string {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	s := fmt.Sprintf("%d transactions, %d inserts, %d updates, %d deletes", gen.txs, gen.ops['c'], gen.ops['u'], gen.ops['d'])
	if gen.errs > 0 {
		s += fmt.Sprintf(", %d errors (last: %v)", gen.errs, gen.lastErr)
	}
	return s
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
