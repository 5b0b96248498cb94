package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// TestRunWritesACPUProfile: run --cpuprofile FILE writes a CPU profile
// of the run that go tool pprof reads, with samples in mooncdc's code;
// a FILE that cannot be created is a config error (exit 2) naming the
// flag, before anything runs.
func TestRunWritesACPUProfile(t *testing.T) {
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY, v text);
		INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 50000) g`); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "name: prof\npostgres:\n  tables: [public.t]\nmetrics:\n  listen: \"\"\n")
	args := func(profile string) []string {
		return []string{"run", "--config", cfg, "--cpuprofile", profile, "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(), "--log-format", "console"}
	}

	code, _, stderr := runCLI(t, args(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof")), nil)
	if code != connector.ExitConfig || !strings.Contains(stderr, "--cpuprofile") {
		t.Errorf("unwritable profile: exit %d, want %d naming --cpuprofile:\n%s", code, connector.ExitConfig, stderr)
	}

	path := filepath.Join(t.TempDir(), "cpu.pprof")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errOut syncBuf
	done := make(chan int, 1)
	go func() { done <- run(ctx, args(path), nil, &bytes.Buffer{}, &errOut) }()
	if !eventually.Within(90*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(errOut.String(), "table copied") }) {
		cancel()
		t.Fatalf("no copy after 90s:\n%s", errOut.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("clean stop exited %d:\n%s", code, errOut.String())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("the profile does not parse: %v", err)
	}
	if len(p.SampleType) < 2 || p.SampleType[1].Type != "cpu" || len(p.Sample) == 0 {
		t.Fatalf("not a CPU profile with samples: %v, %d samples", p.SampleType, len(p.Sample))
	}
	ours := false
	for _, fn := range p.Function {
		ours = ours || strings.HasPrefix(fn.Name, "github.com/mooncdc/mooncdc/")
	}
	if !ours {
		t.Errorf("no function of mooncdc's in the profile")
	}
}
