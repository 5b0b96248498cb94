package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/config"
)

// The compression benchmark (issue 17.5): the snapshot benchmark's copy
// and its Kafka limit again with each codec of -compressions, each on a
// fresh broker, reporting records/s and the bytes the broker stored (its
// data directory: the record batches as written, compressed), beside the
// snapshot benchmark's own run (-compression, none by default).

// compressionResult is one codec's pair of runs.
type compressionResult struct {
	codec        string
	elapsed      time.Duration // mooncdc, start → exit
	brokerBytes  int64
	records      int64
	cpu          cpuTime
	limitElapsed time.Duration // franz-go alone
	limitBytes   int64
}

func runCompressions(ctx context.Context, o options, src *source, kfakeBin, tmp string, base compressionResult) error {
	n := o.snapRows
	results := []compressionResult{base}
	for _, codec := range strings.Split(o.compressions, ",") {
		codec = strings.TrimSpace(codec)
		if codec == "" || codec == base.codec {
			continue
		}
		r, err := compressionRun(ctx, o, src, kfakeBin, tmp, codec)
		if err != nil {
			return fmt.Errorf("%s: %w", codec, err)
		}
		results = append(results, r)
	}
	fmt.Println()
	fmt.Printf("mooncdc kafka.compression: the snapshot of %d rows (mooncdc, start → exit) and franz-go alone, each on a fresh kfake; bytes = the broker's data directory\n", n)
	fmt.Printf("  %-8s %12s %14s %12s %14s %12s %10s\n", "codec", "mooncdc r/s", "on the broker", "B/record", "franz-go r/s", "its bytes", "CPU µs/row")
	for _, r := range results {
		lim := "-"
		if r.limitElapsed > 0 {
			lim = rate(n, r.limitElapsed)
		}
		fmt.Printf("  %-8s %12s %10.1f MiB %12.0f %14s %8.1f MiB %10.2f\n", r.codec, rate(n, r.elapsed), float64(r.brokerBytes)/(1<<20),
			float64(r.brokerBytes)/float64(max(n, 1)), lim, float64(r.limitBytes)/(1<<20), perRow(r.cpu, n))
	}
	return nil
}

func compressionRun(ctx context.Context, o options, src *source, kfakeBin, tmp, codec string) (compressionResult, error) {
	out, err := pairRun(ctx, o, src, kfakeBin, tmp, "compression "+codec, codec, func(cfg *config.Config) { cfg.Kafka.Compression = codec })
	out.codec = codec
	return out, err
}

// pairRun runs the snapshot benchmark's copy with edit applied to its
// config, then its Kafka limit with the same config, each on a fresh
// broker, back to back. name labels the steps; id names the slot and the
// directories.
func pairRun(ctx context.Context, o options, src *source, kfakeBin, tmp, name, id string, edit func(*config.Config)) (compressionResult, error) {
	var out compressionResult
	v, err := runSnapshotVariant(ctx, o, src, kfakeBin, tmp, name, id, edit, "")
	if err != nil {
		return out, err
	}
	out.elapsed, out.cpu, out.records, out.brokerBytes = v.elapsed, v.cpu, v.records, v.brokerBytes

	ldir := filepath.Join(tmp, "kafka-limit-"+id)
	defer os.RemoveAll(ldir)
	kbrk, err := startBroker(kfakeBin, ldir)
	if err != nil {
		return out, err
	}
	defer kbrk.kill()
	step(fmt.Sprintf("%s: franz-go alone → Kafka (fresh kfake %s)", name, kbrk.addr))
	kctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	klim, err := runKafkaLimit(kctx, kbrk, v.cfg, o.snapRows, snapshotRates.first)
	if err != nil {
		return out, fmt.Errorf("kafka limit: %w", err)
	}
	kbrk.kill()
	out.limitElapsed, out.limitBytes = klim.elapsed, dirSize(ldir)
	return out, nil
}

// variantRun is one run of the snapshot benchmark's copy on a fresh broker.
type variantRun struct {
	cfg         config.Config
	elapsed     time.Duration // mooncdc, start → exit
	cpu         cpuTime
	records     int64
	first       *kgo.Record // the topic's first record
	brokerBytes int64       // the broker's data directory after the run
}

// runSnapshotVariant runs the snapshot benchmark's copy again, with edit
// applied to its config and extraFormat added under format: in the YAML,
// on a fresh broker, and checks that every row was delivered. name
// labels the step; id names the slot and the directories.
func runSnapshotVariant(ctx context.Context, o options, src *source, kfakeBin, tmp, name, id string,
	edit func(*config.Config), extraFormat string) (variantRun, error) {
	var out variantRun
	kdir := filepath.Join(tmp, "kafka-snapshot-"+id)
	defer os.RemoveAll(kdir)
	brk, err := startBroker(kfakeBin, kdir)
	if err != nil {
		return out, err
	}
	defer brk.kill()
	metricsAddr, err := freeAddr()
	if err != nil {
		return out, err
	}
	cfg := snapshotConfig(src, brk.addr, metricsAddr, o.snapConns)
	edit(&cfg)
	cfg.Postgres.Slot = snapSlot + "_" + id
	yaml := configYAML(cfg)
	if extraFormat != "" {
		yaml = strings.Replace(yaml, "\nformat:\n", "\nformat:\n"+extraFormat+"\n", 1)
	}
	path := filepath.Join(tmp, "mooncdc-snapshot-"+id+".yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		return out, err
	}
	step(fmt.Sprintf("%s: mooncdc snapshot → Kafka (fresh kfake %s)", name, brk.addr))
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	res, err := runSnapshotPipeline(pctx, src, &childRunner{bin: o.mooncdc, config: path}, brk, metricsAddr, o.snapRows)
	cancel()
	if err == nil && res.exitErr != nil {
		err = fmt.Errorf("mooncdc: %w", res.exitErr)
	}
	if err != nil {
		printLog("mooncdc", res.log)
		return out, err
	}
	out.cfg, out.elapsed, out.cpu = cfg, res.elapsed, res.cpu
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if out.records, err = recordCount(cctx, brk.addr, snapTopic); err != nil {
		return out, err
	}
	if out.records < int64(o.snapRows) {
		return out, fmt.Errorf("delivery: %d records, want %d", out.records, o.snapRows)
	}
	if out.first, err = firstRecord(cctx, brk.addr, snapTopic); err != nil {
		return out, err
	}
	brk.kill()
	out.brokerBytes = dirSize(kdir)
	return out, nil
}

// dirSize is the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
