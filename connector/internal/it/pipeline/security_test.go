package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/internal/tlstest"
)

// tlsPostgres turns TLS on in e's cluster with a certificate for 127.0.0.1
// signed by ca, and waits until the server serves it.
func tlsPostgres(t *testing.T, pg *pgtest.Cluster, ca *tlstest.CA) {
	t.Helper()
	certPEM, keyPEM := ca.Issue(t, "127.0.0.1", "localhost")
	if err := pg.EnableTLS(context.Background(), certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	eventually.Succeeds(t, 10*time.Second, 50*time.Millisecond, func() error {
		conn, err := pg.Connect(context.Background(), "postgres")
		if err != nil {
			t.Fatal(err)
		}
		var on string
		err = conn.QueryRow(context.Background(), "SHOW ssl").Scan(&on)
		conn.Close(context.Background())
		if err == nil && on == "on" {
			return nil
		}
		return fmt.Errorf("ssl not on after the reload: %q %v", on, err)
	})
}

// Postgres over TLS with sslmode=verify-full and a CA made by the test: the
// pipeline streams, and its replication connection is encrypted. A CA that
// did not sign the server's certificate stops the pipeline at once, saying
// so, instead of retrying for ever.
func TestPostgresTLSVerifyFullWithATestCA(t *testing.T) {
	e := ittest.NewPrivateEnv(t) // TLS is the server's setting
	ca := tlstest.NewCA(t)
	tlsPostgres(t, e.PG.Cluster, ca)
	e.Exec(`CREATE TABLE public.secret (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO public.secret VALUES (1, 'copied')`)
	dir := t.TempDir()
	caFile := ca.WriteCA(t, dir)
	secure := strings.Replace(e.PG.URL("postgres"), "sslmode=disable", "sslmode=verify-full&sslrootcert="+caFile, 1)

	cfg := e.Config("tls", "public.secret")
	cfg.Postgres.URL = secure
	r := ittest.Start(t, cfg)
	e.Exec(`INSERT INTO public.secret VALUES (2, 'streamed')`)
	evs := ittest.Consume(t, e.Kafka, 2, "tls.public.secret")
	if evs[0].After["v"] != "copied" || evs[1].After["v"] != "streamed" {
		t.Fatalf("records: %+v", evs)
	}
	conn, err := e.PG.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	var walsenders, encrypted int
	err = conn.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE s.ssl)
		FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.backend_type = 'walsender'`).Scan(&walsenders, &encrypted)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if walsenders == 0 || encrypted != walsenders {
		t.Fatalf("%d of %d walsender connections use TLS; want all", encrypted, walsenders)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	// A CA that did not sign the server certificate.
	other := tlstest.NewCA(t)
	otherFile := other.WriteCA(t, t.TempDir())
	cfg.Postgres.URL = strings.Replace(e.PG.URL("postgres"), "sslmode=disable", "sslmode=verify-full&sslrootcert="+otherFile, 1)
	begin := time.Now()
	err = ittest.RunToEnd(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("want an error about the certificate, got %v", err)
	}
	if d := time.Since(begin); d > 20*time.Second {
		t.Fatalf("took %v: an untrusted certificate must not be retried", d)
	}
}

// SASL/SCRAM-SHA-256 and SCRAM-SHA-512 users on the broker: mooncdc
// authenticates with kafka.sasl.* (the password from a file for one of
// them), and a wrong password stops it with an error naming the cause.
func TestKafkaSASLSCRAMAgainstUsers(t *testing.T) {
	pg := pgtest.New(t)
	broker := kafkatest.New(t, kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "admin", "admin-secret"),
		kfake.User("SCRAM-SHA-256", "cdc256", "s3cret-256"),
		kfake.User("SCRAM-SHA-512", "cdc512", "s3cret-512"),
	)
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE public.t (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	e := ittest.EnvOn(t, pg, broker.Addr())
	pwFile := filepath.Join(t.TempDir(), "kafka-password")
	if err := os.WriteFile(pwFile, []byte("s3cret-512\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	asAdmin := kgo.SASL(scram.Auth{User: "admin", Pass: "admin-secret"}.AsSha256Mechanism())

	for i, u := range []struct{ mech, user, pass, file string }{
		{"SCRAM-SHA-256", "cdc256", "s3cret-256", ""},
		{"SCRAM-SHA-512", "cdc512", "", pwFile},
	} {
		t.Run(u.mech, func(t *testing.T) {
			name := []string{"sasl256", "sasl512"}[i]
			cfg := e.Config(name, "public.t")
			cfg.Kafka.SASL = config.KafkaSASLConfig{Mechanism: u.mech, Username: u.user, Password: u.pass, PasswordFile: u.file}
			r := ittest.Start(t, cfg)
			if err := pg.Exec(context.Background(), "postgres", `INSERT INTO public.t VALUES ($1)`, 100+i); err != nil {
				t.Fatal(err)
			}
			cl := broker.Client(t, asAdmin, kgo.ConsumeTopics(name+".public.t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// The table's rows so far: the earlier subtest's, then this one's.
			var got []string
			for len(got) < i+1 && ctx.Err() == nil {
				cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)) })
			}
			if want := fmt.Sprintf(`{"id":%d}`, 100+i); len(got) != i+1 || got[i] != want {
				t.Fatalf("records over SASL: keys %q, want the last %s", got, want)
			}
			if err := r.Stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}

	// A wrong password: kfake, like some brokers, closes the connection
	// instead of answering SASL_AUTHENTICATION_FAILED (which stops mooncdc
	// at once: TestClassify). The warning then points at the credentials,
	// and never quotes the password.
	cfg := e.Config("wrongpw", "public.t")
	cfg.Kafka.SASL = config.KafkaSASLConfig{Mechanism: "SCRAM-SHA-256", Username: "cdc256", Password: "not-it"}
	core, logs := observer.New(zap.DebugLevel)
	p, err := connector.New(cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	r := ittest.RunPipeline(t, p)
	eventually.Succeeds(t, 20*time.Second, 50*time.Millisecond, func() error {
		if logs.FilterMessageSnippet("check kafka.sasl.username and the password").Len() == 0 {
			return fmt.Errorf("no warning pointing at the SASL credentials within 20s; logs: %v", logs.All())
		}
		return nil
	})
	r.Cancel()
	<-r.Done
	r.Done <- nil
	for _, l := range logs.All() {
		if strings.Contains(fmt.Sprint(l.Message, l.Context), "not-it") {
			t.Fatalf("a log line quotes the password: %v %v", l.Message, l.Context)
		}
	}
}

// Kafka over TLS (kafka.tls.* with the test CA) with SASL PLAIN on top:
// the records arrive; the system CAs alone do not trust the test CA, and
// that stops the pipeline at once with the cause.
func TestKafkaTLSWithPlainSASL(t *testing.T) {
	pg := pgtest.New(t)
	ca := tlstest.NewCA(t)
	broker := kafkatest.New(t, kfake.TLS(ca.ServerConfig(t, "127.0.0.1", "localhost")), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "cdc", "plain-pass"))
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE public.t (id int PRIMARY KEY); INSERT INTO public.t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	e := ittest.EnvOn(t, pg, broker.Addr())
	caFile := ca.WriteCA(t, t.TempDir())
	cfg := e.Config("tlskafka", "public.t")
	cfg.Kafka.TLS = config.KafkaTLSConfig{Enabled: true, CAFile: caFile}
	cfg.Kafka.SASL = config.KafkaSASLConfig{Mechanism: "PLAIN", Username: "cdc", Password: "plain-pass"}
	r := ittest.Start(t, cfg)
	opts, err := cfg.KafkaOpts(cfg.Kafka.Brokers)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics("tlskafka.public.t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var keys []string
	for len(keys) == 0 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { keys = append(keys, string(r.Key)) })
	}
	if len(keys) != 1 || keys[0] != `{"id":7}` {
		t.Fatalf("records over TLS: %q", keys)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}

	cfg.Kafka.TLS.CAFile = "" // the system's CAs: the test CA is not among them
	begin := time.Now()
	err = ittest.RunToEnd(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("want an error about the broker's certificate, got %v", err)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Fatalf("took %v: an untrusted certificate must not be retried", d)
	}
}
