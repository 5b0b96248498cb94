package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

const goodURL = "postgres://user:s3cret@localhost:5432/shop?sslmode=disable"

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mooncdc.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCLI(t *testing.T, args []string, environ []string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, environ, &out, &errb)
	return code, out.String(), errb.String()
}

func TestInvalidConfigExitsTwoAndNamesTheKey(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		environ []string
		file    string // written and passed as --config when set
		want    []string
	}{
		{name: "missing name", args: []string{"--postgres-url", goodURL}, want: []string{"name: required"}},
		{name: "missing url", args: []string{"--name", "shop"}, want: []string{"postgres.url: required, e.g. postgres://user@host:5432/db"}},
		{name: "nothing at all", want: []string{"name: required", "postgres.url: required"}},
		{name: "unknown yaml key", file: "name: shop\npostgres:\n  url: " + goodURL + "\n  tabels: [public.x]\n",
			want: []string{":4: unknown key postgres.tabels", "did you mean postgres.tables?"}},
		{name: "bad yaml value", file: "name: shop\nkafka:\n  topic_partitions: lots\n", want: []string{":3: kafka.topic_partitions:"}},
		{name: "bad env var", args: []string{"--name", "shop", "--postgres-url", goodURL},
			environ: []string{"MOONCDC_KAFKA_TOPIC_PARTITIONS=abc"}, want: []string{"MOONCDC_KAFKA_TOPIC_PARTITIONS:", `"abc"`}},
		{name: "unknown env var", args: []string{"--name", "shop", "--postgres-url", goodURL},
			environ: []string{"MOONCDC_POSTGRES_URI=" + goodURL}, want: []string{"MOONCDC_POSTGRES_URI: unknown variable", "MOONCDC_POSTGRES_URL"}},
		{name: "unknown flag", args: []string{"--nope"}, want: []string{"-nope"}},
		{name: "flag without value", args: []string{"--name"}, want: []string{"-name"}},
		{name: "stray argument", args: []string{"--name", "shop", "extra"}, want: []string{`unexpected argument "extra"`}},
		{name: "bad flag value", args: []string{"--name", "shop", "--postgres-url", goodURL, "--log-level", "loud"}, want: []string{"log.level:", "loud"}},
		{name: "bad table pattern", args: []string{"--name", "shop", "--postgres-url", goodURL, "--tables", "public.orders,public."},
			want: []string{"postgres.tables:", `"public."`}},
		{name: "bad table pattern from env", args: []string{"--name", "shop", "--postgres-url", goodURL},
			environ: []string{"MOONCDC_POSTGRES_TABLES=a.b.c"}, want: []string{"postgres.tables:", `"a.b.c"`}},
		{name: "missing config file", args: []string{"--config", "/nonexistent/mooncdc.yaml"}, want: []string{"/nonexistent/mooncdc.yaml"}},
		{name: "exactly-once timeout below interval", args: []string{"--name", "shop", "--postgres-url", goodURL},
			environ: []string{"MOONCDC_KAFKA_DELIVERY=exactly-once", "MOONCDC_KAFKA_TRANSACTION_TIMEOUT=1s", "MOONCDC_KAFKA_TRANSACTION_MAX_INTERVAL=2s"},
			want:    []string{"kafka.transaction_timeout:", "above kafka.transaction_max_interval"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run"}, tt.args...)
			if tt.file != "" {
				args = append(args, "--config", writeConfig(t, tt.file))
			}
			code, stdout, stderr := runCLI(t, args, tt.environ)
			if code != connector.ExitConfig {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, connector.ExitConfig, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "s3cret") {
				t.Errorf("stderr leaks the password:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty: %q", stdout)
			}
		})
	}
}

func TestConfigPrecedenceDefaultsFileEnvFlags(t *testing.T) {
	file := writeConfig(t, `
name: fromfile
data_dir: /file/data
postgres:
  url: postgres://file@host/db
  tables: [file.t]
kafka:
  brokers: [file:9092]
  topic_partitions: 3
log:
  level: warn
`)
	cfg, err := loadRunConfig(
		[]string{"--config", file, "--name", "fromflag", "--brokers", "f1:1, f2:2", "--log-format", "console"},
		[]string{"MOONCDC_NAME=fromenv", "MOONCDC_KAFKA_TOPIC_PARTITIONS=6", "MOONCDC_POSTGRES_TABLES=env.t", "MOONCDC_LOG_FORMAT=json", "UNRELATED=1"},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := config.DefaultConfig()
	want.Name = "fromflag"                                        // flag beats env and file
	want.DataDir = "/file/data"                                   // file beats default
	want.Postgres.URL = "postgres://file@host/db"                 // file only
	want.Postgres.Tables = []string{"env.t"}                      // env beats file
	want.Kafka.Brokers = []string{"f1:1", "f2:2"}                 // flag beats file
	want.Kafka.TopicPartitions = 6                                // env beats file
	want.Log = config.LogConfig{Level: "warn", Format: "console"} // flag beats env
	want.ApplyDefaults()
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("config =\n%v\nwant\n%v", cfg, want)
	}
	if cfg.Postgres.Slot != "mooncdc_fromflag" || cfg.Kafka.TopicPrefix != "fromflag" {
		t.Errorf("derived defaults not from the final name: slot %q prefix %q", cfg.Postgres.Slot, cfg.Kafka.TopicPrefix)
	}
}

