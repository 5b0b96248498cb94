package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/internal/srtest"
	"github.com/mooncdc/mooncdc/offsets"
)

// checkRun runs "mooncdc check" with args and returns the exit code and
// stdout split into lines (the summary last).
func checkRun(t *testing.T, args ...string) (int, []string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"check"}, args...), nil)
	t.Logf("mooncdc check %s → exit %d:\n%s", strings.Join(args, " "), code, stdout)
	if stderr != "" {
		t.Errorf("stderr:\n%s", stderr)
	}
	return code, strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
}

// checkWantLine fails unless some line starts with prefix and contains every
// one of parts.
func checkWantLine(t *testing.T, lines []string, prefix string, parts ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return
		}
	}
	t.Errorf("no line starting with %q and containing %q in:\n%s", prefix, parts, strings.Join(lines, "\n"))
}

func checkNoLine(t *testing.T, lines []string, part string) {
	t.Helper()
	for _, l := range lines {
		if strings.Contains(l, part) {
			t.Errorf("unexpected line %q", l)
		}
	}
}

// checkClosedAddr returns a local address where nothing listens.
func checkClosedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func checkSQL(t *testing.T, pg *pgtest.Cluster, db, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pg.Exec(ctx, db, sql); err != nil {
		t.Fatal(err)
	}
}

// waitSlotReleased waits until no walsender holds slot.
func waitSlotReleased(t *testing.T, pg *pgtest.Cluster, db, slot string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pg.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	eventually.True(t, 30*time.Second, 20*time.Millisecond, fmt.Sprintf("slot %s still active after 30s", slot), func() bool {
		var active bool
		if err := conn.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&active); err != nil {
			t.Fatalf("slot %s: %v", slot, err)
		}
		return !active
	})
}

func checkDatabase(t *testing.T, pg *pgtest.Cluster, name, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pg.CreateDatabase(ctx, name); err != nil {
		t.Fatal(err)
	}
	checkSQL(t, pg, name, sql)
}

