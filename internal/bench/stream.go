package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// This file is the streaming benchmark: pg_recvlogical vs mooncdc over the
// same WAL, then mooncdc with Avro and with exactly-once delivery.

// runStream is the streaming benchmark: N inserts, pg_recvlogical vs
// mooncdc.
func runStream(ctx context.Context, o options, src *source, kfakeBin, tmp string) error {
	var extra []string
	if o.avro {
		extra = append(extra, avroSlot)
	}
	if o.eos {
		extra = append(extra, eosSlot)
	}
	if err := src.prepareStream(ctx, o.limitRuns, extra...); err != nil {
		return err
	}
	step(fmt.Sprintf("loading %d rows in transactions of %d", o.n, o.tx))
	if err := src.load(ctx, o.n, o.tx); err != nil {
		return err
	}
	walBytes := float64(src.endLSN - src.startLSN)
	step(fmt.Sprintf("loaded in %s (%s rows/s), WAL %s..%s (%.0f MiB)", round(src.loadTime), rate(o.n, src.loadTime),
		src.startLSN, src.endLSN, walBytes/(1<<20)))

	var lim limitResult
	for i := range o.limitRuns {
		step(fmt.Sprintf("limit: pg_recvlogical → /dev/null (slot %s)", limitSlotName(i)))
		lctx, cancel := context.WithTimeout(ctx, o.timeout)
		l, err := src.runLimit(lctx, limitSlotName(i))
		cancel()
		if err != nil {
			return err
		}
		step(fmt.Sprintf("limit done in %s (walsender CPU %s, pg_recvlogical CPU %s)", round(l.elapsed), l.walsenderCPU, l.clientCPU))
		if i == 0 || l.elapsed < lim.elapsed {
			lim = l
		}
	}

	res, records, err := streamRun(ctx, o, src, kfakeBin, tmp, mooncdcSlot, "", false)
	if err != nil {
		return err
	}
	var avroRes mooncdcResult
	var avroRecords int64
	if o.avro {
		reg, err := srtest.Start()
		if err != nil {
			return err
		}
		defer reg.Close()
		if avroRes, avroRecords, err = streamRun(ctx, o, src, kfakeBin, tmp, avroSlot, reg.URL(), false); err != nil {
			return fmt.Errorf("avro run: %w", err)
		}
	}
	var eosRes mooncdcResult
	var eosRecords int64
	if o.eos {
		if eosRes, eosRecords, err = streamRun(ctx, o, src, kfakeBin, tmp, eosSlot, "", true); err != nil {
			return fmt.Errorf("exactly-once run: %w", err)
		}
	}

	// The report.
	limitRate := float64(o.n) / lim.elapsed.Seconds()
	moonRate := float64(o.n) / res.elapsed.Seconds()
	ratio := moonRate / limitRate
	mb := func(d time.Duration) string {
		if res.payload == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", res.payload/(1<<20)/d.Seconds())
	}
	fmt.Println()
	fmt.Printf("mooncdc bench: N=%d single-row inserts, %d rows/tx (%d transactions); row ≈ %.0f B on disk\n",
		o.n, o.tx, (o.n+o.tx-1)/o.tx, src.rowBytes)
	fmt.Printf("  Postgres %s (pgoutput proto_version %d), %d CPUs, GOMAXPROCS %d; WAL %.0f MiB; pgoutput payload %.0f MiB\n",
		src.version, src.protoVer, runtime.NumCPU(), runtime.GOMAXPROCS(0), walBytes/(1<<20), res.payload/(1<<20))
	fmt.Println()
	fmt.Printf("  %-34s %9s %12s %10s\n", "", "time", "rows/s", "MiB/s")
	fmt.Printf("  %-34s %9s %12s %10s\n", "limit: pg_recvlogical (pgoutput)", round(lim.elapsed), rate(o.n, lim.elapsed), mb(lim.elapsed))
	fmt.Printf("  %-34s %9s %12s %10s\n", "mooncdc: Postgres → Kafka, acked", round(res.elapsed), rate(o.n, res.elapsed), mb(res.elapsed))
	if o.avro {
		fmt.Printf("  %-34s %9s %12s %10s   (ratio %.2f; %d records; peak RSS %.1f MiB)\n", "mooncdc, format avro (registry)", round(avroRes.elapsed),
			rate(o.n, avroRes.elapsed), mb(avroRes.elapsed), lim.elapsed.Seconds()/avroRes.elapsed.Seconds(), avroRecords, float64(avroRes.maxRSS)/(1<<20))
	}
	if o.eos {
		fmt.Printf("  %-34s %9s %12s %10s   (ratio %.2f; %.2f of at-least-once; %d records; peak RSS %.1f MiB)\n", "mooncdc, exactly-once", round(eosRes.elapsed),
			rate(o.n, eosRes.elapsed), mb(eosRes.elapsed), lim.elapsed.Seconds()/eosRes.elapsed.Seconds(),
			res.elapsed.Seconds()/eosRes.elapsed.Seconds(), eosRecords, float64(eosRes.maxRSS)/(1<<20))
	}
	fmt.Println()
	fmt.Printf("  ratio mooncdc / limit:   %.2f (on the time to all acked, from mooncdc's metrics at 100ms resolution: %.2f)\n",
		ratio, lim.elapsed.Seconds()/res.acked.Seconds())
	fmt.Printf("  mooncdc peak RSS:        %.1f MiB (%s; VmHWM at the end LSN %.1f MiB)\n",
		float64(res.maxRSS)/(1<<20), map[bool]string{false: "VmHWM of the child, sampled every 20ms", true: "VmHWM of this process"}[o.inprocess],
		float64(res.hwmAtEnd)/(1<<20))
	fmt.Printf("  mooncdc CPU:             %s over its whole life; %s up to the end LSN = %.2f cores\n",
		res.cpu, round(res.cpuAtEnd.total()), res.cpuAtEnd.total().Seconds()/res.elapsed.Seconds())
	costLine := fmt.Sprintf("json %.2f µs", perRow(res.cpuAtEnd, o.n))
	if o.avro {
		costLine += fmt.Sprintf(", avro %.2f µs", perRow(avroRes.cpuAtEnd, o.n))
	}
	if o.eos {
		costLine += fmt.Sprintf(", json exactly-once %.2f µs", perRow(eosRes.cpuAtEnd, o.n))
	}
	fmt.Printf("  cost per change:         %s of mooncdc CPU per row (start → end LSN; limit: walsender %.2f µs + pg_recvlogical %.2f µs)\n",
		costLine, perRow(lim.walsenderCPU, o.n), perRow(lim.clientCPU, o.n))
	if res.stages != nil {
		fmt.Printf("  json CPU by stage:       %s (per change, whole life, from run --cpuprofile: %s sampled)\n", res.stages.perRow(o.n), round(res.stages.total))
	}
	fmt.Printf("  mooncdc timeline:        streaming %s, all decoded %s, all acked %s, durable LSN at end %s, slot confirmed %s; clean stop took %s\n",
		round(res.ready), round(res.received), round(res.acked), round(res.durable), round(res.elapsed), round(res.stopTime))
	fmt.Printf("  other CPU (mooncdc run): walsender %s, kfake broker %s\n", res.walsenderCPU, res.brokerCPU)
	fmt.Printf("  other CPU (limit run):   walsender %s, pg_recvlogical %s\n", lim.walsenderCPU, lim.clientCPU)
	// Other processes on the machine (other builds, tests) skew the
	// figures: say how much CPU they took during each measurement.
	limOurs := (lim.walsenderCPU.total() + lim.clientCPU.total()).Seconds() / lim.elapsed.Seconds()
	limBusy := lim.hostBusy.Seconds() / lim.elapsed.Seconds()
	resOurs := (res.cpuAtEnd.total() + res.walsenderCPU.total() + res.brokerCPU.total()).Seconds() / res.elapsed.Seconds()
	resBusy := res.hostBusy.Seconds() / res.elapsed.Seconds()
	fmt.Printf("  machine CPU busy:        limit run %.2f of %d cores (its processes %.2f); mooncdc run %.2f (mooncdc+walsender+broker %.2f)\n",
		limBusy, runtime.NumCPU(), limOurs, resBusy, resOurs)
	if other := max(limBusy-limOurs, resBusy-resOurs); other > 0.35 {
		fmt.Printf("  WARNING: other processes used up to %.2f cores during a measurement; the figures are skewed, run again on a quiet machine\n", other)
	}
	fmt.Printf("  Kafka %s: %d records; mooncdc wrote %.0f\n", dataTopic, records, res.written)
	fmt.Println()
	verdict := "PASS"
	if ratio < goal {
		verdict = "FAIL"
	}
	fmt.Printf("goal: ratio >= %.1f  %s (%.2f)\n", goal, verdict, ratio)

	if o.cpuprofile != "" {
		fmt.Printf("\nCPU profile of the pipeline (start → end LSN) in %s; top 20:\n", o.cpuprofile)
		cmd := exec.Command("go", "tool", "pprof", "-top", "-nodecount=20", o.cpuprofile)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "go tool pprof: %v\n", err)
		}
	}

	if records < int64(o.n) || o.avro && avroRecords < int64(o.n) || o.eos && eosRecords != int64(o.n) {
		return fmt.Errorf("delivery: topic %s holds %d records (avro run: %d, exactly-once run: %d), want %d", dataTopic, records, avroRecords, eosRecords, o.n)
	}
	if o.eos {
		eosRatio := res.elapsed.Seconds() / eosRes.elapsed.Seconds()
		verdict := "PASS"
		if eosRatio < 0.75 {
			verdict = "FAIL"
		}
		fmt.Printf("goal: exactly-once within 25%% of at-least-once  %s (%.2f)\n", verdict, eosRatio)
	}
	if o.requireGoal && ratio < goal {
		return errors.New("the ratio misses the goal")
	}
	return nil
}

