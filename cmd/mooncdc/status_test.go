package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/eventually"
	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// statusJSON is the documented --json form, spelled out here so that a
// renamed field fails the tests.
type statusJSON struct {
	Name           string `json:"name"`
	Running        string `json:"running"`
	RunningDetail  string `json:"running_detail"`
	Streaming      *bool  `json:"streaming"`
	DurableLSN     string `json:"durable_lsn"`
	DurableLSNFrom string `json:"durable_lsn_from"`
	Offsets        struct {
		Topic        string     `json:"topic"`
		Error        string     `json:"error"`
		Found        bool       `json:"found"`
		DurableLSN   string     `json:"durable_lsn"`
		UpdatedAt    *time.Time `json:"updated_at"`
		DurableSince *time.Time `json:"durable_since"`
	} `json:"offsets"`
	Postgres struct {
		Error      string `json:"error"`
		CurrentLSN string `json:"current_lsn"`
		Slot       *struct {
			Name              string `json:"name"`
			Exists            bool   `json:"exists"`
			Active            bool   `json:"active"`
			ConfirmedFlushLSN string `json:"confirmed_flush_lsn"`
			RestartLSN        string `json:"restart_lsn"`
			WALStatus         string `json:"wal_status"`
			RetainedWALBytes  *int64 `json:"retained_wal_bytes"`
		} `json:"slot"`
	} `json:"postgres"`
	Lag struct {
		Bytes       *int64     `json:"bytes"`
		Seconds     *float64   `json:"seconds"`
		BehindSince *time.Time `json:"behind_since"`
	} `json:"lag"`
	Tables []struct {
		Table         string `json:"table"`
		Phase         string `json:"phase"`
		LSN           string `json:"lsn"`
		Attempts      int    `json:"attempts"`
		LastError     string `json:"last_error"`
		Retry         string `json:"retry"`
		EstimatedRows *int64 `json:"estimated_rows"`
		Copy          *struct {
			Stage         string    `json:"stage"`
			Rows          int64     `json:"rows"`
			EstimatedRows int64     `json:"estimated_rows"`
			Started       time.Time `json:"started"`
			RowsPerSecond float64   `json:"rows_per_second"`
			ETASeconds    *float64  `json:"eta_seconds"`
		} `json:"copy"`
	} `json:"tables"`
}

// statusOf runs status --json with args and decodes its output, which it
// also returns.
func statusOf(t *testing.T, wantCode int, args ...string) (statusJSON, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"status", "--json"}, args...), nil)
	if code != wantCode {
		t.Fatalf("status --json: exit %d, want %d; stderr:\n%s\nstdout:\n%s", code, wantCode, stderr, stdout)
	}
	var st statusJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("status --json printed no JSON document: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("status --json printed more than one document:\n%s", stdout)
	}
	return st, stdout
}

// unusedAddr returns a 127.0.0.1 address nothing listens on (for now).
func unusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func slotLSNs(t *testing.T, pg *pgtest.Cluster, slot string) (confirmed, current string) {
	t.Helper()
	conn, err := pg.Connect(context.Background(), "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `SELECT confirmed_flush_lsn::text, pg_current_wal_lsn()::text
		FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&confirmed, &current); err != nil {
		t.Fatal(err)
	}
	return confirmed, current
}

