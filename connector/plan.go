package connector

import (
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is the record plan: how a table's records are made, decided
// once per relation (when its Relation message arrives, or when a copy
// describes the table) and never per row. The stream (emitter.route) and
// the copy (copyRows) both take a table's plan from the planner, so a
// table's topic, key and envelope are the same on both paths. What the
// encoders do per column (column selection, masks, hashes, truncation,
// defaults, the record schemas) is the schema package's plan of the
// relation (schema.NewPlan), made here with the record plan, once per
// relation: a copy's connections share their table's (schema.Plan is
// immutable), and a relation with NOT NULL columns relaxed (nullable.go)
// has its own.

// recordPlan is one relation's plan.
type recordPlan struct {
	from  *schema.Relation // the relation the plan was made for
	name  string           // "schema.table", the phase key
	topic string
	// routed: the topic is set by kafka.routes and may hold other
	// tables' records (a copy then tombstones no stale keys).
	routed bool
	skip   bool // the table is not captured
	// signals: the relation is signals.table, whose inserts are signals.
	signals bool
	// outbox: the relation is format.outbox.table, whose changes are
	// outbox events (outbox.go) on the topics they name; the table's own
	// topic gets no records.
	outbox bool
	rel    *schema.Relation // the relation to encode with (keyed, keys.go)
	splan  *schema.Plan     // rel's schema plan (nil until withKey): how its records are encoded
	nulls  *nullPlan        // rel's NOT NULL columns, for rows that hold a NULL in one (nullable.go)
	enc    *schema.Config   // the encoders' config, to make splan
	// keyErr is why the table's key cannot be built (format.message_key_columns
	// it cannot carry): the table is parked at its first change.
	keyErr error
}

// planner makes record plans. It holds no per-relation state; safe for
// concurrent use.
type planner struct {
	naming  config.TopicNaming
	outbox  *schema.OutboxConfig // nil unless format.envelope is outbox
	signals *config.TableName    // signals.table; nil for none
	enc     schema.Config        // the encoders' (Pipeline.encoderConfig)
}

func newPlanner(cfg config.Config, naming config.TopicNaming, enc schema.Config) *planner {
	pl := &planner{naming: naming, enc: enc}
	pl.outbox, _ = cfg.Format.SchemaOutbox() // refused by Validate when it fails
	if t, ok := cfg.SignalTable(); ok {
		pl.signals = &t
	}
	return pl
}

// plan returns the plan of rel, whose records are written when captured;
// the relation to encode with is rel until withKey sets it.
func (pl *planner) plan(rel *schema.Relation, captured bool) recordPlan {
	r := recordPlan{from: rel, name: rel.QualifiedName(), skip: !captured, rel: rel, enc: &pl.enc}
	r.signals = pl.signals != nil && rel.Schema == pl.signals.Schema && rel.Table == pl.signals.Table
	r.outbox = pl.outbox != nil && pl.outbox.IsTable(rel.Schema, rel.Table)
	if !r.skip {
		tt := pl.naming.Of(rel.Schema, rel.Table)
		r.topic, r.routed = tt.Topic, tt.Routed
	}
	return r
}

// withKey sets the relation to encode with, and makes its schema plan:
// keyed, rel with its key columns (keys.go), or, when err says the table
// cannot be keyed as configured (a *keyRuleError), nothing: the table is
// parked at its first change.
func (r *recordPlan) withKey(keyed *schema.Relation, err error) {
	if err != nil {
		r.keyErr = err
		return
	}
	r.relaxed(schema.NewPlan(*r.enc, keyed))
}

// relaxed sets the schema plan to encode with to sp, a plan of the table
// (withKey's, or one with NOT NULL columns the registry holds as optional:
// nullable.go), and its relation.
func (r *recordPlan) relaxed(sp *schema.Plan) {
	r.splan, r.rel, r.nulls = sp, sp.Relation(), newNullPlan(sp.Relation())
}

// made reports whether r is the plan of rel: the relation it was made
// from, or the one it encodes with (a change routed once carries that).
func (r *recordPlan) made(rel *schema.Relation) bool { return r.from == rel || r.rel == rel }

// ownTopic says whether the table's records go to its own topic, which
// must exist: every captured table's but the outbox table's.
func (r *recordPlan) ownTopic() bool { return !r.skip && !r.outbox }