// TestCheckAgainstPostgres shares one cluster between the setups: the
// default pgtest settings (wal_level logical, 32 slots and senders) with a
// bounded max_slot_wal_keep_size, so that a good setup passes every check.
func TestCheckAgainstPostgres(t *testing.T) {
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"max_slot_wal_keep_size": "1GB"}
	})

	t.Run("a good setup passes every check, before and after run", func(t *testing.T) {
		checkDatabase(t, pg, "good", `CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE customers (id int PRIMARY KEY)`)
		broker := kafkatest.New(t)
		reg := srtest.New(t, srtest.WithBasicAuth("sr", "srpass"))
		cfg := writeConfig(t, "name: good\npostgres:\n  tables: [public.*]\nmetrics:\n  listen: \"\"\n"+
			"format:\n  value: avro\n  schema_registry:\n    url: "+reg.URL()+"\n    username: sr\n    password: srpass\n")
		args := []string{"--config", cfg, "--postgres-url", pg.URL("good"), "--brokers", broker.Addr()}

		code, lines := checkRun(t, args...)
		if code != connector.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		for _, l := range lines[:len(lines)-1] {
			if !strings.HasPrefix(l, "✓ ") {
				t.Errorf("not a ✓ line: %q", l)
			}
		}
		checkWantLine(t, lines, "✓ Postgres "+pg.URL("good")+": PostgreSQL 15", `database "good", role "postgres"`)
		checkWantLine(t, lines, "✓ wal_level: logical")
		checkWantLine(t, lines, "✓ replication slots: max_replication_slots 32, 0 used by others, mooncdc needs 5 (1 + snapshot.workers 4)")
		checkWantLine(t, lines, "✓ WAL senders: max_wal_senders 32, 0 used by others, mooncdc needs 5")
		checkWantLine(t, lines, `✓ role "postgres": superuser`)
		checkWantLine(t, lines, "✓ postgres.tables public.*: 2 tables: public.customers, public.orders")
		checkWantLine(t, lines, `✓ SELECT on the tables: role "postgres" may read all 2`)
		checkWantLine(t, lines, "✓ replica identity: every table has a primary key")
		checkWantLine(t, lines, `✓ publication "mooncdc_good": does not exist; mooncdc run creates it for the 2 tables`)
		checkWantLine(t, lines, `✓ replication slot "mooncdc_good": does not exist; mooncdc run creates it (pgoutput)`)
		checkWantLine(t, lines, "✓ max_slot_wal_keep_size: 1.0 GiB bounds the WAL the slot keeps")
		checkWantLine(t, lines, "✓ Kafka "+broker.Addr()+": 1 broker ("+broker.Addr()+")")
		checkWantLine(t, lines, `✓ offsets topic "`+config.DefaultOffsetsTopic+`": does not exist; mooncdc run creates it (1 partition, cleanup.policy=compact)`)
		checkWantLine(t, lines, "✓ Schema Registry "+reg.URL()+": reachable, supports AVRO")
		// Debezium's default heartbeat topic (HeartbeatImpl.java:46, AbstractTopicNamingStrategy.java:142-147).
		checkWantLine(t, lines, `✓ heartbeat topic "__debezium-heartbeat.good": does not exist; mooncdc run creates it (heartbeat records every 10s of idleness)`)
		if got := lines[len(lines)-1]; got != "15 passed, 0 warnings, 0 failed: ready for mooncdc run" {
			t.Errorf("summary %q", got)
		}

		// run creates the publication, the slot and the offsets topic;
		// check then finds each as run needs it.
		ctx, cancel := context.WithCancel(context.Background())
		var stderr syncBuf
		done := make(chan int, 1)
		go func() { done <- run(ctx, append([]string{"run"}, args...), nil, &bytes.Buffer{}, &stderr) }()
		if !eventually.Within(60*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(stderr.String(), "streaming") }) {
			cancel()
			<-done
			t.Fatalf("no streaming after 60s:\n%s", stderr.String())
		}
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("run exited %d:\n%s", code, stderr.String())
		}
		t.Cleanup(func() {
			checkSQL(t, pg, "good", `SELECT pg_drop_replication_slot('mooncdc_good')`)
		})
		// run has returned, but its walsender may take a moment to exit
		// and release the slot.
		waitSlotReleased(t, pg, "good", "mooncdc_good")

		code, lines = checkRun(t, args...)
		if code != connector.ExitOK {
			t.Errorf("after run: exit %d, want 0", code)
		}
		for _, l := range lines[:len(lines)-1] {
			if !strings.HasPrefix(l, "✓ ") {
				t.Errorf("after run: not a ✓ line: %q", l)
			}
		}
		checkWantLine(t, lines, `✓ publication "mooncdc_good": publishes the 2 tables (insert, update, delete, truncate)`)
		checkWantLine(t, lines, `✓ replication slot "mooncdc_good": exists: pgoutput on database "good", wal_status reserved, not in use`)
		checkWantLine(t, lines, `✓ offsets topic "`+config.DefaultOffsetsTopic+`": 1 partition, cleanup.policy=compact`)
		checkWantLine(t, lines, "✓ replication slots: max_replication_slots 32, 0 used by others") // its own slot is not another's

		// With kafka.brokers empty, check looks for the embedded Kafka of a
		// running mooncdc run: absent is a warning, not a failure.
		old := checkEmbeddedAddr
		defer func() { checkEmbeddedAddr = old }()
		checkEmbeddedAddr = checkClosedAddr(t)
		embedded := []string{"--config", cfg, "--postgres-url", pg.URL("good"), "--brokers", ""}
		code, lines = checkRun(t, embedded...)
		if code != connector.ExitOK {
			t.Errorf("embedded Kafka not running: exit %d, want 0", code)
		}
		checkWantLine(t, lines, "! Kafka: kafka.brokers is empty", "embedded development Kafka runs inside mooncdc run; nothing to check")
		checkWantLine(t, lines, `- offsets topic "`+config.DefaultOffsetsTopic+`" skipped: embedded Kafka not running`)
		checkWantLine(t, lines, "12 passed, 1 warning, 0 failed, 1 skipped: mooncdc run can start; read the ! lines")
		checkEmbeddedAddr = broker.Addr()
		code, lines = checkRun(t, embedded...)
		if code != connector.ExitOK {
			t.Errorf("embedded Kafka running: exit %d, want 0", code)
		}
		checkWantLine(t, lines, "✓ Kafka "+broker.Addr()+": the embedded development Kafka of a running mooncdc run, 1 broker")
	})

	t.Run("failures name their cause and fix", func(t *testing.T) {
		checkDatabase(t, pg, "bad", `CREATE TABLE orders (id int PRIMARY KEY); CREATE TABLE secret (id int PRIMARY KEY); CREATE TABLE nopk (v text);
			CREATE ROLE app LOGIN PASSWORD 's3cretpw'; GRANT SELECT ON orders, nopk TO app`)
		broker := kafkatest.New(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		adm := kadm.NewClient(broker.Client(t))
		if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, "bad_offsets"); err != nil {
			t.Fatal(err)
		}
		url := strings.Replace(pg.URL("bad"), "postgres@", "app:s3cretpw@", 1)
		code, stdout, stderr := runCLI(t, []string{"check", "--name", "bad", "--postgres-url", url, "--brokers", broker.Addr(),
			"--tables", "public.orders,public.secret,public.nopk,public.nope"}, []string{"MOONCDC_KAFKA_OFFSETS_TOPIC=bad_offsets"})
		t.Logf("exit %d:\n%s", code, stdout)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if code != connector.ExitRuntime {
			t.Errorf("exit %d, want %d; stderr:\n%s", code, connector.ExitRuntime, stderr)
		}
		if strings.Contains(stdout, "s3cretpw") || !strings.Contains(stdout, "app:xxxxx@") {
			t.Errorf("the password is printed, or the URL is not:\n%s", stdout)
		}
		checkWantLine(t, lines, `✗ role "app": has neither REPLICATION nor superuser`, "— as a superuser: ALTER ROLE app REPLICATION;")
		checkWantLine(t, lines, "✗ postgres.tables public.nope: matches no table — check the schema and table names")
		checkWantLine(t, lines, "✓ postgres.tables public.orders: 1 table: public.orders")
		checkWantLine(t, lines, `✗ SELECT on the tables: role "app" may not read public.secret,`, "— GRANT SELECT ON public.secret TO app;")
		checkWantLine(t, lines, "! replica identity: public.nopk has no primary key", "— ALTER TABLE public.nopk REPLICA IDENTITY FULL; or add a primary key")
		checkWantLine(t, lines, `✗ publication "mooncdc_bad": does not exist, and mooncdc run cannot create it: role "app" is not a superuser`,
			"does not own public.nopk, public.orders, public.secret",
			"— as an admin: CREATE PUBLICATION mooncdc_bad FOR TABLE public.nopk, public.orders, public.secret;")
		checkWantLine(t, lines, `✗ offsets topic "bad_offsets": its cleanup.policy is "delete"`, "--entity-name bad_offsets --add-config cleanup.policy=compact")
		checkWantLine(t, lines, "✓ Kafka "+broker.Addr())
		checkWantLine(t, lines, "", "5 failed")

		// check's rule for the offsets topic is run's.
		if err := offsets.EnsureTopic(ctx, adm, "bad_offsets", -1); !errors.Is(err, offsets.ErrTopicMisconfigured) {
			t.Errorf("EnsureTopic on the topic check refused: %v", err)
		}
	})

	t.Run("a table without a key is only a warning", func(t *testing.T) {
		checkDatabase(t, pg, "warn", `CREATE TABLE keyed (id int PRIMARY KEY); CREATE TABLE nopk (v text);
			CREATE TABLE full_ident (v text); ALTER TABLE full_ident REPLICA IDENTITY FULL`)
		broker := kafkatest.New(t)
		code, lines := checkRun(t, "--name", "warn", "--postgres-url", pg.URL("warn"), "--brokers", broker.Addr(), "--tables", "public.*")
		if code != connector.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
		checkWantLine(t, lines, "! replica identity: public.nopk has no primary key and no REPLICA IDENTITY FULL or USING INDEX",
			"Postgres refuses UPDATE and DELETE on it, so mooncdc run does not add it to the publication and does not capture it until it has one",
			"— ALTER TABLE public.nopk REPLICA IDENTITY FULL; or add a primary key")
		checkNoLine(t, lines, "full_ident REPLICA")
		checkWantLine(t, lines, "✓ postgres.tables public.*: 3 tables: public.full_ident, public.keyed, public.nopk")
		checkWantLine(t, lines, "", "1 warning, 0 failed: mooncdc run can start; read the ! lines")
	})

	t.Run("a publication and a slot that do not match", func(t *testing.T) {
		checkDatabase(t, pg, "mismatch", `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY); CREATE TABLE c (id int PRIMARY KEY);
			CREATE PUBLICATION mooncdc_mismatch FOR TABLE a, c WITH (publish = 'insert')`)
		checkSQL(t, pg, "mismatch", `SELECT pg_create_logical_replication_slot('mooncdc_mismatch', 'test_decoding')`)
		t.Cleanup(func() { checkSQL(t, pg, "mismatch", `SELECT pg_drop_replication_slot('mooncdc_mismatch')`) })
		broker := kafkatest.New(t)
		code, lines := checkRun(t, "--name", "mismatch", "--postgres-url", pg.URL("mismatch"), "--brokers", broker.Addr(), "--tables", "public.a,public.b")
		if code != connector.ExitRuntime {
			t.Errorf("exit %d, want 1", code)
		}
		checkWantLine(t, lines, `✗ publication "mooncdc_mismatch": does not publish update, delete, truncate`,
			"— ALTER PUBLICATION mooncdc_mismatch SET (publish = 'insert, update, delete, truncate');")
		checkWantLine(t, lines, `! publication "mooncdc_mismatch": also publishes public.c, which postgres.tables does not select`,
			"— add it to postgres.tables, or ALTER PUBLICATION mooncdc_mismatch DROP TABLE public.c;")
		checkWantLine(t, lines, `✓ publication "mooncdc_mismatch": mooncdc run adds public.b, which postgres.tables selects`)
		checkWantLine(t, lines, `✗ replication slot "mooncdc_mismatch": is a logical slot of plugin "test_decoding" on database "mismatch"`,
			"SELECT pg_drop_replication_slot('mooncdc_mismatch');")

		// With postgres.tables empty, the publication's tables are the set.
		code, lines = checkRun(t, "--name", "mismatch", "--postgres-url", pg.URL("mismatch"), "--brokers", broker.Addr())
		_ = code // the slot still fails
		checkWantLine(t, lines, `✓ tables of publication "mooncdc_mismatch": 2: public.a, public.c`)

		// Without postgres.tables and without the publication, there is
		// nothing to capture.
		code, lines = checkRun(t, "--name", "nopub", "--postgres-url", pg.URL("mismatch"), "--brokers", broker.Addr())
		if code != connector.ExitRuntime {
			t.Errorf("no tables, no publication: exit %d, want 1", code)
		}
		checkWantLine(t, lines, `- tables of publication "mooncdc_nopub" skipped: postgres.tables is empty and the publication does not exist`)
		checkWantLine(t, lines, `✗ publication "mooncdc_nopub": does not exist and postgres.tables is empty`, "CREATE PUBLICATION mooncdc_nopub FOR TABLE …;")
	})

	// A partitioned table is one table. Published through its root, it is
	// one topic; published by its partitions (the publication lacks
	// publish_via_partition_root), run would make a topic per partition,
	// which postgres.publish_via_partition_root (default true) says is not
	// wanted: a failure with the fix.
	t.Run("a partitioned table is one table, published through its root", func(t *testing.T) {
		checkDatabase(t, pg, "parts", `CREATE TABLE events (id int, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
			CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
			CREATE PUBLICATION mooncdc_parts FOR TABLE events`)
		broker := kafkatest.New(t)
		args := []string{"--name", "parts", "--postgres-url", pg.URL("parts"), "--brokers", broker.Addr(), "--tables", "public.*"}
		code, lines := checkRun(t, args...)
		if code != connector.ExitRuntime {
			t.Errorf("partitions published as themselves: exit %d, want 1", code)
		}
		checkWantLine(t, lines, "✓ postgres.tables public.*: 1 table: public.events")
		checkWantLine(t, lines, `✗ publication "mooncdc_parts": publishes the partitions of public.events as tables of their own (publish_via_partition_root is off)`,
			"— before mooncdc first streams it: ALTER PUBLICATION mooncdc_parts SET (publish_via_partition_root = true);")

		checkSQL(t, pg, "parts", `ALTER PUBLICATION mooncdc_parts SET (publish_via_partition_root = true)`)
		code, lines = checkRun(t, args...)
		if code != connector.ExitOK {
			t.Errorf("published through the root: exit %d, want 0", code)
		}
		checkWantLine(t, lines, `✓ publication "mooncdc_parts": publishes the 1 table (insert, update, delete, truncate)`)

		// A partitioned table whose partition has no key is keyless: an
		// UPDATE there would be refused once published.
		checkSQL(t, pg, "parts", `CREATE TABLE logs (v text, at date) PARTITION BY RANGE (at);
			CREATE TABLE logs_2026 PARTITION OF logs FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')`)
		_, lines = checkRun(t, args...)
		checkWantLine(t, lines, "! replica identity: public.logs has no primary key", "ALTER TABLE public.logs REPLICA IDENTITY FULL;")
	})

	// Standby instances (ha.enabled): a new active instance ends the
	// walsender still holding the slot (issue 27.6). Held by another
	// role's walsender that mooncdc's role may not end, check says so
	// with the fix; with pg_signal_backend granted, it passes.
	t.Run("ha: a slot held by a walsender of another role", func(t *testing.T) {
		checkDatabase(t, pg, "hold", `CREATE TABLE t (id int PRIMARY KEY);
			CREATE ROLE hold_other LOGIN REPLICATION; CREATE ROLE hold_moon LOGIN REPLICATION;
			GRANT SELECT ON t TO hold_moon;
			CREATE PUBLICATION mooncdc_hold FOR TABLE t`)
		checkSQL(t, pg, "hold", `SELECT pg_create_logical_replication_slot('mooncdc_hold', 'pgoutput')`)
		ctx := context.Background()
		rc, err := pgconn.Connect(ctx, strings.Replace(pg.URL("hold"), "postgres@", "hold_other@", 1)+"&replication=database")
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close(ctx)
		if err := pglogrepl.StartReplication(ctx, rc, "mooncdc_hold", 0, pglogrepl.StartReplicationOptions{
			PluginArgs: []string{"proto_version '1'", "publication_names 'mooncdc_hold'"}}); err != nil {
			t.Fatal(err)
		}
		broker := kafkatest.New(t)
		cfg := writeConfig(t, "name: hold\npostgres:\n  tables: [public.t]\nha:\n  enabled: true\nmetrics:\n  listen: \"\"\n")
		args := []string{"--config", cfg, "--postgres-url", strings.Replace(pg.URL("hold"), "postgres@", "hold_moon@", 1), "--brokers", broker.Addr()}
		_, lines := checkRun(t, args...)
		checkWantLine(t, lines, `! standby takeover: role "hold_moon" may not end the slot's walsender`, `role "hold_other"`,
			`— run every instance as the same role, or as a superuser: GRANT pg_signal_backend TO "hold_moon";`)

		checkSQL(t, pg, "hold", `GRANT pg_signal_backend TO hold_moon`)
		_, lines = checkRun(t, args...)
		checkWantLine(t, lines, `✓ standby takeover: role "hold_moon" may end the slot's walsender (role "hold_other")`)
	})
}

