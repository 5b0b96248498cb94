package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mooncdc/mooncdc/connector"
)

const (
	connectorName = "bench"
	dataTopic     = connectorName + ".public." + table
)

// syncBuffer collects a child's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// goBuild builds a package of this module into dir.
func goBuild(dir, pkg, name string) (string, error) {
	path := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", path, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return path, nil
}

// broker is a kfakeserver process.
type broker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
	out   *syncBuffer
	done  chan struct{}
}

func startBroker(bin, dataDir string) (*broker, error) {
	b := &broker{out: new(syncBuffer), done: make(chan struct{})}
	b.cmd = exec.Command(bin, "-addr", "127.0.0.1:0", "-data-dir", dataDir, "-log-level", "warn", "-exit-on-stdin-eof")
	pr, pw := io.Pipe()
	b.cmd.Stdout = pw
	b.cmd.Stderr = b.out
	stdin, err := b.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	b.stdin = stdin
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start kfakeserver: %w", err)
	}
	go func() {
		_ = b.cmd.Wait()
		_ = pw.Close()
		close(b.done)
	}()
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "listening on "); ok {
				addrs <- a
			}
			_, _ = b.out.Write(append(sc.Bytes(), '\n'))
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case b.addr = <-addrs:
	case <-b.done:
		return nil, fmt.Errorf("kfakeserver exited before listening:\n%s", b.out.String())
	case <-time.After(30 * time.Second):
		b.kill()
		return nil, fmt.Errorf("kfakeserver not listening after 30s:\n%s", b.out.String())
	}
	return b, nil
}

func (b *broker) pid() int { return b.cmd.Process.Pid }

func (b *broker) kill() {
	_ = b.cmd.Process.Kill()
	<-b.done
}

// recordCount returns the number of records in topic: the sum over its
// partitions of end offset minus start offset.
func recordCount(ctx context.Context, addr, topic string) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	var n int64
	var errs []error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s/%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		n += o.Offset
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok && s.Err == nil {
			n -= s.Offset
		}
	})
	if len(ends) == 0 {
		errs = append(errs, fmt.Errorf("topic %s does not exist", topic))
	}
	return n, errors.Join(errs...)
}

// freeAddr returns 127.0.0.1:PORT with a port that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// pipelineConfig is the mooncdc configuration of the benchmark.
func pipelineConfig(s *source, brokerAddr, metricsAddr string) connector.Config {
	cfg := connector.DefaultConfig()
	cfg.Name = connectorName
	cfg.Postgres.URL = s.c.URL("")
	cfg.Postgres.Tables = []string{"public." + table}
	cfg.Postgres.Publication = publication
	cfg.Postgres.Slot = mooncdcSlot
	// The table is loaded after the slot was made; the benchmark measures
	// streaming, so the table must not be copied first (snapshot.mode
	// initial, the default, would copy it and then skip every streamed
	// change before the copy's snapshot: the whole load).
	cfg.Snapshot.Mode = connector.SnapshotNever
	cfg.Kafka.Brokers = []string{brokerAddr}
	cfg.Kafka.Compression = compression
	cfg.Metrics.Listen = metricsAddr
	cfg.Log.Level = "warn"
	cfg.Log.Format = "console"
	return cfg
}

// compression is kafka.compression for both runs (-compression).
var compression = "none"

