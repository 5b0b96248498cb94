package record

import "github.com/mooncdc/mooncdc/schema"

// avroIDs holds one codec's registry ids by schema plan: an id depends on
// the subject (the topic and, under new_subject, its generation), so the
// codec that registered keeps it, not the plan that codecs share. A table
// changed is a new plan; the map is bounded so that a session that sees
// many relation versions does not keep them all alive (a plan evicted is
// registered again only if prepared again, as before the plan was shared).
type avroIDs struct {
	m     map[*schema.Plan]*schema.AvroIDs
	lastP *schema.Plan
	last  *schema.AvroIDs
}

// maxPlanIDs bounds avroIDs. Each session resends relations, and DDL
// creates new versions; far fewer than this are live at once.
const maxPlanIDs = 4096

// of returns p's ids, to be set by registering.
func (a *avroIDs) of(p *schema.Plan) *schema.AvroIDs {
	if p == a.lastP {
		return a.last
	}
	ids, ok := a.m[p]
	if !ok {
		if a.m == nil {
			a.m = make(map[*schema.Plan]*schema.AvroIDs)
		}
		if len(a.m) >= maxPlanIDs {
			for k := range a.m { // an arbitrary entry: cheap, and rare
				delete(a.m, k)
				break
			}
		}
		ids = &schema.AvroIDs{Key: -1, Value: -1}
		a.m[p] = ids
	}
	a.lastP, a.last = p, ids
	return ids
}

// get returns p's ids, schema.NoAvroIDs when p is not registered (the
// encoder says so) or nil (logical messages: the encoder keeps theirs).
func (a *avroIDs) get(p *schema.Plan) schema.AvroIDs {
	if p == nil {
		return schema.NoAvroIDs
	}
	if p == a.lastP {
		return *a.last
	}
	if ids, ok := a.m[p]; ok {
		return *ids
	}
	return schema.NoAvroIDs
}
