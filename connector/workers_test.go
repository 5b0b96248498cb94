package connector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/group"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// worker is one Workers running in the background.
type worker struct {
	w      *group.Workers
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func startWorker(t *testing.T, cfgs []config.Config, id string) *worker {
	t.Helper()
	log := zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)).Named(id)
	addr := freeAddr(t)
	w, err := group.NewWorkers(slices.Clone(cfgs), nil, group.WorkerOptions{Group: "test", ID: id, Listen: addr}, log)
	if err != nil {
		t.Fatalf("new workers: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &worker{w: w, addr: addr, cancel: cancel, done: make(chan error, 1)}
	go func() { k.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-k.done
		k.done <- nil
	})
	return k
}

// stop stops the worker cleanly and fails the test if that fails.
func (k *worker) stop(t *testing.T) {
	t.Helper()
	k.cancel()
	if err := <-k.done; err != nil {
		t.Fatalf("clean stop of a worker: %v", err)
	}
	k.done <- nil
}

// waitSpread waits until the workers run want[i] pipelines each, every
// one streaming with its tables handed over (so that the load is streamed,
// not read by a first copy), and returns what each runs.
func waitSpread(t *testing.T, within time.Duration, ws []*worker, want ...int) [][]string {
	t.Helper()
	var got [][]string
	eventually.Succeeds(t, within, 50*time.Millisecond, func() error {
		got = nil
		ok := true
		for i, k := range ws {
			act := k.w.Active()
			got = append(got, act)
			if len(act) != want[i] {
				ok = false
			}
			for _, n := range act {
				s := k.w.Pipeline(n)
				ph := s.TablePhases()
				ok = ok && s.Streaming() && len(ph) > 0
				for _, tb := range ph {
					ok = ok && (tb.Phase == "ready" || tb.Phase == "catchup")
				}
			}
		}
		if ok {
			return nil
		}
		for _, k := range ws {
			select {
			case err := <-k.done:
				k.done <- err
				t.Fatalf("a worker stopped while waiting for %v: %v", want, err)
			default:
			}
		}
		return fmt.Errorf("pipelines per worker after %s: %v, want %v pipelines", within, got, want)
	})
	return got
}

// loader writes transactions of 20 upserts into every table in turn until
// stopped; stop returns how many values of n each table got (0..n-1).
type loader struct {
	stopped atomic.Bool
	wg      sync.WaitGroup
	rounds  int
	err     error
}

