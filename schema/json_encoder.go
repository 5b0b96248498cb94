package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// JSONEncoder writes changes as plain JSON records in the shape of
// Debezium's PostgreSQL connector (3.6.1) with Kafka Connect's JsonConverter
// and schemas.enable=false: the key is the row's key columns, the value the
// envelope {before, after, source, transaction, op, ts_ms, ts_us, ts_ns}.
//
// Create one with NewJSONEncoder. An encoder is reusable and keeps
// per-relation state (a bounded cache); it is NOT safe for concurrent use:
// use one per goroutine. Its methods do not block and do no I/O.
type JSONEncoder struct {
	// sourceHead is `"source":{"version":…,"connector":"postgresql","name":…,"ts_ms":`.
	sourceHead []byte
	// sourceDB is `,"db":…,"sequence":"[`.
	sourceDB []byte
	// ph and phBytes are the TOAST placeholder as text and as bytes.
	ph      string
	phBytes []byte
	// msgSourceTail is the source middle of logical messages (no table).
	msgSourceTail []byte
	// schemas wraps keys and values in {"schema":…,"payload":…}.
	schemas bool
	// msgKeyHead and msgValueHead are the schema heads of messages.
	msgKeyHead, msgValueHead []byte
	// tx holds the schema heads of transaction metadata records, made at
	// first use.
	tx *txHeads
	// sc holds the schema heads of schema-change records, made at first use.
	sc *schemaChangeHeads

	plans planCache
	cv    converter
	meta  *MetaWriter // the flat envelope's metadata fields (nil without Config.Flat)

	// times is the envelope's ts_ms, ts_us and ts_ns last written: a
	// copy's rows share their now (refreshed every 256 rows), and writing
	// the three numbers was a tenth of a copy row's encoding (issue 17.5).
	times timesCache
	// src is the source block last written for a snapshot row: the rows
	// of a table's copy share it (the same snapshot time, LSN, relation
	// and, but for the first and last rows, marker), and writing it was a
	// tenth of a copy's CPU (issue 17.5).
	src sourceCache
}

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

// NewJSONEncoder returns an encoder of plain JSON (JsonConverter with
// schemas.enable=false) for cfg, which must be valid (Config.Validate).
func NewJSONEncoder(cfg Config) *JSONEncoder {
	cfg = cfg.withDefaults()
	e := &JSONEncoder{plans: newPlanCache(cfg)}
	b := append([]byte(nil), `"source":{"version":`...)
	b = appendJSONString(b, cfg.Version)
	b = append(b, `,"connector":"postgresql","name":`...)
	b = appendJSONString(b, cfg.Name)
	e.sourceHead = append(b, `,"ts_ms":`...)
	b = append([]byte(nil), `,"db":`...)
	b = appendJSONString(b, cfg.Database)
	e.sourceDB = append(b, `,"sequence":"[`...)
	e.phBytes, e.ph, _ = placeholder(cfg.UnavailableValue)
	e.msgSourceTail = appendSourceTail(nil, "", "")
	if cfg.Flat != nil {
		e.meta = NewMetaWriter(cfg)
	}
	return e
}

// NewJSONSchemaEncoder returns an encoder of JSON with schemas: Kafka
// Connect's JsonConverter with schemas.enable=true, each key and value
// {"schema":<Connect schema>,"payload":<the plain JSON>}.
func NewJSONSchemaEncoder(cfg Config) *JSONEncoder {
	e := NewJSONEncoder(cfg)
	e.schemas = true
	e.msgKeyHead = schemaHead(messageKeySchema)
	e.msgValueHead = schemaHead(messageValueSchema)
	return e
}

func schemaHead(s *Schema) []byte {
	b := append([]byte(nil), `{"schema":`...)
	b = appendConnectJSON(b, s, "")
	return append(b, `,"payload":`...)
}

