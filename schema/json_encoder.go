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
// Create one with NewJSONEncoder. An encoder is reusable; a change is
// encoded with its relation's Plan (NewPlan, made with the encoder's
// Config), which the caller keeps and may share between encoders. An
// encoder keeps scratch buffers and is NOT safe for concurrent use: use
// one per goroutine. Its methods do not block and do no I/O.
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

	cfg  Config // with defaults
	cv   converter
	meta *MetaWriter // the flat envelope's metadata fields (nil without Config.Flat)

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
	e := &JSONEncoder{cfg: cfg}
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

// Plan returns the plan of rel under the encoder's Config (NewPlan); nil
// for rel nil.
func (e *JSONEncoder) Plan(rel *Relation) *Plan {
	if rel == nil {
		return nil
	}
	return NewPlan(e.cfg, rel)
}

// Schemas returns the Connect schemas of the record key (nil when the
// relation has no key columns) and value of the relation of plan p, as the
// "schema" part of each record's envelope; p nil means logical messages.
// Only an encoder of NewJSONSchemaEncoder has them (nil, nil otherwise,
// and for a plan made without them: Config.PlanFormats).
func (e *JSONEncoder) Schemas(p *Plan) (key, value []byte) {
	if !e.schemas {
		return nil, nil
	}
	inner := func(head []byte) []byte {
		if head == nil {
			return nil
		}
		return head[len(`{"schema":`) : len(head)-len(`,"payload":`)]
	}
	if p == nil {
		return inner(e.msgKeyHead), inner(e.msgValueHead)
	}
	return inner(p.jsonKeyHead), inner(p.jsonValueHead)
}

// format is the plan part the encoder needs (planOf).
func (e *JSONEncoder) format() PlanFormats {
	if e.schemas {
		return PlanJSONSchemas
	}
	return 0
}

// head returns h, a schema head of a plan, when the encoder writes
// schemas, else nothing.
func (e *JSONEncoder) head(h []byte) []byte {
	if !e.schemas {
		return nil
	}
	return h
}

// AppendKey appends the record key of ch, encoded with p, the plan of
// ch.Relation (nil for a logical message), to dst: a JSON object of the
// relation's key columns (Relation.KeyIndexes), taken from After for r, c
// and u and from Before for d. An After key value that is an unchanged
// TOASTed value is taken from Before; if Before has none either, the key
// cannot be built and the error wraps ErrUnchangedToastKey. The key of a
// logical message is {"prefix":"<prefix>"}. A plan of another relation
// is an error.
//
// ok is false when the record has no key: a truncate, a table without key
// columns (REPLICA IDENTITY NOTHING, or DEFAULT without a primary key), or
// a delete without an old image. On error or !ok, dst is returned
// unchanged.
func (e *JSONEncoder) AppendKey(dst []byte, p *Plan, ch *Change) (out []byte, ok bool, err error) {
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
	if p, err = planOf(p, rel, e.format()); err != nil {
		return dst, false, err
	}
	if err := checkTuple(rel, primary, fallback); err != nil {
		return dst, false, err
	}
	dst = append(dst, e.head(p.jsonKeyHead)...)
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

// AppendValue appends the record value of ch, encoded with p as in
// AppendKey, to dst: with Config.Flat,
// the flat record (flat.go; a delete in tombstone mode is JSON null, with
// schemas {"schema":<the row's optional schema>,"payload":null}), else
// Debezium's envelope
// {"before":…,"after":…,"source":{…},"transaction":…,"op":…,"ts_ms":…,
// "ts_us":…,"ts_ns":…}, or for a logical message
// {"op":"m","ts_ms":…,"source":{…},"transaction":…,"message":{…}}.
// now is the processing time, the envelope's ts_* (Envelope.java:280-291).
// A value that does not parse for its column type is a *ValueError; on
// error dst is returned unchanged.
func (e *JSONEncoder) AppendValue(dst []byte, p *Plan, ch *Change, now time.Time) ([]byte, error) {
	start := len(dst)
	if ch.Op == OpMessage {
		return e.appendMessage(dst, ch, now)
	}
	before, after, err := valueImages(ch)
	if err != nil {
		return dst, err
	}
	rel := ch.Relation
	if p, err = planOf(p, rel, e.format()); err != nil {
		return dst, err
	}
	if p.flat != nil {
		return e.appendFlat(dst, ch, p, before, after, now)
	}
	dst = append(dst, e.head(p.jsonValueHead)...)
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
func (e *JSONEncoder) appendTuple(dst []byte, rel *Relation, p *Plan, t, old Tuple, keyOnly bool) ([]byte, error) {
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
	if e.cfg.Flat != nil {
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
