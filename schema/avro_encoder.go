package schema

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
)

// AvroEncoder writes changes as Avro records in Confluent's wire format
// (magic byte 0, the 4-byte schema id, the Avro binary body), with the
// schemas Debezium's PostgreSQL connector produces through Confluent's
// AvroConverter: <prefix>.<schema>.<table>.Key, .Envelope with .Value
// before/after, io.debezium.connector.postgresql.Source.
//
// The encoder itself does no I/O: Register hands each new schema to the
// caller's function (which registers it with the Schema Registry) and
// keeps the id; AppendKey and AppendValue then only encode. It keeps
// per-relation state (a bounded cache) and is NOT safe for concurrent use.
type AvroEncoder struct {
	plans   planCache
	cv      converter
	w       *avro.Writer
	ph      string
	phBytes []byte
	cfg     Config
	seq     []byte
	meta    *MetaWriter // the flat envelope's metadata fields (nil without Config.Flat)

	msgKey, msgValue     string
	msgKeyID, msgValueID int32 // -1 until registered
	txKeyID, txValueID   int32 // transaction metadata records; -1 until registered
	scKeyID, scValueID   int32 // schema-change records; -1 until registered
}

// avroPlan is the Avro part of a relation's plan.
type avroPlan struct {
	key, value     string // the schemas; key "" without key columns
	keyID, valueID int32  // registry ids, -1 until registered
	err            error  // the schema is not valid Avro
}

// NewAvroEncoder returns an encoder for cfg, which must be valid.
func NewAvroEncoder(cfg Config) *AvroEncoder {
	cfg = cfg.withDefaults()
	e := &AvroEncoder{plans: newPlanCache(cfg), cfg: cfg, w: avro.NewWriter(nil, 1024),
		msgKeyID: -1, msgValueID: -1, txKeyID: -1, txValueID: -1, scKeyID: -1, scValueID: -1}
	e.phBytes, e.ph, _ = placeholder(cfg.UnavailableValue)
	if cfg.Flat != nil {
		e.meta = NewMetaWriter(cfg)
	}
	e.msgKey = renderAvro(messageKeySchema)
	e.msgValue = renderAvro(messageValueSchema)
	return e
}

func (e *AvroEncoder) planFor(rel *Relation) *relPlan {
	p, _ := e.plans.get(rel)
	if p.avro == nil {
		a := &avroPlan{value: renderAvro(p.value), keyID: -1, valueID: -1}
		if p.key != nil {
			a.key = renderAvro(p.key)
		}
		a.err = checkAvro(rel.QualifiedName(), a.value)
		if a.err == nil && a.key != "" {
			a.err = checkAvro(rel.QualifiedName()+" (key)", a.key)
		}
		p.avro = a
	}
	return p
}

// Schemas returns the Avro schemas of rel's record key ("" when rel has no
// key columns) and value; rel nil means logical messages.
func (e *AvroEncoder) Schemas(rel *Relation) (key, value string, err error) {
	if rel == nil {
		return e.msgKey, e.msgValue, nil
	}
	a := e.planFor(rel).avro
	return a.key, a.value, a.err
}

// Register makes sure the key schema (if key) and the value schema (if
// value) of rel's records have registry ids, calling register for each one
// this encoder has no id for yet; rel nil means logical messages. It
// blocks as long as register does; an error of register is returned as
// is, and a later call tries again.
func (e *AvroEncoder) Register(rel *Relation, key, value bool, register func(isKey bool, schema string) (int, error)) error {
	kSchema, vSchema, kID, vID := e.msgKey, e.msgValue, &e.msgKeyID, &e.msgValueID
	if rel != nil {
		a := e.planFor(rel).avro
		if a.err != nil {
			return a.err
		}
		kSchema, vSchema, kID, vID = a.key, a.value, &a.keyID, &a.valueID
	}
	if key && kSchema != "" && *kID < 0 {
		id, err := register(true, kSchema)
		if err != nil {
			return err
		}
		*kID = int32(id)
	}
	if value && *vID < 0 {
		id, err := register(false, vSchema)
		if err != nil {
			return err
		}
		*vID = int32(id)
	}
	return nil
}

var errNotRegistered = errors.New("internal: the record's Avro schema has no registry id (Register was not called)")

// header writes Confluent's wire-format header.
func appendHeader(dst []byte, id int32) []byte {
	dst = append(dst, 0)
	return binary.BigEndian.AppendUint32(dst, uint32(id))
}

// AppendKey appends the record key of ch to dst, with the semantics of
// JSONEncoder.AppendKey.
func (e *AvroEncoder) AppendKey(dst []byte, ch *Change) (out []byte, ok bool, err error) {
	switch ch.Op {
	case OpMessage:
		if ch.Message == nil {
			return dst, false, errors.New("encode key: logical message change without Message")
		}
		if e.msgKeyID < 0 {
			return dst, false, errNotRegistered
		}
		w := e.reset()
		w.WriteLong(1)
		w.WriteString(ch.Message.Prefix)
		return append(appendHeader(dst, e.msgKeyID), w.Buffer()...), true, nil
	}
	primary, fallback, err := keyImages(ch)
	if err != nil || primary == nil {
		return dst, false, err
	}
	rel := ch.Relation
	p := e.planFor(rel)
	if p.avro.keyID < 0 {
		return dst, false, errNotRegistered
	}
	if err := checkTuple(rel, primary, fallback); err != nil {
		return dst, false, err
	}
	w := e.reset()
	for _, i := range rel.KeyIndexes {
		if i < 0 || i >= len(p.cols) {
			return dst, false, fmt.Errorf("encode key of %s: key index %d out of range", rel.QualifiedName(), i)
		}
		v := primary[i]
		if v.Kind == ValueUnchangedToast {
			if fallback == nil || fallback[i].Kind == ValueUnchangedToast {
				return dst, false, newValueError(rel, i, nil, ErrUnchangedToastKey)
			}
			v = fallback[i]
		}
		t := p.cols[i]
		if t.omit {
			continue
		}
		if err := e.writeColumn(t, t.schema.withOptional(false), v); err != nil {
			return dst, false, newValueError(rel, i, v.Data, err)
		}
	}
	if p.keyExtraJSON != nil {
		w.WriteString(p.keyExtra)
	}
	return append(appendHeader(dst, p.avro.keyID), w.Buffer()...), true, nil
}

