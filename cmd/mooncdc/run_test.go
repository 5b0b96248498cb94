package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// syncBuf is a bytes.Buffer safe to read while run writes to it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestRunStopsCleanlyThenRefusesAnotherDatabaseWithExitThree(t *testing.T) {
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "name: cli\npostgres:\n  tables: [public.t]\nmetrics:\n  listen: \"\"\n")
	args := func(url string) []string {
		return []string{"run", "--config", cfg, "--postgres-url", url, "--brokers", broker.Addr(), "--log-format", "console"}
	}

	// A first run streams, then stops cleanly on cancel (what SIGTERM does): exit 0.
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuf
	done := make(chan int, 1)
	go func() { done <- run(ctx, args(pg.URL("postgres")), nil, &bytes.Buffer{}, &stderr) }()
	if !eventually.Within(60*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(stderr.String(), "streaming") }) {
		cancel()
		t.Fatalf("no streaming after 60s:\n%s", stderr.String())
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("clean stop exited %d:\n%s", code, stderr.String())
	}

	// The same name against another Postgres system: exit 3, and a message
	// that says what changed and how to start over.
	other := pgtest.New(t)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	var out2, err2 bytes.Buffer
	code := run(ctx2, args(other.URL("postgres")), nil, &out2, &err2)
	errOut := err2.String()
	if code != 3 {
		t.Fatalf("want exit 3 for another database, got %d:\n%s", code, errOut)
	}
	for _, want := range []string{"unsafe resume", "system", "start over"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}
