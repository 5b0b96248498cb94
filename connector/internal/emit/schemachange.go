package emit

import (
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// This file writes the schema-change records of the DDL messages that
// mooncdc's event trigger emits (pgsource/ddl.go): one record per captured table
// of the command, on <prefix>.schema-changes, keyed by the table, in the
// unit of delivery of the DDL's transaction (exactly-once: its Kafka
// transaction), so that it is ordered with the rows around it. Only the
// main worker writes them; a copy's private catch-up leaves messages to it.

// schemaChange writes the records of a DDL message; done is false for a
// message with the prefix that is not the event trigger's JSON, or not
// transactional, which is then written as any logical message: the stream
// goes on (a copy's private catch-up, which must apply DDL at its place,
// fails on a non-transactional one instead; snapshot: copy_catchup.go).
func (e *Emitter) schemaChange(ch *schema.Change) (done bool, err error) {
	if ch.Tx == nil {
		return false, nil
	}
	m, err := schema.ParseDDLMessage(ch.Message.Content)
	if err != nil {
		return false, nil
	}
	now := time.Now()
	for _, t := range m.Tables {
		if !e.Include(t.Schema, t.Table) {
			continue
		}
		sc := schema.SchemaChange{Type: m.ChangeType(t), DDL: m.DDL, Table: t, Xid: ch.Tx.Xid, LSN: ch.LSN,
			CommitTime: ch.Tx.CommitTime, Now: now}
		if prev, ok := e.shapes[t.OID]; ok && t.OID != 0 && sc.Type == schema.SchemaChangeAlter &&
			(prev.rel.Schema != t.Schema || prev.rel.Table != t.Table) {
			sc.Type, sc.PreviousSchema, sc.PreviousTable = schema.SchemaChangeRename, prev.rel.Schema, prev.rel.Table
		}
		if err := e.writeSchemaChange(&sc, ch.Tx.CommitLSN, int64(ch.Seq)); err != nil {
			return true, err
		}
		// The Relation message of the new shape follows; it announces
		// nothing more.
		if e.announced == nil {
			e.announced = map[string]bool{}
		}
		e.announced[t.Schema+"."+t.Table] = true
	}
	// The registry decides at the DDL, before any row of the new shape.
	return true, e.evolveAtDDL(&m, ch.LSN)
}

// shapeAt is a table's relation and the LSN of the change it came with.
type shapeAt struct {
	rel *schema.Relation
	lsn schema.LSN
}

// writeSchemaChange writes one schema-change record in the open
// transaction's unit.
func (e *Emitter) writeSchemaChange(sc *schema.SchemaChange, commit schema.LSN, seq int64) error {
	topic := e.Opts.SchemaChangeTopic
	if !e.schemaChangesReady {
		if err := e.Topics.Ensure(topic); err != nil {
			return err
		}
		if err := e.Enc.PrepareSchemaChange(e.Ctx, topic); err != nil {
			return err
		}
		e.schemaChangesReady = true
	}
	rec, err := e.w.SchemaChange(e.cur, topic, sc, commit, seq)
	if err != nil {
		return err
	}
	e.w.Send(rec)
	return nil
}

// relationChanged writes a schema change derived from a Relation message
// whose shape differs from the one this table had (main worker only):
// without the DDL event trigger, or for what it does not see, the change
// still has a record, with an empty ddl, before the first row of the new
// shape. A table seen first, or again after a reconnect with the same
// shape, gives none; neither does one the trigger just announced, nor a
// replay: after a reconnect (or an aborted Kafka transaction) the stream
// sends again, from the durable LSN, rows of shapes it had already
// replaced, and an older shape seen again is no change.
//
// The Relation messages (ch.Relation) are compared; the record describes
// keyed, the relation the records are encoded with (sp's).
func (e *Emitter) relationChanged(sp *schema.Plan, ch *schema.Change) error {
	rel, keyed := ch.Relation, sp.Relation()
	if e.Gate == nil || ch.Tx == nil {
		return nil
	}
	if e.shapes == nil {
		e.shapes = map[uint32]shapeAt{}
	}
	prev, known := e.shapes[rel.OID]
	e.shapes[rel.OID] = shapeAt{rel, ch.LSN}
	name := rel.Schema + "." + rel.Table
	// A table with no phase, under its name or its oid, was created after
	// the last discovery, and one this run's discovery found since its
	// first pass was created while mooncdc streamed: its first relation
	// is its CREATE.
	created := !known && (e.view[name] == nil && e.view.Renamed(rel.OID) == nil || e.Gate.IsFresh(name))
	// This run's first shape of a table an earlier run saw: compared with
	// the shape that run stored, a change made while mooncdc was stopped.
	fp := schema.ShapeFingerprint(rel)
	stopped := false
	if !known && !created {
		stored := e.view[name]
		if stored == nil {
			stored = e.view.Renamed(rel.OID)
		}
		stopped = stored != nil && stored.Shape != "" && stored.Shape != fp
	}
	if e.StoresShapes && (!known || ch.LSN > prev.lsn) {
		e.Gate.SetShape(name, rel.OID, fp) // stored by phases, in order
	}
	if !created && !stopped && (!known || ch.LSN <= prev.lsn || schema.SameShape(prev.rel, rel)) {
		return nil
	}
	if e.announced[name] {
		delete(e.announced, name)
	} else {
		sc := schema.SchemaChange{Type: schema.SchemaChangeAlter, Table: schema.DDLTableOf(keyed), Xid: ch.Tx.Xid, LSN: ch.LSN,
			CommitTime: ch.Tx.CommitTime, Now: time.Now()}
		switch {
		case created:
			sc.Type = schema.SchemaChangeCreate
		case known && (prev.rel.Schema != rel.Schema || prev.rel.Table != rel.Table):
			sc.Type, sc.PreviousSchema, sc.PreviousTable = schema.SchemaChangeRename, prev.rel.Schema, prev.rel.Table
		}
		if err := e.writeSchemaChange(&sc, ch.Tx.CommitLSN, int64(ch.Seq)); err != nil {
			return err
		}
	}
	if e.checked[name] {
		delete(e.checked, name)
		return nil
	}
	// No DDL message said it (no event trigger): decide here, still
	// before the first row of the new shape; a new table has no schema to
	// follow yet, and a change made while stopped is decided where its
	// first record's schema is registered (record: evolution.go).
	if created || stopped {
		return nil
	}
	return e.evolve(name, e.Enc.TopicOf(rel.Schema, rel.Table), sp, "", ch.LSN)
}

// truncated writes the TRUNCATE schema change of a table's truncate
// (main worker only), which no event trigger sees: Postgres fires none
// for TRUNCATE. It is written whether or not format.skipped_operations
// writes the truncate record itself.
func (e *Emitter) truncated(keyed *schema.Relation, ch *schema.Change) error {
	if e.Gate == nil || ch.Tx == nil {
		return nil
	}
	sc := schema.SchemaChange{Type: schema.SchemaChangeTruncate, Table: schema.DDLTableOf(keyed), Xid: ch.Tx.Xid, LSN: ch.LSN,
		CommitTime: ch.Tx.CommitTime, Now: time.Now()}
	return e.writeSchemaChange(&sc, ch.Tx.CommitLSN, int64(ch.Seq))
}