func mustLSN(t *testing.T, s string) schema.LSN {
	t.Helper()
	l, err := schema.ParseLSN(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestStatusAfterACleanStopShowsReadyTablesTheSlotAndTheLag(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(ctx, "postgres", `CREATE TABLE orders (id int PRIMARY KEY, note text);
		INSERT INTO orders SELECT g, 'note ' || g FROM generate_series(1, 1000) g;
		CREATE TABLE users (id int PRIMARY KEY);
		ANALYZE`); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf("name: shop\npostgres:\n  url: %s\n  tables: [public.orders, public.users]\nkafka:\n  brokers: [%s]\nmetrics:\n  listen: %q\nlog:\n  format: console\n",
		pg.URL("postgres"), broker.Addr(), unusedAddr(t)))

	// A real run copies both tables, hands them over and stops cleanly.
	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var runErr bytes.Buffer
	if code := run(runCtx, []string{"run", "--config", cfg, "--snapshot-mode", "initial_only"}, nil, io.Discard, &runErr); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, runErr.String())
	}

	st, raw := statusOf(t, connector.ExitOK, "--config", cfg)
	t.Logf("status --json after the stop:\n%s", raw)
	if st.Name != "shop" || st.Running != "no" || !strings.Contains(st.RunningDetail, "nothing answers") || st.Streaming != nil {
		t.Errorf("name %q running %q (%s) streaming %v, want shop, no, null", st.Name, st.Running, st.RunningDetail, st.Streaming)
	}
	if st.Offsets.Error != "" || st.Postgres.Error != "" || !st.Offsets.Found || st.Offsets.UpdatedAt == nil {
		t.Fatalf("offsets %+v, postgres error %q", st.Offsets, st.Postgres.Error)
	}
	confirmed, _ := slotLSNs(t, pg, "mooncdc_shop")
	s := st.Postgres.Slot
	if s == nil {
		t.Fatal("postgres.slot is null")
	}
	if !s.Exists || s.Active || s.Name != "mooncdc_shop" || s.ConfirmedFlushLSN != confirmed || s.RestartLSN == "" || s.WALStatus == "" || s.RetainedWALBytes == nil {
		t.Errorf("slot %+v, want mooncdc_shop inactive with confirmed_flush_lsn %s", s, confirmed)
	}
	if st.DurableLSN != confirmed || st.DurableLSNFrom != "offsets" || st.Offsets.DurableLSN != confirmed {
		t.Errorf("durable LSN %s (from %s; offsets %s), want the slot's confirmed_flush_lsn %s", st.DurableLSN, st.DurableLSNFrom, st.Offsets.DurableLSN, confirmed)
	}
	if st.Lag.Bytes == nil || st.Lag.Seconds == nil {
		t.Fatalf("lag not computed: %+v", st.Lag)
	}
	if len(st.Tables) != 2 {
		t.Fatalf("tables %+v, want orders and users", st.Tables)
	}
	for _, tb := range st.Tables {
		if tb.Phase != offsets.PhaseReady || tb.LSN == "" || tb.Attempts != 0 || tb.LastError != "" || tb.Copy != nil || tb.EstimatedRows == nil {
			t.Errorf("table %+v, want ready with an LSN, attempts reset by the handover, no error, no copy", tb)
		}
	}
	if o := st.Tables[0]; o.Table != "public.orders" || *o.EstimatedRows != 1000 {
		t.Errorf("first table %s estimated %v, want public.orders with pg_class.reltuples 1000", o.Table, o.EstimatedRows)
	}

	// Writes while nothing streams: the slot falls behind, and the
	// duration is the time since the offsets last recorded the durable LSN.
	if err := pg.Exec(ctx, "postgres", `INSERT INTO orders SELECT g, 'later' FROM generate_series(1001, 3000) g`); err != nil {
		t.Fatal(err)
	}
	behind, raw := statusOf(t, connector.ExitOK, "--config", cfg)
	t.Logf("status --json after more writes:\n%s", raw)
	_, current := slotLSNs(t, pg, "mooncdc_shop")
	if behind.Lag.Bytes == nil || *behind.Lag.Bytes <= *st.Lag.Bytes || *behind.Lag.Bytes < 2000*20 {
		t.Errorf("lag after 2000 inserts: %v bytes, before %d", behind.Lag.Bytes, *st.Lag.Bytes)
	}
	if behind.Lag.Seconds == nil || *behind.Lag.Seconds <= 0 || behind.Lag.BehindSince == nil || st.Offsets.DurableSince == nil || !behind.Lag.BehindSince.Equal(*st.Offsets.DurableSince) {
		t.Errorf("lag duration %v since %v, want > 0 since the offsets' durable_since %v", behind.Lag.Seconds, behind.Lag.BehindSince, st.Offsets.DurableSince)
	}
	if cur, now := mustLSN(t, behind.Postgres.CurrentLSN), mustLSN(t, current); cur > now || cur <= mustLSN(t, confirmed) || behind.DurableLSN != confirmed {
		t.Errorf("current LSN %s (Postgres now %s), durable %s (want unchanged %s)", behind.Postgres.CurrentLSN, current, behind.DurableLSN, confirmed)
	}

	// The same, for people.
	code, out, stderr := runCLI(t, []string{"status", "--config", cfg}, nil)
	t.Logf("status:\n%s", out)
	if code != connector.ExitOK {
		t.Fatalf("status: exit %d, stderr:\n%s", code, stderr)
	}
	for _, w := range []string{
		"connector    shop", "running      no (nothing answers on http://127.0.0.1:",
		"durable LSN  " + confirmed + " (offsets, recorded ",
		// Debezium's default heartbeat topic (HeartbeatImpl.java:46, AbstractTopicNamingStrategy.java:142-147).
		"heartbeats   every 10s, records on topic __debezium-heartbeat.shop",
		"slot         mooncdc_shop, inactive: confirmed_flush " + confirmed + ", restart ",
		"wal_status reserved, safe_wal_size unlimited",
		" of WAL not yet confirmed; behind since ", " ago), when the durable LSN last moved",
		"TABLE          PHASE  LSN", "PROGRESS  ATTEMPTS  LAST ERROR",
		"public.orders  ready  ", "  copied    0         -",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("status output lacks %q", w)
		}
	}

	// Kafka unreachable: the Postgres part is still shown, and exit 1.
	old := statusKafkaTimeout
	statusKafkaTimeout = 2 * time.Second
	defer func() { statusKafkaTimeout = old }()
	code, out, stderr = runCLI(t, []string{"status", "--config", cfg, "--brokers", "127.0.0.1:1"}, nil)
	if code != connector.ExitRuntime || !strings.Contains(out, "offsets      could not be read: ") || !strings.Contains(out, "slot         mooncdc_shop, inactive") ||
		!strings.Contains(stderr, "could not read the offsets") || !strings.Contains(out, "tables unknown: the offsets could not be read") ||
		!strings.Contains(out, "KiB of WAL not yet confirmed (for how long is unknown: ") {
		t.Errorf("unreachable Kafka: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

func TestStatusWhileRunningShowsTheCopyInProgress(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	const rows = 20000
	if err := pg.Exec(ctx, "postgres", fmt.Sprintf(`CREATE TABLE big (id int PRIMARY KEY);
		INSERT INTO big SELECT generate_series(1, %d);
		ANALYZE big`, rows)); err != nil {
		t.Fatal(err)
	}

	// Kafka holds every produce request to the table's topic until
	// released, so the copy stops part-way: the tracker lets at most
	// kafka.max_inflight_bytes / snapshot.workers go unacknowledged.
	c := broker.Cluster()
	const topic = "shop.public.big"
	if err := c.CreateTopic(topic, 1, nil); err != nil {
		t.Fatal(err)
	}
	topicID := c.TopicInfo(topic).TopicID
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.ProduceRequest).Topics {
			if rt.Topic == topic || rt.TopicID == topicID {
				c.SleepControl(func() { <-release })
				break
			}
		}
		return nil, nil, false
	})

	listen := unusedAddr(t)
	cfg := writeConfig(t, fmt.Sprintf("name: shop\npostgres:\n  url: %s\n  tables: [public.big]\nkafka:\n  brokers: [%s]\n  max_inflight_bytes: 1048576\nmetrics:\n  listen: %q\nlog:\n  format: console\n",
		pg.URL("postgres"), broker.Addr(), listen))
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var runErr syncBuf
	done := make(chan int, 1)
	go func() { done <- run(runCtx, []string{"run", "--config", cfg}, nil, io.Discard, &runErr) }()

	var st statusJSON
	var raw string
	if !eventually.Within(90*time.Second, 50*time.Millisecond, func() bool {
		st, raw = statusOf(t, connector.ExitOK, "--config", cfg)
		return len(st.Tables) == 1 && st.Tables[0].Copy != nil && st.Tables[0].Copy.Rows > 0
	}) {
		free()
		t.Fatalf("no copy in progress seen after 90s: %+v\nrun:\n%s", st, runErr.String())
	}
	t.Logf("status --json mid-copy:\n%s", raw)
	tb := st.Tables[0]
	cp := tb.Copy
	if st.Running != "yes" || st.DurableLSNFrom != "live" || st.DurableLSN == "" || st.Streaming == nil {
		t.Errorf("running %q, durable %q from %q, streaming %v: want yes, from live", st.Running, st.DurableLSN, st.DurableLSNFrom, st.Streaming)
	}
	if tb.Table != "public.big" || tb.Phase != offsets.PhaseCopying || tb.EstimatedRows == nil || *tb.EstimatedRows != rows {
		t.Errorf("table %+v, want public.big copying, estimated %d", tb, rows)
	}
	if cp.Stage != "copying" || cp.Rows >= rows || cp.EstimatedRows != rows || cp.Started.IsZero() || cp.RowsPerSecond <= 0 || cp.ETASeconds == nil || *cp.ETASeconds <= 0 {
		t.Errorf("copy %+v (eta %v), want 0 < rows < %d of %d estimated, a rate and an ETA", cp, cp.ETASeconds, rows, rows)
	}
	code, out, stderr := runCLI(t, []string{"status", "--config", cfg}, nil)
	t.Logf("status mid-copy:\n%s", out)
	if code != connector.ExitOK {
		t.Fatalf("status: exit %d, stderr:\n%s", code, stderr)
	}
	for _, w := range []string{"running      yes (streaming, version ", fmt.Sprintf("/~%d rows (", rows), " rows/s, ETA ", "public.big  copying"} {
		if !strings.Contains(out, w) {
			t.Errorf("status output lacks %q", w)
		}
	}

	// Released, the copy finishes and the running pipeline says so.
	free()
	eventually.Succeeds(t, 90*time.Second, 100*time.Millisecond, func() error {
		st, _ = statusOf(t, connector.ExitOK, "--config", cfg)
		if len(st.Tables) == 1 && st.Tables[0].Phase == offsets.PhaseReady {
			return nil
		}
		return fmt.Errorf("table not ready after 90s: %+v\nrun:\n%s", st, runErr.String())
	})
	if st.Running != "yes" || st.Tables[0].Copy != nil || st.Tables[0].LSN == "" {
		t.Errorf("after the copy: running %q, table %+v", st.Running, st.Tables[0])
	}
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("run exited %d:\n%s", code, runErr.String())
	}
}

