package pgtest

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestStartServesSQLOverTCP(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	c := New(t)
	ctx := t.Context()

	if err := c.Exec(ctx, "", `CREATE TABLE items (id int PRIMARY KEY, name text)`); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "", `INSERT INTO items VALUES ($1, $2)`, 1, "one"); err != nil {
		t.Fatal(err)
	}
	if got := readName(t, c, "", 1); got != "one" {
		t.Fatalf("name = %q, want %q", got, "one")
	}

	if err := c.CreateDatabase(ctx, "other db"); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "other db", `CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items VALUES (1, 'uno')`); err != nil {
		t.Fatal(err)
	}
	if got := readName(t, c, "other db", 1); got != "uno" {
		t.Fatalf("name in other db = %q, want %q", got, "uno")
	}

	conn, err := c.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var walLevel, encoding string
	if err := conn.QueryRow(ctx, `SELECT current_setting('wal_level'), current_setting('server_encoding')`).Scan(&walLevel, &encoding); err != nil {
		t.Fatal(err)
	}
	if walLevel != "logical" || encoding != "UTF8" {
		t.Fatalf("wal_level=%s server_encoding=%s, want logical and UTF8", walLevel, encoding)
	}
}

func TestRestartKeepsCommittedDataAndPort(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			c := New(t)
			ctx := t.Context()
			port := c.Port()
			if err := c.Exec(ctx, "", `CREATE TABLE items (id int PRIMARY KEY, name text)`); err != nil {
				t.Fatal(err)
			}
			before := startTime(t, c)
			// Restart right after the commit: an immediate stop must not
			// lose it (see synchronous_commit in defaultSettings).
			if err := c.Exec(ctx, "", `INSERT INTO items VALUES (1, 'kept')`); err != nil {
				t.Fatal(err)
			}
			if err := c.Restart(ctx, mode); err != nil {
				t.Fatal(err)
			}
			if c.Port() != port {
				t.Fatalf("port changed from %d to %d", port, c.Port())
			}
			if after := startTime(t, c); !after.After(before) {
				t.Fatalf("server start time %v not after %v: did it restart?", after, before)
			}
			if got := readName(t, c, "", 1); got != "kept" {
				t.Fatalf("after Restart(%s) name = %q, want %q", mode, got, "kept")
			}
		})
	}
}

func TestStopThenStartAgain(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	c := New(t)
	ctx := t.Context()
	if err := c.Stop("smart"); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "", `SELECT 1`); err == nil {
		t.Fatal("Exec on a stopped cluster succeeded")
	}
	if err := c.Stop("fast"); err == nil {
		t.Fatal("Stop on a stopped cluster succeeded")
	}
	if err := c.Stop("sudden"); err == nil || !strings.Contains(err.Error(), "sudden") {
		t.Fatalf("Stop(sudden) = %v, want an unknown mode error", err)
	}
	if err := c.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "", `SELECT 1`); err != nil {
		t.Fatal(err)
	}
}

func TestLogicalReplicationSlotCanBeCreated(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	c := New(t)
	ctx := t.Context()
	if err := c.Exec(ctx, "", `SELECT pg_create_logical_replication_slot('s', 'pgoutput')`); err != nil {
		t.Fatal(err)
	}

	// The replication URL opens a walsender that speaks the replication
	// protocol and sees the slot.
	conn, err := pgconn.Connect(ctx, c.ReplicationURL(""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	res, err := conn.Exec(ctx, `IDENTIFY_SYSTEM`).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || string(res[0].Rows[0][3]) != "postgres" {
		t.Fatalf("IDENTIFY_SYSTEM = %+v, want one row naming database postgres", res)
	}
	if _, err := conn.Exec(ctx, `CREATE_REPLICATION_SLOT s2 TEMPORARY LOGICAL pgoutput`).ReadAll(); err != nil {
		t.Fatal(err)
	}
	res, err = conn.Exec(ctx, `SELECT slot_name, plugin FROM pg_replication_slots ORDER BY slot_name`).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var slots []string
	for _, row := range res[0].Rows {
		slots = append(slots, string(row[0])+"/"+string(row[1]))
	}
	if got := strings.Join(slots, " "); got != "s/pgoutput s2/pgoutput" {
		t.Fatalf("slots = %q, want s/pgoutput s2/pgoutput", got)
	}
}

func TestCommandRunsAsServerUser(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	c := New(t)
	wantUID := os.Geteuid()
	if wantUID == 0 {
		su, err := lookupServerUser()
		if err != nil {
			t.Fatal(err)
		}
		wantUID = int(su.uid)
	}

	out, err := c.Command("psql", "-X", "-A", "-t", "-c", "SELECT current_user", "-c", `\! id -u`).CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || lines[0] != "postgres" || lines[1] != strconv.Itoa(wantUID) {
		t.Fatalf("psql printed %q, want role postgres and OS uid %d", out, wantUID)
	}
}

func TestParallelClustersGetDistinctPortsAndDirs(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	var (
		mu    sync.Mutex
		ports = map[int]bool{}
		dirs  = map[string]bool{}
	)
	t.Run("group", func(t *testing.T) {
		for i := range 4 {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				c := New(t)
				if err := c.Exec(t.Context(), "", `CREATE TABLE t (id int)`); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				ports[c.Port()] = true
				dirs[c.Dir()] = true
				mu.Unlock()
			})
		}
	})
	if len(ports) != 4 || len(dirs) != 4 {
		t.Fatalf("4 clusters got ports %v and dirs %v", ports, dirs)
	}
}