// TestCheckFailsOnServerSettings starts Postgres as a default install is:
// wal_level replica, few slots and senders, unbounded slot WAL.
func TestCheckFailsOnServerSettings(t *testing.T) {
	pg := pgtest.New(t, func(o *pgtest.Options) {
		o.Settings = map[string]string{"wal_level": "replica", "max_replication_slots": "2", "max_wal_senders": "3"}
	})
	checkSQL(t, pg, "postgres", `CREATE TABLE t (id int PRIMARY KEY)`)
	broker := kafkatest.New(t)
	code, lines := checkRun(t, "--name", "shop", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--tables", "public.t")
	if code != connector.ExitRuntime {
		t.Errorf("exit %d, want 1", code)
	}
	checkWantLine(t, lines, "✗ wal_level: is replica; logical decoding needs logical — ALTER SYSTEM SET wal_level = logical; then restart Postgres")
	checkWantLine(t, lines, "✗ replication slots: max_replication_slots 2, 0 used by others, mooncdc needs 5 (1 + snapshot.workers 4)",
		"— ALTER SYSTEM SET max_replication_slots = 5;")
	checkWantLine(t, lines, "✗ WAL senders: max_wal_senders 3, 0 used by others, mooncdc needs 5", "ALTER SYSTEM SET max_wal_senders = 5;")
	checkWantLine(t, lines, "! max_slot_wal_keep_size: is -1 (unlimited)", "ALTER SYSTEM SET max_slot_wal_keep_size")
	checkWantLine(t, lines, "", "3 failed")

	// Fewer copy workers fit.
	code, lines = checkRun(t, "--name", "shop", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--tables", "public.t",
		"--config", writeConfig(t, "snapshot:\n  workers: 1\n"))
	checkWantLine(t, lines, "✓ replication slots: max_replication_slots 2, 0 used by others, mooncdc needs 2 (1 + snapshot.workers 1)")
	checkWantLine(t, lines, "✓ WAL senders: max_wal_senders 3, 0 used by others, mooncdc needs 2")
	if code != connector.ExitRuntime { // wal_level still fails
		t.Errorf("exit %d, want 1", code)
	}

	// A copy slot left by a copy that waits to resume holds a slot of its
	// own, and its resume streams it while a new snapshot's slot is open:
	// one more of each. (A physical slot of that name stands in for it:
	// wal_level replica makes no logical ones; check counts by name.)
	waiting := pgsource.CopySlotName("mooncdc_shop", 16384)
	checkSQL(t, pg, "postgres", fmt.Sprintf(`SELECT pg_create_physical_replication_slot('%s')`, waiting))
	_, lines = checkRun(t, "--name", "shop", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--tables", "public.t",
		"--config", writeConfig(t, "snapshot:\n  workers: 1\n"))
	checkWantLine(t, lines, "✗ replication slots: max_replication_slots 2, 0 used by others, mooncdc needs 3 (1 + snapshot.workers 1 + 1 copy slot waiting to resume)",
		"ALTER SYSTEM SET max_replication_slots = 3;")
	checkWantLine(t, lines, "✓ WAL senders: max_wal_senders 3, 0 used by others, mooncdc needs 3 (1 + snapshot.workers 1 + 1 while a copy resumes)")

	// A slot that only looks like a copy slot of this pipeline is another's.
	checkSQL(t, pg, "postgres", fmt.Sprintf(`SELECT pg_drop_replication_slot('%s'); SELECT pg_create_physical_replication_slot('mooncdc_shop_copy_5')`, waiting))
	_, lines = checkRun(t, "--name", "shop", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--tables", "public.t",
		"--config", writeConfig(t, "snapshot:\n  workers: 1\n"))
	checkWantLine(t, lines, "✗ replication slots: max_replication_slots 2, 1 used by others, mooncdc needs 2 (1 + snapshot.workers 1)",
		"ALTER SYSTEM SET max_replication_slots = 3;")
}

func TestCheckUnreachableServersFailFastAndSkipTheirChecks(t *testing.T) {
	reg := srtest.New(t, srtest.WithBasicAuth("sr", "right"))
	cfg := writeConfig(t, "format:\n  key: avro\n  value: avro\n  schema_registry:\n    url: "+reg.URL()+"\n    username: sr\n    password: wrong\n")
	pgAddr, kafkaAddr := checkClosedAddr(t), checkClosedAddr(t)
	started := time.Now()
	code, lines := checkRun(t, "--config", cfg, "--name", "shop", "--postgres-url", "postgres://u:s3cret@"+pgAddr+"/db?sslmode=disable", "--brokers", kafkaAddr)
	took := time.Since(started)
	if code != connector.ExitRuntime {
		t.Errorf("exit %d, want 1", code)
	}
	if took > checkTimeout/2 {
		t.Errorf("took %s to find closed ports", took)
	}
	checkWantLine(t, lines, "✗ Postgres postgres://u:xxxxx@"+pgAddr+"/db?sslmode=disable: ", "connection refused", "— check the host and port in postgres.url")
	for _, what := range []string{"wal_level", "replication slots and WAL senders", "role", "tables", `publication "mooncdc_shop"`, "row filters and column lists", `replication slot "mooncdc_shop"`} {
		checkWantLine(t, lines, "- "+what+" skipped: Postgres unreachable")
	}
	checkWantLine(t, lines, "✗ Kafka "+kafkaAddr+": ", "connection refused", "— check kafka.brokers")
	checkWantLine(t, lines, `- offsets topic "`+config.DefaultOffsetsTopic+`" skipped: Kafka unreachable`)
	checkWantLine(t, lines, "✗ Schema Registry "+reg.URL()+": refused mooncdc's credentials (HTTP 401", "— check format.schema_registry.username and format.schema_registry.password")
	if got := lines[len(lines)-1]; got != "0 passed, 0 warnings, 3 failed, 8 skipped: fix the ✗ lines, then run mooncdc check again" {
		t.Errorf("summary %q", got)
	}
	for _, l := range lines {
		if strings.Contains(l, "s3cret") {
			t.Errorf("password printed: %q", l)
		}
	}
}

func TestCheckInvalidConfigExitsTwo(t *testing.T) {
	for _, args := range [][]string{
		{"--postgres-url", goodURL},
		{"--name", "shop", "--postgres-url", goodURL, "extra"},
		{"--name", "shop", "--postgres-url", goodURL, "--tables", "public."},
	} {
		code, stdout, stderr := runCLI(t, append([]string{"check"}, args...), nil)
		if code != connector.ExitConfig || stdout != "" || !strings.Contains(stderr, "mooncdc: invalid config") || strings.Contains(stderr, "s3cret") {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s", args, code, stdout, stderr)
		}
	}
}

func TestCheckHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "check"}, {"check", "--help"}} {
		code, stdout, _ := runCLI(t, args, nil)
		if code != 0 {
			t.Errorf("%q: exit %d", args, code)
		}
		for _, w := range []string{"Usage: mooncdc check", "✗ what: cause — fix", "Exit codes", "--postgres-url", "MOONCDC_KAFKA_BROKERS"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: usage does not mention %s", args, w)
			}
		}
	}
}

