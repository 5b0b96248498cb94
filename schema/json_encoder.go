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
