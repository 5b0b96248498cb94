package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
)

// The latency benchmark (issue 17.1): how long from a Postgres commit until
// a read_committed consumer sees the record, at fixed write rates and at
// saturation, in both delivery modes, and at-least-once once more with
// ha.enabled (-latency-ha) to show what the broker's fence costs.
//
// A writer commits transactions into public.lat at the rate asked (a
// transaction every 10 ms holding rate/100 rows; at saturation 100-row
// transactions back to back), each row carrying its phase. A consumer in
// this process reads the data topic read_committed and, for every record,
// takes the time it was fetched minus the commit time Postgres gives in
// the record (source.ts_us when the record has it, else source.ts_ms, which
// is truncated to the millisecond and so overstates a latency by up to
// 1 ms). Both clocks are this machine's.

// latencyGoals are the goals for p99 at 10,000 changes/s.
var latencyGoals = map[config.Delivery]time.Duration{
	config.DeliveryAtLeastOnce: 50 * time.Millisecond,
	config.DeliveryExactlyOnce: 150 * time.Millisecond,
}

const (
	latTable   = "lat"
	latPub     = "lat_pub"
	latName    = "latbench"
	latTopic   = latName + ".public." + latTable
	latGoalHz  = 10_000
	latTick    = 10 * time.Millisecond
	latSatRows = 100 // rows per transaction at saturation
)

// latencyPhase is one rate's measurement.
type latencyPhase struct {
	rate     int // changes/s asked; 0 = saturation
	achieved float64
	// delivered is the records over the time from the phase's first
	// commit until the consumer read its last record: at saturation, the
	// throughput from Postgres to a read_committed consumer.
	delivered   float64
	records     int
	p50, p99, m time.Duration
}

// latencyMode is one mooncdc run of the latency benchmark: a delivery
// mode, and whether the instance runs with ha.enabled (a lone standby
// instance: its at-least-once writes go in Kafka transactions, the
// broker's fence against a paused instance writing after its successor,
// connector/internal/delivery/sink.go).
type latencyMode struct {
	delivery config.Delivery
	ha       bool
}

func (m latencyMode) String() string {
	if m.ha {
		return string(m.delivery) + "+ha"
	}
	return string(m.delivery)
}

