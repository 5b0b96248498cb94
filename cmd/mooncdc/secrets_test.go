package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// A run with every kind of secret, given every way (a password in the
// Postgres URL, the Kafka SASL password from the environment, the Schema
// Registry password from a file), at debug level: none of them appears in
// the logs, nor in the errors of a run whose config is refused.
func TestSecretsNeverReachTheLogs(t *testing.T) {
	const (
		pgPass    = "pg-Secret-4417"
		kafkaPass = "kafka-Secret-8123"
		srPass    = "registry-Secret-5590"
	)
	pg := pgtest.New(t)
	broker := kafkatest.New(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "cdc", kafkaPass))
	reg := srtest.New(t, srtest.WithBasicAuth("cdc", srPass))
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srFile := filepath.Join(dir, "registry-password")
	if err := os.WriteFile(srFile, []byte(srPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Trust authentication ignores the password, but mooncdc holds it.
	pgURL := strings.Replace(pg.URL("postgres"), "postgres@", "postgres:"+pgPass+"@", 1)
	cfg := writeConfig(t, `name: secrets
postgres:
  url: `+pgURL+`
  tables: [public.t]
kafka:
  brokers: [`+broker.Addr()+`]
  sasl:
    mechanism: SCRAM-SHA-512
    username: cdc
format:
  key: avro
  value: avro
  schema_registry:
    url: `+reg.URL()+`
    username: cdc
    password_file: `+srFile+`
metrics:
  listen: ""
log:
  level: debug
snapshot:
  mode: initial_only
`)
	environ := []string{"MOONCDC_KAFKA_SASL_PASSWORD=" + kafkaPass}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr syncBuf
	code := run(ctx, []string{"run", "--config", cfg}, environ, &stdout, &stderr)
	logs := stderr.String()
	if code != 0 {
		t.Fatalf("run exited %d:\n%s", code, logs)
	}
	// It did authenticate and write: the copy of t reached Kafka.
	if !strings.Contains(logs, "every table copied") {
		t.Fatalf("the run did not copy the table:\n%s", logs)
	}
	if !strings.Contains(logs, "xxxxx") {
		t.Errorf("the logged config shows no masked secret; is the config logged at all?\n%s", logs[:min(len(logs), 2000)])
	}
	for _, s := range []string{pgPass, kafkaPass, srPass} {
		if strings.Contains(logs, s) || strings.Contains(stdout.String(), s) {
			t.Errorf("the output of a run contains the secret %q", s)
		}
	}

	// Refused configs: their errors must not quote the secrets either.
	bad := writeConfig(t, "name: secrets\npostgres:\n  url: "+pgURL+"&sslmode=bogus\n  tables: [public.t]\nkafka:\n  brokers: ["+broker.Addr()+"]\n"+
		"  sasl:\n    mechanism: SCRAM-SHA-512\n    username: cdc\n    password_file: "+srFile+"\n")
	var out2, err2 syncBuf
	code = run(ctx, []string{"run", "--config", bad}, environ, &out2, &err2)
	if code != 2 {
		t.Fatalf("a config with two passwords and a bad sslmode exited %d, want 2:\n%s", code, err2.String())
	}
	for _, want := range []string{"kafka.sasl.password_file", "postgres.url"} {
		if !strings.Contains(err2.String(), want) {
			t.Errorf("the config error does not name %s:\n%s", want, err2.String())
		}
	}
	for _, s := range []string{pgPass, kafkaPass, srPass} {
		if strings.Contains(err2.String(), s) || strings.Contains(out2.String(), s) {
			t.Errorf("the config error quotes the secret %q:\n%s", s, err2.String())
		}
	}
}
