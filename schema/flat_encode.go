package schema

import (
	"bytes"
	"errors"
	"strconv"
	"time"
)

// This file writes flat records (flat.go): the value in JSON and Avro, and
// the text of added headers.

// metaKind is what a metadata field holds in one record.
type metaKind uint8

const (
	metaNull metaKind = iota
	metaString
	metaInt
)

// MetaWriter gives the values of the envelope fields a flat record copies,
// as the envelope of the same change would hold them. It keeps a scratch
// buffer and is NOT safe for concurrent use; it does not block.
type MetaWriter struct {
	cfg Config
	buf []byte
}

// NewMetaWriter returns a writer for the records of cfg.
func NewMetaWriter(cfg Config) *MetaWriter { return &MetaWriter{cfg: cfg.withDefaults()} }

// value returns field ref of ch's envelope: a string (in m.buf, valid
// until the next call), an int64, or null.
func (m *MetaWriter) value(ref metaRef, ch *Change, now time.Time) (metaKind, []byte, int64) {
	str := func(s string) (metaKind, []byte, int64) {
		m.buf = append(m.buf[:0], s...)
		return metaString, m.buf, 0
	}
	src := sourceTime(ch, now)
	switch ref {
	case refOp:
		m.buf = append(m.buf[:0], byte(ch.Op))
		return metaString, m.buf, 0
	case refTsMs:
		return metaInt, nil, now.UnixMilli()
	case refTsUs:
		return metaInt, nil, now.UnixMicro()
	case refTsNs:
		return metaInt, nil, now.UnixNano()
	case refVersion:
		return str(m.cfg.Version)
	case refConnector:
		return str("postgresql")
	case refName:
		return str(m.cfg.Name)
	case refSourceTsMs:
		return metaInt, nil, src.UnixMilli()
	case refSnapshot:
		if ch.Snapshot == "" {
			return str(SnapshotFalse)
		}
		return str(ch.Snapshot)
	case refDB:
		return str(m.cfg.Database)
	case refSequence:
		var prev LSN
		if ch.Tx != nil {
			prev = ch.Tx.PrevCommitLSN
		}
		m.buf = append(m.buf[:0], '[')
		m.buf = appendSeqElem(m.buf, prev)
		m.buf = append(m.buf, ',')
		m.buf = appendSeqElem(m.buf, ch.LSN)
		m.buf = append(m.buf, ']')
		return metaString, m.buf, 0
	case refSourceTsUs:
		return metaInt, nil, src.UnixMicro()
	case refSourceTsNs:
		return metaInt, nil, src.UnixNano()
	case refSchema:
		return str(ch.Relation.Schema)
	case refTable:
		return str(ch.Relation.Table)
	case refTxID:
		if ch.Tx == nil {
			return metaNull, nil, 0
		}
		return metaInt, nil, int64(ch.Tx.Xid)
	case refLSN:
		if ch.LSN == 0 {
			return metaNull, nil, 0
		}
		return metaInt, nil, int64(ch.LSN)
	case refTransactionID, refTotalOrder, refCollectionOrder:
		// The transaction block is null without transaction metadata;
		// FieldReference.getValue gives null then (AENRS.java:247-252).
		if !hasTxBlock(ch) {
			return metaNull, nil, 0
		}
		switch ref {
		case refTotalOrder:
			return metaInt, nil, ch.TxOrder
		case refCollectionOrder:
			return metaInt, nil, ch.TxTableOrder
		}
		m.buf = AppendTxID(m.buf[:0], ch.Tx.Xid, ch.LSN)
		return metaString, m.buf, 0
	}
	return metaNull, nil, 0 // xmin, origin, origin_lsn: always null (connect.go)
}

// AppendHeader appends the value of header f for ch to dst as Kafka
// Connect's default header converter (SimpleHeaderConverter) writes it:
// a string as its UTF-8 bytes, a number in decimal. null reports a null
// value (the header is still added, AENRS.java:147-148).
func (m *MetaWriter) AppendHeader(dst []byte, f FlatField, ch *Change, now time.Time) (out []byte, null bool) {
	k, b, i := m.value(f.ref, ch, now)
	switch k {
	case metaString:
		return append(dst, b...), false
	case metaInt:
		return strconv.AppendInt(dst, i, 10), false
	}
	return dst, true
}

