package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/delivery"
	"github.com/mooncdc/mooncdc/connector/internal/emit"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/connector/internal/phases"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/snapshot"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/offsets"
	"github.com/mooncdc/mooncdc/schema"
)

// Pipeline streams one Postgres publication into Kafka. Build it with New;
// it starts nothing until Run.
type Pipeline struct {
	cfg     config.Config
	log     *zap.Logger
	tables  config.TableSelection
	keys    record.KeyRule      // format.message_key_columns
	columns *config.ColumnRules // column selection and mappers; nil for none
	naming  config.TopicNaming  // topics and record names (kafka.routes)
	// slotRepairs: the slot was replaced after a loss, and these are the
	// re-copy requests stored for every table (slotloss.go), which the run
	// starts from.
	slotRepairs map[string]offsets.Table
	// seated: the pipeline runs for a seat (connector/group: ha.enabled, or a
	// worker group), so another instance may take over from it while it
	// is paused; its writes are fenced by the broker (connector/internal/delivery).
	seated    bool
	metrics   *Metrics
	ready     atomic.Bool
	linkWatch linkWatch // readiness of the links (linkwatch.go)
	tracker   atomic.Pointer[delivery.Tracker]
	abort     chan struct{}
	abortOne  sync.Once

	hooks    Hooks
	phasesAt atomic.Pointer[phases.Rules]

	// set by Run before any goroutine that reads them starts
	hard     context.Context    // ends on Abort, past shutdown_timeout, and when Run returns
	kafka    []kgo.Opt          // seed brokers, TLS and SASL: the base of every Kafka client
	links    *config.KafkaLinks // every Kafka connection of the pipeline's clients, reset by Abort
	client   *kgo.Client
	database string
	registry *record.Registry // nil unless a format is avro

	copies       snapshot.Copies // running table copies, for /status and progress
	producersMu  sync.Mutex
	producers    []*kgo.Client // for unacked
	keyless      pgsource.KeylessTables
	activity     atomic.Uint64
	unknownTypes sync.Map // "table\x00column" of columns warned about
	// noIncDrops: DisableIncrementalDrops, a test hook.
	noIncDrops bool
	// incAt is the run's incremental snapshot queue, for /status.
	incAt atomic.Pointer[emit.Incremental]
	// tuning: WithTuning, the test's settings of copies and incremental
	// snapshots; zero in production.
	tuning Tuning
}

// DisableIncrementalDrops is a test hook: incremental snapshots' windows
// write every row they read, whatever the stream changed meanwhile (the
// drop rule off), so that a test can show its checks catch the
// difference. Call it before Run.
func (p *Pipeline) DisableIncrementalDrops() { p.noIncDrops = true }

// Hooks returns the pipeline's test hooks.
func (p *Pipeline) Hooks() *Hooks { return &p.hooks }

// TablePhases returns each table's phase as the pipeline holds it now
// (nil before Run has read the offsets).
func (p *Pipeline) TablePhases() map[string]offsets.Table {
	ph := p.phasesAt.Load()
	if ph == nil {
		return nil
	}
	return tablesOf(ph.All())
}

// tablesOf returns each table's phase in v.
func tablesOf(v phases.View) map[string]offsets.Table {
	out := make(map[string]offsets.Table, len(v))
	for name, ts := range v {
		out[name] = ts.Table
	}
	return out
}

// New validates cfg and returns a pipeline ready to Run, built with opts
// (group_api.go). It does no I/O.
func New(cfg config.Config, log *zap.Logger, opts ...Option) (*Pipeline, error) {
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = zap.NewNop()
	}
	p := &Pipeline{cfg: cfg, log: log, abort: make(chan struct{}), links: config.NewKafkaLinks()}
	for _, o := range opts {
		o(p)
	}
	if p.metrics == nil {
		p.metrics = newMetrics(func() float64 { return float64(p.Inflight()) })
	}
	tables, err := cfg.TableSelection()
	if err != nil {
		return nil, &config.ConfigError{Err: err}
	}
	p.tables = tables
	if p.keys, err = record.NewKeyRule(cfg.Format.MessageKeyColumns); err != nil {
		return nil, &config.ConfigError{Err: err}
	}
	if p.columns, err = config.NewColumnRules(cfg); err != nil {
		return nil, &config.ConfigError{Err: err}
	}
	if p.naming, err = cfg.TopicNaming(); err != nil {
		return nil, &config.ConfigError{Err: err}
	}
	return p, nil
}