func TestStatusShowsAnErroredTablesAttemptsAndLastError(t *testing.T) {
	broker, _ := seedOffsets(t, readyOrders, erroredLogs)
	args := []string{"--name", "shop", "--brokers", broker.Addr(), "--metrics-listen", unusedAddr(t)}

	// Without postgres.url the offsets are still shown; exit 1.
	st, _ := statusOf(t, connector.ExitRuntime, args...)
	if st.Postgres.Error != "postgres.url not set" || st.Postgres.Slot != nil || st.Offsets.Error != "" || st.Offsets.DurableLSN != "0/1F4" || st.DurableLSN != "0/1F4" {
		t.Errorf("postgres error %q, offsets %+v, durable %q", st.Postgres.Error, st.Offsets, st.DurableLSN)
	}
	if st.Lag.Bytes != nil || st.Lag.Seconds != nil || st.Running != "no" {
		t.Errorf("lag %+v running %q, want unknown lag and not running", st.Lag, st.Running)
	}
	if len(st.Tables) != 2 {
		t.Fatalf("tables %+v", st.Tables)
	}
	logs, orders := st.Tables[0], st.Tables[1]
	if logs.Table != "audit.logs" || logs.Phase != offsets.PhaseErrored || logs.Attempts != 6 || logs.LastError != "permission denied" ||
		logs.Retry != "waits for mooncdc resnapshot" || logs.LSN != "" || logs.EstimatedRows != nil {
		t.Errorf("audit.logs = %+v", logs)
	}
	if orders.Table != "public.orders" || orders.Phase != offsets.PhaseReady || orders.LSN != "0/64" || orders.Attempts != 1 {
		t.Errorf("public.orders = %+v", orders)
	}

	code, out, stderr := runCLI(t, append([]string{"status"}, args...), nil)
	t.Logf("status:\n%s", out)
	if code != connector.ExitRuntime || !strings.Contains(stderr, "could not read Postgres: postgres.url not set") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, w := range []string{
		"postgres     could not be read: postgres.url not set",
		"audit.logs     errored  -     copy failed  6         permission denied (waits for mooncdc resnapshot)",
		"public.orders  ready    0/64  copied       1         -",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("status output lacks %q", w)
		}
	}

	// An unreachable Postgres is reported without its password.
	code, out, stderr = runCLI(t, append([]string{"status", "--postgres-url", "postgres://shop:s3cret@" + unusedAddr(t) + "/db?connect_timeout=5"}, args...), nil)
	if code != connector.ExitRuntime || !strings.Contains(out, "postgres     could not be read: connect to Postgres") || !strings.Contains(out, "permission denied") ||
		strings.Contains(out+stderr, "s3cret") {
		t.Errorf("unreachable Postgres: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

func TestStatusUsageAndConfigErrors(t *testing.T) {
	for _, args := range [][]string{{"help", "status"}, {"status", "--help"}, {"status", "-h"}} {
		code, stdout, _ := runCLI(t, args, nil)
		if code != 0 {
			t.Errorf("%q: exit %d", args, code)
		}
		for _, w := range []string{"Usage: mooncdc status", "--json", "confirmed_flush_lsn", "eta_seconds", "behind_since", "--brokers", "MOONCDC_METRICS_LISTEN"} {
			if !strings.Contains(stdout, w) {
				t.Errorf("%q: usage does not mention %s", args, w)
			}
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad --json value", []string{"--name", "shop", "--json=maybe"}, "--json=maybe"},
		{"positional argument", []string{"--name", "shop", "public.orders"}, `unexpected argument "public.orders"`},
		{"no name", []string{"--json"}, "name: required"},
		{"bad postgres url", []string{"--name", "shop", "--postgres-url", "postgres://u:s3cret@h:x/db"}, "postgres.url:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"status"}, tt.args...), nil)
			if code != connector.ExitConfig || !strings.Contains(stderr, tt.want) || stdout != "" || strings.Contains(stderr, "s3cret") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
		})
	}
}

func TestStatusCutJSONFlag(t *testing.T) {
	tests := []struct {
		args []string
		on   bool
		rest []string
	}{
		{[]string{"--config", "f"}, false, []string{"--config", "f"}},
		{[]string{"--json", "--config", "f"}, true, []string{"--config", "f"}},
		{[]string{"--config", "f", "-json"}, true, []string{"--config", "f"}},
		{[]string{"--json=false"}, false, []string{}},
		{[]string{"--json=true", "--", "--json"}, true, []string{"--", "--json"}},
		{[]string{"--jsonx"}, false, []string{"--jsonx"}},
	}
	for _, tt := range tests {
		on, rest, err := cutJSONFlag(tt.args)
		if err != nil || on != tt.on || strings.Join(rest, " ") != strings.Join(tt.rest, " ") {
			t.Errorf("cutJSONFlag(%q) = %v, %q, %v; want %v, %q", tt.args, on, rest, err, tt.on, tt.rest)
		}
	}
}

func TestStatusHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1258291: "1.2 MiB", 5 << 30: "5.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStatusReportSaysRunningOnlyWhenKnownAndLagOnlyWhereKnown(t *testing.T) {
	cfg := config.DefaultConfig()
	cfg.Name = "shop"
	cfg.ApplyDefaults()
	now := time.Date(2025, 1, 2, 15, 0, 0, 0, time.UTC)
	recorded := now.Add(-90 * time.Second)
	pipeline := &offsets.Pipeline{DurableLSN: 0x1000, UpdatedMs: recorded.UnixMilli()}
	slot := func(active bool, confirmed schema.LSN) pgStatus {
		return pgStatus{current: 0x3000, slot: &slotRow{active: active, activePID: ptr(int32(42)), confirmedFlush: confirmed, restart: 0x800, walStatus: "reserved"}}
	}
	tests := []struct {
		name        string
		in          statusInputs
		running     string
		detail      string
		lagBytes    *int64
		lagSeconds  *float64
		behindSince *time.Time
	}{
		{name: "nothing answers, slot inactive",
			in:      statusInputs{liveSilent: true, liveNote: "nothing answers on x", state: offsets.State{Pipeline: pipeline}, pg: slot(false, 0x1000)},
			running: "no", detail: "nothing answers on x", lagBytes: ptr(int64(0x2000)), lagSeconds: ptr(90.0), behindSince: &recorded},
		{name: "nothing answers, slot active",
			in:      statusInputs{liveSilent: true, liveNote: "nothing answers on x", state: offsets.State{Pipeline: pipeline}, pg: slot(true, 0x3000)},
			running: "unknown", detail: "nothing answers on x; but the slot is active (pid 42): something streams from it", lagBytes: ptr(int64(0)), lagSeconds: ptr(0.0)},
		{name: "no metrics endpoint",
			in:      statusInputs{liveNote: "metrics.listen is empty", pg: slot(false, 0x1000)},
			running: "unknown", detail: "metrics.listen is empty", lagBytes: ptr(int64(0x2000))},
		{name: "Postgres unreadable",
			in:      statusInputs{liveSilent: true, liveNote: "n", state: offsets.State{Pipeline: pipeline}, pgErr: fmt.Errorf("boom")},
			running: "no", detail: "n"},
		{name: "running",
			in:      statusInputs{live: &connector.LiveStatus{Name: "shop", Streaming: true, DurableLSN: "0/2000"}, state: offsets.State{Pipeline: pipeline}, pg: slot(true, 0x2000)},
			running: "yes", lagBytes: ptr(int64(0x1000)), lagSeconds: ptr(90.0), behindSince: &recorded},
		{name: "running, Postgres silent",
			in: statusInputs{live: &connector.LiveStatus{Name: "shop", Streaming: true, DurableLSN: "0/2000", NotReady: "postgres silent: no message for 61s"},
				state: offsets.State{Pipeline: pipeline}, pg: slot(true, 0x2000)},
			running: "yes", detail: "not ready: postgres silent: no message for 61s", lagBytes: ptr(int64(0x1000)), lagSeconds: ptr(90.0), behindSince: &recorded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.now = now
			r := buildStatusReport(cfg, tt.in)
			if r.Running != tt.running || r.RunningDetail != tt.detail {
				t.Errorf("running %q (%s), want %q (%s)", r.Running, r.RunningDetail, tt.running, tt.detail)
			}
			if fmt.Sprint(deref(r.Lag.Bytes), r.Lag.Bytes == nil) != fmt.Sprint(deref(tt.lagBytes), tt.lagBytes == nil) ||
				fmt.Sprint(deref(r.Lag.Seconds), r.Lag.Seconds == nil) != fmt.Sprint(deref(tt.lagSeconds), tt.lagSeconds == nil) ||
				(r.Lag.BehindSince == nil) != (tt.behindSince == nil) || r.Lag.BehindSince != nil && !r.Lag.BehindSince.Equal(*tt.behindSince) {
				t.Errorf("lag %v bytes, %v s, since %v; want %v, %v, %v", deref(r.Lag.Bytes), deref(r.Lag.Seconds), r.Lag.BehindSince,
					deref(tt.lagBytes), deref(tt.lagSeconds), tt.behindSince)
			}
		})
	}
}

