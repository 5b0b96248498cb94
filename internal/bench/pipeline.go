package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pglogrepl"
)

const (
	connectorName = "bench"
	dataTopic     = connectorName + ".public." + table
)

// freeAddr returns 127.0.0.1:PORT with a port that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
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
