package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/offsets"
)

// withStdin makes reset read s as its standard input.
func withStdin(t *testing.T, s string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(s)
	t.Cleanup(func() { stdin = old })
}

func loadOffsets(t *testing.T, addr, name string) offsets.State {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	return loadState(t, cl, name)
}

func slotExists(t *testing.T, pg *pgtest.Cluster, slot string) bool {
	t.Helper()
	conn, err := pg.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestResetStartsOverUnderTheSameName: reset deletes this connector's
// offsets (not another's), drops the slot with --drop-slot, asks first
// unless --yes, refuses while a mooncdc streams from the slot, and the next
// run copies the tables anew into the same topics.
func TestResetStartsOverUnderTheSameName(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(ctx, "postgres", `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 10)`); err != nil {
		t.Fatal(err)
	}
	config := func(name string) string {
		return writeConfig(t, fmt.Sprintf("name: %s\npostgres:\n  url: %s\n  tables: [public.t]\nkafka:\n  brokers: [%s]\nmetrics:\n  listen: \"\"\n",
			name, pg.URL("postgres"), broker.Addr()))
	}
	cfg, other := config("rs"), config("other")
	for _, c := range []string{cfg, other} {
		var errOut bytes.Buffer
		if code := run(ctx, []string{"run", "--config", c, "--snapshot-mode", "initial_only"}, nil, io.Discard, &errOut); code != 0 {
			t.Fatalf("run exited %d:\n%s", code, errOut.String())
		}
	}
	if st := loadOffsets(t, broker.Addr(), "rs"); st.Pipeline == nil || len(st.Tables) != 1 {
		t.Fatalf("offsets before the reset: %+v", st)
	}

	// Not confirmed: nothing deleted.
	withStdin(t, "no\n")
	code, out, errOut := runCLI(t, []string{"reset", "--config", cfg, "--drop-slot"}, nil)
	if code != connector.ExitRuntime || !strings.Contains(errOut, "not confirmed; nothing was deleted") ||
		!strings.Contains(out, "delete the phases of 1 table: public.t") || !strings.Contains(out, `drop replication slot "mooncdc_rs"`) {
		t.Errorf("unconfirmed reset: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if st := loadOffsets(t, broker.Addr(), "rs"); st.Pipeline == nil || !slotExists(t, pg, "mooncdc_rs") {
		t.Fatal("an unconfirmed reset deleted something")
	}

	// A copy slot of each connector (an interrupted copy that could resume).
	rsCopy, otherCopy := pgsource.CopySlotName("mooncdc_rs", 16384), pgsource.CopySlotName("mooncdc_other", 16384)
	for _, s := range []string{rsCopy, otherCopy} {
		if err := pg.Exec(ctx, "postgres", `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, s); err != nil {
			t.Fatal(err)
		}
	}

	// Confirmed on standard input.
	withStdin(t, "yes\n")
	if code, out, errOut := runCLI(t, []string{"reset", "--config", cfg, "--drop-slot"}, nil); code != connector.ExitOK {
		t.Fatalf("reset: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if st := loadOffsets(t, broker.Addr(), "rs"); st.Pipeline != nil || len(st.Tables) != 0 {
		t.Errorf("offsets after the reset: %+v, want none", st)
	}
	if slotExists(t, pg, "mooncdc_rs") {
		t.Error("the slot survived --drop-slot")
	}
	if slotExists(t, pg, rsCopy) || !slotExists(t, pg, otherCopy) {
		t.Errorf("want the connector's copy slot %s dropped and the other connector's %s kept", rsCopy, otherCopy)
	}
	if st := loadOffsets(t, broker.Addr(), "other"); st.Pipeline == nil || len(st.Tables) != 1 || !slotExists(t, pg, "mooncdc_other") {
		t.Errorf("another connector's offsets or slot were touched: %+v", st)
	}

	// The next run copies the table again, into the same topic.
	var runErr bytes.Buffer
	if code := run(ctx, []string{"run", "--config", cfg, "--snapshot-mode", "initial_only"}, nil, io.Discard, &runErr); code != 0 {
		t.Fatalf("run after the reset exited %d:\n%s", code, runErr.String())
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if recs := kafkatest.ReadAll(rctx, t, broker.Addr(), 20, "rs.public.t"); len(recs) != 20 {
		t.Errorf("rs.public.t holds %d records, want the 10 rows copied twice", len(recs))
	}

	// While a mooncdc streams from the slot, reset refuses, even with --yes.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	var live syncBuf
	go func() { done <- run(runCtx, []string{"run", "--config", cfg}, nil, io.Discard, &live) }()
	eventually.Within(60*time.Second, 20*time.Millisecond, func() bool { return strings.Contains(live.String(), "streaming") })
	code, out, errOut = runCLI(t, []string{"reset", "--config", cfg, "--yes"}, nil)
	stop()
	<-done
	if code != connector.ExitRuntime || !strings.Contains(errOut, `replication slot "mooncdc_rs" is in use by PID`) {
		t.Errorf("reset while running: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if st := loadOffsets(t, broker.Addr(), "rs"); st.Pipeline == nil {
		t.Error("reset deleted the offsets of a running connector")
	}

	// Without --drop-slot the slot stays.
	if code, out, errOut := runCLI(t, []string{"reset", "--config", cfg, "--yes"}, nil); code != connector.ExitOK ||
		!strings.Contains(out, `replication slot "mooncdc_rs" is kept`) || !slotExists(t, pg, "mooncdc_rs") {
		t.Errorf("reset without --drop-slot: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
