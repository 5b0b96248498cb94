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
// sets the id in the caller's AvroIDs; AppendKey and AppendValue then only
// encode, with the relation's Plan (NewPlan, made with the encoder's
// Config) and those ids. The encoder keeps scratch buffers and the ids of
// its message, transaction and schema-change records; it is NOT safe for
// concurrent use.
type AvroEncoder struct {
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

// AvroIDs are the registry ids of one relation's key and value schemas
// (a plan's), -1 until registered. The caller keeps them beside the plan
// (connector's codec): an id depends on the subject the schema is
// registered under (the topic, and a generation of schema evolution), not
// on the relation alone.
type AvroIDs struct{ Key, Value int32 }

// NoAvroIDs are the ids of a plan whose schemas are not registered.
var NoAvroIDs = AvroIDs{Key: -1, Value: -1}

// NewAvroEncoder returns an encoder for cfg, which must be valid.
func NewAvroEncoder(cfg Config) *AvroEncoder {
	cfg = cfg.withDefaults()
	e := &AvroEncoder{cfg: cfg, w: avro.NewWriter(nil, 1024),
		msgKeyID: -1, msgValueID: -1, txKeyID: -1, txValueID: -1, scKeyID: -1, scValueID: -1}
	e.phBytes, e.ph, _ = placeholder(cfg.UnavailableValue)
	if cfg.Flat != nil {
		e.meta = NewMetaWriter(cfg)
	}
	e.msgKey = renderAvro(messageKeySchema)
	e.msgValue = renderAvro(messageValueSchema)
	return e
}

// Plan returns the plan of rel under the encoder's Config (NewPlan); nil
// for rel nil.
func (e *AvroEncoder) Plan(rel *Relation) *Plan {
	if rel == nil {
		return nil
	}
	return NewPlan(e.cfg, rel)
}

// Schemas returns the Avro schemas of the record key ("" when the relation
// has no key columns) and value of the relation of plan p; p nil means
// logical messages.
func (e *AvroEncoder) Schemas(p *Plan) (key, value string, err error) {
	if p == nil {
		return e.msgKey, e.msgValue, nil
	}
	if !p.serves(PlanAvro) {
		return "", "", errPlanFormat
	}
	return p.avroKey, p.avroValue, p.avroErr
}

// Register makes sure the key schema (if key) and the value schema (if
// value) of the records of plan p have registry ids in ids, calling
// register for each one ids has none for yet; p nil means logical
// messages, whose ids the encoder keeps (ids is then not used). It blocks
// as long as register does; an error of register is returned as is, and a
// later call tries again.
func (e *AvroEncoder) Register(p *Plan, ids *AvroIDs, key, value bool, register func(isKey bool, schema string) (int, error)) error {
	kSchema, vSchema, kID, vID := e.msgKey, e.msgValue, &e.msgKeyID, &e.msgValueID
	if p != nil {
		if !p.serves(PlanAvro) {
			return errPlanFormat
		}
		if p.avroErr != nil {
			return p.avroErr
		}
		kSchema, vSchema, kID, vID = p.avroKey, p.avroValue, &ids.Key, &ids.Value
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
// JSONEncoder.AppendKey; ids are p's registry ids (Register; ignored for
// a logical message).
func (e *AvroEncoder) AppendKey(dst []byte, p *Plan, ids AvroIDs, ch *Change) (out []byte, ok bool, err error) {
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
	if p, err = planOf(p, rel, PlanAvro); err != nil {
		return dst, false, err
	}
	if ids.Key < 0 {
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
	return append(appendHeader(dst, ids.Key), w.Buffer()...), true, nil
}

// AppendValue appends the record value of ch to dst, with the semantics
// of JSONEncoder.AppendValue, except that a flat delete in tombstone mode
// returns nil, a Kafka tombstone: AvroConverter writes a null value as no
// bytes whatever its schema. ids are as in AppendKey.
func (e *AvroEncoder) AppendValue(dst []byte, p *Plan, ids AvroIDs, ch *Change, now time.Time) ([]byte, error) {
	if ch.Op == OpMessage {
		return e.appendMessage(dst, ch, now)
	}
	before, after, err := valueImages(ch)
	if err != nil {
		return dst, err
	}
	rel := ch.Relation
	if p, err = planOf(p, rel, PlanAvro); err != nil {
		return dst, err
	}
	if ids.Value < 0 {
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
		return append(appendHeader(dst, ids.Value), w.Buffer()[1:]...), nil
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
	return append(appendHeader(dst, ids.Value), w.Buffer()...), nil
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
func (e *AvroEncoder) writeTuple(rel *Relation, p *Plan, t, old Tuple, keyOnly bool) error {
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
