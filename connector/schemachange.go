package connector

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/mooncdc/mooncdc/connector/stream"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes the schema-change records of the DDL messages that
// mooncdc's event trigger emits (ddl.go): one record per captured table
// of the command, on <prefix>.schema-changes, keyed by the table, in the
// unit of delivery of the DDL's transaction (exactly-once: its Kafka
// transaction), so that it is ordered with the rows around it. Only the
// main worker writes them; a copy's private catch-up leaves messages to it.

// schemaChange writes the records of a DDL message; done is false for a
// message with the prefix that is not the event trigger's JSON, which is
// then written as any logical message.
func (e *emitter) schemaChange(ch *schema.Change) (done bool, err error) {
	if ch.Tx == nil {
		return true, &stream.ProtocolError{LSN: ch.LSN, Msg: "DDL message must be transactional"}
	}
	m, err := schema.ParseDDLMessage(ch.Message.Content)
	if err != nil {
		return false, nil
	}
	topic := e.opts.schemaChangeTopic
	now := time.Now()
	for _, t := range m.Tables {
		if !e.include(t.Schema, t.Table) {
			continue
		}
		if !e.schemaChangesReady {
			if err := e.topics.ensure(topic); err != nil {
				return true, err
			}
			if err := e.enc.prepareSchemaChange(e.ctx, topic); err != nil {
				return true, err
			}
			e.schemaChangesReady = true
		}
		sc := schema.SchemaChange{Type: m.ChangeType(t), DDL: m.DDL, Table: t, Xid: ch.Tx.Xid, LSN: ch.LSN,
			CommitTime: ch.Tx.CommitTime, Now: now}
		rec := e.pool.Get().(*kgo.Record)
		key, err := e.enc.AppendSchemaChangeKey(rec.Key[:0], &sc)
		if err != nil {
			e.pool.Put(rec)
			return true, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
		}
		value, err := e.enc.AppendSchemaChangeValue(rec.Value[:0], &sc)
		if err == nil {
			err = e.enc.checkSize(key, value)
		}
		if err != nil {
			rec.Key, rec.Value = key[:0], value[:0]
			e.pool.Put(rec)
			return true, &RecordError{Topic: topic, LSN: ch.LSN, Err: err}
		}
		*rec = kgo.Record{Topic: topic, Key: key, Value: value, Context: e.cur, Headers: rec.Headers}
		setHeaders(rec, ch.LSN, ch.Tx.CommitLSN, int64(ch.Seq))
		e.send(e.cur, rec)
	}
	return true, nil
}