func TestCloseStopsServerAndRemovesTempDir(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	ctx := t.Context()
	c, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stop("fast"); err != nil { // Close must cope with a stopped server
		t.Fatal(err)
	}
	if err := c.StartAgain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close, stat %s = %v, want not exist", c.Dir(), err)
	}
	if err := c.Exec(ctx, "", `SELECT 1`); err == nil {
		t.Fatal("Exec after Close succeeded")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := c.StartAgain(ctx); err == nil {
		t.Fatal("StartAgain after Close succeeded")
	}
}

func TestGivenDirIsKeptAndReused(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	ctx := t.Context()
	base, err := os.MkdirTemp("", "pgtest-given-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := base + "/cluster"

	c, err := Start(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(ctx, "", `CREATE TABLE t (id int); INSERT INTO t VALUES (7)`); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/postgres.log"); err != nil {
		t.Fatalf("log file after Close: %v", err)
	}

	c = New(t, func(o *Options) { o.Dir = dir })
	conn, err := c.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var id int
	if err := conn.QueryRow(ctx, `SELECT id FROM t`).Scan(&id); err != nil || id != 7 {
		t.Fatalf("reused cluster: id=%d err=%v, want 7", id, err)
	}
}

func TestStartFailureQuotesServerLog(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	var log syncBuffer
	_, err := Start(t.Context(), Options{
		Settings: map[string]string{"wal_level": "bogus"},
		Log:      &log,
	})
	if err == nil {
		t.Fatal("Start with wal_level=bogus succeeded")
	}
	if !strings.Contains(err.Error(), `"wal_level"`) || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("error does not quote the server's complaint:\n%v", err)
	}
	if !strings.Contains(log.String(), "bogus") {
		t.Fatalf("Options.Log did not get the server log:\n%s", log.String())
	}
}

func TestStartOnBusyPortSaysSo(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(t.Context(), Options{Port: port})
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("Start on busy port %d = %v, want an error quoting the bind failure", port, err)
	}
}

func TestDirUnreachableByServerUserIsExplained(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	dir := t.TempDir() // mode 0700, owned by us
	c, err := Start(t.Context(), Options{Dir: dir})
	if os.Geteuid() != 0 {
		if err != nil {
			t.Fatalf("Start in t.TempDir as non-root: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "cannot enter") {
		t.Fatalf("Start as root in %s = %v, want a cannot enter error", dir, err)
	}
}

func TestSettingsOverrideDefaults(t *testing.T) {
	t.Parallel()
	SkipIntegrationInShort(t)
	c := New(t, func(o *Options) {
		o.Settings = map[string]string{"max_replication_slots": "5", "application_name": "it's"}
	})
	conn, err := c.Connect(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var slots, app string
	if err := conn.QueryRow(t.Context(), `SELECT current_setting('max_replication_slots'), current_setting('application_name')`).Scan(&slots, &app); err != nil {
		t.Fatal(err)
	}
	if slots != "5" || app != "it's" {
		t.Fatalf("max_replication_slots=%s application_name=%q, want 5 and \"it's\"", slots, app)
	}
}

func readName(t *testing.T, c *Cluster, db string, id int) string {
	t.Helper()
	conn, err := c.Connect(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var name string
	if err := conn.QueryRow(t.Context(), `SELECT name FROM items WHERE id = $1`, id).Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func startTime(t *testing.T, c *Cluster) time.Time {
	t.Helper()
	conn, err := c.Connect(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var ts time.Time
	if err := conn.QueryRow(t.Context(), `SELECT pg_postmaster_start_time()`).Scan(&ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// syncBuffer is a bytes.Buffer safe for the log sink and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
