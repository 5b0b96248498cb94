package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// The documented exit codes, each from a real run of the command: 0 a clean
// end, 1 a runtime failure, 2 a bad config, 4 fenced by a second instance.
// (3, an unsafe resume, is TestRunStopsCleanlyThenRefusesAnotherDatabaseWithExitThree.)
func TestExitCodesAsDocumented(t *testing.T) {
	if !strings.Contains(usage(), "Exit codes: 0 clean stop, 1 runtime error, 2 invalid config, 3 unsafe resume") ||
		!strings.Contains(usage(), "4 fenced by another instance") {
		t.Fatalf("the usage no longer documents the exit codes:\n%s", usage())
	}
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE t (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	base := func(name string, extra ...string) []string {
		return append([]string{"run", "--name", name, "--postgres-url", pg.URL("postgres"), "--brokers", broker.Addr(),
			"--tables", "public.t", "--metrics-listen", "", "--log-format", "console"}, extra...)
	}
	runFor := func(t *testing.T, args []string, environ []string, d time.Duration) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var out, errb syncBuf
		code := run(ctx, args, environ, &out, &errb)
		return code, errb.String()
	}

	t.Run("0 clean end", func(t *testing.T) {
		code, logs := runFor(t, base("codes0", "--snapshot-mode", "initial_only"), nil, 60*time.Second)
		if code != connector.ExitOK {
			t.Fatalf("exit %d, want 0:\n%s", code, logs)
		}
	})
	t.Run("1 runtime failure", func(t *testing.T) {
		code, logs := runFor(t, base("codes1", "--tables", "public.absent"), nil, 60*time.Second)
		if code != connector.ExitRuntime || !strings.Contains(logs, "no table matches postgres.tables") {
			t.Fatalf("exit %d, want 1 naming the cause:\n%s", code, logs)
		}
	})
	t.Run("2 bad config", func(t *testing.T) {
		code, logs := runFor(t, base("codes2", "--snapshot-mode", "sometimes"), nil, 10*time.Second)
		if code != connector.ExitConfig || !strings.Contains(logs, "snapshot.mode") {
			t.Fatalf("exit %d, want 2 naming the key:\n%s", code, logs)
		}
	})
	t.Run("4 fenced", func(t *testing.T) {
		env := []string{"MOONCDC_KAFKA_DELIVERY=exactly-once"}
		first := make(chan int, 1)
		var firstLogs syncBuf
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		go func() { first <- run(ctx, base("codes4"), env, &syncBuf{}, &firstLogs) }()
		eventually.Succeeds(t, 60*time.Second, 20*time.Millisecond, func() error {
			if !strings.Contains(firstLogs.String(), "streaming") {
				return fmt.Errorf("the first instance is not streaming after 60s:\n%s", firstLogs.String())
			}
			return nil
		})
		// The second takes over the transactional ids: the first is fenced.
		secondCtx, stopSecond := context.WithCancel(ctx)
		second := make(chan int, 1)
		go func() { second <- run(secondCtx, base("codes4"), env, &syncBuf{}, &syncBuf{}) }()
		select {
		case code := <-first:
			if code != connector.ExitFenced {
				t.Fatalf("the fenced instance exited %d, want 4:\n%s", code, firstLogs.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("the first instance still runs 60s after a second one started:\n%s", firstLogs.String())
		}
		stopSecond()
		<-second
	})
}
