package record

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

// Plan is one relation's plan.
type Plan struct {
	from  *schema.Relation // the relation the plan was made for
	Name  string           // "schema.table", the phase key
	Topic string
	// routed: the topic is set by kafka.routes and may hold other
	// tables' records (a copy then tombstones no stale keys).
	Routed bool
	Skip   bool // the table is not captured
	// signals: the relation is signals.table, whose inserts are signals.
	Signals bool
	// Outbox: the relation is format.outbox.table, whose changes are
	// outbox events (outbox.go) on the topics they name; the table's own
	// topic gets no records.
	Outbox     bool
	Rel        *schema.Relation // the relation to encode with (keyed, emit: keys.go)
	SchemaPlan *schema.Plan     // Rel's schema plan (nil until WithKey): how its records are encoded
	Nulls      *NullPlan        // Rel's NOT NULL columns, for rows that hold a NULL in one (nullable.go)
	enc        *schema.Config   // the encoders' settings, to make SchemaPlan
	// keyErr is why the table's key cannot be built (format.message_key_columns
	// it cannot carry): the table is parked at its first change.
	KeyErr error
}

// Planner makes record plans. It holds no per-relation state; safe for
// concurrent use.
type Planner struct {
	naming  config.TopicNaming
	Outbox  *schema.OutboxConfig // nil unless format.envelope is outbox
	signals *config.TableName    // signals.table; nil for none
	enc     schema.Config        // the encoders' settings (Formats.SchemaConfig)
}

// NewPlanner makes the planner of cfg's tables, naming their topics with
// naming and making their schema plans with enc (Formats.SchemaConfig).
func NewPlanner(cfg config.Config, naming config.TopicNaming, enc schema.Config) *Planner {
	pl := &Planner{naming: naming, enc: enc}
	pl.Outbox, _ = cfg.Format.SchemaOutbox() // refused by Validate when it fails
	if t, ok := cfg.SignalTable(); ok {
		pl.signals = &t
	}
	return pl
}

// Plan returns the plan of rel, whose records are written when captured;
// the relation to encode with is rel until withKey sets it.
func (pl *Planner) Plan(rel *schema.Relation, captured bool) Plan {
	r := Plan{from: rel, Name: rel.QualifiedName(), Skip: !captured, Rel: rel, enc: &pl.enc}
	r.Signals = pl.signals != nil && rel.Schema == pl.signals.Schema && rel.Table == pl.signals.Table
	r.Outbox = pl.Outbox != nil && pl.Outbox.IsTable(rel.Schema, rel.Table)
	if !r.Skip {
		tt := pl.naming.Of(rel.Schema, rel.Table)
		r.Topic, r.Routed = tt.Topic, tt.Routed
	}
	return r
}

// WithKey sets the relation to encode with, and makes its schema plan:
// keyed, rel with its key columns (emit: keys.go), or, when err says the
// table cannot be keyed as configured (a *KeyRuleError), nothing: the
// table is parked at its first change.
func (r *Plan) WithKey(keyed *schema.Relation, err error) {
	if err != nil {
		r.KeyErr = err
		return
	}
	r.Relaxed(schema.NewPlan(*r.enc, keyed))
}

// SchemaPlanOf makes the schema plan of keyed, a relation of the
// planner's tables with its key columns, as WithKey makes a record plan's
// (for a shape not yet streamed: a DDL's, emit: emitter_evolve.go).
func (pl *Planner) SchemaPlanOf(keyed *schema.Relation) *schema.Plan {
	return schema.NewPlan(pl.enc, keyed)
}

// Relaxed sets the schema plan to encode with to sp, a plan of the table
// (WithKey's, or one with NOT NULL columns the registry holds as
// optional: nullable.go), and its relation.
func (r *Plan) Relaxed(sp *schema.Plan) {
	r.SchemaPlan, r.Rel, r.Nulls = sp, sp.Relation(), NewNullPlan(sp.Relation())
}

// Made reports whether r is the plan of rel: the relation it was made
// from, or the one it encodes with (a change routed once carries that).
func (r *Plan) Made(rel *schema.Relation) bool { return r.from == rel || r.Rel == rel }

// OwnTopic says whether the table's records go to its own topic, which
// must exist: every captured table's but the outbox table's.
func (r *Plan) OwnTopic() bool { return !r.Skip && !r.Outbox }
