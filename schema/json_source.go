package schema

import (
	"strconv"
	"time"
)

// This file writes the source and transaction blocks of the envelope as JSON,
// with what every encoder shares about them: the time source.ts_* give
// (sourceTime), whether a change has a transaction block (hasTxBlock) and
// Debezium's transaction id (AppendTxID). avro_source.go is the Avro twin.

// sourceCache is a source block and what it was made of.
type sourceCache struct {
	out      []byte
	tail     []byte // the plan's sourceTail, compared by identity
	ts       int64  // source time, Unix ns
	lsn      LSN
	snapshot string
}

// hit reports whether the cached block is the one a snapshot row with
// these inputs gets.
func (c *sourceCache) hit(tail []byte, ts int64, lsn LSN, snapshot string) bool {
	return c.out != nil && c.ts == ts && c.lsn == lsn && c.snapshot == snapshot &&
		len(c.tail) == len(tail) && (len(tail) == 0 || &c.tail[0] == &tail[0])
}

// sourceTime is the time source.ts_* give: the commit time of a
// streamed change, the read time of a snapshot row, else (a
// non-transactional message, a snapshot row without one) now, as
// Debezium's Instant.now() fallback (AbstractSourceInfoStructMaker.java:42).
func sourceTime(ch *Change, now time.Time) time.Time {
	switch {
	case ch.Tx != nil && !ch.Tx.CommitTime.IsZero():
		return ch.Tx.CommitTime
	case !ch.SourceTime.IsZero():
		return ch.SourceTime
	}
	return now
}

// appendSource writes the source block. Its static parts are precomputed;
// tail is the per-relation `,"schema":…,"table":…,"txId":`.
func (e *JSONEncoder) appendSource(dst []byte, ch *Change, tail []byte, now time.Time) []byte {
	if ch.Op != OpRead || ch.Tx != nil {
		return e.writeSource(dst, ch, tail, now)
	}
	// A snapshot row: its block depends only on the inputs sourceCache
	// keeps (no transaction: txId null, sequence [null, lsn]).
	ts := sourceTime(ch, now).UnixNano()
	if e.src.hit(tail, ts, ch.LSN, ch.Snapshot) {
		return append(dst, e.src.out...)
	}
	start := len(dst)
	dst = e.writeSource(dst, ch, tail, now)
	e.src = sourceCache{out: append(e.src.out[:0], dst[start:]...), tail: tail, ts: ts, lsn: ch.LSN, snapshot: ch.Snapshot}
	return dst
}

// writeSource writes the source block (appendSource).
func (e *JSONEncoder) writeSource(dst []byte, ch *Change, tail []byte, now time.Time) []byte {
	dst = append(dst, e.sourceHead...)
	ts := sourceTime(ch, now)
	dst = strconv.AppendInt(dst, ts.UnixMilli(), 10)
	dst = append(dst, `,"snapshot":`...)
	if ch.Snapshot == "" {
		dst = append(dst, `"false"`...)
	} else {
		dst = appendJSONString(dst, ch.Snapshot)
	}
	dst = append(dst, e.sourceDB...)
	// sequence: a string holding the JSON array [last commit LSN, this
	// event's LSN] of decimal strings, either may be null (Debezium's
	// SourceInfo.sequence(), serialized by Jackson: no spaces).
	var prev LSN
	if ch.Tx != nil {
		prev = ch.Tx.PrevCommitLSN
	}
	dst = appendSequenceLSN(dst, prev)
	dst = append(dst, ',')
	dst = appendSequenceLSN(dst, ch.LSN)
	dst = append(dst, `]","ts_us":`...)
	dst = strconv.AppendInt(dst, ts.UnixMicro(), 10)
	dst = append(dst, `,"ts_ns":`...)
	dst = strconv.AppendInt(dst, ts.UnixNano(), 10)
	dst = append(dst, tail...)
	if ch.Tx != nil {
		dst = strconv.AppendUint(dst, uint64(ch.Tx.Xid), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"lsn":`...)
	if ch.LSN != 0 {
		dst = strconv.AppendUint(dst, uint64(ch.LSN), 10)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, `,"xmin":null,"origin":null,"origin_lsn":null}`...)
}

// appendSequenceLSN writes one element of source.sequence inside its JSON
// string: \"<decimal>\" or null for an unknown (zero) LSN.
func appendSequenceLSN(dst []byte, l LSN) []byte {
	if l == 0 {
		return append(dst, "null"...)
	}
	dst = append(dst, `\"`...)
	dst = strconv.AppendUint(dst, uint64(l), 10)
	return append(dst, `\"`...)
}

// appendTransaction writes the transaction block: null unless the change
// carries transaction metadata (TxOrder, set with
// provide.transaction.metadata), else
// {"id":"<xid>:<lsn>","total_order":…,"data_collection_order":…}.
func appendTransaction(dst []byte, ch *Change) []byte {
	if !hasTxBlock(ch) {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"id":"`...)
	dst = AppendTxID(dst, ch.Tx.Xid, ch.LSN)
	dst = append(dst, `","total_order":`...)
	dst = strconv.AppendInt(dst, ch.TxOrder, 10)
	dst = append(dst, `,"data_collection_order":`...)
	dst = strconv.AppendInt(dst, ch.TxTableOrder, 10)
	return append(dst, '}')
}

func hasTxBlock(ch *Change) bool { return ch.TxOrder > 0 && ch.Tx != nil && ch.Op != OpRead }

// AppendTxID writes Debezium's Postgres transaction id "<xid>:<lsn>": the
// xid, and the LSN of the event that carries it (the change's own LSN; a
// BEGIN record's is the Begin's, an END record's the commit's end), as
// PostgresTransactionMonitor.adjustTxId does (PostgresTransactionMonitor.java:53-57),
// so the part after ':' differs between the events of one transaction
// (TransactionMetadataIT.java:189-191).
func AppendTxID(dst []byte, xid uint32, lsn LSN) []byte {
	dst = strconv.AppendUint(dst, uint64(xid), 10)
	dst = append(dst, ':')
	return strconv.AppendUint(dst, uint64(lsn), 10)
}