// avroSlot is the slot of the streaming run with format avro; it is made
// with the others, so that it sees the same WAL.
const avroSlot = "bench_mooncdc_avro"

// eosSlot is the slot of the streaming run with kafka.delivery
// exactly-once.
const eosSlot = "bench_mooncdc_eos"

// streamRun runs mooncdc over the loaded WAL from slot, on a broker of its
// own, until the slot is confirmed to the end; with registryURL, key and
// value are Avro. It returns the run and the records in the data topic.
func streamRun(ctx context.Context, o options, src *source, kfakeBin, tmp, slot, registryURL string, eos bool) (mooncdcResult, int64, error) {
	var res mooncdcResult
	kafkaDir := filepath.Join(tmp, "kafka-"+slot)
	brk, err := startBroker(kfakeBin, kafkaDir)
	if err != nil {
		return res, 0, err
	}
	// The broker's data (hundreds of MiB) goes with it, before the next
	// part starts its own broker.
	defer os.RemoveAll(kafkaDir)
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return res, 0, err
	}
	cfg := pipelineConfig(src, brk.addr, metricsAddr)
	cfg.Postgres.Slot = slot
	format := "json"
	if registryURL != "" {
		format = "avro"
		cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
		cfg.Format.SchemaRegistry.URL = registryURL
	}
	if eos {
		format += ", exactly-once"
		cfg.Kafka.Delivery = config.DeliveryExactlyOnce
	}
	var runner pipelineRunner
	what := "mooncdc run (" + o.mooncdc + ")"
	if o.inprocess {
		what = "mooncdc in-process (connector.Run)"
		runner = &inprocRunner{cfg: cfg, cpuprofile: o.cpuprofile}
		if registryURL != "" {
			runner = &inprocRunner{cfg: cfg}
		}
	} else {
		path := filepath.Join(tmp, "mooncdc-"+slot+".yaml")
		if err := os.WriteFile(path, []byte(configYAML(cfg)), 0o600); err != nil {
			return res, 0, err
		}
		runner = &childRunner{bin: o.mooncdc, config: path, cpuprofile: o.stagesProfile(tmp, "mooncdc-"+slot)}
	}
	step(what + ", format " + format + " → Kafka (kfake " + brk.addr + ")")
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	res, err = runPipeline(pctx, src, runner, brk, metricsAddr, slot, o.n, (o.n+o.tx-1)/o.tx)
	cancel()
	if o.verbose || err != nil {
		printLog("mooncdc", res.log)
		printLog("kfakeserver", brk.out.String())
	}
	if err != nil {
		return res, 0, err
	}
	step(fmt.Sprintf("mooncdc done in %s; stopped in %s", round(res.elapsed), round(res.stopTime)))
	if cr, ok := runner.(*childRunner); ok && cr.cpuprofile != "" {
		if cs, err := readCPUStages(cr.cpuprofile); err != nil {
			fmt.Fprintf(os.Stderr, "bench: CPU by stage: %v\n", err)
		} else {
			res.stages = &cs
		}
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	records, err := recordCount(cctx, brk.addr, dataTopic)
	if eos {
		// Offsets count the transaction markers too: read them.
		records, err = committedCount(cctx, brk.addr, dataTopic, int64(o.n))
	}
	cancel()
	if err != nil {
		return res, 0, fmt.Errorf("count records in Kafka: %w", err)
	}
	return res, records, nil
}