// TestCheckSlotVerdicts covers the slot states a test cluster cannot
// easily reach (lost, unreserved, nearly full).
func TestCheckSlotVerdicts(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.ApplyDefaults()
	const gb = 1 << 30
	good := checkSlotState{exists: true, plugin: "pgoutput", slotType: "logical", database: "db", walStatus: "reserved", safeWALSize: gb / 2, maxKeep: gb}
	with := func(f func(*checkSlotState)) checkSlotState { s := good; f(&s); return s }
	tests := []struct {
		name string
		slot checkSlotState
		want []string
	}{
		{"missing, unbounded WAL", checkSlotState{maxKeep: -1}, []string{
			`✓ replication slot "mooncdc_shop": does not exist; mooncdc run creates it (pgoutput)`,
			"! max_slot_wal_keep_size: is -1 (unlimited)"}},
		{"missing, before Postgres 13", checkSlotState{maxKeep: -2}, []string{`✓ replication slot "mooncdc_shop": does not exist`}},
		{"good", good, []string{
			`✓ replication slot "mooncdc_shop": exists: pgoutput on database "db", wal_status reserved, not in use`,
			"✓ max_slot_wal_keep_size: 1.0 GiB bounds"}},
		{"another plugin", with(func(s *checkSlotState) { s.plugin = "wal2json" }), []string{
			`✗ replication slot "mooncdc_shop": is a logical slot of plugin "wal2json" on database "db"`, "1.0 GiB"}},
		{"physical", with(func(s *checkSlotState) { s.slotType, s.plugin, s.database = "physical", "", "" }), []string{
			`✗ replication slot "mooncdc_shop": is a physical slot`, "1.0 GiB"}},
		{"another database", with(func(s *checkSlotState) { s.database = "other" }), []string{`✗ replication slot "mooncdc_shop": is a logical slot of plugin "pgoutput" on database "other"`, "1.0 GiB"}},
		{"lost", with(func(s *checkSlotState) { s.walStatus = "lost" }), []string{
			`✗ replication slot "mooncdc_shop": wal_status is lost`, `SELECT pg_drop_replication_slot('mooncdc_shop');`, `topic "` + config.DefaultOffsetsTopic + `"`, "1.0 GiB"}},
		{"unreserved", with(func(s *checkSlotState) { s.walStatus = "unreserved" }), []string{`! replication slot "mooncdc_shop": wal_status is unreserved`, "1.0 GiB"}},
		{"nearly full", with(func(s *checkSlotState) { s.safeWALSize = gb / 10 }), []string{`! replication slot "mooncdc_shop": only 102.4 MiB of WAL left`, "1.0 GiB"}},
		{"unbounded, in use", with(func(s *checkSlotState) { s.maxKeep, s.safeWALSize, s.activePID, s.activeApp = -1, -1, 42, "mooncdc" }), []string{
			`! replication slot "mooncdc_shop": in use by PID 42 (application_name "mooncdc")`, "! max_slot_wal_keep_size: is -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range checkJudgeSlot(cfg, "db", tt.slot) {
				got = append(got, l.String())
			}
			text := strings.Join(got, "\n")
			if len(got) != 2 && tt.slot.maxKeep != -2 {
				t.Errorf("want the slot line and the max_slot_wal_keep_size line, got:\n%s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
		})
	}

	// The line formats and the summary.
	var ls checkLines
	ls.pass("a", "fine")
	ls.warn("b", "hmm", "do x")
	ls.fail("c", "broken", "do y")
	ls.skip("d", "no e")
	want := "✓ a: fine\n! b: hmm — do x\n✗ c: broken — do y\n- d skipped: no e"
	var got []string
	for _, l := range ls {
		got = append(got, l.String())
	}
	if s := strings.Join(got, "\n"); s != want {
		t.Errorf("lines:\n%s\nwant:\n%s", s, want)
	}
	if s := ls.summary(); s != "1 passed, 1 warning, 1 failed, 1 skipped: fix the ✗ lines, then run mooncdc check again" {
		t.Errorf("summary %q", s)
	}
}

// TestCheckKafkaSecurityFailuresNameTheirKeys: a refused SASL login or an
// untrusted broker certificate fails the Kafka check naming the keys to fix.
func TestCheckKafkaSecurityFailuresNameTheirKeys(t *testing.T) {
	pgAddr := checkClosedAddr(t)
	check := func(t *testing.T, broker, kafkaYAML string) []string {
		t.Helper()
		cfg := writeConfig(t, "kafka:\n"+kafkaYAML)
		started := time.Now()
		_, lines := checkRun(t, "--config", cfg, "--name", "shop", "--postgres-url", "postgres://u@"+pgAddr+"/db", "--brokers", broker)
		if took := time.Since(started); took > checkTimeout {
			t.Errorf("took %s", took)
		}
		return lines
	}

	t.Run("SASL", func(t *testing.T) {
		broker := kafkatest.New(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "right"))
		lines := check(t, broker.Addr(), "  sasl:\n    mechanism: PLAIN\n    username: admin\n    password: wrong\n")
		checkWantLine(t, lines, "✗ Kafka "+broker.Addr()+": ", "check kafka.sasl.mechanism, kafka.sasl.username and kafka.sasl.password")
		checkNoLine(t, lines, "wrong")
		lines = check(t, broker.Addr(), "  sasl:\n    mechanism: PLAIN\n    username: admin\n    password: right\n")
		checkWantLine(t, lines, "✓ Kafka "+broker.Addr()+": 1 broker")
		checkWantLine(t, lines, "! Kafka security: kafka.sasl.mechanism PLAIN without kafka.tls.enabled sends the password in clear text", "enable TLS")
	})

	t.Run("TLS", func(t *testing.T) {
		srv := httptest.NewTLSServer(nil) // for its certificate, valid for 127.0.0.1
		defer srv.Close()
		broker := kafkatest.New(t, kfake.TLS(srv.TLS.Clone()))
		lines := check(t, broker.Addr(), "  tls:\n    enabled: true\n")
		checkWantLine(t, lines, "✗ Kafka "+broker.Addr()+": ", "certificate", "— check kafka.tls.*")

		ca := filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
			t.Fatal(err)
		}
		lines = check(t, broker.Addr(), "  tls:\n    enabled: true\n    ca_file: "+ca+"\n")
		checkWantLine(t, lines, "✓ Kafka "+broker.Addr()+": 1 broker")
	})
}

