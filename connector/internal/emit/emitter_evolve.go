package emit

import (
	"errors"

	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/schema"
)

// evolveAtDDL applies the policy to the tables of a DDL message (main
// worker). A table whose shape the message does not give (an event trigger
// installed by an older mooncdc) is left to its Relation message.
func (e *Emitter) evolveAtDDL(m *schema.DDLMessage, lsn schema.LSN) error {
	if !e.Enc.Registers() || e.Gate == nil {
		return nil // JSON, or a copy's catch-up
	}
	for _, t := range m.Tables {
		name := t.Schema + "." + t.Table
		if !e.Include(t.Schema, t.Table) || e.failed[name] || !e.view.Emits(name, t.OID, e.commit) {
			continue
		}
		rel, ok := t.Relation()
		if !ok {
			continue
		}
		keyed, err := e.Keys.Keyed(rel)
		if err != nil {
			if errors.As(err, new(*record.KeyRuleError)) {
				continue // parked at the first row, as any table without a key
			}
			return err
		}
		if err := e.evolve(name, e.Enc.TopicOf(t.Schema, t.Table), e.Plans.SchemaPlanOf(keyed), m.DDL, lsn); err != nil {
			return err
		}
		if e.checked == nil {
			e.checked = map[string]bool{}
		}
		e.checked[name] = true
	}
	return nil
}

// evolve checks sp's relation, the new shape of table name from the
// change at lsn on, against the subjects of topic, and applies the policy
// to a subject that would refuse it (Codec.Evolve); a refusal parks the
// table. It blocks while the registry is unreachable.
func (e *Emitter) evolve(name, topic string, sp *schema.Plan, ddl string, lsn schema.LSN) error {
	if !e.Enc.Registers() || e.Gate == nil || e.failed[name] || !e.view.Emits(name, sp.Relation().OID, e.commit) {
		return nil // JSON, a copy's catch-up, or a table the main worker does not write
	}
	if err := e.Enc.Evolve(e.Ctx, name, topic, sp, ddl); err != nil {
		if errors.As(err, new(*record.TableSchemaError)) {
			return e.tableError(name, lsn, err)
		}
		return err
	}
	return nil
}
