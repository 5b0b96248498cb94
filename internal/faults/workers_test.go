//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/internal/kafkatest"
	"github.com/mooncdc/mooncdc/internal/pgtest"
)

// workerConfig is one pipeline of the worker group's directory.
const workerConfig = `name: %s
postgres:
  url: %s
  tables: [public.%s]
kafka:
  brokers: [%s]
  delivery: %s
ha:
  session_timeout: 6s
log:
  format: json
`

// startWorkerProc runs "mooncdc run --config DIR" as worker id, in its
// own process group, its output in a log file of its own.
func startWorkerProc(t *testing.T, dir, logDir, id string) *instance {
	t.Helper()
	addr := freeAddr(t)
	logPath := filepath.Join(logDir, "worker-"+id+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mooncdcBin, "run", "--config", dir, "--group", "faults", "--worker-id", id, "--metrics-listen", addr)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = environWithoutMooncdc()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", mooncdcBin, err)
	}
	in := &instance{label: id, cmd: cmd, logPath: logPath, metricsAddr: addr, started: time.Now(), exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		in.exitedAt = time.Now()
		close(in.exited)
	}()
	t.Cleanup(func() {
		if in.running() {
			in.kill9()
		}
		if t.Failed() {
			t.Logf("the end of worker %s's log:\n%s", id, in.tail(30))
		}
	})
	return in
}

// streamingPipelines is what the worker's /status says it runs with every
// table handed over; nil if it does not answer.
func streamingPipelines(in *instance) []string {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + in.metricsAddr + "/status")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var st struct {
		Pipelines []struct {
			Name      string `json:"name"`
			Streaming bool   `json:"streaming"`
			Tables    map[string]struct {
				Phase string `json:"phase"`
			} `json:"tables"`
		} `json:"pipelines"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	out := []string{}
	for _, p := range st.Pipelines {
		ok := p.Streaming && len(p.Tables) > 0
		for _, tb := range p.Tables {
			ok = ok && (tb.Phase == "ready" || tb.Phase == "catchup")
		}
		if ok {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// waitWorkers waits until worker i streams want[i] pipelines, all of them
// together once each, and returns how long that took.
func waitWorkers(t *testing.T, within time.Duration, ws []*instance, want ...int) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var got [][]string
		ok, all := true, map[string]int{}
		for i, in := range ws {
			if !in.running() {
				t.Fatalf("worker %s exited with code %d", in.label, in.code())
			}
			p := streamingPipelines(in)
			got = append(got, p)
			ok = ok && len(p) == want[i]
			for _, n := range p {
				all[n]++
			}
		}
		for _, c := range all {
			ok = ok && c == 1
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("pipelines per worker after %v: %v, want %v", within, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestWorkerGroupKill9: four pipelines (two at-least-once, two
// exactly-once) over a worker group of real processes, under a write
// load. Two workers share them 2+2; one is killed with kill -9 and the
// other runs all four once the dead one's session has expired; a third
// joins and it is 2+2 again; then one stops with SIGTERM (a clean leave).
// Every change of every pipeline is in Kafka (read_committed), in order
// per key, exactly once in exactly-once mode.
func TestWorkerGroupKill9(t *testing.T) {
	dir, logDir := t.TempDir(), t.TempDir()
	pg := pgtest.New(t)
	broker := kafkatest.StartProcess(t, filepath.Join(t.TempDir(), "kafka"))
	url := pg.URL("postgres")
	var tables []string
	for i := range 4 {
		n := fmt.Sprintf("w%d", i)
		mode := modeAtLeastOnce
		if i%2 == 1 {
			mode = modeExactlyOnce
		}
		if err := pg.Exec(context.Background(), "postgres", `CREATE TABLE `+n+` (id int PRIMARY KEY, n int)`); err != nil {
			t.Fatal(err)
		}
		cfg := fmt.Sprintf(workerConfig, n, strconv.Quote(url), n, broker.Addr(), mode)
		if err := os.WriteFile(filepath.Join(dir, n+".yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	a := startWorkerProc(t, dir, logDir, "A")
	b := startWorkerProc(t, dir, logDir, "B")
	waitWorkers(t, 2*time.Minute, []*instance{a, b}, 2, 2)

	// The load: rounds of one 20-row transaction per table.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var rounds int
	var loadErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			loadErr = err
			return
		}
		defer conn.Close(ctx)
		for ; !stop.Load(); rounds++ {
			for _, tb := range tables {
				batch := &pgx.Batch{}
				batch.Queue("BEGIN")
				for j := range 20 {
					n := rounds*20 + j
					batch.Queue("INSERT INTO "+tb+" (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n", n%100, n)
				}
				batch.Queue("COMMIT")
				if err := conn.SendBatch(ctx, batch).Close(); err != nil {
					loadErr = err
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	time.Sleep(3 * time.Second)
	b.kill9()
	took := waitWorkers(t, time.Minute, []*instance{a}, 4)
	t.Logf("after the kill -9 of B, A streams all four pipelines %v later", took.Round(100*time.Millisecond))
	c := startWorkerProc(t, dir, logDir, "C")
	took = waitWorkers(t, time.Minute, []*instance{a, c}, 2, 2)
	t.Logf("C joined: 2+2 after %v", took.Round(100*time.Millisecond))
	time.Sleep(2 * time.Second)
	if code, err := c.stop(time.Minute); err != nil || code != 0 {
		t.Fatalf("SIGTERM of worker C: exit %d, %v", code, err)
	}
	waitWorkers(t, time.Minute, []*instance{a}, 4)
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	if loadErr != nil {
		t.Fatalf("load: %v", loadErr)
	}
	total := rounds * 20
	for i, tb := range tables {
		checkWorkerTopic(t, broker.Addr(), tb+".public."+tb, total, i%2 == 0)
	}
}

// checkWorkerTopic reads topic (read_committed) until every n in
// [0,total) has a change record or a minute passes, and checks per-key
// order and, unless dups, that no change repeats.
func checkWorkerTopic(t *testing.T, addr, topic string, total int, dups bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[int]int{}
	last := map[int]int{}
	deadline := time.Now().Add(time.Minute)
	for len(seen) < total && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				return
			}
			var v struct {
				Op    string `json:"op"`
				After *struct {
					ID int `json:"id"`
					N  int `json:"n"`
				} `json:"after"`
			}
			if json.Unmarshal(r.Value, &v) != nil || v.After == nil || v.Op == "r" {
				return
			}
			seen[v.After.N]++
			if seen[v.After.N] == 1 {
				if p, ok := last[v.After.ID]; ok && v.After.N < p {
					t.Errorf("%s: key %d: n=%d after n=%d", topic, v.After.ID, v.After.N, p)
				}
				last[v.After.ID] = max(last[v.After.ID], v.After.N)
			}
		})
	}
	var missing, repeated int
	for n := range total {
		switch {
		case seen[n] == 0:
			missing++
		case seen[n] > 1:
			repeated++
		}
	}
	t.Logf("%s: %d changes, %d missing, %d repeated", topic, total, missing, repeated)
	if missing > 0 || (!dups && repeated > 0) {
		t.Errorf("%s: %d of %d changes missing, %d repeated (repeats allowed: %v)", topic, missing, total, repeated, dups)
	}
}
