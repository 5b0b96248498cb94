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
// defaults) is the schema package's own plan of the relation
// (schema/plan.go), which the relation carries into the encoders.

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
	Outbox bool
	Rel    *schema.Relation // the relation to encode with (keyed, emit: keys.go)
	Nulls  *NullPlan        // rel's NOT NULL columns, for rows that hold a NULL in one (nullable.go)
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
}

func NewPlanner(cfg config.Config, naming config.TopicNaming) *Planner {
	pl := &Planner{naming: naming}
	pl.Outbox, _ = cfg.Format.SchemaOutbox() // refused by Validate when it fails
	if t, ok := cfg.SignalTable(); ok {
		pl.signals = &t
	}
	return pl
}

// Plan returns the plan of rel, whose records are written when captured;
// the relation to encode with is rel until withKey sets it.
func (pl *Planner) Plan(rel *schema.Relation, captured bool) Plan {
	r := Plan{from: rel, Name: rel.QualifiedName(), Skip: !captured, Rel: rel}
	r.Signals = pl.signals != nil && rel.Schema == pl.signals.Schema && rel.Table == pl.signals.Table
	r.Outbox = pl.Outbox != nil && pl.Outbox.IsTable(rel.Schema, rel.Table)
	if !r.Skip {
		tt := pl.naming.Of(rel.Schema, rel.Table)
		r.Topic, r.Routed = tt.Topic, tt.Routed
	}
	return r
}

// WithKey sets the relation to encode with: keyed, rel with its key
// columns (emit: keys.go), or, when err says the table cannot be keyed as
// configured (a *keyRuleError), nothing: the table is parked at its first
// change.
func (r *Plan) WithKey(keyed *schema.Relation, err error) {
	if err != nil {
		r.KeyErr = err
		return
	}
	r.Rel, r.Nulls = keyed, NewNullPlan(keyed)
}

// Made reports whether r is the plan of rel: the relation it was made
// from, or the one it encodes with (a change routed once carries that).
func (r *Plan) Made(rel *schema.Relation) bool { return r.from == rel || r.Rel == rel }

// OwnTopic says whether the table's records go to its own topic, which
// must exist: every captured table's but the outbox table's.
func (r *Plan) OwnTopic() bool { return !r.Skip && !r.Outbox }