// AppendValue appends the record value of ch to dst, with the semantics
// of JSONEncoder.AppendValue, except that a flat delete in tombstone mode
// returns nil, a Kafka tombstone: AvroConverter writes a null value as no
// bytes whatever its schema.
func (e *AvroEncoder) AppendValue(dst []byte, ch *Change, now time.Time) ([]byte, error) {
	if ch.Op == OpMessage {
		return e.appendMessage(dst, ch, now)
	}
	before, after, err := valueImages(ch)
	if err != nil {
		return dst, err
	}
	rel := ch.Relation
	p := e.planFor(rel)
	if p.avro.valueID < 0 {
		return dst, errNotRegistered
	}
	w := e.reset()
	if p.flat != nil {
		if ch.Op == OpDelete && p.flat.Delete == DeleteTombstone {
			return nil, nil
		}
		if err := e.writeFlat(ch, p, before, after, now); err != nil {
			return dst, err
		}
		// The flat value is the row's record itself, not the optional
		// union writeTuple starts with (one byte, index 1).
		return append(appendHeader(dst, p.avro.valueID), w.Buffer()[1:]...), nil
	}
	if err := e.writeTuple(rel, p, before, nil, keyOnlyBefore(rel)); err != nil {
		return dst, err
	}
	if err := e.writeTuple(rel, p, after, before, false); err != nil {
		return dst, err
	}
	e.writeSource(ch, rel.Schema, rel.Table, now)
	e.writeTransaction(ch)
	w.WriteString(string(rune(ch.Op)))
	for _, v := range [3]int64{now.UnixMilli(), now.UnixMicro(), now.UnixNano()} {
		w.WriteLong(1) // ts_ms, ts_us, ts_ns: [null, long]
		w.WriteLong(v)
	}
	return append(appendHeader(dst, p.avro.valueID), w.Buffer()...), nil
}

func (e *AvroEncoder) appendMessage(dst []byte, ch *Change, now time.Time) ([]byte, error) {
	if ch.Message == nil {
		return dst, errors.New("encode value: logical message change without Message")
	}
	if e.msgValueID < 0 {
		return dst, errNotRegistered
	}
	w := e.reset()
	w.WriteString("m")
	w.WriteLong(1)
	w.WriteLong(now.UnixMilli())
	e.writeSource(ch, "", "", now)
	e.writeTransaction(ch)
	w.WriteLong(1)
	w.WriteString(ch.Message.Prefix)
	w.WriteLong(1)
	w.WriteBytes(ch.Message.Content)
	return append(appendHeader(dst, e.msgValueID), w.Buffer()...), nil
}

func (e *AvroEncoder) reset() *avro.Writer {
	e.w.Reset(nil)
	return e.w
}

// writeTuple writes an optional Value record: null for a nil tuple, each
// value as imageValue gives it (keyOnly: t is an old key tuple).
func (e *AvroEncoder) writeTuple(rel *Relation, p *relPlan, t, old Tuple, keyOnly bool) error {
	w := e.w
	if t == nil {
		w.WriteLong(0)
		return nil
	}
	w.WriteLong(1)
	for i := range t {
		vc := p.vcols[i]
		if vc.omit {
			continue
		}
		v, ct := imageValue(rel, p, t, old, i, keyOnly)
		var err error
		if p.rewrites != nil && p.rewrites[i] != nil {
			err = e.writeRewritten(ct, vc.schema, v, p.rewrites[i])
		} else {
			err = e.writeColumn(ct, vc.schema, v)
		}
		if err != nil {
			return newValueError(rel, i, v.Data, err)
		}
	}
	return nil
}

// MarkSnapshot rewrites source.snapshot of a snapshot record value this
// encoder wrote with marker from into to (see JSONEncoder.MarkSnapshot).
// In the Source record the snapshot union (branch 0, a string) is followed
// by the database name; nothing after source can hold that sequence, so
// the last match is the field.
func (e *AvroEncoder) MarkSnapshot(value []byte, from, to string) (out []byte, ok bool) {
	if e.cfg.Flat != nil {
		// A flat value has no source block; source.snapshot as an added
		// field is refused with Avro (connector's config validation).
		return value, !e.cfg.Flat.snapshotField
	}
	pat := []byte{0}
	pat = binary.AppendVarint(pat, int64(len(from)))
	pat = append(pat, from...)
	pat = binary.AppendVarint(pat, int64(len(e.cfg.Database)))
	pat = append(pat, e.cfg.Database...)
	i := bytes.LastIndex(value, pat)
	if i < 0 {
		return value, false
	}
	repl := binary.AppendVarint(nil, int64(len(to)))
	repl = append(repl, to...)
	return splice(value, i+1, i+len(pat)-len(e.cfg.Database)-varintLen(len(e.cfg.Database)), string(repl)), true
}

func varintLen(n int) int { return len(binary.AppendVarint(nil, int64(n))) }
