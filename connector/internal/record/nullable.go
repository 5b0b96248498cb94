package record

import (
	"context"
	"errors"

	"github.com/mooncdc/mooncdc/schema"
)

// This file keeps a value that was valid when written deliverable, with a
// schema that admits it, although nullability comes from today's catalog
// (pgsource/catalog.go) and not from the catalog as of the change's WAL position:
//
//   - A row written with NULL before ALTER COLUMN … SET NOT NULL and
//     decoded after it (mooncdc a few seconds behind is enough) is encoded
//     with a relation in which exactly the columns holding a NULL are
//     optional (relaxNulls). The common case, no such NULL, costs a loop
//     over the NOT NULL columns and allocates nothing.
//   - Nullability never tightens against a registry subject: under the
//     registry's default BACKWARD compatibility, a version with a field
//     required where the latest one had it optional is refused (409), which
//     is exactly what a SET NOT NULL migration produces. When that happens
//     the table's NOT NULL columns are made optional for good
//     (prepareRelaxing), and only a refusal of that too parks the table.

// NullPlan is a relation's NOT NULL columns and the plans of the relaxed
// relations made for the sets of them that carried a NULL.
type NullPlan struct {
	NotNull []int                   // indexes of rel's NOT NULL columns
	relaxed map[uint64]*schema.Plan // by the set of relaxed columns (bit i: notNull[i]; bit 63: the rest)
}

func NewNullPlan(rel *schema.Relation) *NullPlan {
	p := &NullPlan{}
	for i, c := range rel.Columns {
		if c.NotNull {
			p.NotNull = append(p.NotNull, i)
		}
	}
	return p
}

// NullMask says which NOT NULL columns of ch hold a SQL NULL: in the new
// image, and in the old one when it is the whole row (REPLICA IDENTITY
// FULL; an old key tuple's other columns are absent, not NULL).
func (p *NullPlan) NullMask(ch *schema.Change) uint64 {
	var mask uint64
	fullOld := ch.Relation != nil && ch.Relation.ReplicaIdentity == 'f'
	for bit, col := range p.NotNull {
		isNull := col < len(ch.After) && ch.After[col].Kind == schema.ValueNull ||
			fullOld && col < len(ch.Before) && ch.Before[col].Kind == schema.ValueNull
		if isNull {
			mask |= 1 << min(bit, 63)
		}
	}
	return mask
}

// RelaxedFor returns the plan of sp's relation with the columns of mask
// optional, made once per mask.
func (p *NullPlan) RelaxedFor(sp *schema.Plan, mask uint64) *schema.Plan {
	if r, ok := p.relaxed[mask]; ok {
		return r
	}
	rel := sp.Relation()
	out := *rel
	out.Columns = append([]schema.Column(nil), rel.Columns...)
	for bit, col := range p.NotNull {
		if mask&(1<<min(bit, 63)) != 0 {
			out.Columns[col].NotNull = false
		}
	}
	if p.relaxed == nil {
		p.relaxed = map[uint64]*schema.Plan{}
	}
	r := sp.Relax(&out)
	p.relaxed[mask] = r
	return r
}

// allOptional returns the plan of sp's relation with every NOT NULL column
// optional (sp itself when it has none).
func allOptional(sp *schema.Plan) *schema.Plan {
	p := NewNullPlan(sp.Relation())
	if len(p.NotNull) == 0 {
		return sp
	}
	return p.RelaxedFor(sp, ^uint64(0))
}

// PrepareRelaxing registers the record schemas of plan sp (Prepare) and
// returns the plan to encode with: sp, or, when the registry refuses sp's
// schema as incompatible and its relation has NOT NULL columns, the plan
// of the relation with all of them optional, if the registry accepts
// that; else what the schema evolution policy makes of the refusal
// (evolution.go).
func (c *Codec) PrepareRelaxing(ctx context.Context, topic string, sp *schema.Plan) (*schema.Plan, error) {
	err := c.Prepare(ctx, topic, sp)
	if err == nil || !errors.As(err, new(*SchemaIncompatibleError)) {
		return sp, err
	}
	loose := allOptional(sp)
	if loose == sp {
		return sp, c.evolveRefused(ctx, topic, sp, err)
	}
	if err2 := c.Prepare(ctx, topic, loose); err2 != nil {
		return sp, c.evolveRefused(ctx, topic, sp, err) // the first refusal says more
	}
	return loose, nil
}

// RelaxNulls points ch at a relation that admits its NULLs, registering
// that relation's schemas first, and returns the plan to encode ch with:
// r's own when ch has no such NULL (ch is then left alone).
func (c *Codec) RelaxNulls(ctx context.Context, r *Plan, ch *schema.Change) (*schema.Plan, error) {
	if r.Nulls == nil || len(r.Nulls.NotNull) == 0 {
		return r.SchemaPlan, nil
	}
	mask := r.Nulls.NullMask(ch)
	if mask == 0 {
		return r.SchemaPlan, nil
	}
	sp := r.Nulls.RelaxedFor(r.SchemaPlan, mask)
	if _, err := c.PrepareRelaxing(ctx, r.Topic, sp); err != nil {
		return nil, err
	}
	ch.Relation = sp.Relation()
	return sp, nil
}
