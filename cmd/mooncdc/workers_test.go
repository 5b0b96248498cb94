package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// writeDir writes files (name → content) into a new directory.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunConfigDirNamesTheFileOfEveryProblem: each pipeline file is
// validated at start, and a problem names its file; duplicate names are
// refused naming both files.
func TestRunConfigDirNamesTheFileOfEveryProblem(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"a.yaml":    "name: a\npostgres:\n  url: postgres://u@h/db\nkafka:\n  brokers: [k:9092]\n  nosuchkey: 1\n",
		"b.yml":     "name: b\npostgres:\n  url: postgres://u@h/db\nkafka:\n  brokers: [k:9092]\nsnapshot:\n  mode: sometimes\n",
		"notes.txt": "not a pipeline",
	})
	code, _, stderr := runCLI(t, []string{"run", "--config", dir}, nil)
	t.Logf("run --config DIR with bad files:\n%s", stderr)
	if code != 2 || !strings.Contains(stderr, "a.yaml") || !strings.Contains(stderr, "nosuchkey") || !strings.Contains(stderr, "b.yml: snapshot.mode") {
		t.Errorf("run --config DIR with bad files: exit %d, want 2 naming a.yaml's key and b.yml's:\n%s", code, stderr)
	}
	dup := writeDir(t, map[string]string{
		"a.yaml": "name: same\npostgres:\n  url: postgres://u@h/db\n  slot: s1\nkafka:\n  brokers: [k:9092]\n",
		"b.yaml": "name: same\npostgres:\n  url: postgres://u@h/db\n  slot: s2\nkafka:\n  brokers: [k:9092]\n",
	})
	code, _, stderr = runCLI(t, []string{"run", "--config", dup}, nil)
	if code != 2 || !strings.Contains(stderr, `b.yaml: name "same" is also the name of `+filepath.Join(dup, "a.yaml")) {
		t.Errorf("run --config DIR with duplicate names: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, []string{"run", "--config", writeDir(t, nil)}, nil)
	if code != 2 || !strings.Contains(stderr, "no pipeline files") {
		t.Errorf("run --config EMPTYDIR: exit %d:\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, []string{"run", "--group", "g", "--postgres-url", "postgres://u@h/db"}, nil)
	if code != 2 || !strings.Contains(stderr, "--config DIR") {
		t.Errorf("run --group without a directory: exit %d:\n%s", code, stderr)
	}
}

// TestRunConfigDirWorkerRunsThePipelinesAndStatusShowsIt: one worker of a
// group runs both pipelines of its directory; status --config DIR says
// which worker runs each; a signal stops it cleanly (exit 0).
func TestRunConfigDirWorkerRunsThePipelinesAndStatusShowsIt(t *testing.T) {
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	for _, tb := range []string{"t1", "t2"} {
		if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE `+tb+` (id int PRIMARY KEY)`); err != nil {
			t.Fatal(err)
		}
	}
	dir := writeDir(t, map[string]string{
		"one.yaml": "name: one\npostgres:\n  tables: [public.t1]\nha:\n  session_timeout: 6s\n",
		"two.yaml": "name: two\npostgres:\n  tables: [public.t2]\nha:\n  session_timeout: 6s\n",
	})
	common := []string{"--config", dir, "--group", "cli", "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"run", "--worker-id", "w1", "--metrics-listen", unusedAddr(t), "--log-format", "console"}, common...), nil, &bytes.Buffer{}, &stderr)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(stderr.String(), "streaming") < 2 {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("not both pipelines streaming after 60s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, out, errOut := runCLI(t, append([]string{"status"}, common...), nil)
	t.Logf("status --config DIR:\n%s", out)
	if code != 0 || !strings.Contains(out, "mooncdc-workers-cli") || !regexpLine(out, "one", "w1") || !regexpLine(out, "two", "w1") {
		t.Errorf("status --config DIR: exit %d\n%s%s", code, out, errOut)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("clean stop exited %d:\n%s", code, stderr.String())
	}
}

// regexpLine reports whether out has a line whose fields start with
// pipeline and worker.
func regexpLine(out, pipeline, worker string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == pipeline && f[1] == worker {
			return true
		}
	}
	return false
}
