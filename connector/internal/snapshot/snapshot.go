package snapshot

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// Snapshotter runs the copy workers: it decides which tables to copy (snapshot
// mode, new tables, resnapshot requests, retries of errored copies), hands
// them to a pool of snapshot.workers, and records what became of each.
// An errored table never stops the stream or the other tables.
type Snapshotter struct {
	cfg          snapshotterConfig
	workerErrors *prometheus.CounterVec  // Metrics.WorkerErrors
	ready        func() bool             // the main worker streams: no copy starts before
	keyless      *pgsource.KeylessTables // tables left out of the publication for want of a key, reported once
	c            *copier
	phases       *phases.Rules
	log          *zap.Logger
	jobs         chan copyJob
	// runs holds the snapshot run of due tables not queued yet
	// (snapshotrun.go); touched only by run's goroutine.
	runs map[string]*snapshotRun
	busy map[string]bool // queued or being copied; touched only by run's goroutine
	done chan copyResult
	seen map[string]int64 // resnapshot requests acted on, by table
	// requests carries table records with a resnapshot request, as the
	// offsets topic is tailed; pending holds those for tables being copied.
	requests chan offsets.Table
	pending  map[string]offsets.Table
	signals  chan signal // signals.go, read by the loop
	// adopt: the first discovery takes every table as handed over at the
	// main worker's position, a takeover from Debezium (takeover.go).
	adopt bool
	// names are the discovered tables by phase name (discovery's
	// goroutine, which also schedules).
	names  map[string]config.TableName
	paused bool // pause-snapshot: no new copy starts
	// discovered: the first discovery is done; clashLogged: tables left
	// out for a topic clash, logged once (discovery's goroutine only).
	discovered  bool
	clashLogged map[config.TableName]bool
	// warnedPartitions: the warning about a publication that publishes
	// partitions separately was logged (discovery's goroutine only).
	warnedPartitions bool
	// back holds the incremental requests of tables that came back to the
	// pipeline (leave.go), for the loop to start after the discovery that
	// found them (discovery's goroutine only; Run starts those of the
	// first discovery with the snapshots to resume).
	back []offsets.Table
	// allDone is called once, in snapshot.mode initial_only, when every
	// table is handed over or waits for resnapshot.
	AllDone func()
	// prefetch registers a run's Avro schemas ahead of its copies
	// (prefetch.go); nil without a registry.
	prefetch *schemaPrefetch

	// inc is the main worker's queue for incremental snapshots (nil: none
	// can run); incShared what they share; incRunning the tables whose
	// incremental snapshot runs, on goroutines incWG counts.
	inc        *emit.Incremental
	incShared  *incrementalShared
	incMu      sync.Mutex
	incRunning map[string]string // table → its notifications' correlation id
	incWG      sync.WaitGroup
	runCtx     context.Context // Run's, for the snapshots the loop starts
	// incStop ends a table's running incremental snapshot (stop-snapshot);
	// incPaused holds its readers before their next window
	// (pause-snapshot); incHeld are the requests that came while paused.
	incStop   map[string]context.CancelFunc
	incPaused atomic.Bool
	incHeld   []offsets.Table
}

// Config is what New builds the snapshotter and its
// copier from: the configuration, the pipeline's parts they share, where
// they count, and the test hook.
type Config struct {
	Config   *config.Config
	Tables   config.TableSelection
	Naming   config.TopicNaming
	Kafka    []kgo.Opt // the base of the clients that read the offsets, signal and data topics
	Keys     record.KeyRule
	PgConfig *pgconn.Config
	Delivery delivery.Mode
	Formats  *record.Formats
	Plans    *record.Planner
	Topics   *delivery.TopicMaker
	Phases   *phases.Rules
	Source   offsets.Pipeline // the pipeline's offsets record, as read at the start
	// Main is the main worker's tracker: the copies' in-flight bytes count
	// against its bound too, and a re-copy settles on its durable LSN.
	Main         *delivery.Tracker
	Progress     *Copies                // running copies, for /status and the progress bars
	WorkerErrors *prometheus.CounterVec // Metrics.WorkerErrors
	Counts       Counts
	Hook         func(point, table string) // the test hooks; nil: none
	Ready        func() bool               // the main worker streams: no copy starts before
	Keyless      *pgsource.KeylessTables
	// Adopt: the offsets were taken over from Debezium's.
	Adopt bool
	// Tuning is the test's settings of the copies and incremental
	// snapshots (tuning.go); the zero value is production's.
	Tuning Tuning
	Log    *zap.Logger
	// Incremental is the main worker's queue for incremental snapshots'
	// readers (emit: Incremental); nil runs every re-copy as the blocking
	// copy.
	Incremental *emit.Incremental
}

