package schema

import (
	"strconv"
	"time"
)

// This file writes the source and transaction blocks of an Avro envelope
// (json_source.go is their JSON twin).

// writeSource writes the Source record (sourceSchema's fields in order).
func (e *AvroEncoder) writeSource(ch *Change, schemaName, table string, now time.Time) {
	w := e.w
	w.WriteString(e.cfg.Version)
	w.WriteString("postgresql")
	w.WriteString(e.cfg.Name)
	ts := sourceTime(ch, now)
	w.WriteLong(ts.UnixMilli())
	// snapshot: [Enum string, null] with default "false".
	w.WriteLong(0)
	if ch.Snapshot == "" {
		w.WriteString("false")
	} else {
		w.WriteString(ch.Snapshot)
	}
	w.WriteString(e.cfg.Database)
	var prev LSN
	if ch.Tx != nil {
		prev = ch.Tx.PrevCommitLSN
	}
	e.seq = append(e.seq[:0], '[')
	e.seq = appendSeqElem(e.seq, prev)
	e.seq = append(e.seq, ',')
	e.seq = appendSeqElem(e.seq, ch.LSN)
	e.seq = append(e.seq, ']')
	w.WriteLong(1)
	w.WriteBytes(e.seq)
	w.WriteLong(1)
	w.WriteLong(ts.UnixMicro())
	w.WriteLong(1)
	w.WriteLong(ts.UnixNano())
	w.WriteString(schemaName)
	w.WriteString(table)
	if ch.Tx != nil {
		w.WriteLong(1)
		w.WriteLong(int64(ch.Tx.Xid))
	} else {
		w.WriteLong(0)
	}
	if ch.LSN != 0 {
		w.WriteLong(1)
		w.WriteLong(int64(ch.LSN))
	} else {
		w.WriteLong(0)
	}
	w.WriteLong(0) // xmin
	w.WriteLong(0) // origin
	w.WriteLong(0) // origin_lsn
}

// appendSeqElem writes one element of source.sequence: "<decimal>" or
// null for an unknown (zero) LSN.
func appendSeqElem(dst []byte, l LSN) []byte {
	if l == 0 {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = strconv.AppendUint(dst, uint64(l), 10)
	return append(dst, '"')
}

// writeTransaction writes the optional transaction block (see
// appendTransaction).
func (e *AvroEncoder) writeTransaction(ch *Change) {
	w := e.w
	if !hasTxBlock(ch) {
		w.WriteLong(0)
		return
	}
	w.WriteLong(1)
	e.seq = AppendTxID(e.seq[:0], ch.Tx.Xid, ch.LSN)
	w.WriteBytes(e.seq)
	w.WriteLong(ch.TxOrder)
	w.WriteLong(ch.TxTableOrder)
}