// TestStatusShowsKeylessTablesAndPartitionedEstimates: a table that
// postgres.tables selects but that run leaves out of the publication (it
// has no replica identity) is listed as not_captured with the fix, and a
// partitioned table's row estimate is its partitions'.
func TestStatusShowsKeylessTablesAndPartitionedEstimates(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.New(t)
	broker := kafkatest.New(t)
	if err := pg.Exec(ctx, "postgres", `CREATE TABLE orders (id int PRIMARY KEY);
		CREATE TABLE nopk (v text);
		CREATE TABLE m (id int, r int, PRIMARY KEY (id, r)) PARTITION BY LIST (r);
		CREATE TABLE m1 PARTITION OF m FOR VALUES IN (1);
		CREATE TABLE m2 PARTITION OF m FOR VALUES IN (2);
		INSERT INTO m SELECT g, 1 + g % 2 FROM generate_series(1, 300) g;
		ANALYZE`); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf("name: kl\npostgres:\n  url: %s\n  tables: [public.*]\nkafka:\n  brokers: [%s]\nmetrics:\n  listen: %q\n",
		pg.URL("postgres"), broker.Addr(), unusedAddr(t)))
	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var runErr bytes.Buffer
	if code := run(runCtx, []string{"run", "--config", cfg, "--snapshot-mode", "initial_only"}, nil, io.Discard, &runErr); code != 0 {
		t.Fatalf("run exited %d:\n%s", code, runErr.String())
	}
	if !strings.Contains(runErr.String(), "table not captured: it has no primary key or replica identity") {
		t.Errorf("run did not log the keyless table:\n%s", runErr.String())
	}

	st, raw := statusOf(t, connector.ExitOK, "--config", cfg)
	t.Logf("status --json:\n%s", raw)
	got := map[string]string{}
	for _, tb := range st.Tables {
		got[tb.Table] = tb.Phase
		switch tb.Table {
		case "public.nopk":
			if !strings.Contains(tb.LastError, `ALTER TABLE "public"."nopk" REPLICA IDENTITY FULL`) {
				t.Errorf("nopk's last_error does not name the fix: %q", tb.LastError)
			}
		case "public.m":
			if tb.EstimatedRows == nil || *tb.EstimatedRows != 300 {
				t.Errorf("partitioned m estimated %v rows, want its partitions' 300", tb.EstimatedRows)
			}
		}
	}
	want := map[string]string{"public.m": offsets.PhaseReady, "public.orders": offsets.PhaseReady, "public.nopk": "not_captured"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tables %v, want %v", got, want)
	}
	_, out, _ := runCLI(t, []string{"status", "--config", cfg}, nil)
	if !strings.Contains(out, "public.nopk    not_captured") {
		t.Errorf("status output lacks the not_captured line:\n%s", out)
	}
}
