package ittest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// Env is one test's Postgres database and Kafka broker.
type Env struct {
	T     *testing.T
	PG    *Cluster
	Kafka string
	// Broker is the in-process broker at Kafka, for fault injection
	// (its Cluster's ControlKey); nil when the test brought its own (EnvOn).
	Broker *kafkatest.Broker
}

// Cluster is the Postgres cluster a test works on, seen from its database:
// the calls that name a database take "postgres" (and "") to mean the
// test's own, which on the package's shared cluster is a database made for
// the test (t_<n>) and on a private cluster is postgres itself. Stopping,
// restarting, closing or reconfiguring a shared cluster, or starting a
// standby of it, fails: a test that needs it uses NewPrivateEnv.
type Cluster struct {
	*pgtest.Cluster
	db     string
	shared bool
}

// DB is the name of the test's database.
func (c *Cluster) DB() string { return c.db }

func (c *Cluster) database(name string) string {
	if name == "" || name == "postgres" {
		return c.db
	}
	return name
}

// URL is pgtest.Cluster.URL with "postgres" meaning the test's database.
func (c *Cluster) URL(database string) string { return c.Cluster.URL(c.database(database)) }

// ReplicationURL is pgtest.Cluster.ReplicationURL with "postgres" meaning
// the test's database.
func (c *Cluster) ReplicationURL(database string) string {
	return c.Cluster.ReplicationURL(c.database(database))
}

// Connect is pgtest.Cluster.Connect with "postgres" meaning the test's
// database.
func (c *Cluster) Connect(ctx context.Context, database string) (*pgx.Conn, error) {
	return c.Cluster.Connect(ctx, c.database(database))
}

// Exec is pgtest.Cluster.Exec with "postgres" meaning the test's database.
func (c *Cluster) Exec(ctx context.Context, database, sql string, args ...any) error {
	return c.Cluster.Exec(ctx, c.database(database), sql, args...)
}

// MissingExtension is pgtest.Cluster.MissingExtension with "postgres"
// meaning the test's database.
func (c *Cluster) MissingExtension(ctx context.Context, database, name string) error {
	return c.Cluster.MissingExtension(ctx, c.database(database), name)
}

// Pgvector is pgtest.Cluster.Pgvector with "postgres" meaning the test's
// database.
func (c *Cluster) Pgvector(t testing.TB, db, sch string) (standin bool) {
	t.Helper()
	return c.Cluster.Pgvector(t, c.database(db), sch)
}

var errShared = errors.New("ittest: the package's shared cluster cannot be stopped, restarted or reconfigured by one test; use ittest.NewPrivateEnv")

// Stop stops a private cluster; on the shared one it fails.
func (c *Cluster) Stop(mode string) error {
	if c.shared {
		return errShared
	}
	return c.Cluster.Stop(mode)
}

// StartAgain starts a private cluster again; on the shared one it fails.
func (c *Cluster) StartAgain(ctx context.Context) error {
	if c.shared {
		return errShared
	}
	return c.Cluster.StartAgain(ctx)
}

// Restart restarts a private cluster; on the shared one it fails.
func (c *Cluster) Restart(ctx context.Context, mode string) error {
	if c.shared {
		return errShared
	}
	return c.Cluster.Restart(ctx, mode)
}

// EnableTLS turns TLS on for a private cluster; on the shared one it fails.
func (c *Cluster) EnableTLS(ctx context.Context, certPEM, keyPEM []byte) error {
	if c.shared {
		return errShared
	}
	return c.Cluster.EnableTLS(ctx, certPEM, keyPEM)
}

// Close closes a private cluster; on the shared one it fails (Main closes
// it after the package's last test).
func (c *Cluster) Close() error {
	if c.shared {
		return errShared
	}
	return c.Cluster.Close()
}