// configYAML renders the keys pipelineConfig and snapshotConfig set, for
// mooncdc run --config.
func configYAML(cfg connector.Config) string {
	q := strconv.Quote
	return fmt.Sprintf(`name: %s
postgres:
  url: %s
  tables: [%s]
  publication: %s
  slot: %s
kafka:
  brokers: [%s]
  compression: %s
  delivery: %s
snapshot:
  mode: %s
  workers: %d
  chunk_rows: %d
  connections_per_table: %d
format:
  key: %s
  value: %s
  schema_registry:
    url: %s
metrics:
  listen: %s
log:
  level: %s
  format: %s
`, q(cfg.Name), q(cfg.Postgres.URL), quoteAll(cfg.Postgres.Tables), q(cfg.Postgres.Publication), q(cfg.Postgres.Slot),
		q(cfg.Kafka.Brokers[0]), q(cfg.Kafka.Compression), q(string(cfg.Kafka.Delivery)), q(string(cfg.Snapshot.Mode)), cfg.Snapshot.Workers, cfg.Snapshot.ChunkRows,
		cfg.Snapshot.ConnectionsPerTable, q(cfg.Format.Key), q(cfg.Format.Value), q(cfg.Format.SchemaRegistry.URL), q(cfg.Metrics.Listen), q(cfg.Log.Level), q(cfg.Log.Format))
}

// quoteAll renders a YAML flow sequence's items.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// mooncdcResult is the mooncdc run.
type mooncdcResult struct {
	stages       *cpuStages    // the child's CPU by stage, from its profile (whole life)
	elapsed      time.Duration // start → slot confirmed to the end LSN
	ready        time.Duration // start → /readyz 200 (streaming)
	received     time.Duration // start → mooncdc_changes_received_total ≥ N (metrics)
	acked        time.Duration // start → mooncdc_transactions_durable_total ≥ N/tx (metrics)
	durable      time.Duration // start → mooncdc_durable_lsn ≥ end LSN (metrics)
	cpu          cpuTime       // mooncdc CPU, whole life (rusage)
	cpuAtEnd     cpuTime       // mooncdc CPU when the slot reached the end
	maxRSS       int64         // VmHWM, of the child (sampled) or of this process (in-process)
	hwmAtEnd     int64         // VmHWM when the slot reached the end
	walsenderCPU cpuTime
	brokerCPU    cpuTime       // kfakeserver CPU when the slot reached the end
	hostBusy     time.Duration // all processes on the machine, start → end LSN
	payload      float64       // mooncdc_replication_payload_bytes_total
	written      float64       // mooncdc_changes_written_total
	stopTime     time.Duration // SIGTERM → exit
	log          string
}

// pipelineRunner is mooncdc as a child process or in this process.
type pipelineRunner interface {
	start() error
	pid() int
	exited() <-chan struct{}
	// stop asks for a clean stop and waits for it.
	stop() error
	rusage() (user, sys time.Duration, maxRSS int64)
	output() string
}

type childRunner struct {
	bin, config string
	cpuprofile  string // run --cpuprofile: the child's CPU profile, written at its exit
	cmd         *exec.Cmd
	out         syncBuffer
	done        chan struct{}
	err         error
	hwm         atomic.Int64 // the child's VmHWM, sampled every 20ms until it exits
}

// The child's peak RSS is its VmHWM, sampled while it runs: its ru_maxrss
// is no measure, as Linux carries the RSS high-water mark of the process
// that forked it (this one, which may be the larger: Go forks with
// CLONE_VM, and exec records the shared mm's mark) into the child's
// ru_maxrss. Sampling misses at most the growth of the last 20ms.
const hwmSampling = 20 * time.Millisecond

func (r *childRunner) start() error {
	args := []string{"run", "--config", r.config}
	if r.cpuprofile != "" {
		args = append(args, "--cpuprofile", r.cpuprofile)
	}
	r.cmd = exec.Command(r.bin, args...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	// Should the benchmark die, mooncdc must not stream on.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.done = make(chan struct{})
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", r.bin, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	go func() {
		tick := time.NewTicker(hwmSampling)
		defer tick.Stop()
		for {
			if h, err := vmHWM(r.cmd.Process.Pid); err == nil && h > r.hwm.Load() {
				r.hwm.Store(h)
			}
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
		}
	}()
	return nil
}

func (r *childRunner) pid() int                { return r.cmd.Process.Pid }
func (r *childRunner) exited() <-chan struct{} { return r.done }
func (r *childRunner) output() string          { return r.out.String() }