func startLoader(t *testing.T, e *env, tables []string) *loader {
	l := &loader{}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, e.pg.URL("postgres"))
		if err != nil {
			l.err = err
			return
		}
		defer conn.Close(ctx)
		for ; !l.stopped.Load(); l.rounds++ {
			for _, tb := range tables {
				tx, err := conn.Begin(ctx)
				if err != nil {
					l.err = err
					return
				}
				for j := 0; j < 20; j++ {
					n := l.rounds*20 + j
					if _, err := tx.Exec(ctx, "INSERT INTO "+tb+" (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", n%100, n); err != nil {
						l.err = err
						return
					}
				}
				if err := tx.Commit(ctx); err != nil {
					l.err = err
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return l
}

func (l *loader) stop(t *testing.T) int {
	t.Helper()
	l.stopped.Store(true)
	l.wg.Wait()
	if l.err != nil {
		t.Fatalf("write load: %v", l.err)
	}
	return l.rounds * 20
}

// TestWorkerGroupSharesPipelinesAndMovesThemLosingNothing: four pipelines
// (two at-least-once, two exactly-once), each its own table, slot and
// prefix, under a write load the whole time. One worker runs all four; a
// second joins and the group balances them 2+2 (the coordinator's
// assignment says so too, and each worker's metrics carry the pipeline
// label); the second stops cleanly and the first runs all four again; a
// third joins and it is 2+2 again. Every change of every pipeline is in
// Kafka, in order per key, and exactly once in exactly-once mode.
func TestWorkerGroupSharesPipelinesAndMovesThemLosingNothing(t *testing.T) {
	e := newEnv(t)
	var cfgs []config.Config
	var names []string
	for i := range 4 {
		n := fmt.Sprintf("wp%d", i)
		e.exec(`CREATE TABLE ` + n + ` (id int PRIMARY KEY, n int)`)
		cfg := e.config(n, "public."+n)
		cfg.HA.SessionTimeout = 6 * time.Second // kfake's group.min.session.timeout.ms
		if i%2 == 1 {
			cfg.Kafka.Delivery = config.DeliveryExactlyOnce
		}
		cfgs = append(cfgs, cfg)
		names = append(names, n)
	}
	a := startWorker(t, cfgs, "A")
	waitSpread(t, 90*time.Second, []*worker{a}, 4)
	load := startLoader(t, e, names)

	b := startWorker(t, cfgs, "B")
	spread := waitSpread(t, 90*time.Second, []*worker{a, b}, 2, 2)
	t.Logf("after B joined: A runs %v, B runs %v", spread[0], spread[1])
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	asg, err := group.WorkerAssignment(context.Background(), cl, "test", names)
	if err != nil {
		t.Fatalf("worker assignment: %v", err)
	}
	for _, x := range asg {
		want := "A"
		if slices.Contains(spread[1], x.Pipeline) {
			want = "B"
		}
		if x.Worker != want {
			t.Errorf("the coordinator says %s runs on %q; the workers say %s", x.Pipeline, x.Worker, want)
		}
	}
	for i, k := range []*worker{a, b} {
		_, body := get(t, "http://"+k.addr+"/metrics")
		for _, n := range spread[i] {
			if !strings.Contains(body, `mooncdc_streaming{pipeline="`+n+`"} 1`) {
				t.Errorf("worker %d's /metrics has no streaming pipeline %s:\n%s", i, n, grepMooncdc(body))
			}
		}
		if code, body := get(t, "http://"+k.addr+"/status"); code != 200 || !strings.Contains(body, `"name": "`+spread[i][0]+`"`) {
			t.Errorf("worker %d's /status: %d %s", i, code, body)
		}
	}

	b.stop(t)
	waitSpread(t, 90*time.Second, []*worker{a}, 4)
	c := startWorker(t, cfgs, "C")
	spread = waitSpread(t, 90*time.Second, []*worker{a, c}, 2, 2)
	t.Logf("after C joined: A runs %v, C runs %v", spread[0], spread[1])
	time.Sleep(time.Second) // some load while C runs its two
	total := load.stop(t)
	for i, n := range names {
		evs := consumeDistinct(t, e.kafka, n+".public."+n, total)
		t.Logf("%s: %d records for %d changes", n, len(evs), total)
		checkChanges(t, evs, total, i%2 == 0)
	}
}

// TestWorkerGroupRefusesDuplicateNamesNamingTheFiles: the checks across a
// directory's pipelines name the files.
func TestWorkerGroupRefusesDuplicateNamesNamingTheFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.yaml", "b.yml"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, err := group.ConfigDirFiles(dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("ConfigDirFiles: %v %v", files, err)
	}
	cfg := config.DefaultConfig()
	cfg.Name = "same"
	cfg.Postgres.URL = "postgres://u@h/db"
	cfg.Kafka.Brokers = []string{"k:9092"}
	cfg.ApplyDefaults()
	other := cfg
	other.Kafka.Brokers = []string{"other:9092"}
	err = group.CheckWorkerConfigs(files, []config.Config{cfg, other})
	for _, want := range []string{"b.yml: name \"same\" is also the name of " + files[0], "b.yml: postgres.slot", "b.yml: kafka.brokers"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckWorkerConfigs: %v, want %q", err, want)
		}
	}
	if _, err := group.ConfigDirFiles(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no pipeline files") {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestWorkerGroupGivesAPipelineOnlyToWorkersWhoseDirectoryHasIt: during a
// rolling change of the directory, a worker with the older directory
// (without the new pipeline) is never given the new one, and the group
// still runs every pipeline once; once the old worker is gone the new one
// runs them all.
func TestWorkerGroupGivesAPipelineOnlyToWorkersWhoseDirectoryHasIt(t *testing.T) {
	e := newEnv(t)
	var cfgs []config.Config
	for i := range 3 {
		n := fmt.Sprintf("rp%d", i)
		e.exec(`CREATE TABLE ` + n + ` (id int PRIMARY KEY, n int)`)
		cfg := e.config(n, "public."+n)
		cfg.HA.SessionTimeout = 6 * time.Second
		cfgs = append(cfgs, cfg)
	}
	old := startWorker(t, cfgs[:2], "old")
	waitSpread(t, 90*time.Second, []*worker{old}, 2)
	cur := startWorker(t, cfgs, "new")
	// Balanced for the group: 2+1 is within one, so the sticky balancer
	// leaves old's two where they are.
	spread := waitSpread(t, 90*time.Second, []*worker{old, cur}, 2, 1)
	if !slices.Contains(spread[1], "rp2") {
		t.Fatalf("the new pipeline rp2 runs on the worker without its file: old %v, new %v", spread[0], spread[1])
	}
	t.Logf("old runs %v, new runs %v", spread[0], spread[1])
	// The old worker is replaced: the new one runs all three.
	old.stop(t)
	waitSpread(t, 90*time.Second, []*worker{cur}, 3)
}

// TestWorkerGroupMetricsCarryThePipelineLabelOnEveryFamily: a worker
// running two pipelines serves one /metrics where every mooncdc_* family
// (counters, LSN and lag, in-flight bytes, copies, errors, Kafka
// transactions, streaming, active) has a series per pipeline, labelled
// pipeline="<name>", each with that pipeline's own values (the copy of
// one pipeline's table is not counted in the other's); the Go and process
// metrics are there once, without the label.
func TestWorkerGroupMetricsCarryThePipelineLabelOnEveryFamily(t *testing.T) {
	e := newEnv(t)
	rows := map[string]float64{"mp0": 3, "mp1": 5}
	var cfgs []config.Config
	for _, n := range []string{"mp0", "mp1"} {
		e.exec(`CREATE TABLE ` + n + ` (id int PRIMARY KEY, n int)`)
		e.exec(`INSERT INTO `+n+` SELECT g, g FROM generate_series(1, $1::int) g`, int(rows[n]))
		cfg := e.config(n, "public."+n)
		cfg.HA.SessionTimeout = 6 * time.Second
		cfg.Kafka.Delivery = config.DeliveryExactlyOnce // mooncdc_kafka_transactions_total too
		cfgs = append(cfgs, cfg)
	}
	w := startWorker(t, cfgs, "M")
	waitSpread(t, 90*time.Second, []*worker{w}, 2)
	e.exec(`INSERT INTO mp0 VALUES (100, 1), (101, 1)`)
	e.exec(`INSERT INTO mp1 VALUES (100, 1)`)

	// Every family of a pipeline's Metrics (metrics.go; docs/metrics.md).
	families := []string{
		"mooncdc_transactions_received_total", "mooncdc_changes_received_total", "mooncdc_changes_written_total",
		"mooncdc_transactions_durable_total", "mooncdc_replication_payload_bytes_total", "mooncdc_durable_lsn",
		"mooncdc_replication_lag_bytes", "mooncdc_inflight_bytes", "mooncdc_worker_errors_total",
		"mooncdc_table_copy_rows_total", "mooncdc_table_copy_rows_resumed_total", "mooncdc_table_copy_duration_seconds", "mooncdc_kafka_transactions_total",
		"mooncdc_streaming", "mooncdc_active", "mooncdc_slot_loss_resnapshots_total",
		"mooncdc_last_server_message_seconds", "mooncdc_kafka_stalled_seconds",
	}
	value := func(mfs map[string]*dto.MetricFamily, family, pipeline string) float64 {
		var v float64
		for _, m := range mfs[family].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "pipeline" && l.GetValue() == pipeline {
					v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
		return v
	}
	var mfs map[string]*dto.MetricFamily
	eventually.Succeeds(t, 30*time.Second, 100*time.Millisecond, func() error {
		_, body := get(t, "http://"+w.addr+"/metrics")
		p := expfmt.NewTextParser(model.UTF8Validation)
		var err error
		if mfs, err = p.TextToMetricFamilies(strings.NewReader(body)); err != nil {
			t.Fatalf("parse /metrics: %v\n%s", err, body)
		}
		if value(mfs, "mooncdc_changes_written_total", "mp0") >= 2 && value(mfs, "mooncdc_changes_written_total", "mp1") >= 1 &&
			value(mfs, "mooncdc_kafka_transactions_total", "mp0") > 0 && value(mfs, "mooncdc_kafka_transactions_total", "mp1") > 0 {
			return nil
		}
		return fmt.Errorf("the streamed changes are not counted after 30s:\n%s", grepMooncdc(body))
	})

	for name, mf := range mfs {
		if strings.HasPrefix(name, "mooncdc_") && !slices.Contains(families, name) {
			t.Errorf("family %s is not in this test's list (nor, likely, docs/metrics.md)", name)
		}
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "pipeline" {
						t.Errorf("%s has a pipeline label: the Go and process metrics are the worker's", name)
					}
				}
			}
		}
	}
	if mfs["go_goroutines"] == nil || mfs["process_resident_memory_bytes"] == nil {
		t.Errorf("no Go or process metrics on the worker's /metrics")
	}
	for _, name := range families {
		mf := mfs[name]
		if mf == nil {
			t.Errorf("family %s is missing from the worker's /metrics", name)
			continue
		}
		series := map[string]int{} // pipeline → series
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			p, ok := labels["pipeline"]
			if !ok {
				t.Errorf("%s%v has no pipeline label", name, labels)
				continue
			}
			series[p]++
			if tb, ok := labels["table"]; ok && !strings.Contains(tb, p) {
				t.Errorf("%s%v: pipeline %s's series names another pipeline's table", name, labels, p)
			}
		}
		if len(series) != 2 || series["mp0"] == 0 || series["mp1"] == 0 {
			t.Errorf("%s: series by pipeline %v, want mp0 and mp1", name, series)
		}
	}
	for n, want := range rows {
		if got := value(mfs, "mooncdc_table_copy_rows_total", n); got != want {
			t.Errorf("mooncdc_table_copy_rows_total{pipeline=%q} = %v, want its table's %v rows", n, got, want)
		}
		for _, one := range []string{"mooncdc_streaming", "mooncdc_active"} {
			if got := value(mfs, one, n); got != 1 {
				t.Errorf("%s{pipeline=%q} = %v, want 1", one, n, got)
			}
		}
		if value(mfs, "mooncdc_durable_lsn", n) == 0 {
			t.Errorf("mooncdc_durable_lsn{pipeline=%q} is 0 while it streams", n)
		}
	}
	if a, b := value(mfs, "mooncdc_changes_written_total", "mp0"), value(mfs, "mooncdc_changes_written_total", "mp1"); a == b {
		t.Errorf("mooncdc_changes_written_total is %v for both pipelines; mp0 wrote 2 changes, mp1 1", a)
	}
}