// New makes the snapshotter and its copier; it starts nothing
// (Run does).
func New(o Config) *Snapshotter {
	cfg := o.Config
	return &Snapshotter{cfg: snapshotterConfig{snapshot: cfg.Snapshot, postgres: cfg.Postgres, name: cfg.Name,
		offsetsTopic: cfg.Kafka.OffsetsTopic, prefix: cfg.Kafka.TopicPrefix, signals: cfg.Signals, tables: o.Tables,
		notifications: cfg.Notifications.KafkaTopic != "",
		naming:        o.Naming, kafka: o.Kafka},
		workerErrors: o.WorkerErrors, ready: o.Ready, keyless: o.Keyless,
		phases: o.Phases, log: o.Log.Named("snapshot"), signals: make(chan signal, 16), adopt: o.Adopt,
		inc: o.Incremental, incShared: &incrementalShared{budget: newByteBudget(max(cfg.Kafka.MaxInflightBytes/2, 1), o.Main)}, incRunning: map[string]string{}, incStop: map[string]context.CancelFunc{},
		c: &copier{cfg: copierConfig{snapshot: cfg.Snapshot, slot: cfg.Postgres.Slot, publication: cfg.Postgres.Publication,
			replicationTimeout: cfg.Postgres.ReplicationTimeout, linkTimeout: cfg.LinkTimeout(),
			keys: o.Keys, kafka: o.Kafka, maxInflight: cfg.Kafka.MaxInflightBytes, prefix: cfg.Kafka.TopicPrefix, opts: record.OptionsOf(cfg),
			checkpointEvery: o.Tuning.checkpointEvery(), tuning: o.Tuning},
			pgcfg: o.PgConfig, delivery: o.Delivery, formats: o.Formats, plans: o.Plans, topics: o.Topics, phases: o.Phases, src: o.Source, main: o.Main,
			progress: o.Progress, counts: o.Counts, hook: o.Hook, log: o.Log.Named("copy")}}
}

// snapshotterConfig is the snapshotter's part of the configuration.
type snapshotterConfig struct {
	snapshot     config.SnapshotConfig
	postgres     config.PostgresConfig // discovery: the publication and how it publishes partitions
	name         string                // the connector's: its resnapshot requests in the offsets topic
	offsetsTopic string
	prefix       string // kafka.topic_prefix: the key of this connector's Kafka signals
	signals      config.SignalsConfig
	// notifications: incremental snapshots notify (notifications.kafka_topic).
	notifications bool
	tables        config.TableSelection
	naming        config.TopicNaming
	kafka         []kgo.Opt // the base of the clients that read the offsets and signal topics
}

// copyJob is a table to copy and the snapshot run it belongs to.
type copyJob struct {
	table string
	run   *snapshotRun
}

type copyResult struct {
	table string
	err   error
}

// InitialPhases turns the stored phases into the starting ones.
func InitialPhases(mode config.SnapshotMode, stored map[string]offsets.Table) map[string]*phases.State {
	out := make(map[string]*phases.State, len(stored))
	for name, t := range stored {
		ts := &phases.State{Table: t}
		ts.Table.Table = name
		switch {
		case mode == config.SnapshotAlways:
			ts.Phase, ts.LSN, ts.ResnapshotFilter, ts.ResnapshotType, ts.Copy, ts.Incremental = offsets.PhaseInit, 0, "", "", nil, ""
		case ts.Phase == offsets.PhaseCopying:
			// The snapshot died with the process: copy again, from the
			// chunks Kafka holds when the copy has progress (copy_resume.go).
			ts.Phase = offsets.PhaseInit
		case ts.Phase == offsets.PhaseErrored:
			ts.RetryAt = retryTime(ts.Retry)
		}
		out[name] = ts
	}
	return out
}

