package emit

import (
	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/internal/watermark"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is what the main worker shows the Tracker of each row change
// while an incremental snapshot runs (incremental.go): the keys it
// touches, as the windows compare them.

// incChange shows the Tracker one row change of the open transaction:
// with every key it touches for a watched table, without keys for
// another. A watched table's change whose keys cannot be told (TRUNCATE,
// a key column sent as unchanged TOAST, a table without a key, a new
// relation: the columns the readers encode may have changed) may touch
// any row: the windows that do not see it are void.
func (e *Emitter) incChange(r *route, ch *schema.Change) error {
	q := e.Incremental
	oid := ch.Relation.OID
	if !q.t.Watched(oid) {
		return q.t.Observe(oid)
	}
	if ch.Op == schema.OpTruncate {
		return q.observeAll(oid, "TRUNCATE")
	}
	if prev, ok := q.rels[oid]; ok && prev != ch.Relation {
		q.rels[oid] = ch.Relation
		return q.observeAll(oid, "the table's relation changed (a schema change, or a new session)")
	}
	q.rels[oid] = ch.Relation
	if r.Skip || r.KeyErr != nil || len(r.Rel.KeyIndexes) == 0 {
		return q.observeAll(oid, "a change of a table without a key")
	}
	if q.DisableDrops {
		return q.t.Observe(oid)
	}
	if ch.Op == schema.OpUpdate && record.KeyChanged(r.Rel, ch.Before, ch.After) {
		var k1, k2 watermark.Key
		var ok bool
		if q.keyBuf, ok = AppendTupleKey(q.keyBuf[:0], r.Rel, ch.Before); ok {
			k1 = watermark.Key(q.keyBuf)
			q.keyBuf, ok = AppendTupleKey(q.keyBuf[:0], r.Rel, ch.After)
			k2 = watermark.Key(q.keyBuf)
		}
		if !ok {
			return q.observeAll(oid, "a key change whose keys are not known")
		}
		return q.t.Observe(oid, k1, k2)
	}
	t := ch.After
	if ch.Op == schema.OpDelete {
		t = ch.Before
	}
	var ok bool
	if q.keyBuf, ok = AppendTupleKey(q.keyBuf[:0], r.Rel, t); !ok {
		return q.observeAll(oid, "a change whose key is not known (a key column sent as unchanged TOAST)")
	}
	return q.t.Observe(oid, watermark.Key(q.keyBuf))
}

// observeAll is Tracker.ObserveAll, noting that windows may have become
// void (status shows them so at the transaction's end).
func (q *Incremental) observeAll(table uint32, reason string) error {
	q.changed = true
	return q.t.ObserveAll(table, reason)
}
