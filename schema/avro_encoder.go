package schema

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
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

// writeColumn writes value v of a column of type t with schema s (the
// column's schema, or its required form in a key).
func (e *AvroEncoder) writeColumn(t *colType, s *Schema, v Value) error {
	w := e.w
	if v.Kind == ValueNull {
		if !s.Optional {
			return errNullRequired
		}
		w.WriteLong(nullBranch(s))
		return nil
	}
	if v.Kind == ValueUnchangedToast {
		if s.Optional {
			w.WriteLong(valueBranch(s))
		}
		return e.writeToast(t)
	}
	switch t.conv {
	case convArray:
		return e.writeArray(t, s, v.Data)
	case convHstoreMap:
		return e.writeHstoreMap(v.Data, s.Optional)
	}
	d, err := e.cv.scalar(t, v.Data)
	if err != nil {
		return err
	}
	return e.writeDatum(d, s)
}

// writeRewritten writes value v of a column whose values mapper b
// rewrites (see JSONEncoder.appendRewritten).
func (e *AvroEncoder) writeRewritten(t *colType, s *Schema, v Value, b *BoundRewrite) error {
	d, null, err := e.cv.mappable(t, v, e.phBytes)
	if err != nil {
		return err
	}
	d, _ = b.rewriteDatum(d, null, &e.cv.mapped)
	return e.writeDatum(d, s)
}

var errNullRequired = errors.New("NULL in a column the catalog says is NOT NULL")

// nullBranch and valueBranch are the union indexes of an optional
// schema: ["null", T], or [T, "null"] when it has a default (AvroData's
// maybeMakeOptional; avro_schema.go renders the same order).
func nullBranch(s *Schema) int64 {
	if s.HasDefault {
		return 1
	}
	return 0
}

func valueBranch(s *Schema) int64 { return 1 - nullBranch(s) }

// writeDatum writes d as schema s, with the union index when s is
// optional.
func (e *AvroEncoder) writeDatum(d datum, s *Schema) error {
	w := e.w
	if d.k == dNull {
		if !s.Optional {
			return errNullRequired
		}
		w.WriteLong(nullBranch(s))
		return nil
	}
	if s.Optional {
		w.WriteLong(valueBranch(s))
	}
	switch d.k {
	case dBool:
		w.WriteBool(d.i != 0)
	case dInt:
		if s.Type == TypeInt64 {
			w.WriteLong(d.i)
		} else {
			w.WriteInt(int32(d.i))
		}
	case dFloat:
		if s.Type == TypeFloat32 {
			w.WriteFloat(float32(d.f))
		} else {
			w.WriteDouble(d.f)
		}
	case dString, dBytes:
		w.WriteBytes(d.b)
	case dVarDec:
		w.WriteInt(int32(d.i))
		w.WriteBytes(d.b)
	case dPoint:
		w.WriteDouble(d.f)
		w.WriteDouble(d.g)
		w.WriteLong(1)
		w.WriteBytes(d.b)
		w.WriteLong(0) // srid: null
	}
	return nil
}

// writeArray writes a one-dimensional array: one block of optional items.
func (e *AvroEncoder) writeArray(t *colType, s *Schema, text []byte) error {
	cv := &e.cv
	var err error
	if cv.elem, cv.ebuf, err = parseArray(text, arrayDelim(t.elem), cv.elem[:0], cv.ebuf[:0]); err != nil {
		return err
	}
	if t.elem.conv == convArray {
		return errNestedArray
	}
	w := e.w
	if s.Optional {
		w.WriteLong(1)
	}
	if len(cv.elem) > 0 {
		w.WriteLong(int64(len(cv.elem)))
		for _, el := range cv.elem {
			if el.Null {
				if !t.elem.schema.Optional {
					return errNullEnumElement
				}
				w.WriteLong(0)
				continue
			}
			if t.elem.conv == convHstoreMap {
				if err := e.writeHstoreMap(el.Data, t.elem.schema.Optional); err != nil {
					return err
				}
				continue
			}
			d, err := cv.scalar(t.elem, el.Data)
			if err != nil {
				return err
			}
			if err := e.writeDatum(d, t.elem.schema); err != nil {
				return err
			}
		}
	}
	w.WriteLong(0)
	return nil
}

// writeHstoreMap writes hstore text as an Avro map of optional strings
// (hstore_handling_mode map), in java.util.HashMap order like the JSON
// encoder, preceded by the union index when optional. It parses before it
// writes, so a value that does not parse writes nothing.
func (e *AvroEncoder) writeHstoreMap(s []byte, optional bool) error {
	cv := &e.cv
	var err error
	if cv.hs, cv.hbuf, err = parseHstore(s, cv.hs[:0], cv.hbuf[:0]); err != nil {
		return err
	}
	javaHashMapOrder(cv.hs)
	w := e.w
	if optional {
		w.WriteLong(1)
	}
	if len(cv.hs) > 0 {
		w.WriteLong(int64(len(cv.hs)))
		for _, p := range cv.hs {
			w.WriteBytes(p.Key)
			if p.Null {
				w.WriteLong(0)
			} else {
				w.WriteLong(1)
				w.WriteBytes(p.Value)
			}
		}
	}
	w.WriteLong(0)
	return nil
}

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
