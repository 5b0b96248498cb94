package snapshot

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/schema"
)

// This file registers the Avro schemas of a snapshot run's tables ahead of
// their copies. A copy registers its table's key and value schemas before
// its first row (copyChunk → codec.prepareRelaxing): two round trips to
// the Schema Registry, which has no batch request, made one after the
// other by each copy worker. A thousand tables over a registry 20 ms away
// spend 40 s in them at snapshot.workers 4's pace. So when the snapshotter
// queues a run (snapshot.go schedule, beside the topics' one CreateTopics),
// the prefetch describes the run's tables and registers their schemas,
// prefetchInFlight tables at once, alongside the copies: a copy then finds
// its ids in the registry's cache, or waits for the request already out
// (registry.shared) instead of sending a second one.
//
// It registers what the copy would register first and nothing else, or a
// user's registry would keep versions no record uses: the relation
// describeTable gives, the topic of the table's plan, a codec of the
// pipeline's formats, and codec.prepare, which names the subjects as the
// copy does (registry.subject: under new_subject, the newest generation).
// It never relaxes NOT NULL columns nor applies the schema evolution
// policy: a schema the registry refuses is left to the copy, which meets
// the same refusal and parks the table or evolves the subject as it does
// without the prefetch. The one difference is the catalog: the prefetch
// reads today's, the copy its snapshot's, up to the run's length later. A
// table altered in between keeps a version of its old shape that no
// record uses, and its copy's shape must follow that version, as a change
// streamed after a copy must (an incompatible one meets the evolution
// policy, at the copy instead of at the change).
//
// Nothing waits for the prefetch and nothing fails with it: a table it
// cannot describe or register is left to its copy, and a full queue drops
// the run (its copies register their schemas themselves). A registry that
// is down holds the prefetch in the same retries as the copies, which
// share its requests, until the pipeline stops.

// prefetchInFlight is how many tables' schemas the prefetch registers at
// once: enough to hide a remote registry's round trips (1,000 tables of
// two subjects at 20 ms take 2.5 s), few enough not to flood a registry
// other services share; and four fewer than the registry client's reused
// connections (registryConns), which a copy's or the stream's requests
// beside them take.
const prefetchInFlight = record.RegistryConns - 4

// prefetchConnections is how many Postgres connections describe the
// tables: describeTable is a few catalog lookups by oid (and a read of
// pg_publication_tables only for a publication with column lists or row
// filters), so two keep well ahead of the copies while adding little to
// the server's connections.
const prefetchConnections = 2

// schemaPrefetch registers snapshot runs' schemas ahead of their copies
// (the file's comment). add is safe for concurrent use; run is one
// goroutine of the snapshotter's.
type schemaPrefetch struct {
	c    *copier
	runs chan []string
	log  *zap.Logger
}

// newSchemaPrefetch returns the prefetch of c's copies, or nil when the
// records use no registry (then add and run do nothing).
func newSchemaPrefetch(c *copier, log *zap.Logger) *schemaPrefetch {
	if c == nil || c.formats == nil || c.formats.Registry == nil {
		return nil
	}
	return &schemaPrefetch{c: c, runs: make(chan []string, 16), log: log}
}

// add queues the tables of a snapshot run. It never blocks: with the
// queue full the run is dropped, and its copies register their schemas.
func (p *schemaPrefetch) add(tables []string) {
	if p == nil || len(tables) == 0 {
		return
	}
	select {
	case p.runs <- slices.Clone(tables): // the caller's to change
	default:
		p.log.Debug("schema prefetch queue full: the run's copies register their own schemas", zap.Int("tables", len(tables)))
	}
}

// run prefetches the queued runs, one after the other, until ctx ends.
// It returns nil: a failed prefetch is left to the copies.
func (p *schemaPrefetch) run(ctx context.Context) error {
	if p == nil {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case tables := <-p.runs:
			p.prefetch(ctx, tables)
		}
	}
}

// prefetch describes tables and registers their schemas.
func (p *schemaPrefetch) prefetch(ctx context.Context, tables []string) {
	start := time.Now()
	described := make(chan describedTable)
	var n int
	var wg sync.WaitGroup
	wg.Go(func() { n = registerSchemas(ctx, p.c.formats, described, prefetchInFlight, p.log) })
	p.describe(ctx, tables, described)
	close(described)
	wg.Wait()
	if ctx.Err() == nil {
		p.log.Info("schemas registered ahead of the copies", zap.Int("tables", len(tables)), zap.Int("registered", n),
			zap.Duration("took", time.Since(start)))
	}
}

// describedTable is a table as its copy will encode it.
type describedTable struct {
	name, topic string
	plan        *schema.Plan // the table's schema plan, as its copy makes it
}

// describe sends the tables as describeTable and the planner give them
// to their copies, over prefetchConnections connections; a table that
// cannot be described is skipped (its copy reports why).
func (p *schemaPrefetch) describe(ctx context.Context, tables []string, out chan<- describedTable) {
	names := make(chan string, len(tables))
	for _, name := range tables {
		names <- name
	}
	close(names)
	var wg sync.WaitGroup
	for range min(prefetchConnections, len(tables)) {
		wg.Go(func() {
			conn, err := pgsource.Dial(ctx, p.c.pgcfg)
			if err != nil {
				p.log.Debug("schema prefetch: cannot connect; the copies register their own schemas", zap.Error(err))
				return
			}
			defer conn.Close(context.Background())
			for name := range names {
				t, ok := p.describeOne(ctx, conn, name)
				if !ok {
					continue
				}
				select {
				case out <- t:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	wg.Wait()
}

// describeOne is one table as copyRows describes and plans it; false for
// a table the prefetch leaves to its copy.
func (p *schemaPrefetch) describeOne(ctx context.Context, conn *pgx.Conn, name string) (describedTable, bool) {
	var oid uint32
	if ts := p.c.phases.Get(name); ts != nil {
		oid = ts.OID
	}
	info, err := describeTable(ctx, conn, name, oid, p.c.cfg.publication, p.c.cfg.keys)
	if err != nil {
		p.log.Debug("schema prefetch: cannot describe the table; its copy will", zap.String("table", name), zap.Error(err))
		return describedTable{}, false
	}
	plan := p.c.plans.Plan(info.rel, true)
	if !plan.OwnTopic() {
		return describedTable{}, false // the outbox table: its copy decides
	}
	plan.WithKey(info.rel, nil) // describeTable keyed it
	return describedTable{name: name, topic: plan.Topic, plan: plan.SchemaPlan}, true
}

// registerSchemas registers the key and value schemas of the tables it
// receives, as codec.prepare does before a copy's first row, inFlight
// tables at once (each table's key, then its value, as the copy orders
// them: a refused key leaves the value unregistered). It returns when
// tables is closed and drained, or ctx ends, with the number of tables
// whose schemas are registered. Refusals are left to the copies.
func registerSchemas(ctx context.Context, f *record.Formats, tables <-chan describedTable, inFlight int, log *zap.Logger) int {
	// Refused credentials would be refused for every table: stop asking.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			c := f.Codec() // an encoder per goroutine: they are not safe for concurrent use
			for t := range tables {
				if ctx.Err() != nil {
					continue // drain: the sender does not block on a stopped prefetch
				}
				if err := c.Prepare(ctx, t.topic, t.plan); err != nil {
					if errors.As(err, new(*config.ConfigError)) {
						cancel()
					}
					log.Debug("schema prefetch: not registered; the table's copy will try", zap.String("table", t.name), zap.Error(err))
					continue
				}
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return n
}
