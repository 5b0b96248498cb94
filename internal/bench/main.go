package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mooncdc/mooncdc/internal/gobuild"
)

const goal = 0.5

type options struct {
	stages     bool // profile the mooncdc child for its CPU by stage (run --cpuprofile)
	n, tx      int
	limitRuns  int
	mooncdc    string
	inprocess  bool
	avro       bool
	eos        bool
	cpuprofile string
	// tablesCPUProfile is -tables-cpuprofile: the many-tables child's
	// CPU profile.
	tablesCPUProfile string
	timeout          time.Duration
	requireGoal      bool
	verbose          bool

	stream, snapshot   bool
	snapRows           int
	snapLimitRuns      int
	snapPairs          int
	snapConns          int
	snapshotCPUProfile string

	latency         bool
	latencyRates    string
	latencyDuration time.Duration
	latencyHA       bool

	memBound bool
	memRows  int

	hugeTx    int
	hugeTable int

	tables          int
	tablesLoad      int
	tablesAvro      bool
	registryLatency time.Duration

	compressions string
	shapings     string

	resnapRows int
	resnapLoad int
	// resnapCPUProfile is -resnapshot-cpuprofile: the re-snapshot
	// child's CPU profile (its whole life, both re-snapshots).
	resnapCPUProfile string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 1_000_000, "rows to insert (one INSERT each)")
	flag.BoolVar(&o.stages, "stages", true, "profile the mooncdc child (run --cpuprofile, about 1% of its CPU) to print its CPU by stage for the JSON stream and the snapshot")
	flag.IntVar(&o.tx, "tx", 100, "rows per transaction")
	flag.IntVar(&o.limitRuns, "limit-runs", 1, "pg_recvlogical runs (one slot each); the fastest is the limit")
	flag.StringVar(&o.mooncdc, "mooncdc", "bin/mooncdc", "the mooncdc binary (make build)")
	flag.BoolVar(&o.inprocess, "inprocess", false, "run the connector in this process instead of the mooncdc binary")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "with -inprocess: write a CPU profile of the pipeline run to this file")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up on a reader after this long")
	flag.BoolVar(&o.requireGoal, "require-goal", false, "exit 1 when the ratio misses the goal")
	flag.BoolVar(&o.verbose, "v", false, "print mooncdc's and the broker's log output")
	flag.StringVar(&compression, "compression", "none", "kafka.compression for mooncdc (none, gzip, snappy, lz4, zstd)")
	flag.BoolVar(&o.eos, "eos", true, "in the streaming benchmark, run mooncdc a third time with kafka.delivery exactly-once")
	flag.BoolVar(&o.avro, "avro", true, "in the streaming benchmark, run mooncdc a second time with format avro (an in-process Schema Registry stand-in)")
	flag.BoolVar(&o.stream, "stream", true, "run the streaming benchmark (inserts, pg_recvlogical vs mooncdc)")
	flag.BoolVar(&o.snapshot, "snapshot", true, "run the snapshot benchmark (COPY TO STDOUT vs mooncdc's snapshot)")
	flag.IntVar(&o.snapRows, "snapshot-rows", 1_000_000, "rows of the snapshot table")
	flag.IntVar(&o.snapLimitRuns, "snapshot-limit-runs", 3, "COPY TO STDOUT runs; the fastest is the limit")
	flag.IntVar(&o.snapPairs, "snapshot-pairs", 3, "pairs of runs (mooncdc's snapshot, then franz-go alone with the same records, fresh brokers) whose median ratio is the Kafka-limit goal's figure; the first is the snapshot benchmark's own run, the others run the mooncdc binary, even with -inprocess")
	flag.IntVar(&o.snapConns, "snapshot-connections", 0, "snapshot.connections_per_table for mooncdc (0: mooncdc's default)")
	flag.StringVar(&o.snapshotCPUProfile, "snapshot-cpuprofile", "", "with -inprocess: write a CPU profile of the snapshot run (start to exit) to this file")
	flag.BoolVar(&o.latency, "latency", true, "run the latency benchmark (commit → record seen by a read_committed consumer, both delivery modes)")
	flag.StringVar(&o.latencyRates, "latency-rates", "1000,10000,0", "the latency benchmark's write rates, changes/s (0 = saturation)")
	flag.DurationVar(&o.latencyDuration, "latency-duration", 5*time.Second, "how long the latency benchmark writes at each rate")
	flag.BoolVar(&o.latencyHA, "latency-ha", true, "in the latency benchmark, run at-least-once a second time with ha.enabled (writes in Kafka transactions, which the broker fences) and print its cost beside the plain run")
	flag.BoolVar(&o.memBound, "membound", true, "run the memory-bound benchmark (peak RSS with the broker frozen during a copy and a stream)")
	flag.IntVar(&o.memRows, "membound-rows", 300_000, "rows of the memory-bound benchmark's copy, and inserts of its stream")
	flag.IntVar(&o.hugeTx, "huge-tx", 200_000, "rows of the huge-transaction benchmark's one transaction (0 skips it; the issue's case is 10000000)")
	flag.IntVar(&o.hugeTable, "huge-table", 0, "rows of the huge-table benchmark (0 skips it; the issue's case is 10000000)")
	flag.IntVar(&o.tables, "tables", 1000, "tables of the thousands-of-tables benchmark, 100 rows each (0 skips it; the large case is 5000)")
	flag.IntVar(&o.tablesLoad, "tables-load", 1000, "the thousands-of-tables benchmark's write load on all tables, changes/s")
	flag.StringVar(&o.tablesCPUProfile, "tables-cpuprofile", "", "write the CPU profile of the thousands-of-tables benchmark's first mooncdc run (run --cpuprofile) to this file")
	flag.BoolVar(&o.tablesAvro, "tables-avro", false, "run the thousands-of-tables benchmark again with format avro (key and value) against an in-process Schema Registry stand-in")
	flag.DurationVar(&o.registryLatency, "registry-latency", 0, "run the thousands-of-tables benchmark once more with format avro and the registry stand-in delaying every request by this much, as a remote registry would (e.g. 20ms; 0 skips)")
	flag.StringVar(&o.shapings, "shapings", "mask,hash,truncate,flat,transforms,cloudevents,protobuf,json_schema", "after the snapshot benchmark, run it again with each of these record-shaping options (mask, hash, truncate on the table's payload; flat, the envelope; transforms, a three-transform chain: Filter with CEL, InsertField, ReplaceField) or value formats (cloudevents; protobuf and json_schema with a Schema Registry stand-in); \"\" skips")
	flag.StringVar(&o.compressions, "compressions", "lz4,zstd", "after the snapshot benchmark, run it and its Kafka limit again with each of these kafka.compression values (\"\" skips)")
	flag.IntVar(&o.resnapRows, "resnapshot-rows", 1_000_000, "rows of the re-snapshot benchmark's table, re-snapshotted blocking then incremental under a write load (0 skips it)")
	flag.IntVar(&o.resnapLoad, "resnapshot-load", 1000, "the re-snapshot benchmark's write load on its table, changes/s (half updates, half inserts)")
	flag.StringVar(&o.resnapCPUProfile, "resnapshot-cpuprofile", "", "write the CPU profile of the re-snapshot benchmark's mooncdc child (run --cpuprofile; its whole life, both re-snapshots) to this file")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	switch {
	case o.n <= 0 || o.tx <= 0 || o.limitRuns <= 0:
		return fmt.Errorf("-n, -tx and -limit-runs must be positive")
	case o.snapRows <= 0 || o.snapLimitRuns <= 0 || o.snapPairs <= 0 || o.snapConns < 0:
		return fmt.Errorf("-snapshot-rows, -snapshot-limit-runs and -snapshot-pairs must be positive, -snapshot-connections not negative")
	case !o.stream && !o.snapshot && !o.latency && !o.memBound && o.hugeTx == 0 && o.hugeTable == 0 && o.tables == 0 && o.resnapRows == 0:
		return fmt.Errorf("every part is off (-stream, -snapshot, -latency, -membound, -huge-tx, -huge-table, -tables, -resnapshot-rows): nothing to run")
	case o.resnapRows < 0 || o.resnapRows > 0 && o.resnapLoad <= 0:
		return fmt.Errorf("-resnapshot-rows must not be negative, -resnapshot-load positive")
	case o.resnapCPUProfile != "" && o.resnapRows == 0:
		return fmt.Errorf("-resnapshot-cpuprofile profiles the re-snapshot benchmark, which -resnapshot-rows=0 skips")
	case o.resnapRows > 0 && o.inprocess:
		return fmt.Errorf("-resnapshot-rows runs the mooncdc binary (and its resnapshot command): add -resnapshot-rows=0 with -inprocess")
	case o.memBound && o.inprocess:
		return fmt.Errorf("-membound measures the mooncdc binary's RSS: add -membound=false with -inprocess")
	case o.hugeTx > 0 && o.inprocess:
		return fmt.Errorf("-huge-tx measures the mooncdc binary's RSS: add -huge-tx=0 with -inprocess")
	case o.hugeTable > 0 && o.inprocess:
		return fmt.Errorf("-huge-table measures the mooncdc binary's RSS: add -huge-table=0 with -inprocess")
	case o.tables > 0 && o.inprocess:
		return fmt.Errorf("-tables measures the mooncdc binary: add -tables=0 with -inprocess")
	case (o.tablesAvro || o.registryLatency != 0) && o.tables == 0:
		return fmt.Errorf("-tables-avro and -registry-latency are runs of the thousands-of-tables benchmark, which -tables=0 skips")
	case o.registryLatency < 0:
		return fmt.Errorf("-registry-latency must not be negative")
	case o.memRows <= 0 || o.hugeTx < 0 || o.hugeTable < 0 || o.tables < 0 || o.tablesLoad < 0:
		return fmt.Errorf("-membound-rows must be positive; -huge-tx, -huge-table, -tables and -tables-load not negative")
	case o.latency && o.inprocess:
		return fmt.Errorf("-latency runs the mooncdc binary: add -latency=false with -inprocess")
	case o.cpuprofile != "" && !o.inprocess:
		return fmt.Errorf("-cpuprofile profiles the in-process pipeline: add -inprocess")
	case o.snapshotCPUProfile != "" && !o.inprocess:
		return fmt.Errorf("-snapshot-cpuprofile profiles the in-process snapshot: add -inprocess")
	case o.cpuprofile != "" && !o.stream:
		return fmt.Errorf("-cpuprofile profiles the streaming run, which -stream=false skips (use -snapshot-cpuprofile)")
	case o.snapshotCPUProfile != "" && !o.snapshot:
		return fmt.Errorf("-snapshot-cpuprofile profiles the snapshot run, which -snapshot=false skips")
	case flag.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if !o.inprocess {
		if _, err := os.Stat(o.mooncdc); err != nil {
			return fmt.Errorf("mooncdc binary: %w (run make build, or pass -mooncdc)", err)
		}
	}
	// Ctrl-C cancels the phase under way, and the deferred clean-ups stop
	// Postgres, the broker and mooncdc.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tmp, err := os.MkdirTemp("", "mooncdc-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	kfakeBin, err := gobuild.BuildIn(tmp, "github.com/mooncdc/mooncdc/internal/kafkatest/kfakeserver", "kfakeserver")
	if err != nil {
		return err
	}

	step("starting Postgres")
	src, err := startSource(ctx)
	if err != nil {
		return err
	}
	defer src.c.Close()

	// Each part prints its report; a part that fails (or misses its goal
	// under -require-goal) does not keep the next one from running.
	var errs []error
	if o.stream {
		if err := runStream(ctx, o, src, kfakeBin, tmp); err != nil {
			step("streaming benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("streaming: %w", err))
		}
	}
	if o.snapshot && ctx.Err() == nil {
		if o.stream {
			fmt.Println()
		}
		if err := runSnapshot(ctx, o, src, kfakeBin, tmp); err != nil {
			errs = append(errs, fmt.Errorf("snapshot: %w", err))
		}
	}
	if o.latency && ctx.Err() == nil {
		if err := runLatency(ctx, o, src, kfakeBin, tmp); err != nil {
			step("latency benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("latency: %w", err))
		}
	}
	if o.hugeTable > 0 && ctx.Err() == nil {
		if err := runHugeTable(ctx, o, src, kfakeBin, tmp); err != nil {
			step("huge-table benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("huge table: %w", err))
		}
	}
	if o.hugeTx > 0 && ctx.Err() == nil {
		if err := runHugeTx(ctx, o, src, kfakeBin, tmp); err != nil {
			step("huge-transaction benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("huge transaction: %w", err))
		}
	}
	if o.tables > 0 && ctx.Err() == nil {
		if err := runManyTables(ctx, o, src, kfakeBin, tmp); err != nil {
			step("thousands-of-tables benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("thousands of tables: %w", err))
		}
	}
	if o.resnapRows > 0 && ctx.Err() == nil {
		if err := runResnapshot(ctx, o, src, kfakeBin, tmp); err != nil {
			step("re-snapshot benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("re-snapshot: %w", err))
		}
	}
	if o.memBound && ctx.Err() == nil {
		if err := runMemBound(ctx, o, src, kfakeBin, tmp); err != nil {
			step("memory-bound benchmark failed (the error follows at the end)")
			errs = append(errs, fmt.Errorf("memory bound: %w", err))
		}
	}
	return errors.Join(errs...)
}