// StartStandby starts a standby of a private cluster; on the shared one it
// fails: the standby's slot and settings would be every test's.
func (c *Cluster) StartStandby(ctx context.Context, slot string, settings map[string]string) (*pgtest.Cluster, error) {
	if c.shared {
		return nil, errShared
	}
	return c.Cluster.StartStandby(ctx, slot, settings)
}

// sharedSettings size the package's cluster for the tests that run on it
// at once (go test -parallel, GOMAXPROCS by default): each test's
// pipelines hold a main slot and its walsender, a copy slot and a
// connection per copying table connection (snapshot.connections_per_table,
// workers), and catalog and query connections; a test that runs
// several pipelines (TestTypesMatchDebeziumsOwnTests: 10) multiplies that.
var sharedSettings = map[string]string{
	"max_connections":       "300",
	"max_replication_slots": "100",
	"max_wal_senders":       "100",
}

// The package's shared cluster, started by the first NewEnv and closed by
// Main after the last test.
var (
	mainCalled   atomic.Bool
	sharedOnce   sync.Once
	sharedPG     *pgtest.Cluster
	sharedErr    error
	sharedDBs    atomic.Int64
	parallelOnce sync.Map // *testing.T → true once NewEnv made it parallel
)

// Main runs the package's tests (m.Run) and then closes the shared
// cluster, if a test started it. Every package that calls NewEnv has
//
//	func TestMain(m *testing.M) { ittest.Main(m) }
//
// It calls os.Exit with m.Run's code.
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	if sharedPG != nil {
		if err := sharedPG.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// NewEnv gives the test a database of its own on the package's shared
// cluster and a broker of its own, and runs it in parallel with the other
// tests that do (go test -parallel, GOMAXPROCS by default): each such test
// only waits on its servers most of the time. A test that needs its
// pipelines' copies or incremental snapshots tuned says so with Tune (the
// settings are its pipelines' own). A test that changes a package-level
// setting must not run beside others: it uses NewSerialEnv.
// The test's cleanup drops its replication slots and its database.
//
// Under go test -short (make test-unit) NewEnv skips the test.
func NewEnv(t *testing.T) *Env {
	t.Helper()
	if _, again := parallelOnce.LoadOrStore(t, true); !again { // a test may make two envs
		t.Parallel()
	}
	return NewSerialEnv(t)
}

// NewSerialEnv is NewEnv for a test that must run alone: one that changes
// a package-level setting, which every pipeline of the other tests reads.
// No test needs it today: a setting a test changes is a pipeline's own
// (Tune, connector.Tuning), so that the test runs in parallel.
func NewSerialEnv(t *testing.T) *Env {
	t.Helper()
	pgtest.SkipIntegrationInShort(t)
	if !mainCalled.Load() {
		t.Fatal("ittest.NewEnv needs the package's TestMain to call ittest.Main(m), which closes the shared cluster")
	}
	sharedOnce.Do(func() {
		sharedPG, sharedErr = pgtest.Start(context.Background(), pgtest.Options{Settings: sharedSettings})
	})
	if sharedErr != nil {
		t.Fatalf("the package's shared cluster: %v", sharedErr)
	}
	db := fmt.Sprintf("t_%d", sharedDBs.Add(1))
	if err := sharedPG.CreateDatabase(t.Context(), db); err != nil {
		t.Fatalf("%v", err)
	}
	e := &Env{T: t, PG: &Cluster{Cluster: sharedPG, db: db, shared: true}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("end of the shared cluster's server log (all tests of the package) on port %d:\n%s", sharedPG.Port(), sharedPG.LogTail())
		}
		if err := dropDatabase(sharedPG, db); err != nil {
			t.Errorf("%v", err)
		}
		releaseNames(t)
	})
	e.Broker = kafkatest.New(t)
	e.Kafka = e.Broker.Addr()
	return e
}