func (r *childRunner) stop() error {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		_ = r.cmd.Process.Kill()
		<-r.done
		return fmt.Errorf("mooncdc did not stop within 2 minutes of SIGTERM; killed")
	}
	if r.err != nil {
		return fmt.Errorf("mooncdc exited with %v", r.err)
	}
	return nil
}

func (r *childRunner) rusage() (time.Duration, time.Duration, int64) {
	u, sy, _ := childRusage(r.cmd.ProcessState)
	return u, sy, r.hwm.Load()
}

// inprocRunner runs connector.New(cfg, log).Run(ctx) in this process, with
// an optional CPU profile covering start to the end LSN (or, for a run that
// ends by itself, to its end).
type inprocRunner struct {
	cfg        connector.Config
	cpuprofile string
	// jsonInfo logs at info level in mooncdc's JSON format (as the command
	// does with log.format json), instead of console at warn level.
	jsonInfo  bool
	out       syncBuffer
	cancel    context.CancelFunc
	done      chan struct{}
	err       error
	u0, s0    time.Duration
	user, sys time.Duration
	profile   *os.File
}

func (r *inprocRunner) start() error {
	enc := zap.NewDevelopmentEncoderConfig()
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(&r.out), zapcore.WarnLevel)
	if r.jsonInfo {
		enc := zap.NewProductionEncoderConfig()
		enc.EncodeTime = zapcore.ISO8601TimeEncoder
		core = zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(&r.out), zapcore.InfoLevel)
	}
	log := zap.New(core)
	p, err := connector.New(r.cfg, log)
	if err != nil {
		return err
	}
	if r.cpuprofile != "" {
		f, err := os.Create(r.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		r.profile = f
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	r.u0, r.s0 = selfRusage()
	go func() {
		r.err = p.Run(ctx)
		close(r.done)
	}()
	return nil
}

// stopProfile ends the CPU profile (at the end LSN, before the shutdown).
func (r *inprocRunner) stopProfile() error {
	if r.profile == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := r.profile.Close()
	r.profile = nil
	return err
}

func (r *inprocRunner) pid() int                { return os.Getpid() }
func (r *inprocRunner) exited() <-chan struct{} { return r.done }
func (r *inprocRunner) output() string          { return r.out.String() }

func (r *inprocRunner) stop() error {
	perr := r.stopProfile()
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("the in-process pipeline did not stop within 2 minutes")
	}
	u, s := selfRusage()
	r.user, r.sys = u-r.u0, s-r.s0
	if r.err != nil {
		return fmt.Errorf("pipeline: %w", r.err)
	}
	return perr
}

func (r *inprocRunner) rusage() (time.Duration, time.Duration, int64) {
	hwm, _ := vmHWM(os.Getpid())
	return r.user, r.sys, hwm
}

// runPipeline starts mooncdc and times it until its slot is confirmed up to
// the end LSN, then stops it cleanly.
func runPipeline(ctx context.Context, s *source, r pipelineRunner, b *broker, metricsAddr, slot string, rows, txs int) (mooncdcResult, error) {
	return runPipelineThen(ctx, s, r, b, metricsAddr, slot, rows, txs, nil)
}