// Metrics returns the pipeline's metrics.
func (p *Pipeline) Metrics() *Metrics { return p.metrics }

// Ready reports whether the main worker is streaming.
func (p *Pipeline) Ready() bool { return p.ready.Load() }

// Abort makes Run return at once without flushing, writing offsets or
// confirming anything: what a crash would leave. For tests; safe to call
// from any goroutine, any number of times.
func (p *Pipeline) Abort() { p.abortOne.Do(func() { close(p.abort) }) }

// ErrAborted is returned by Run after Abort.
var ErrAborted = errors.New("pipeline aborted")

func (p *Pipeline) include(schemaName, table string) bool {
	return p.tables.Captures(schemaName, table)
}

// Run streams until ctx is done (a clean stop: it finishes the open
// transaction, waits for Kafka, writes the offsets, confirms the durable LSN
// to Postgres and returns nil) or a critical error. It blocks, and owns
// every goroutine it starts: they have all exited when it returns.
//
// A clean stop is bounded by shutdown_timeout: past it, Run gives up the
// records Kafka has not acknowledged (they were never confirmed to
// Postgres, so the next start sends them again) and returns a
// *ShutdownTimeoutError. A stop while a start-up step waits for Postgres,
// Kafka or the registry returns nil: nothing was read that is not durable.
func (p *Pipeline) Run(ctx context.Context) error {
	p.metrics.Active.Set(1)
	defer p.metrics.Active.Set(0)
	hard, cancelHard := context.WithCancel(context.Background())
	defer cancelHard()
	p.hard = hard
	var timedOut atomic.Pointer[ShutdownTimeoutError]
	go func() {
		select {
		case <-p.abort:
			// Reset first: nothing queued in a connection may reach
			// the broker after an abort (links.go).
			p.links.Reset()
			cancelHard()
			return
		case <-hard.Done():
			return
		case <-ctx.Done():
		}
		if e := p.boundStop(hard); e != nil {
			timedOut.Store(e)
			cancelHard()
		}
	}()
	soft, cancelSoft := context.WithCancel(ctx)
	defer cancelSoft()
	stopLink := context.AfterFunc(hard, cancelSoft)
	defer stopLink()

	err := p.run(hard, soft)
	for p.repairsSlotLoss(err) && soft.Err() == nil {
		// The slot was lost while streaming: start over on a new one
		// (setup.go, slotloss.go).
		p.forgetProducers()
		err = p.run(hard, soft)
	}
	select {
	case <-p.abort:
		return ErrAborted
	default:
	}
	if e := timedOut.Load(); e != nil {
		return e
	}
	if fault.IsNotKafka(err) {
		return notKafkaError(p.cfg.Kafka.Brokers, err)
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Stopped while a step was still retrying (Postgres, Kafka or the
		// registry unreachable): a clean stop.
		p.log.Info("stopped while waiting", zap.String("for", err.Error()))
		return nil
	}
	return err
}

func (p *Pipeline) run(hard, soft context.Context) error {
	cfg := p.cfg
	log := p.log

	brokers := cfg.Kafka.Brokers
	if len(brokers) == 0 {
		return &config.ConfigError{Err: errors.New("kafka.brokers is empty: `mooncdc run` starts the embedded development Kafka for that (StartEmbeddedKafka); a pipeline needs brokers")}
	}
	kafkaOpts, err := cfg.KafkaOptsLinked(brokers, p.links)
	if err != nil {
		return err
	}
	p.kafka = kafkaOpts

	g, gctx := errgroup.WithContext(hard)
	if cfg.Metrics.Listen != "" {
		srv, err := p.serveMetrics(cfg.Metrics.Listen)
		if err != nil {
			return err
		}
		defer srv.Close()
	}

	pgcfg, err := cfg.PostgresConnConfig()
	if err != nil {
		return err
	}
	if cfg.Format.UsesRegistry() {
		if p.registry, err = record.NewRegistry(cfg.Format.SchemaRegistry, log.Named("registry")); err != nil {
			return err
		}
		p.registry.Stopping = soft
	}

	kafkaState := newKafkaState(log, cfg.Kafka.SASL.Mechanism)
	client, err := kgo.NewClient(p.producerOpts(kafkaState)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer client.Close()
	p.client = client
	p.addProducer(client)
	adm := kadm.NewClient(client)

	// Offsets first: they say where to resume and which source they are for.
	if err := fault.Retry(soft, log, "prepare offsets topic "+cfg.Kafka.OffsetsTopic, func() error {
		return offsets.EnsureTopic(soft, adm, cfg.Kafka.OffsetsTopic, int16(cfg.Kafka.TopicReplicationFactor))
	}); err != nil {
		return err
	}
	// The delivery (connector/internal/delivery), chosen once: exactly-once takes over its
	// transactional producers here, before the offsets are read.
	states := delivery.NewStateWriter(gctx, client, delivery.Records{Name: cfg.Name, Topic: cfg.Kafka.OffsetsTopic}, log)
	del, err := delivery.New(soft, delivery.Config{Name: cfg.Name, Kafka: cfg.Kafka, Workers: cfg.Snapshot.Workers, Seated: p.seated,
		Client: client,
		NewTxnClient: func(ctx context.Context, id string) (delivery.TxnClient, error) {
			return p.newTxnClient(ctx, id, kafkaState)
		},
		LoadPipeline: func(ctx context.Context) (*offsets.Pipeline, error) {
			st, err := offsets.Load(ctx, client, cfg.Kafka.OffsetsTopic, cfg.Name)
			return st.Pipeline, err
		},
		States: states, Transactions: p.metrics.KafkaTransactions, Log: p.log})
	if err != nil {
		return err
	}
	defer del.Close()
	var state offsets.State
	if err := fault.Retry(soft, log, "load offsets", func() error {
		var err error
		state, err = p.loadOffsets(soft)
		return err
	}); err != nil {
		return err
	}

	// A first start with migrate_from takes over a Debezium connector's
	// position (takeover.go); later starts resume from mooncdc's own.
	var dbz *offsets.DebeziumOffset
	if state.Pipeline == nil && cfg.MigrateFrom.Debezium.Set() {
		if err := fault.Retry(soft, log, "read Debezium's offset", func() error {
			o, err := p.loadTakeover(soft)
			dbz = &o
			return err
		}); err != nil {
			return err
		}
	}
	p.slotRepairs = nil
	src, err := p.prepareSource(soft, pgcfg, state, dbz, states)
	if err != nil {
		return err
	}
	if len(p.slotRepairs) > 0 {
		// Stored already; the states read before are older.
		tables := maps.Clone(state.Tables)
		maps.Copy(tables, p.slotRepairs)
		state.Tables = tables
	}
	log.Info("resuming", zap.String("slot", cfg.Postgres.Slot), zap.Stringer("lsn", schema.LSN(src.DurableLSN)),
		zap.String("system_id", src.SystemID), zap.String("database", src.Database))

	var lastServerEnd atomic.Uint64
	tracker := delivery.NewTracker(schema.LSN(src.DurableLSN), cfg.Kafka.MaxInflightBytes, func(l schema.LSN, txs int) {
		p.metrics.DurableLSN.Set(float64(l))
		p.metrics.TransactionsDurable.Add(float64(txs))
		if end := lastServerEnd.Load(); end > uint64(l) {
			p.metrics.LagBytes.Set(float64(end - uint64(l)))
		} else {
			p.metrics.LagBytes.Set(0)
		}
	})
	mainOut := del.Main(tracker)
	// Record the pipeline (new, or adopted) before streaming.
	if err := mainOut.Open(soft, src); err != nil {
		return err
	}
	p.tracker.Store(tracker)
	p.metrics.DurableLSN.Set(float64(src.DurableLSN))

	p.database = src.Database
	formats := p.formats()
	plans := record.NewPlanner(cfg, p.naming, formats.SchemaConfig())
	topics := delivery.NewTopicMaker(adm, int32(cfg.Kafka.TopicPartitions), int16(cfg.Kafka.TopicReplicationFactor), cfg.Kafka.MaxRecordBytes)
	if err := p.setTransforms(formats, topics); err != nil {
		return err
	}
	var hbFormat *record.HeartbeatFormat
	if cfg.Heartbeat.Interval > 0 && cfg.Heartbeat.Records {
		// Created now, so that a topic the brokers refuse is a clear start
		// failure rather than a stop at the first idle interval.
		if err := fault.Retry(soft, log, "create the heartbeat topic", func() error { return topics.Ensure(cfg.Heartbeat.Topic) }); err != nil {
			if soft.Err() != nil {
				return err // stopping, not a refused topic
			}
			return &config.ConfigError{Err: fmt.Errorf("heartbeat.topic: %w; give mooncdc's Kafka user CREATE and WRITE on it, set another heartbeat.topic, or set heartbeat.records: false", err)}
		}
		if hbFormat, err = record.NewHeartbeatFormat(soft, cfg, p.registry); errors.As(err, new(*record.SchemaNotRegisteredError)) {
			// auto_register off and nobody registered them: the heartbeats
			// still move the slot, without records.
			log.Warn("heartbeat records are off: their schemas are not registered and format.schema_registry.auto_register is false "+
				"(register them, or set heartbeat.records: false to silence this)", zap.Error(err))
			hbFormat = nil
		} else if err != nil {
			return err
		}
	}

	var notifyFormat *record.NotificationFormat
	if t := cfg.Notifications.KafkaTopic; t != "" {
		// Made now, as the heartbeat topic: a topic the brokers refuse is a
		// start failure, not a lost notification mid-snapshot.
		if err := fault.Retry(soft, log, "create the notifications topic", func() error { return topics.Ensure(t) }); err != nil {
			if soft.Err() != nil {
				return err
			}
			return &config.ConfigError{Err: fmt.Errorf("notifications.kafka_topic: %w; give mooncdc's Kafka user CREATE and WRITE on it, set another topic, or none", err)}
		}
		if notifyFormat, err = record.NewNotificationFormat(soft, cfg, t, p.registry); err != nil {
			return fmt.Errorf("notifications.kafka_topic: %w", err)
		}
	}

	// Table phases: the main worker emits a table's changes only once its
	// copy is handed over (snapshot: handover.go).
	ph := phases.New(schema.LSN(src.DurableLSN), snapshot.InitialPhases(cfg.Snapshot.Mode, state.Tables))
	ph.Store = states.Enqueue
	p.phasesAt.Store(ph)
	// The main worker's queue for incremental snapshots: one per run,
	// beside its emitter.
	inc := emit.NewIncremental()
	inc.DisableDrops = p.noIncDrops
	inc.Life, inc.Log = p.tuning.IncrementalWindowLife, log
	p.incAt.Store(inc)
	snap := snapshot.New(snapshot.Config{Incremental: inc, Config: &cfg, Tables: p.tables, Naming: p.naming, Kafka: p.kafka, Keys: p.keys,
		PgConfig: pgcfg, Delivery: del, Formats: formats, Plans: plans, Topics: topics, Phases: ph, Source: src, Main: tracker,
		Progress: &p.copies, WorkerErrors: p.metrics.WorkerErrors, Counts: p.copyCounts(), Hook: p.hooks.call,
		Ready: p.Ready, Keyless: &p.keyless, Adopt: dbz != nil, Tuning: p.tuning, Log: log})
	// A first discovery before streaming, so that no table's changes are
	// skipped for want of a phase (snapshot.mode never streams them at once).
	if err := fault.Retry(soft, log, "discover the publication's tables", func() error { return snap.Discover(soft) }); err != nil {
		return err
	}
	if cfg.Snapshot.Mode == config.SnapshotInitialOnly {
		snapDone, cancelSnap := context.WithCancel(soft)
		defer cancelSnap()
		soft = snapDone
		snap.AllDone = func() {
			log.Info("every table copied and handed over: stopping (snapshot.mode initial_only)")
			cancelSnap()
		}
	}

	snapCtx, stopSnap := context.WithCancel(gctx)
	defer stopSnap()
	stopSnapOnSoft := context.AfterFunc(soft, stopSnap)
	defer stopSnapOnSoft()
	keys := emit.NewKeyResolver(pgcfg, p.keys)
	defer keys.Close()
	emCfg := emit.Config{Ctx: gctx, Sink: mainOut, Tracker: tracker, Topics: topics, Enc: formats.Codec(), Counts: p.emitterCounts(),
		Prefix: cfg.Kafka.TopicPrefix, Plans: plans, Keys: keys, Opts: record.OptionsOf(&cfg),
		// A table that discovery gave a phase is captured even when its
		// name matches no pattern: a partition selected by its root's name.
		// One that left the pipeline (no longer selected: left_ms) is not,
		// until it comes back (snapshot: leave.go).
		Include: func(schemaName, table string) bool {
			if p.include(schemaName, table) {
				return true
			}
			ts := ph.Get(schemaName + "." + table)
			return ts != nil && ts.LeftMs == 0
		},
		Gate: ph, Hook: p.hooks.call, OnPromote: p.logPromoted, StoresShapes: true, Activity: &p.activity,
		OnTableError: func(table string, lsn schema.LSN, err error) { snap.Parked(gctx, table, lsn, err) },
		HeartbeatOf:  pgsource.HeartbeatContentPrefix(cfg.Name), SkipThrough: schema.LSN(src.PendingSkip()),
		Incremental: inc,
	}
	if hbFormat != nil {
		emCfg.HeartbeatTopic, emCfg.HeartbeatFmt = cfg.Heartbeat.Topic, hbFormat
	}
	if notifyFormat != nil {
		emCfg.NotifyTopic, emCfg.NotifyFmt = cfg.Notifications.KafkaTopic, notifyFormat
	}
	if t, ok := cfg.SignalTable(); ok {
		// The stream waits for the snapshotter's loop to take a signal,
		// never past the loop's end.
		emCfg.OnSignal, emCfg.SignalTable = func(ch *schema.Change) { snap.TableSignal(snapCtx, ch) }, t
	}
	em := emit.New(emCfg)
	progress := &progress{Tracker: tracker, sink: mainOut, phases: ph, onPromote: p.logPromoted, ctx: gctx, em: em}
	obs := &observer{ready: &p.ready, metrics: p.metrics, serverEnd: &lastServerEnd, tracker: tracker, links: &p.linkWatch}
	g.Go(func() error { return p.watchLinks(snapCtx, tracker) }) // ends with a stop, as the snapshotter

	g.Go(func() error { return mainOut.Run(gctx, soft) })
	g.Go(func() error {
		return p.stream(gctx, soft, pgcfg, tracker, em, progress, obs)
	})
	g.Go(func() error { return snap.Run(snapCtx) })
	if cfg.Heartbeat.Interval > 0 {
		hb := &pgsource.Heartbeater{PgConfig: pgcfg, Name: cfg.Name, Interval: cfg.Heartbeat.Interval, Activity: &p.activity, Ready: p.Ready,
			Log: log.Named("heartbeat")}
		g.Go(func() error { return hb.Run(snapCtx) })
	}
	err = g.Wait()
	if hard.Err() != nil {
		return err
	}
	if err != nil {
		p.metrics.WorkerErrors.WithLabelValues("main", "critical").Inc()
		log.Error("pipeline stopped", zap.Error(err), zap.Stringer("durable_lsn", tracker.Durable()))
		return err
	}
	// Clean stop: the stream drained and confirmed; record where we are.
	flushCtx, cancel := context.WithTimeout(hard, 30*time.Second)
	defer cancel()
	if err := mainOut.Stopped(flushCtx); err != nil {
		return err
	}
	log.Info("stopped cleanly", zap.Stringer("durable_lsn", tracker.Durable()))
	return nil
}