// TestCheckKafkaFixNamesTheKeys: how real brokers refuse a login or a
// handshake maps to the keys to check.
func TestCheckKafkaFixNamesTheKeys(t *testing.T) {
	sasl := config.DefaultConfig()
	sasl.Kafka.SASL.Mechanism = "PLAIN"
	plain := config.DefaultConfig()
	tests := []struct {
		name string
		cfg  config.Config
		err  error
		want string
	}{
		{"SASL refused", sasl, fmt.Errorf("sasl: %w", kerr.SaslAuthenticationFailed), "check kafka.sasl.mechanism"},
		{"SASL mechanism unknown", sasl, kerr.UnsupportedSaslMechanism, "check kafka.sasl.mechanism"},
		{"connection closed at login", sasl, fmt.Errorf("read: %w", io.EOF), "the broker closed the connection: check kafka.sasl.mechanism"},
		{"unknown CA", plain, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, "check kafka.tls.*"},
		{"wrong host", plain, x509.HostnameError{Certificate: &x509.Certificate{}, Host: "k"}, "check kafka.tls.*"},
		{"plaintext broker", plain, tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "check kafka.tls.*"},
		{"refused", plain, syscall.ECONNREFUSED, "check kafka.brokers (host:port)"},
	}
	for _, tt := range tests {
		if got := checkKafkaFix(tt.cfg, tt.err); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: %q, want it to start with %q", tt.name, got, tt.want)
		}
	}
	if got := checkOneLine("failed to connect to `user=u`:\n\ta: refused\n\ta: refused\n\tb: timeout\n"); got != "failed to connect to `user=u`: a: refused; b: timeout" {
		t.Errorf("checkOneLine: %q", got)
	}
}