func (s *Snapshotter) Run(ctx context.Context) error {
	cfg := s.cfg.snapshot
	s.jobs = make(chan copyJob, 1024)
	s.runs = map[string]*snapshotRun{}
	s.done = make(chan copyResult, cfg.Workers)
	s.busy = map[string]bool{}
	s.seen = map[string]int64{}
	s.requests = make(chan offsets.Table, 64)
	s.pending = map[string]offsets.Table{}
	s.back = nil // the first discovery's: resumed below, as stored requests
	for name, ts := range s.phases.All() {
		s.seen[name] = ts.ResnapshotMs
	}
	// Copy nothing before the main worker holds the slot: an instance that
	// cannot take it (another one with the same name still streams) must
	// not copy tables that one is copying or has handed over.
	for !s.ready() {
		if !fault.Sleep(ctx, 50*time.Millisecond) {
			return nil
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	s.runCtx = gctx
	s.prefetch = newSchemaPrefetch(s.c, s.log.Named("prefetch"))
	g.Go(func() error { return s.prefetch.run(gctx) })
	for i := 0; i < cfg.Workers; i++ {
		g.Go(func() error { return s.worker(gctx, i) })
	}
	g.Go(func() error {
		defer close(s.jobs)
		return s.loop(gctx)
	})
	g.Go(func() error { return s.watchRequests(gctx) })
	if s.cfg.signals.KafkaTopic != "" {
		g.Go(func() error { return s.watchSignals(gctx) })
	}
	// Incremental snapshots the last run left unfinished resume (their
	// tables are ready, with progress in their records).
	for name, ts := range s.phases.All() {
		if ts.Phase == offsets.PhaseReady && ts.Incremental != "" && s.inc != nil && ts.LeftMs == 0 {
			t := ts.Table
			t.Table = name
			s.startIncremental(gctx, t)
		}
	}
	err := g.Wait()
	s.incWG.Wait()
	return err
}

func (s *Snapshotter) worker(ctx context.Context, n int) error {
	for job := range s.jobs {
		name := job.table
		ts := s.setPhase(ctx, name, func(ts *phases.State) { ts.Phase = offsets.PhaseCopying; ts.Attempts++ })
		err := s.c.copyTable(ctx, ts, n, job.run)
		if err != nil {
			job.run.leave(name)
		}
		if ctx.Err() != nil {
			return nil
		}
		switch fault.Classify(err) {
		case fault.ClassUnsafe:
			return err // the source is not the one the offsets describe: stop everything
		}
		var crit *fault.CriticalError
		if errors.As(err, &crit) {
			return err
		}
		// A fenced copy producer is replaced at the next copy; if another
		// instance took over, the main worker learns it and stops all.
		select {
		case s.done <- copyResult{table: name, err: err}:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

func (s *Snapshotter) loop(ctx context.Context) error {
	interval := s.cfg.snapshot.DiscoveryInterval
	tick := time.NewTicker(min(interval, time.Second))
	defer tick.Stop()
	lastDiscovery := time.Time{}
	for {
		if time.Since(lastDiscovery) >= interval {
			if err := s.Discover(ctx); err != nil {
				if ctx.Err() != nil {
					return nil // stopping
				}
				if fault.Classify(err) != fault.ClassRetryable {
					return err
				}
				s.log.Warn("table discovery failed; trying again later", zap.Error(err))
			}
			lastDiscovery = time.Now()
			for _, t := range s.back {
				s.request(t)
			}
			s.back = nil
			s.c.sweepCopySlots(ctx) // copyslot.go
		}
		s.schedule()
		if s.AllDone != nil && s.finished() {
			if err := s.failures(); err != nil {
				return err
			}
			s.AllDone()
			s.AllDone = nil
		}
		select {
		case <-ctx.Done():
			return nil
		case r := <-s.done:
			delete(s.busy, r.table)
			if r.err != nil {
				s.failed(ctx, r.table, r.err)
			}
			if t, ok := s.pending[r.table]; ok {
				delete(s.pending, r.table)
				s.resnapshot(t)
			}
		case t := <-s.requests:
			s.request(t)
		case sg := <-s.signals:
			s.signal(sg)
		case <-tick.C:
		}
	}
}

// schedule queues tables in init, and errored tables whose retry is due.
// The tables that become due together form one snapshot run (their
// source.snapshot markers, snapshotrun.go): at the first call, every
// table of the initial snapshot.
func (s *Snapshotter) schedule() {
	if s.paused {
		return
	}
	now := time.Now().UnixMilli()
	var due, fresh, incremental []string
	for name, ts := range s.phases.All() {
		if s.busy[name] {
			continue
		}
		if ts.LeftMs != 0 {
			continue // out of the pipeline: copied when it comes back (leave.go)
		}
		if ts.Phase == offsets.PhaseInit || (ts.Phase == offsets.PhaseErrored && ts.RetryAt > 0 && ts.RetryAt <= now) {
			due = append(due, name)
			switch {
			case s.runs[name] != nil:
			case ts.ResnapshotType == offsets.ResnapshotIncremental:
				incremental = append(incremental, name)
			default:
				fresh = append(fresh, name)
			}
		}
	}
	// A table that waited for the queue and is no longer due (it left the
	// publication, or was parked) leaves its run, so that the run can end.
	if len(s.runs) > 0 {
		isDue := make(map[string]bool, len(due))
		for _, name := range due {
			isDue[name] = true
		}
		for name, run := range s.runs {
			if !isDue[name] {
				run.leave(name)
				delete(s.runs, name)
			}
		}
	}
	if all := append(slices.Clip(fresh), incremental...); len(all) > 0 {
		// The runs' topics in one request, before their copies ask one by one.
		topics := make([]string, len(all))
		for i, name := range all {
			if tn, ok := s.names[name]; ok {
				topics[i] = s.cfg.naming.Of(tn.Schema, tn.Table).Topic
			} else { // not discovered in this run (a stored phase): the copy makes its topic
				topics[i] = ""
			}
		}
		topics = slices.DeleteFunc(topics, func(t string) bool { return t == "" })
		s.c.topics.EnsureAll(topics)
		s.prefetch.add(all) // their schemas, alongside their copies
	}
	// An incremental re-copy's rows all say "incremental"; it joins no
	// run of first … last markers.
	if len(fresh) > 0 {
		run := newSnapshotRun(fresh)
		for _, name := range fresh {
			s.runs[name] = run
		}
	}
	if len(incremental) > 0 {
		run := newIncrementalRun(incremental)
		for _, name := range incremental {
			s.runs[name] = run
		}
	}
	for _, name := range due {
		select {
		case s.jobs <- copyJob{table: name, run: s.runs[name]}:
			s.busy[name] = true
			delete(s.runs, name)
		default:
			return // the queue is full; the next tick tries again
		}
	}
}

// finished reports whether every table is handed over or waits for a
// resnapshot, and nothing is being copied.
func (s *Snapshotter) finished() bool {
	if len(s.busy) > 0 {
		return false
	}
	for _, ts := range s.phases.All() {
		switch {
		case ts.Phase == offsets.PhaseReady && repairOf(ts.Incremental):
			return false // a repair is a copy still to finish
		case ts.Phase == offsets.PhaseReady, ts.Phase == offsets.PhaseCatchup, ts.Phase == offsets.PhaseDropped:
		case ts.Phase == offsets.PhaseErrored && ts.RetryAt == 0:
		case ts.LeftMs != 0 && ts.Phase != offsets.PhaseCopying: // out of the pipeline: nothing to copy
		default:
			return false
		}
	}
	return true
}

// failures is the error for tables whose copy failed for good, or nil.
func (s *Snapshotter) failures() error {
	var msgs []string
	for name, ts := range s.phases.All() {
		if ts.Phase == offsets.PhaseErrored {
			msgs = append(msgs, name+": "+ts.LastError)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return &fault.CriticalError{Err: fmt.Errorf("snapshot.mode initial_only: %d table(s) could not be copied (fix the cause, then run `mooncdc resnapshot` and start again): %s",
		len(msgs), strings.Join(msgs, "; "))}
}

// failed records a failed copy: errored, with a retry time for a transient
// failure below snapshot.max_retries, or waiting for resnapshot.
func (s *Snapshotter) failed(ctx context.Context, name string, err error) {
	cfg := s.cfg.snapshot
	var ce *CopyError
	permanent := errors.As(err, &ce) && ce.permanent || fault.TableFault(err)
	if !permanent && fault.Classify(err) == fault.ClassCritical {
		var pgErr *pgconn.PgError
		// A server error other than a lost connection: a person must act,
		// unless it is about load or timing.
		permanent = errors.As(err, &pgErr) && !transientCopyError(pgErr.Code)
	}
	errType := "transient"
	if permanent {
		errType = "permanent"
	}
	s.workerErrors.WithLabelValues("table_sync", errType).Inc()
	ts := s.setPhase(ctx, name, func(ts *phases.State) {
		ts.Phase = offsets.PhaseErrored
		ts.LastError = err.Error()
		ts.RetryAt = 0
		ts.Retry = "resnapshot"
		if !permanent && ts.Attempts <= cfg.MaxRetries {
			delay := retryDelay(cfg.RetryDelay, ts.Attempts)
			ts.RetryAt = time.Now().Add(delay).UnixMilli()
			ts.Retry = time.UnixMilli(ts.RetryAt).UTC().Format(time.RFC3339Nano)
		} else {
			ts.Copy = nil // no retry resumes it; the sweep drops its slot (copyslot.go)
		}
	})
	if ts.RetryAt > 0 {
		s.log.Warn("table copy failed; will retry", zap.String("table", name), zap.Int("attempts", ts.Attempts),
			zap.String("retry_at", ts.Retry), zap.Error(err))
	} else {
		s.log.Error("table copy failed; the table waits for `mooncdc resnapshot` after the cause is fixed (the stream and other tables go on)",
			zap.String("table", name), zap.Int("attempts", ts.Attempts), zap.Error(err))
	}
}

// Parked records that the main worker cannot write a table's records (its
// schema is refused by the registry, or a value cannot be encoded) from
// the change at lsn on: the table goes errored and waits for `mooncdc
// resnapshot`, the stream and the other tables go on. It runs on the
// stream goroutine.
func (s *Snapshotter) Parked(ctx context.Context, name string, lsn schema.LSN, err error) {
	s.workerErrors.WithLabelValues("main", "table").Inc()
	s.setPhase(ctx, name, func(ts *phases.State) {
		ts.Phase = offsets.PhaseErrored
		ts.ParkedLSN = uint64(lsn)
		ts.LastError = err.Error()
		ts.RetryAt = 0
		ts.Retry = "resnapshot"
	})
	s.log.Error("the table's changes cannot be written; it waits for `mooncdc resnapshot` after the cause is fixed (the stream and other tables go on)",
		zap.String("table", name), zap.Error(err))
}

// transientCopyError reports SQLSTATEs that a later copy may not meet:
// serialization failures and deadlocks (40), insufficient resources such as
// all replication slots in use (53), lock and statement timeouts or
// recovery conflicts (55P03, 57014), system errors (58), and an exported
// snapshot that vanished with its connection (22023).
func transientCopyError(code string) bool {
	if len(code) != 5 {
		return false
	}
	switch code[:2] {
	case "40", "53", "58":
		return true
	}
	switch code {
	case "55P03", "57014", "22023":
		return true
	}
	return false
}

// retryDelay is exponential backoff from base with jitter, capped at 5 min.
func retryDelay(base time.Duration, attempts int) time.Duration {
	d := base
	for i := 1; i < attempts && d < 5*time.Minute; i++ {
		d *= 2
	}
	d = min(d, 5*time.Minute)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func retryTime(s string) int64 {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// setPhase changes a table's phase under the pipeline mutex and stores it,
// waiting for the record at most until ctx ends (a failure is logged by
// the writer: these phases (copying, errored, init, dropped) all read back
// as "copy again" or as what the next discovery finds, which is safe).
func (s *Snapshotter) setPhase(ctx context.Context, name string, change func(*phases.State)) *phases.State {
	next, wait := s.phases.Update(name, func(next *phases.State, _ schema.LSN) { change(next) })
	_ = wait(ctx)
	return next
}