func TestEmptyBrokersFlagSelectsEmbeddedKafka(t *testing.T) {
	cfg, err := loadRunConfig([]string{"--name", "shop", "--postgres-url", goodURL, "--brokers", ""},
		[]string{"MOONCDC_KAFKA_BROKERS=kafka:9092"})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.EmbeddedKafka() {
		t.Fatalf("--brokers \"\" did not clear the brokers: %q", cfg.Kafka.Brokers)
	}
}

func TestVersionPrints(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		code, stdout, _ := runCLI(t, []string{arg}, nil)
		if code != 0 || !strings.HasPrefix(stdout, "mooncdc ") || !strings.Contains(stdout, "go1.") {
			t.Errorf("%s: exit %d, stdout %q", arg, code, stdout)
		}
	}
	old := version
	version = "v9.9.9"
	defer func() { version = old }()
	if _, stdout, _ := runCLI(t, []string{"version"}, nil); !strings.HasPrefix(stdout, "mooncdc v9.9.9 ") {
		t.Errorf("ldflags version not used: %q", stdout)
	}
}

func TestHelpPrintsUsage(t *testing.T) {
	code, stdout, _ := runCLI(t, []string{"help"}, nil)
	if code != 0 || !strings.Contains(stdout, "mooncdc run [--config FILE]") || !strings.Contains(stdout, "Exit codes") {
		t.Errorf("help: exit %d, stdout:\n%s", code, stdout)
	}
	for _, args := range [][]string{{"help", "run"}, {"run", "--help"}, {"run", "-h"}} {
		code, stdout, _ := runCLI(t, args, nil)
		if code != 0 {
			t.Errorf("%q: exit %d", args, code)
		}
		for _, w := range []string{"--postgres-url", "--brokers", "--tables", "--log-format", "MOONCDC_POSTGRES_URL", "MOONCDC_KAFKA_TOPIC_REPLICATION_FACTOR"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: usage does not mention %s:\n%s", args, w, stdout)
			}
		}
	}
}

func TestNoCommandOrUnknownCommandExitsTwo(t *testing.T) {
	if code, _, stderr := runCLI(t, nil, nil); code != connector.ExitConfig || !strings.Contains(stderr, "Usage") {
		t.Errorf("no command: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI(t, []string{"frobnicate"}, nil); code != connector.ExitConfig || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: exit %d, stderr %q", code, stderr)
	}
}

func TestLoggerLevelsAndFormats(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(config.LogConfig{Level: "warn", Format: "json"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", zap.String("lsn", "0/1"))
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, `"msg":"shown"`) || !strings.Contains(out, `"lsn":"0/1"`) {
		t.Errorf("json logger wrote %q", out)
	}
	buf.Reset()
	log, err = newLogger(config.LogConfig{Level: "debug", Format: "console"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("dbg")
	if out := buf.String(); !strings.Contains(out, "DEBUG") || !strings.Contains(out, "dbg") || strings.HasPrefix(out, "{") {
		t.Errorf("console logger wrote %q", out)
	}
	if _, err := newLogger(config.LogConfig{Level: "loud", Format: "json"}, &buf); err == nil {
		t.Error("newLogger accepted level loud")
	}
}

// The first signal cancels the context (clean stop); the second forces exit 1.
func TestFirstSignalStopsSecondSignalForcesExit(t *testing.T) {
	exited := make(chan int, 1)
	ctx, stop := notifyShutdown(context.Background(), zap.NewNop(), func(code int) { exited <- code })
	defer stop()

	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("first SIGTERM did not cancel the context")
	}
	select {
	case code := <-exited:
		t.Fatalf("first signal exited with %d", code)
	default:
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != connector.ExitRuntime {
			t.Fatalf("second signal exit code %d, want %d", code, connector.ExitRuntime)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second signal did not force an exit")
	}
}

func TestShutdownStopIsIdempotent(t *testing.T) {
	ctx, stop := notifyShutdown(context.Background(), zap.NewNop(), func(int) { t.Error("exit called") })
	stop()
	stop()
	if ctx.Err() == nil {
		t.Error("stop did not cancel the context")
	}
}

// SIGHUP asks for a clean stop, like SIGTERM; by Go's default it would end
// the process (this test binary included) without one.
func TestSIGHUPIsACleanStop(t *testing.T) {
	exited := make(chan int, 1)
	ctx, stop := notifyShutdown(context.Background(), zap.NewNop(), func(code int) { exited <- code })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGHUP did not ask for a stop")
	}
	select {
	case code := <-exited:
		t.Fatalf("SIGHUP forced exit %d instead of a clean stop", code)
	default:
	}
}
