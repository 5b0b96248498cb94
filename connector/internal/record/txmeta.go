package record

import (
	"slices"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// Options are the options that decide which streamed records are
// written and what they carry: Debezium's skipped.operations and
// provide.transaction.metadata.
type Options struct {
	// skip holds the operations not written (format.skipped_operations).
	Skip opSet
	// txTopic receives BEGIN and END records, and changes carry their
	// transaction block, when it is set (format.provide_transaction_metadata).
	TxTopic string
	// noTombstones: a delete is not followed by a tombstone
	// (format.tombstones_on_delete: false).
	NoTombstones bool
	// schemaChangeTopic receives the schema-change records of DDL
	// messages (emit: schemachange.go).
	SchemaChangeTopic string
	// flat is format.envelope flat (nil for debezium): it decides which
	// records a table's change becomes (schema.FlatConfig.Records).
	Flat *schema.FlatConfig
}

// opSet is a set of operations.
type opSet uint8

func (s opSet) Has(op schema.Op) bool {
	switch op {
	case schema.OpCreate:
		return s&1 != 0
	case schema.OpUpdate:
		return s&2 != 0
	case schema.OpDelete:
		return s&4 != 0
	case schema.OpTruncate:
		return s&8 != 0
	}
	return false // snapshot reads and logical messages are never skipped
}

// OptionsOf returns the record options of c (validated).
func OptionsOf(c *config.Config) Options {
	var o Options
	for i, op := range []string{"c", "u", "d", "t"} {
		if slices.Contains(c.Format.SkippedOperations, op) {
			o.Skip |= 1 << i
		}
	}
	o.NoTombstones = !c.Format.TombstonesOnDelete
	o.Flat, _ = c.Format.SchemaFlat()
	if c.Format.ProvideTransactionMetadata {
		o.TxTopic = c.Kafka.TopicPrefix + ".transaction" // AbstractTopicNamingStrategy.transactionTopic
	}
	o.SchemaChangeTopic = c.Kafka.TopicPrefix + ".schema-changes"
	return o
}

// MessageCollection is the data collection Debezium counts logical
// decoding messages under (LogicalDecodingMessageMonitor.java:106,131-138).
const MessageCollection = "LOGICAL_DECODING_MESSAGE"

// TxMetadata follows the open transaction for Debezium's transaction
// metadata: it numbers the transaction's records, in all and per data
// collection (TransactionContext, TransactionMonitor.java:156-164), and
// makes its BEGIN and END records. The stream goroutine owns it.
type TxMetadata struct {
	total int64
	colls []schema.CollectionCount // in the order they first appear
	index map[string]int
}

// Begin starts counting a new transaction.
func (m *TxMetadata) Begin() {
	m.total = 0
	m.colls = m.colls[:0]
	if m.index == nil {
		m.index = map[string]int{}
	}
	clear(m.index)
}

// Event counts one record of collection and returns its total_order and
// data_collection_order, both from 1.
func (m *TxMetadata) Event(collection string) (total, inCollection int64) {
	i, ok := m.index[collection]
	if !ok {
		i = len(m.colls)
		m.index[collection] = i
		m.colls = append(m.colls, schema.CollectionCount{Name: collection})
	}
	m.total++
	m.colls[i].Count++
	return m.total, m.colls[i].Count
}

// BeginEvent and endEvent are the transaction's BEGIN and END records.
// Debezium's id is "<xid>:<lsn>" with the LSN it has just seen: the
// Begin's for BEGIN, the commit's end for END
// (PostgresTransactionMonitor.java:53-57, TransactionMetadataIT.java:256-273);
// ts_ms is the commit time for both (PostgresStreamingChangeEventSource.java:348-353).
func (m *TxMetadata) BeginEvent(tx *schema.Tx) *schema.TxEvent {
	return &schema.TxEvent{Status: schema.TxBegin, Xid: tx.Xid, LSN: tx.BeginLSN, CommitTime: tx.CommitTime}
}

func (m *TxMetadata) EndEvent(tx *schema.Tx) *schema.TxEvent {
	return &schema.TxEvent{Status: schema.TxEnd, Xid: tx.Xid, LSN: tx.EndLSN, CommitTime: tx.CommitTime,
		EventCount: m.total, Collections: m.colls}
}