// NewPrivateEnv gives the test a cluster of its own (started with opts, as
// pgtest.New) and a broker of its own, and runs it in parallel with the
// other tests. For a test that stops, restarts or reconfigures its server
// (ALTER SYSTEM, server options, TLS), makes cluster-wide objects (roles,
// databases), counts every slot of the server, or reads the database name
// postgres in its records.
func NewPrivateEnv(t *testing.T, opts ...func(*pgtest.Options)) *Env {
	t.Helper()
	if _, again := parallelOnce.LoadOrStore(t, true); !again {
		t.Parallel()
	}
	pg := pgtest.New(t, opts...)
	b := kafkatest.New(t)
	e := EnvOn(t, pg, b.Addr())
	e.Broker = b
	return e
}

// EnvOn is the Env of a cluster and a broker the test made itself.
func EnvOn(t *testing.T, pg *pgtest.Cluster, kafka string) *Env {
	return &Env{T: t, PG: &Cluster{Cluster: pg, db: "postgres"}, Kafka: kafka}
}

// dropDatabase drops the slots of a finished test's database (its
// pipelines are stopped by then: their cleanups ran first) and the
// database itself, so that no slot is left to be adopted by a later
// pipeline of the same name, and no WAL is held for it.
func dropDatabase(pg *pgtest.Cluster, db string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pg.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for {
		rows, err := conn.Query(ctx, `SELECT slot_name, active_pid FROM pg_replication_slots WHERE database = $1`, db)
		if err != nil {
			return fmt.Errorf("ittest: the slots of database %s: %w", db, err)
		}
		type slot struct {
			name string
			pid  *int32
		}
		slots, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (slot, error) {
			var s slot
			return s, r.Scan(&s.name, &s.pid)
		})
		if err != nil {
			return fmt.Errorf("ittest: the slots of database %s: %w", db, err)
		}
		if len(slots) == 0 {
			break
		}
		for _, s := range slots {
			// An active slot is freed once its walsender has ended; a drop
			// racing that ends with "is active", and the next round drops it.
			if s.pid != nil {
				_, err = conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, *s.pid)
			} else {
				_, err = conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s.name)
			}
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("ittest: drop slot %s of database %s: %w", s.name, db, err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("ittest: drop database %s: %w", db, err)
	}
	return nil
}

// Replication slot names are the cluster's, not a database's, and a
// pipeline's default slot is mooncdc_<name>: two tests of one package that
// name their pipelines alike would take each other's slot. Config claims
// the name for its test until the test's end; another test that asks for it
// meanwhile waits.
var names = struct {
	sync.Mutex
	cond    *sync.Cond
	holder  map[string]*testing.T
	waiting map[*testing.T]string
}{holder: map[string]*testing.T{}, waiting: map[*testing.T]string{}}

func init() { names.cond = sync.NewCond(&names.Mutex) }

// claimName waits until no other running test holds name, then holds it
// for t. Two tests waiting for each other's names fail with the cycle.
func claimName(t *testing.T, name string) {
	t.Helper()
	names.Lock()
	defer names.Unlock()
	for {
		h := names.holder[name]
		if h == nil || h == t {
			names.holder[name] = t
			return
		}
		// A test waits only on a running test; follow the chain.
		chain := []string{t.Name(), h.Name()}
		for w := h; ; {
			n, ok := names.waiting[w]
			if !ok {
				break
			}
			w = names.holder[n]
			if w == nil {
				break
			}
			chain = append(chain, w.Name())
			if w == t {
				t.Fatalf("ittest: tests wait on each other's pipeline names (%s): give one of them other names", strings.Join(chain, " → "))
			}
		}
		names.waiting[t] = name
		names.cond.Wait()
		delete(names.waiting, t)
	}
}

// releaseNames ends t's claims.
func releaseNames(t *testing.T) {
	names.Lock()
	defer names.Unlock()
	for n, h := range names.holder {
		if h == t {
			delete(names.holder, n)
		}
	}
	names.cond.Broadcast()
}