// Schemas returns the Connect schemas of rel's record key (nil when rel
// has no key columns) and value, as the "schema" part of each record's
// envelope; rel nil means logical messages. Only an encoder of
// NewJSONSchemaEncoder has them (nil, nil otherwise).
func (e *JSONEncoder) Schemas(rel *Relation) (key, value []byte) {
	if !e.schemas {
		return nil, nil
	}
	inner := func(head []byte) []byte {
		if head == nil {
			return nil
		}
		return head[len(`{"schema":`) : len(head)-len(`,"payload":`)]
	}
	if rel == nil {
		return inner(e.msgKeyHead), inner(e.msgValueHead)
	}
	p := e.planFor(rel)
	return inner(p.jsonKeyHead), inner(p.jsonValueHead)
}

// planFor returns the plan of rel, with the schema heads when the encoder
// writes schemas.
func (e *JSONEncoder) planFor(rel *Relation) *relPlan {
	p, fresh := e.plans.get(rel)
	if fresh && e.schemas {
		if p.key != nil {
			p.jsonKeyHead = schemaHead(p.key)
		}
		p.jsonValueHead = schemaHead(p.value)
		if p.flat != nil {
			p.jsonNullHead = schemaHead(p.flatNull)
		}
	}
	return p
}

// AppendKey appends the record key of ch to dst: a JSON object of the
// relation's key columns (Relation.KeyIndexes), taken from After for r, c
// and u and from Before for d. An After key value that is an unchanged
// TOASTed value is taken from Before; if Before has none either, the key
// cannot be built and the error wraps ErrUnchangedToastKey. The key of a
// logical message is {"prefix":"<prefix>"}.
//
// ok is false when the record has no key: a truncate, a table without key
// columns (REPLICA IDENTITY NOTHING, or DEFAULT without a primary key), or
// a delete without an old image. On error or !ok, dst is returned
// unchanged.
func (e *JSONEncoder) AppendKey(dst []byte, ch *Change) (out []byte, ok bool, err error) {
	start := len(dst)
	switch ch.Op {
	case OpMessage:
		if ch.Message == nil {
			return dst, false, errors.New("encode key: logical message change without Message")
		}
		dst = append(dst, e.msgKeyHead...)
		dst = append(dst, `{"prefix":`...)
		dst = appendJSONString(dst, ch.Message.Prefix)
		dst = append(dst, '}')
		if e.schemas {
			dst = append(dst, '}')
		}
		return dst, true, nil
	}
	primary, fallback, err := keyImages(ch)
	if err != nil || primary == nil {
		return dst, false, err
	}
	rel := ch.Relation
	p := e.planFor(rel)
	if err := checkTuple(rel, primary, fallback); err != nil {
		return dst, false, err
	}
	dst = append(dst, p.jsonKeyHead...)
	dst = append(dst, '{')
	first := true
	for _, i := range rel.KeyIndexes {
		if i < 0 || i >= len(p.cols) {
			return dst[:start], false, fmt.Errorf("encode key of %s: key index %d out of range", rel.QualifiedName(), i)
		}
		if p.cols[i].omit {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, p.names[i]...)
		v := primary[i]
		if v.Kind == ValueUnchangedToast {
			if fallback == nil || fallback[i].Kind == ValueUnchangedToast {
				return dst[:start], false, newValueError(rel, i, nil, ErrUnchangedToastKey)
			}
			v = fallback[i]
		}
		if dst, err = e.appendColumn(dst, p.cols[i], v); err != nil {
			return dst[:start], false, newValueError(rel, i, v.Data, err)
		}
	}
	dst = append(dst, p.keyExtraJSON...)
	dst = append(dst, '}')
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, true, nil
}

