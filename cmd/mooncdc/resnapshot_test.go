package main

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/offsets"
)

const resnapshotLine = ": init (re-copy requested; a running pipeline picks it up at once, or the next start does)"

// seedOffsets starts a kfake broker and stores, for connector "shop" in
// the default offsets topic, a pipeline record and the given tables.
func seedOffsets(t *testing.T, tables ...offsets.Table) (*kafkatest.Broker, *kgo.Client) {
	t.Helper()
	broker := kafkatest.New(t)
	cl := broker.Client(t, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := config.DefaultOffsetsTopic
	if err := offsets.EnsureTopic(ctx, kadm.NewClient(cl), topic, -1); err != nil {
		t.Fatal(err)
	}
	recs := []*kgo.Record{offsets.PipelineRecord(topic, "shop", offsets.Pipeline{SystemID: "1", Database: "db", Slot: "mooncdc_shop", DurableLSN: 500})}
	// Another connector's table of the same name must not be touched.
	recs = append(recs, offsets.TableRecord(topic, "other", offsets.Table{Table: "public.orders", OID: 1, Phase: offsets.PhaseReady, LSN: 7}))
	for _, tb := range tables {
		recs = append(recs, offsets.TableRecord(topic, "shop", tb))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return broker, cl
}

func loadState(t *testing.T, cl *kgo.Client, name string) offsets.State {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := offsets.Load(ctx, cl, config.DefaultOffsetsTopic, name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var (
	readyOrders = offsets.Table{Table: "public.orders", OID: 16384, Phase: offsets.PhaseReady, LSN: 100, Attempts: 1, UpdatedMs: 1}
	readyUsers  = offsets.Table{Table: "public.users", OID: 16390, Phase: offsets.PhaseReady, LSN: 120, Attempts: 1, UpdatedMs: 1}
	erroredLogs = offsets.Table{Table: "audit.logs", OID: 16400, Phase: offsets.PhaseErrored, Attempts: 6, LastError: "permission denied", Retry: "waits for mooncdc resnapshot", UpdatedMs: 1, ResnapshotMs: 1}
)

func TestResnapshotSetsTheNamedTableBackToInit(t *testing.T) {
	broker, cl := seedOffsets(t, readyOrders, readyUsers)
	before := time.Now().UnixMilli()
	code, stdout, stderr := runCLI(t, []string{"resnapshot", "--name", "shop", "--brokers", broker.Addr(), "public.orders"}, nil)
	if code != connector.ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if stdout != "public.orders"+resnapshotLine+"\n" {
		t.Errorf("stdout = %q", stdout)
	}

	st := loadState(t, cl, "shop")
	got := st.Tables["public.orders"]
	if got.Phase != offsets.PhaseInit || got.LSN != 0 || got.Attempts != 0 || got.LastError != "" || got.Retry != "" || got.OID != readyOrders.OID {
		t.Errorf("public.orders = %+v, want init with the OID kept and nothing else", got)
	}
	// The re-copy is an incremental snapshot, as the execute-snapshot
	// signal a Debezium user would send (AbstractSnapshotSignal.java:36-40).
	if got.ResnapshotType != offsets.ResnapshotIncremental {
		t.Errorf("public.orders resnapshot_type %q, want %q", got.ResnapshotType, offsets.ResnapshotIncremental)
	}
	if got.ResnapshotMs < before || got.ResnapshotMs > time.Now().UnixMilli() || got.UpdatedMs != got.ResnapshotMs {
		t.Errorf("public.orders ResnapshotMs %d UpdatedMs %d, want now (>= %d)", got.ResnapshotMs, got.UpdatedMs, before)
	}
	if st.Tables["public.users"] != readyUsers {
		t.Errorf("public.users = %+v, want it untouched: %+v", st.Tables["public.users"], readyUsers)
	}
	if st.Pipeline == nil || st.Pipeline.DurableLSN != 500 {
		t.Errorf("pipeline record changed: %+v", st.Pipeline)
	}
	if other := loadState(t, cl, "other").Tables["public.orders"]; other.Phase != offsets.PhaseReady {
		t.Errorf("another connector's table changed: %+v", other)
	}

	// A second request is newer than the first, even within the same millisecond.
	code, _, stderr = runCLI(t, []string{"resnapshot", "--name", "shop", "--brokers", broker.Addr(), "public.orders"}, nil)
	if code != connector.ExitOK {
		t.Fatalf("second run: exit %d, stderr:\n%s", code, stderr)
	}
	if again := loadState(t, cl, "shop").Tables["public.orders"]; again.ResnapshotMs <= got.ResnapshotMs {
		t.Errorf("second request ResnapshotMs %d, not newer than %d", again.ResnapshotMs, got.ResnapshotMs)
	}
}

func TestResnapshotWildcardsConfigFileAndFlagsAfterTables(t *testing.T) {
	broker, cl := seedOffsets(t, readyOrders, readyUsers, erroredLogs)
	cfg := writeConfig(t, "name: shop\nkafka:\n  brokers: ["+broker.Addr()+"]\n")
	// Flags may follow the tables; a table named twice is written once.
	code, stdout, stderr := runCLI(t, []string{"resnapshot", "--config", cfg, "audit.*", "Audit.Logs", "--log-level", "warn", "public.users"}, nil)
	if code != connector.ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	want := "audit.logs" + resnapshotLine + "\npublic.users" + resnapshotLine + "\n"
	if stdout != want {
		t.Errorf("stdout = %q\nwant %q", stdout, want)
	}
	st := loadState(t, cl, "shop")
	logs := st.Tables["audit.logs"]
	if logs.Phase != offsets.PhaseInit || logs.Attempts != 0 || logs.LastError != "" || logs.Retry != "" || logs.OID != erroredLogs.OID || logs.ResnapshotMs <= erroredLogs.ResnapshotMs {
		t.Errorf("audit.logs = %+v", logs)
	}
	if st.Tables["public.users"].Phase != offsets.PhaseInit {
		t.Errorf("public.users = %+v", st.Tables["public.users"])
	}
	if st.Tables["public.orders"] != readyOrders {
		t.Errorf("public.orders = %+v, want untouched", st.Tables["public.orders"])
	}
}

func TestResnapshotUnknownTableWritesNothingAndExitsOne(t *testing.T) {
	broker, cl := seedOffsets(t, readyOrders, readyUsers)
	code, stdout, stderr := runCLI(t, []string{"resnapshot", "--name", "shop", "--brokers", broker.Addr(), "public.orders", "public.nope", "x.*"}, nil)
	if code != connector.ExitRuntime {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, connector.ExitRuntime, stderr)
	}
	for _, w := range []string{"public.nope, x.* are not tables known", `connector "shop"`, "known tables: public.orders, public.users", "nothing written"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}
	st := loadState(t, cl, "shop")
	if !reflect.DeepEqual(st.Tables, map[string]offsets.Table{"public.orders": readyOrders, "public.users": readyUsers}) {
		t.Errorf("tables changed: %+v", st.Tables)
	}

	// A connector name with no tables at all says what to check.
	code, _, stderr = runCLI(t, []string{"resnapshot", "--name", "shopp", "--brokers", broker.Addr(), "public.orders"}, nil)
	if code != connector.ExitRuntime || !strings.Contains(stderr, "holds no tables") || !strings.Contains(stderr, "kafka.offsets_topic") {
		t.Errorf("unknown name: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestResnapshotUsageErrorsExitTwo(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		environ []string
		want    []string
	}{
		{name: "no table", args: []string{"--name", "shop", "--brokers", "127.0.0.1:1"}, want: []string{"name at least one table", "Usage: mooncdc resnapshot"}},
		{name: "nothing at all", want: []string{"name at least one table"}},
		{name: "empty brokers", args: []string{"--name", "shop", "public.orders"}, want: []string{"kafka.brokers is empty", "--brokers 127.0.0.1:9092", "mooncdc run"}},
		{name: "brokers cleared by the flag", args: []string{"--name", "shop", "--brokers", "", "public.orders"}, environ: []string{"MOONCDC_KAFKA_BROKERS=k:9092"}, want: []string{"kafka.brokers is empty"}},
		{name: "bad table", args: []string{"--name", "shop", "--brokers", "127.0.0.1:1", "public."}, want: []string{`"public."`, "schema.table"}},
		{name: "invalid config", args: []string{"--brokers", "127.0.0.1:1", "public.orders"}, want: []string{"name: required"}},
		{name: "bad postgres url still checked", args: []string{"--name", "shop", "--brokers", "127.0.0.1:1", "--postgres-url", "postgres://u:s3cret@h:x/db", "public.orders"}, want: []string{"postgres.url:"}},
		{name: "unknown flag", args: []string{"--name", "shop", "--nope", "public.orders"}, want: []string{"-nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"resnapshot"}, tt.args...), tt.environ)
			if code != connector.ExitConfig {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, connector.ExitConfig, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if stdout != "" || strings.Contains(stderr, "s3cret") {
				t.Errorf("stdout %q; stderr:\n%s", stdout, stderr)
			}
		})
	}
}

func TestResnapshotUnreachableKafkaExitsOne(t *testing.T) {
	old := resnapshotTimeout
	resnapshotTimeout = 2 * time.Second
	defer func() { resnapshotTimeout = old }()
	code, _, stderr := runCLI(t, []string{"resnapshot", "--name", "shop", "--brokers", "127.0.0.1:1", "public.orders"}, nil)
	if code != connector.ExitRuntime || !strings.Contains(stderr, "mooncdc run") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestResnapshotHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "resnapshot"}, {"resnapshot", "--help"}, {"resnapshot", "-h"}} {
		code, stdout, _ := runCLI(t, args, nil)
		if code != 0 {
			t.Errorf("%q: exit %d", args, code)
		}
		for _, w := range []string{"Usage: mooncdc resnapshot", "TABLE", "--brokers", "at once", "MOONCDC_KAFKA_BROKERS"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: usage does not mention %s", args, w)
			}
		}
	}
	if _, stdout, _ := runCLI(t, []string{"help"}, nil); !strings.Contains(stdout, "mooncdc resnapshot") {
		t.Errorf("help does not list resnapshot:\n%s", stdout)
	}
}

func TestSnapshotModeFlag(t *testing.T) {
	cfg, err := loadRunConfig([]string{"--name", "shop", "--postgres-url", goodURL, "--snapshot-mode", "initial_only"},
		[]string{"MOONCDC_SNAPSHOT_MODE=never"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Snapshot.Mode != config.SnapshotInitialOnly {
		t.Errorf("snapshot mode %q, want the flag's initial_only", cfg.Snapshot.Mode)
	}
	code, _, stderr := runCLI(t, []string{"run", "--name", "shop", "--postgres-url", goodURL, "--snapshot-mode", "sometimes"}, nil)
	if code != connector.ExitConfig || !strings.Contains(stderr, "snapshot.mode:") || !strings.Contains(stderr, "initial_only") {
		t.Errorf("bad --snapshot-mode: exit %d, stderr:\n%s", code, stderr)
	}
	_, stdout, _ := runCLI(t, []string{"help", "run"}, nil)
	if !strings.Contains(stdout, "--snapshot-mode") || !strings.Contains(stdout, "MOONCDC_SNAPSHOT_DISCOVERY_INTERVAL") {
		t.Errorf("run usage lacks --snapshot-mode or the snapshot variables")
	}
}

func TestParseConfigFlagsDoubleDash(t *testing.T) {
	cf, err := parseConfigFlags("resnapshot", []string{"a.b", "--name", "shop", "--", "--weird", "c.d"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cf.args, []string{"a.b", "--weird", "c.d"}) {
		t.Errorf("args = %q", cf.args)
	}
	if _, err := parseConfigFlags("run", []string{"--name", "shop", "x"}, false); err == nil || !strings.Contains(err.Error(), `unexpected argument "x"`) {
		t.Errorf("run accepted a positional argument: %v", err)
	}
}

func TestCutIncrementalFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		rest []string
		on   bool
	}{
		{[]string{"public.t"}, []string{"public.t"}, false},
		{[]string{"--incremental", "public.t"}, []string{"public.t"}, true},
		{[]string{"public.t", "-incremental=true", "--brokers", "x"}, []string{"public.t", "--brokers", "x"}, true},
		{[]string{"--incremental", "--incremental=false", "public.t"}, []string{"public.t"}, false},
		{[]string{"--", "--incremental"}, []string{"--", "--incremental"}, false},
		{[]string{"incremental"}, []string{"incremental"}, false},
	} {
		rest, on := cutIncrementalFlag(tc.args)
		if on != tc.on || !slices.Equal(rest, tc.rest) {
			t.Errorf("cutIncrementalFlag(%q) = %q, %v; want %q, %v", tc.args, rest, on, tc.rest, tc.on)
		}
	}
}