// parseRates reads -latency-rates: changes/s, 0 for saturation.
func parseRates(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-latency-rates %q: want comma-separated changes/s (0 = saturation)", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// runLatency runs the latency benchmark in each delivery mode.
func runLatency(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	rates, err := parseRates(o.latencyRates)
	if err != nil {
		return err
	}
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return err
	}
	for _, q := range []string{
		`CREATE TABLE public.` + latTable + ` (id bigserial PRIMARY KEY, phase int NOT NULL, pad text NOT NULL)`,
		`CREATE PUBLICATION ` + latPub + ` FOR TABLE public.` + latTable,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			conn.Close(context.Background())
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	conn.Close(context.Background())

	results := map[latencyMode][]latencyPhase{}
	alo, aloHA := latencyMode{delivery: config.DeliveryAtLeastOnce}, latencyMode{delivery: config.DeliveryAtLeastOnce, ha: true}
	modes := []latencyMode{alo, {delivery: config.DeliveryExactlyOnce}}
	if o.latencyHA {
		modes = append(modes, aloHA)
	}
	for _, mode := range modes {
		phases, err := latencyRun(ctx, o, src, kfakeBin, tmp, mode, rates)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		results[mode] = phases
	}

	fmt.Println()
	fmt.Printf("mooncdc latency: Postgres commit → record fetched by a read_committed consumer (same machine), %s per rate\n", o.latencyDuration)
	fmt.Printf("  %-18s %-14s %12s %12s %9s %9s %9s %9s\n", "delivery", "asked", "achieved/s", "delivered/s", "records", "p50", "p99", "max")
	var failed []string
	for _, mode := range modes {
		for _, ph := range results[mode] {
			asked := commas(int64(ph.rate)) + "/s"
			if ph.rate == 0 {
				asked = "saturation"
			}
			fmt.Printf("  %-18s %-14s %12s %12s %9d %9s %9s %9s\n", mode, asked, commas(int64(ph.achieved)), commas(int64(ph.delivered)), ph.records,
				ms(ph.p50), ms(ph.p99), ms(ph.m))
		}
	}
	if o.latencyHA {
		printHACost(results[alo], results[aloHA])
	}
	for _, mode := range modes {
		goal, ok := latencyGoals[mode.delivery]
		if !ok || mode.ha {
			continue
		}
		for _, ph := range results[mode] {
			if ph.rate != latGoalHz {
				continue
			}
			verdict := "PASS"
			if ph.p99 > goal {
				verdict = "FAIL"
				failed = append(failed, mode.String())
			}
			fmt.Printf("goal: p99 ≤ %s at %s changes/s, %s  %s (%s)\n", ms(goal), commas(latGoalHz), mode, verdict, ms(ph.p99))
		}
	}
	if o.requireGoal && len(failed) > 0 {
		return fmt.Errorf("latency goal missed in %s", strings.Join(failed, ", "))
	}
	return nil
}

// latencyRun starts a broker and mooncdc in one delivery mode, then
// measures each rate in turn.
func latencyRun(ctx context.Context, o options, src *source, kfakeBin, tmp string, mode latencyMode, rates []int) ([]latencyPhase, error) {
	kafkaDir := filepath.Join(tmp, "kafka-lat-"+mode.String())
	brk, err := startBroker(kfakeBin, kafkaDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(kafkaDir)
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfg := pipelineConfig(src, brk.addr, metricsAddr)
	cfg.Name = latName
	cfg.Kafka.TopicPrefix = latName
	cfg.Postgres.Tables = []string{"public." + latTable}
	cfg.Postgres.Publication = latPub
	cfg.Postgres.Slot = "lat_" + strings.NewReplacer("-", "_", "+", "_").Replace(mode.String())
	cfg.Kafka.Delivery = mode.delivery
	yaml := configYAML(cfg)
	if mode.ha {
		yaml += "ha:\n  enabled: true\n"
	}
	path := filepath.Join(tmp, "mooncdc-lat-"+mode.String()+".yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	runner := &childRunner{bin: o.mooncdc, config: path}
	step(fmt.Sprintf("latency, %s: mooncdc run → Kafka (kfake %s)", mode, brk.addr))
	if err := runner.start(); err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = runner.stop()
		}
	}()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	// "streaming", not a standby's "standby" (ha.enabled, before the
	// group gives it the partition).
	for !strings.HasPrefix(string(get(hc, metricsAddr, "/readyz")), "streaming") {
		select {
		case <-runner.exited():
			printLog("mooncdc", runner.output())
			return nil, fmt.Errorf("mooncdc exited before streaming")
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			printLog("mooncdc", runner.output())
			return nil, fmt.Errorf("mooncdc not streaming after a minute")
		}
	}

	cons, err := newLatencyConsumer(brk.addr)
	if err != nil {
		return nil, err
	}
	defer cons.close()
	go cons.run(ctx)

	// Warm up: the topic exists and the consumer has its partition, so the
	// first measured record waits for neither.
	w, err := newLatencyWriter(ctx, src)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := w.commit(ctx, -1, 1); err != nil {
		return nil, err
	}
	if err := cons.wait(ctx, -1, 1, time.Minute); err != nil {
		printLog("mooncdc", runner.output())
		return nil, fmt.Errorf("warm-up: %w", err)
	}

	var out []latencyPhase
	for i, rate := range rates {
		phase := i
		began := time.Now()
		n, took, err := w.load(ctx, phase, rate, o.latencyDuration)
		if err != nil {
			return nil, err
		}
		if err := cons.wait(ctx, phase, n, 2*time.Minute); err != nil {
			printLog("mooncdc", runner.output())
			return nil, err
		}
		all := time.Since(began)
		lat := cons.take(phase)
		slices.Sort(lat)
		ph := latencyPhase{rate: rate, achieved: float64(n) / took.Seconds(), delivered: float64(n) / all.Seconds(), records: len(lat)}
		if len(lat) > 0 {
			ph.p50, ph.p99, ph.m = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
		}
		asked := commas(int64(rate)) + " changes/s"
		if rate == 0 {
			asked = "saturation"
		}
		step(fmt.Sprintf("latency, %s, %s: %d records, p50 %s, p99 %s, max %s", mode, asked, n, ms(ph.p50), ms(ph.p99), ms(ph.m)))
		out = append(out, ph)
	}
	stopped = true
	if err := runner.stop(); err != nil {
		printLog("mooncdc", runner.output())
		return nil, err
	}
	return out, nil
}

// latencyWriter commits the load on one connection.
type latencyWriter struct{ conn *pgx.Conn }

func newLatencyWriter(ctx context.Context, src *source) (*latencyWriter, error) {
	conn, err := src.c.Connect(ctx, "")
	if err != nil {
		return nil, err
	}
	return &latencyWriter{conn: conn}, nil
}

// commit inserts rows rows of phase in one transaction.
func (w *latencyWriter) commit(ctx context.Context, phase, rows int) error {
	_, err := w.conn.Exec(ctx, `INSERT INTO public.`+latTable+` (phase, pad) SELECT $1, 'x' FROM generate_series(1, $2)`, phase, rows)
	return err
}

// load commits rows of phase at rate changes/s (0: as fast as it can) for
// d, and returns how many rows it committed and in what time.
func (w *latencyWriter) load(ctx context.Context, phase, rate int, d time.Duration) (int, time.Duration, error) {
	start := time.Now()
	n := 0
	if rate == 0 {
		for time.Since(start) < d {
			if err := w.commit(ctx, phase, latSatRows); err != nil {
				return n, 0, err
			}
			n += latSatRows
		}
		return n, time.Since(start), nil
	}
	// Each tick commits what the rate owes by then, so a slow commit is
	// caught up by the next ones instead of lowering the rate.
	tick := time.NewTicker(latTick)
	defer tick.Stop()
	for time.Since(start) < d {
		owed := int(time.Since(start).Seconds()*float64(rate)) - n
		if owed > 0 {
			if err := w.commit(ctx, phase, owed); err != nil {
				return n, 0, err
			}
			n += owed
		}
		select {
		case <-ctx.Done():
			return n, 0, ctx.Err()
		case <-tick.C:
		}
	}
	return n, time.Since(start), nil
}

func (w *latencyWriter) close() { _ = w.conn.Close(context.Background()) }

// latencyConsumer reads the data topic read_committed and keeps each
// record's latency by phase.
type latencyConsumer struct {
	cl   *kgo.Client
	mu   sync.Mutex
	lat  map[int][]time.Duration
	seen chan struct{} // pinged when records arrive
}

func newLatencyConsumer(addr string) (*latencyConsumer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(latTopic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(50*time.Millisecond), kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	if err != nil {
		return nil, err
	}
	return &latencyConsumer{cl: cl, lat: map[int][]time.Duration{}, seen: make(chan struct{}, 1)}, nil
}

// latencyValue is what the consumer reads of a record.
type latencyValue struct {
	After *struct {
		Phase int `json:"phase"`
	} `json:"after"`
	Source struct {
		TsMs int64 `json:"ts_ms"`
		TsUs int64 `json:"ts_us"`
	} `json:"source"`
}

func (c *latencyConsumer) run(ctx context.Context) {
	for ctx.Err() == nil {
		fs := c.cl.PollFetches(ctx)
		now := time.Now()
		if fs.IsClientClosed() {
			return
		}
		var batch []struct {
			phase int
			lat   time.Duration
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v latencyValue
			if r.Value == nil || json.Unmarshal(r.Value, &v) != nil || v.After == nil {
				return
			}
			commit := time.UnixMilli(v.Source.TsMs)
			if v.Source.TsUs != 0 {
				commit = time.UnixMicro(v.Source.TsUs)
			}
			batch = append(batch, struct {
				phase int
				lat   time.Duration
			}{v.After.Phase, now.Sub(commit)})
		})
		if len(batch) == 0 {
			continue
		}
		c.mu.Lock()
		for _, b := range batch {
			c.lat[b.phase] = append(c.lat[b.phase], b.lat)
		}
		c.mu.Unlock()
		select {
		case c.seen <- struct{}{}:
		default:
		}
	}
}

// wait waits until n records of phase were read.
func (c *latencyConsumer) wait(ctx context.Context, phase, n int, limit time.Duration) error {
	deadline := time.After(limit)
	for {
		c.mu.Lock()
		got := len(c.lat[phase])
		c.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-c.seen:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("the consumer read %d of the %d records of phase %d within %s", got, n, phase, limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// take returns and forgets the latencies of phase.
func (c *latencyConsumer) take(phase int) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.lat[phase]
	delete(c.lat, phase)
	return out
}

func (c *latencyConsumer) close() { c.cl.Close() }

// ms prints a duration in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

// printHACost prints what the broker's fence costs at-least-once: the
// run with ha.enabled (Kafka transactions) beside the plain run, per rate,
// from one bench run.
func printHACost(plain, ha []latencyPhase) {
	fmt.Println("at-least-once with ha.enabled (writes in Kafka transactions, fenced by the broker) beside plain at-least-once:")
	for i := range min(len(plain), len(ha)) {
		p, h := plain[i], ha[i]
		asked := commas(int64(p.rate)) + " changes/s"
		if p.rate == 0 {
			asked = "saturation"
		}
		ratio := 0.0
		if p.delivered > 0 {
			ratio = h.delivered / p.delivered
		}
		fmt.Printf("  %-18s delivered/s %s vs %s (ratio %.2f); p50 %s vs %s; p99 %s vs %s\n", asked,
			commas(int64(h.delivered)), commas(int64(p.delivered)), ratio, ms(h.p50), ms(p.p50), ms(h.p99), ms(p.p99))
	}
}