// AppendValue appends the record value of ch to dst: with Config.Flat,
// the flat record (flat.go; a delete in tombstone mode is JSON null, with
// schemas {"schema":<the row's optional schema>,"payload":null}), else
// Debezium's envelope
// {"before":…,"after":…,"source":{…},"transaction":…,"op":…,"ts_ms":…,
// "ts_us":…,"ts_ns":…}, or for a logical message
// {"op":"m","ts_ms":…,"source":{…},"transaction":…,"message":{…}}.
// now is the processing time, the envelope's ts_* (Envelope.java:280-291).
// A value that does not parse for its column type is a *ValueError; on
// error dst is returned unchanged.
func (e *JSONEncoder) AppendValue(dst []byte, ch *Change, now time.Time) ([]byte, error) {
	start := len(dst)
	if ch.Op == OpMessage {
		return e.appendMessage(dst, ch, now)
	}
	before, after, err := valueImages(ch)
	if err != nil {
		return dst, err
	}
	rel := ch.Relation
	p := e.planFor(rel)
	if p.flat != nil {
		return e.appendFlat(dst, ch, p, before, after, now)
	}
	dst = append(dst, p.jsonValueHead...)
	dst = append(dst, `{"before":`...)
	if dst, err = e.appendTuple(dst, rel, p, before, nil, keyOnlyBefore(rel)); err != nil {
		return dst[:start], err
	}
	dst = append(dst, `,"after":`...)
	if dst, err = e.appendTuple(dst, rel, p, after, before, false); err != nil {
		return dst[:start], err
	}
	dst = append(dst, ',')
	dst = e.appendSource(dst, ch, p.sourceTail, now)
	dst = append(dst, `,"transaction":`...)
	dst = appendTransaction(dst, ch)
	dst = append(dst, `,"op":"`...)
	dst = append(dst, byte(ch.Op))
	dst = append(dst, `","ts_ms":`...)
	dst = e.times.append(dst, now)
	dst = append(dst, '}')
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

// appendMessage writes a logical decoding message, in the field order of
// Debezium's LogicalDecodingMessageMonitor value schema (op, ts_ms, source,
// transaction, message). Content is base64, Debezium's default for
// binary.handling.mode=bytes through JsonConverter. schema and table in
// source are "".
func (e *JSONEncoder) appendMessage(dst []byte, ch *Change, now time.Time) ([]byte, error) {
	if ch.Message == nil {
		return dst, errors.New("encode value: logical message change without Message")
	}
	dst = append(dst, e.msgValueHead...)
	dst = append(dst, `{"op":"m","ts_ms":`...)
	dst = strconv.AppendInt(dst, now.UnixMilli(), 10)
	dst = append(dst, ',')
	dst = e.appendSource(dst, ch, e.msgSourceTail, now)
	dst = append(dst, `,"transaction":`...)
	dst = appendTransaction(dst, ch)
	dst = append(dst, `,"message":{"prefix":`...)
	dst = appendJSONString(dst, ch.Message.Prefix)
	dst = append(dst, `,"content":`...)
	dst = appendBase64String(dst, ch.Message.Content)
	dst = append(dst, "}}"...)
	if e.schemas {
		dst = append(dst, '}')
	}
	return dst, nil
}

// appendTuple writes a row image as a JSON object in column order, or null
// for a nil tuple, each value as imageValue gives it (keyOnly: t is an old
// key tuple).
func (e *JSONEncoder) appendTuple(dst []byte, rel *Relation, p *relPlan, t, old Tuple, keyOnly bool) ([]byte, error) {
	if t == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	first := true
	for i := range t {
		if p.vcols[i].omit {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, p.names[i]...)
		v, ct := imageValue(rel, p, t, old, i, keyOnly)
		var err error
		if p.rewrites != nil && p.rewrites[i] != nil {
			dst, err = e.appendRewritten(dst, ct, v, p.rewrites[i])
		} else {
			dst, err = e.appendColumn(dst, ct, v)
		}
		if err != nil {
			return dst, newValueError(rel, i, v.Data, err)
		}
	}
	return append(dst, '}'), nil
}

// appendTimes writes t as `<ms>,"ts_us":<µs>,"ts_ns":<ns>`, the three
// precisions Debezium gives a timestamp (AbstractSourceInfoStructMaker.java:48-51,
// Envelope.java:288-290); the caller has written `"ts_ms":`.
func appendTimes(dst []byte, t time.Time) []byte {
	dst = strconv.AppendInt(dst, t.UnixMilli(), 10)
	dst = append(dst, `,"ts_us":`...)
	dst = strconv.AppendInt(dst, t.UnixMicro(), 10)
	dst = append(dst, `,"ts_ns":`...)
	return strconv.AppendInt(dst, t.UnixNano(), 10)
}

// timesCache holds the last time appendTimes wrote, and what it wrote.
type timesCache struct {
	ns  int64
	out []byte
}

// append writes t as appendTimes does, copying the last output when t is
// the time it was written for.
func (c *timesCache) append(dst []byte, t time.Time) []byte {
	ns := t.UnixNano()
	if ns == c.ns && len(c.out) > 0 {
		return append(dst, c.out...)
	}
	start := len(dst)
	dst = appendTimes(dst, t)
	c.ns, c.out = ns, append(c.out[:0], dst[start:]...)
	return dst
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

// checkTuple checks that the images have one value per column of rel, so
// that a malformed change is an error and never an index panic.
func checkTuple(rel *Relation, ts ...Tuple) error {
	for _, t := range ts {
		if t != nil && len(t) != len(rel.Columns) {
			return fmt.Errorf("encode %s: %w (%d values, %d columns)", rel.QualifiedName(), errTupleColumns, len(t), len(rel.Columns))
		}
	}
	return nil
}

func errOp(op Op) error {
	return fmt.Errorf("encode: unknown operation %q", byte(op))
}

func errNoRelation(op Op) error {
	return fmt.Errorf("encode: %q change without Relation", byte(op))
}

// MarkSnapshot rewrites source.snapshot of a snapshot record value this
// encoder wrote with marker from into to, and returns the value (in place
// when it fits in value's capacity). Nothing after source holds row data,
// so the last match is source.snapshot. ok is false when the field is not
// there.
func (e *JSONEncoder) MarkSnapshot(value []byte, from, to string) (out []byte, ok bool) {
	if e.plans.cfg.Flat != nil {
		return e.markFlatSnapshot(value, from, to)
	}
	old := `"snapshot":"` + from + `"`
	i := bytes.LastIndex(value, []byte(old))
	if i < 0 {
		return value, false
	}
	i += len(`"snapshot":"`)
	return splice(value, i, i+len(from), to), true
}

// splice replaces value[i:j] with s.
func splice(value []byte, i, j int, s string) []byte {
	tail := len(value) - j
	n := len(value) - (j - i) + len(s)
	if n > cap(value) {
		out := make([]byte, n)
		copy(out, value[:i])
		copy(out[i:], s)
		copy(out[i+len(s):], value[j:])
		return out
	}
	old := value
	value = value[:n]
	copy(value[i+len(s):], old[j:j+tail])
	copy(value[i:], s)
	return value
}

// valueImages checks a row change and returns the images its value
// carries: none for a truncate.
func valueImages(ch *Change) (before, after Tuple, err error) {
	switch ch.Op {
	case OpRead, OpCreate, OpUpdate, OpDelete, OpTruncate:
	default:
		return nil, nil, errOp(ch.Op)
	}
	if ch.Relation == nil {
		return nil, nil, errNoRelation(ch.Op)
	}
	if ch.Op == OpTruncate {
		return nil, nil, nil
	}
	return ch.Before, ch.After, checkTuple(ch.Relation, ch.Before, ch.After)
}

// keyImages picks the images a record key is built from: the new row (the
// old one for a delete), with the other image to take an unchanged
// TOASTed key value from. primary is nil when the record has no key: a
// truncate, a table without key columns, a delete without an old image.
func keyImages(ch *Change) (primary, fallback Tuple, err error) {
	switch ch.Op {
	case OpTruncate:
		return nil, nil, nil
	case OpRead, OpCreate, OpUpdate, OpDelete:
	default:
		return nil, nil, errOp(ch.Op)
	}
	rel := ch.Relation
	if rel == nil {
		return nil, nil, errNoRelation(ch.Op)
	}
	if len(rel.KeyIndexes) == 0 {
		return nil, nil, nil
	}
	primary, fallback = ch.After, ch.Before
	if ch.Op == OpDelete {
		primary, fallback = ch.Before, nil
	}
	if primary == nil {
		primary, fallback = fallback, nil
	}
	return primary, fallback, nil
}
