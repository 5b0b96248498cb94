package schema

import (
	"strconv"
	"time"
)

// This file encodes the records of the transaction metadata topic
// (<prefix>.transaction, provide.transaction.metadata): a BEGIN record
// before a transaction's changes and an END record after them, keyed by
// the transaction id, with Debezium's TransactionMetadataKey and
// TransactionMetadataValue schemas (SchemaFactory.java:200-219).

// The statuses of a transaction metadata record (Debezium's
// TransactionStatus).
const (
	TxBegin = "BEGIN"
	TxEnd   = "END"
)

// TxEvent is one record of the transaction metadata topic.
type TxEvent struct {
	Status string // TxBegin or TxEnd
	Xid    uint32
	// LSN is the event's own: the Begin's for BEGIN, the commit's end for
	// END; the id is "<Xid>:<LSN>" (AppendTxID).
	LSN LSN
	// CommitTime is ts_ms: Debezium passes the transaction's commit time
	// for both (PostgresStreamingChangeEventSource.java:348-353).
	CommitTime time.Time
	// EventCount and Collections are the END record's counts: the records
	// emitted for the transaction, in all and per data collection
	// ("schema.table"), in the order the collections first appeared.
	EventCount  int64
	Collections []CollectionCount
}

// CollectionCount is one entry of an END record's data_collections.
type CollectionCount struct {
	Name  string
	Count int64
}

var (
	txKeySchema = &Schema{Type: TypeStruct, Name: "io.debezium.connector.common.TransactionMetadataKey", Version: 1, Fields: []Field{
		{"id", schemaString},
	}}
	txCollectionSchema = &Schema{Type: TypeStruct, Optional: true, Name: "event.collection", Version: 1, Fields: []Field{
		{"data_collection", schemaString},
		{"event_count", schemaInt64},
	}}
	txValueSchema = &Schema{Type: TypeStruct, Name: "io.debezium.connector.common.TransactionMetadataValue", Version: 1, Fields: []Field{
		{"status", schemaString},
		{"id", schemaString},
		{"event_count", schemaOptionalInt64},
		{"data_collections", &Schema{Type: TypeArray, Optional: true, Items: txCollectionSchema}},
		{"ts_ms", schemaInt64},
	}}
)

// TxMetadataAvroSchemas returns the Avro schemas of the transaction
// metadata topic's key and value.
func TxMetadataAvroSchemas() (key, value string) {
	return renderAvro(txKeySchema), renderAvro(txValueSchema)
}

// AppendTxKey appends the key of a transaction metadata record: {"id":…}.
func (e *JSONEncoder) AppendTxKey(dst []byte, ev *TxEvent) ([]byte, error) {
	if e.schemas {
		dst = append(dst, e.txHeads().key...)
	}
	dst = append(dst, `{"id":"`...)
	dst = AppendTxID(dst, ev.Xid, ev.LSN)
	dst = append(dst, `"}`...)
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

// AppendTxValue appends the value of a transaction metadata record:
// {"status":…,"id":…,"event_count":…,"data_collections":[…],"ts_ms":…},
// the counts null in a BEGIN record (AbstractTransactionStructMaker.java:47-77).
func (e *JSONEncoder) AppendTxValue(dst []byte, ev *TxEvent) ([]byte, error) {
	if e.schemas {
		dst = append(dst, e.txHeads().value...)
	}
	dst = append(dst, `{"status":`...)
	dst = appendJSONString(dst, ev.Status)
	dst = append(dst, `,"id":"`...)
	dst = AppendTxID(dst, ev.Xid, ev.LSN)
	dst = append(dst, `","event_count":`...)
	if ev.Status == TxEnd {
		dst = strconv.AppendInt(dst, ev.EventCount, 10)
		dst = append(dst, `,"data_collections":[`...)
		for i, c := range ev.Collections {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"data_collection":`...)
			dst = appendJSONString(dst, c.Name)
			dst = append(dst, `,"event_count":`...)
			dst = strconv.AppendInt(dst, c.Count, 10)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	} else {
		dst = append(dst, `null,"data_collections":null`...)
	}
	dst = append(dst, `,"ts_ms":`...)
	dst = strconv.AppendInt(dst, ev.CommitTime.UnixMilli(), 10)
	dst = append(dst, '}')
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

type txHeads struct{ key, value []byte }

func (e *JSONEncoder) txHeads() *txHeads {
	if e.tx == nil {
		e.tx = &txHeads{key: schemaHead(txKeySchema), value: schemaHead(txValueSchema)}
	}
	return e.tx
}

// RegisterTxMetadata makes sure the transaction metadata schemas have
// registry ids, as Register does for a relation.
func (e *AvroEncoder) RegisterTxMetadata(key, value bool, register func(isKey bool, schema string) (int, error)) error {
	k, v := TxMetadataAvroSchemas()
	if key && e.txKeyID < 0 {
		id, err := register(true, k)
		if err != nil {
			return err
		}
		e.txKeyID = int32(id)
	}
	if value && e.txValueID < 0 {
		id, err := register(false, v)
		if err != nil {
			return err
		}
		e.txValueID = int32(id)
	}
	return nil
}

// AppendTxKey appends the Avro key of a transaction metadata record.
func (e *AvroEncoder) AppendTxKey(dst []byte, ev *TxEvent) ([]byte, error) {
	if e.txKeyID < 0 {
		return dst, errNotRegistered
	}
	w := e.reset()
	e.seq = AppendTxID(e.seq[:0], ev.Xid, ev.LSN)
	w.WriteBytes(e.seq)
	return append(appendHeader(dst, e.txKeyID), w.Buffer()...), nil
}

// AppendTxValue appends the Avro value of a transaction metadata record.
func (e *AvroEncoder) AppendTxValue(dst []byte, ev *TxEvent) ([]byte, error) {
	if e.txValueID < 0 {
		return dst, errNotRegistered
	}
	w := e.reset()
	w.WriteString(ev.Status)
	e.seq = AppendTxID(e.seq[:0], ev.Xid, ev.LSN)
	w.WriteBytes(e.seq)
	if ev.Status == TxEnd {
		w.WriteLong(1)
		w.WriteLong(ev.EventCount)
		w.WriteLong(1)
		if len(ev.Collections) > 0 {
			w.WriteLong(int64(len(ev.Collections)))
			for _, c := range ev.Collections {
				w.WriteLong(1) // the optional event.collection record
				w.WriteString(c.Name)
				w.WriteLong(c.Count)
			}
		}
		w.WriteLong(0)
	} else {
		w.WriteLong(0)
		w.WriteLong(0)
	}
	w.WriteLong(ev.CommitTime.UnixMilli())
	return append(appendHeader(dst, e.txValueID), w.Buffer()...), nil
}
