package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/group"
	"github.com/mooncdc/mooncdc/internal/eventually"
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
	if !eventually.Within(60*time.Second, 50*time.Millisecond, func() bool { return strings.Count(stderr.String(), "streaming") >= 2 }) {
		cancel()
		t.Fatalf("not both pipelines streaming after 60s:\n%s", stderr.String())
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

// TestWorkerGroupNameResolvesFlagOverEnvOverFilesAndFilesMustAgree: the
// worker group of a directory is --group, else MOONCDC_WORKER_GROUP, else
// the files' worker_group (which must agree: the refusal names both
// files), else "default" — what run and status --config DIR both use.
func TestWorkerGroupNameResolvesFlagOverEnvOverFilesAndFilesMustAgree(t *testing.T) {
	const base = "postgres:\n  url: postgres://u@h/db\nkafka:\n  brokers: [k:9092]\n"
	file := func(name, group string) string {
		s := "name: " + name + "\n" + base
		if group != "" {
			s += "worker_group: " + group + "\n"
		}
		return s
	}
	tests := []struct {
		name         string
		a, b         string // worker_group in a.yaml and b.yaml; "" leaves it out
		flag         string // --group
		env          string // MOONCDC_WORKER_GROUP
		want         string // the consumer group, or
		wantErr      []string
		wantErrFiles bool // wantErr names b.yaml then a.yaml
	}{
		{name: "nothing set", want: "mooncdc-workers-default"},
		{name: "the files agree", a: "prod", b: "prod", want: "mooncdc-workers-prod"},
		{name: "--group overrides the files", a: "prod", b: "prod", flag: "ci", want: "mooncdc-workers-ci"},
		{name: "the environment overrides the files", a: "prod", b: "prod", env: "stage", want: "mooncdc-workers-stage"},
		{name: "--group overrides the environment", env: "stage", flag: "ci", want: "mooncdc-workers-ci"},
		{name: "--group makes disagreeing files agree", a: "prod", b: "stage", flag: "ci", want: "mooncdc-workers-ci"},
		{name: "the files disagree", a: "prod", b: "stage",
			wantErr: []string{`worker_group "stage" differs from`, `'s "prod"`}, wantErrFiles: true},
		{name: "one file sets it, the other does not", a: "prod",
			wantErr: []string{`worker_group unset ("default") differs from`, `'s "prod"`}, wantErrFiles: true},
		{name: "not a group name", a: "a b", b: "a b", wantErr: []string{`worker_group: "a b" may contain only letters`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, map[string]string{"a.yaml": file("a", tc.a), "b.yaml": file("b", tc.b)})
			cf, err := parseConfigFlags("run", []string{"--config", dir}, false)
			if err != nil {
				t.Fatal(err)
			}
			var environ []string
			if tc.env != "" {
				environ = []string{"MOONCDC_WORKER_GROUP=" + tc.env}
			}
			files, cfgs, err := loadConfigDir(workerFlags{group: tc.flag}.apply(cf), environ, config.Config.Validate)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("loaded, group %s; want an error %q", group.WorkerGroupOf(cfgs), tc.wantErr)
				}
				msg := err.Error()
				for _, w := range tc.wantErr {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q does not say %q", msg, w)
					}
				}
				if a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml"); tc.wantErrFiles && (!strings.Contains(msg, b+": worker_group") || !strings.Contains(msg, "from "+a+"'s")) {
					t.Errorf("error %q does not name both files", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if len(files) != 2 {
				t.Fatalf("files %v", files)
			}
			if got := group.WorkerGroup(group.WorkerGroupOf(cfgs)); got != tc.want {
				t.Errorf("group %s, want %s", got, tc.want)
			}
		})
	}

	// One file of the directory still loads alone (status, check, reset
	// --config DIR/FILE): a one-file run ignores worker_group.
	one := writeConfig(t, file("a", "prod"))
	if cfg, err := loadRunConfig([]string{"--config", one}, nil); err != nil || cfg.WorkerGroup != "prod" {
		t.Errorf("one file with worker_group: %v (worker_group %q)", err, cfg.WorkerGroup)
	}
}

// TestRunConfigDirJoinsTheGroupItsFilesName: with worker_group in the
// files and no --group, the worker joins mooncdc-workers-<worker_group>
// (the coordinator says so), and status --config DIR finds it there.
func TestRunConfigDirJoinsTheGroupItsFilesName(t *testing.T) {
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	for _, tb := range []string{"g1", "g2"} {
		if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE `+tb+` (id int PRIMARY KEY)`); err != nil {
			t.Fatal(err)
		}
	}
	dir := writeDir(t, map[string]string{
		"one.yaml": "name: gone\nworker_group: fromfile\npostgres:\n  tables: [public.g1]\nha:\n  session_timeout: 6s\n",
		"two.yaml": "name: gtwo\nworker_group: fromfile\npostgres:\n  tables: [public.g2]\nha:\n  session_timeout: 6s\n",
	})
	common := []string{"--config", dir, "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"run", "--worker-id", "wf", "--metrics-listen", unusedAddr(t), "--log-format", "console"}, common...), nil, &bytes.Buffer{}, &stderr)
	}()
	if !eventually.Within(60*time.Second, 50*time.Millisecond, func() bool { return strings.Count(stderr.String(), "streaming") >= 2 }) {
		cancel()
		t.Fatalf("not both pipelines streaming after 60s:\n%s", stderr.String())
	}
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer acancel()
	described, err := kadm.NewClient(broker.Client(t)).DescribeGroups(actx, "mooncdc-workers-fromfile", "mooncdc-workers-"+group.DefaultWorkerGroup)
	if err != nil {
		t.Fatalf("describe groups: %v", err)
	}
	g := described["mooncdc-workers-fromfile"]
	if g.Err != nil || len(g.Members) != 1 || g.Members[0].ClientID != "wf" {
		t.Errorf("group mooncdc-workers-fromfile: err %v, members %+v; want the worker wf", g.Err, g.Members)
	}
	if d := described["mooncdc-workers-"+group.DefaultWorkerGroup]; len(d.Members) != 0 {
		t.Errorf("the default group has members %+v", d.Members)
	}
	code, out, errOut := runCLI(t, append([]string{"status"}, common...), nil)
	t.Logf("status --config DIR:\n%s", out)
	if code != 0 || !strings.Contains(out, "Worker group mooncdc-workers-fromfile") || !regexpLine(out, "gone", "wf") || !regexpLine(out, "gtwo", "wf") {
		t.Errorf("status --config DIR: exit %d\n%s%s", code, out, errOut)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("clean stop exited %d:\n%s", code, stderr.String())
	}
}