// TestCheckBrokerThatIsNotKafka: kafka.brokers pointing at another
// service (here Postgres) fails with "not a Kafka broker" and the fix, not
// franz-go's "invalid large response size".
func TestCheckBrokerThatIsNotKafka(t *testing.T) {
	pg := pgtest.New(t)
	addr := fmt.Sprintf("127.0.0.1:%d", pg.Port())
	code, lines := checkRun(t, "--name", "nk", "--postgres-url", pg.URL("postgres"), "--brokers", addr, "--tables", "public.*")
	if code != connector.ExitRuntime {
		t.Errorf("exit %d, want 1", code)
	}
	checkWantLine(t, lines, "✗ Kafka "+addr, "not a Kafka broker", "— another service listens there", "check kafka.brokers")
}

// TestCheckTablesSharingATopic: two captured tables whose names sanitize
// to one topic fail check, as run refuses them.
func TestCheckTablesSharingATopic(t *testing.T) {
	pg := pgtest.New(t)
	checkSQL(t, pg, "postgres", `CREATE TABLE a_b (id int PRIMARY KEY); CREATE TABLE "a b" (id int PRIMARY KEY)`)
	broker := kafkatest.New(t)
	code, lines := checkRun(t, "--name", "clash", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--tables", "public.*")
	if code != connector.ExitRuntime {
		t.Errorf("exit %d, want 1", code)
	}
	checkWantLine(t, lines, "✗ topics: public.a b and public.a_b would share topic \"clash.public.a_b\"", "— exclude one of them from postgres.tables")
}

// TestCheckTablesExclude: check reports what postgres.tables_exclude
// leaves out, and an excluded table no longer clashes.
func TestCheckTablesExclude(t *testing.T) {
	pg := pgtest.New(t)
	checkSQL(t, pg, "postgres", `CREATE TABLE a_b (id int PRIMARY KEY); CREATE TABLE "a b" (id int PRIMARY KEY); CREATE TABLE orders (id int PRIMARY KEY)`)
	broker := kafkatest.New(t)
	args := []string{"check", "--name", "excl", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--tables", "public.*"}
	_, stdout, stderr := runCLI(t, args, []string{`MOONCDC_POSTGRES_TABLES_EXCLUDE=public."a b",public.nothing_*`})
	if stderr != "" {
		t.Errorf("stderr:\n%s", stderr)
	}
	lines := strings.Split(stdout, "\n")
	checkWantLine(t, lines, `✓ postgres.tables_exclude public."a b"`, "leaves out 1 table: public.a b")
	checkWantLine(t, lines, "! postgres.tables_exclude public.nothing_*", "matches no table")
	for _, l := range lines {
		if strings.Contains(l, "share topic") {
			t.Errorf("an excluded table still clashes: %s", l)
		}
	}
}

// TestCheckReportsRowFiltersAndColumnLists: check names the row filter and
// column list an existing publication has for a captured table (the
// snapshot follows them), and warns when postgres.tables asks for another.
func TestCheckReportsRowFiltersAndColumnLists(t *testing.T) {
	pg := pgtest.New(t)
	checkSQL(t, pg, "postgres", `CREATE TABLE orders (id int PRIMARY KEY, status text, secret text);
		CREATE PUBLICATION mooncdc_flt FOR TABLE orders (id, status) WHERE (id < 100)`)
	broker := kafkatest.New(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mooncdc.yaml")
	if err := os.WriteFile(path, []byte("postgres:\n  tables:\n    - {table: public.orders, where: \"id < 100\", columns: [id]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, lines := checkRun(t, "--config", path, "--name", "flt", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr())
	checkWantLine(t, lines, `✓ publication "mooncdc_flt" filters public.orders:`, "rows WHERE (id < 100)", "columns id, status", "the snapshot copies the same")
	checkWantLine(t, lines, "! postgres.tables entry public.orders:", "asks for rows WHERE (id < 100), columns id", "leaves an existing publication as it is")
}