// runPipelineThen is runPipeline, giving onMetrics (unless nil) mooncdc's
// metrics as they stand when its slot reaches the end LSN.
func runPipelineThen(ctx context.Context, s *source, r pipelineRunner, b *broker, metricsAddr, slot string, rows, txs int,
	onMetrics func(map[string]float64)) (mooncdcResult, error) {
	var res mooncdcResult
	w, err := s.watch(ctx, slot)
	if err != nil {
		return res, err
	}
	defer w.close()
	hc := &http.Client{Timeout: 2 * time.Second}

	start, busy0 := time.Now(), hostBusy()
	if err := r.start(); err != nil {
		return res, err
	}
	fail := func(err error) (mooncdcResult, error) {
		select {
		case <-r.exited():
		default:
			_ = r.stop()
		}
		res.log = r.output()
		return res, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.exited():
			res.log = r.output()
			return res, fmt.Errorf("mooncdc exited before its slot reached %s", s.endLSN)
		case <-ctx.Done():
			return fail(fmt.Errorf("mooncdc's slot did not reach %s (timeout -timeout, or interrupted): %w", s.endLSN, ctx.Err()))
		case <-tick.C:
		}
		if res.ready == 0 && get(hc, metricsAddr, "/readyz") != nil {
			res.ready = time.Since(start)
		}
		if res.durable == 0 {
			if m, err := scrape(hc, metricsAddr); err == nil {
				now := time.Since(start)
				if res.received == 0 && m["mooncdc_changes_received_total"] >= float64(rows) {
					res.received = now
				}
				if res.acked == 0 && m["mooncdc_transactions_durable_total"] >= float64(txs) {
					res.acked = now
				}
				if pglogrepl.LSN(m["mooncdc_durable_lsn"]) >= s.endLSN {
					res.durable = now
				}
			}
		}
		confirmed, err := w.poll(ctx)
		if err != nil {
			return fail(err)
		}
		if confirmed >= s.endLSN {
			res.elapsed = time.Since(start)
			res.hostBusy = hostBusy() - busy0
			break
		}
	}
	if ip, ok := r.(*inprocRunner); ok {
		if err := ip.stopProfile(); err != nil {
			return fail(err)
		}
	}
	for _, d := range []*time.Duration{&res.received, &res.acked, &res.durable} {
		if *d == 0 {
			*d = res.elapsed
		}
	}
	res.walsenderCPU = w.walsenderCPU()
	if u, sy, err := procCPU(b.pid()); err == nil {
		res.brokerCPU = cpuTime{u, sy}
	}
	if ip, ok := r.(*inprocRunner); ok {
		u, sy := selfRusage()
		res.cpuAtEnd = cpuTime{u - ip.u0, sy - ip.s0}
	} else if u, sy, err := procCPU(r.pid()); err == nil {
		res.cpuAtEnd = cpuTime{u, sy}
	}
	res.hwmAtEnd, _ = vmHWM(r.pid())
	m, err := scrape(hc, metricsAddr)
	if err != nil {
		return fail(fmt.Errorf("metrics: %w", err))
	}
	if onMetrics != nil {
		onMetrics(m)
	}
	res.payload = m["mooncdc_replication_payload_bytes_total"]
	res.written = m["mooncdc_changes_written_total"]

	stopStart := time.Now()
	err = r.stop()
	res.stopTime = time.Since(stopStart)
	res.cpu.user, res.cpu.sys, res.maxRSS = r.rusage()
	res.log = r.output()
	if err != nil {
		return res, err
	}
	return res, nil
}

// get returns nil unless GET path answers 200.
func get(hc *http.Client, addr, path string) []byte {
	resp, err := hc.Get("http://" + addr + path)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	return body
}

// scrape reads the mooncdc_* samples from /metrics, keyed by the sample's
// name with its labels as exposed, e.g.
// mooncdc_table_copy_rows_total{table="public.x"}.
func scrape(hc *http.Client, addr string) (map[string]float64, error) {
	body := get(hc, addr, "/metrics")
	if body == nil {
		return nil, fmt.Errorf("GET http://%s/metrics failed", addr)
	}
	m := make(map[string]float64)
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, "mooncdc_") {
			continue
		}
		// Label values may hold spaces: the value follows the last one.
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		name, val := line[:i], line[i+1:]
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			m[name] = v
		}
	}
	return m, nil
}

// committedCount counts the records of topic a read_committed consumer
// sees (offsets would count transaction markers too). It stops when no
// record came for a second after want were seen, or for 5 s at all.
func committedCount(ctx context.Context, addr, topic string, want int64) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	last := time.Now()
	for {
		quiet := 5 * time.Second
		if n >= want {
			quiet = time.Second
		}
		if time.Since(last) > quiet {
			return n, nil
		}
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		got := int64(fs.NumRecords())
		if got > 0 {
			n += got
			last = time.Now()
		}
	}
}