// appendFlat writes the value of a flat record (JSONEncoder.AppendValue).
func (e *JSONEncoder) appendFlat(dst []byte, ch *Change, p *Plan, before, after Tuple, now time.Time) ([]byte, error) {
	start := len(dst)
	var err error
	rel, f := ch.Relation, p.flat
	row, old, keyOnly, deleted := after, before, false, "false"
	if ch.Op == OpDelete {
		if f.Delete == DeleteTombstone {
			// The delete's value is after, null, with after's schema
			// (DDHS.java:55-60). JsonConverter writes a null value
			// with a schema as JSON null, or {"schema":…,"payload":null}
			// with schemas: it returns no bytes only when the schema is
			// null too (JsonConverter.fromConnectData). Use
			// delete-to-tombstone for a Kafka tombstone.
			dst = append(dst, e.head(p.jsonNullHead)...)
			dst = append(dst, "null"...)
			if e.schemas {
				dst = append(dst, '}')
			}
			return dst, nil
		}
		row, old, keyOnly, deleted = before, nil, keyOnlyBefore(rel), "true" // rewrite (DDHS.java:70-78)
	}
	if row == nil {
		return dst, errFlatNoRow
	}
	dst = append(dst, e.head(p.jsonValueHead)...)
	if dst, err = e.appendTuple(dst, rel, p, row, old, keyOnly); err != nil {
		return dst[:start], err
	}
	dst = dst[:len(dst)-1] // reopen the row's object
	first := dst[len(dst)-1] == '{'
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	if f.rewrites() {
		sep()
		dst = append(dst, `"`+DeletedField+`":"`...)
		dst = append(dst, deleted...)
		dst = append(dst, '"')
	}
	for i, fl := range f.Fields {
		sep()
		dst = append(dst, p.flatNames[i]...)
		switch k, b, n := e.meta.value(fl.ref, ch, now); k {
		case metaString:
			dst = appendJSONString(dst, b)
		case metaInt:
			dst = strconv.AppendInt(dst, n, 10)
		default:
			dst = append(dst, "null"...)
		}
	}
	dst = append(dst, '}')
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

// markFlatSnapshot rewrites the snapshot field of a flat JSON value
// (MarkSnapshot); ok without such a field, as there is nothing to mark.
func (e *JSONEncoder) markFlatSnapshot(value []byte, from, to string) ([]byte, bool) {
	f := e.cfg.Flat
	if !f.snapshotField {
		return value, true
	}
	for _, fl := range f.Fields {
		if fl.ref != refSnapshot {
			continue
		}
		pat := appendJSONString(nil, fl.Name)
		pat = append(pat, ':')
		pat = appendJSONString(pat, from)
		i := bytes.LastIndex(value, pat)
		if i < 0 {
			return value, false
		}
		i += len(pat) - len(from) - 1
		value = splice(value, i, i+len(from), to)
	}
	return value, true
}

// writeFlat writes the body of a flat Avro value (AvroEncoder.AppendValue);
// a delete in tombstone mode has none (see AppendValue).
func (e *AvroEncoder) writeFlat(ch *Change, p *Plan, before, after Tuple, now time.Time) error {
	rel, f := ch.Relation, p.flat
	row, old, keyOnly, deleted := after, before, false, "false"
	if ch.Op == OpDelete {
		row, old, keyOnly, deleted = before, nil, keyOnlyBefore(rel), "true"
	}
	if row == nil {
		return errFlatNoRow
	}
	if err := e.writeTuple(rel, p, row, old, keyOnly); err != nil {
		return err
	}
	w := e.w
	if f.rewrites() {
		w.WriteLong(1) // ["null","string"]
		w.WriteString(deleted)
	}
	for _, fl := range f.Fields {
		switch k, b, n := e.meta.value(fl.ref, ch, now); k {
		case metaString:
			w.WriteLong(1)
			w.WriteBytes(b)
		case metaInt:
			w.WriteLong(1)
			w.WriteLong(n)
		default:
			w.WriteLong(0)
		}
	}
	return nil
}

// errFlatNoRow is a change FlatConfig.Records drops (a delete without an
// old image) given to an encoder.
var errFlatNoRow = errors.New("encode flat value: the change has no row image (FlatConfig.Records drops it)")
