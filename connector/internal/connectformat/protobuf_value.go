package connectformat

import (
	"fmt"
	"math/big"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file writes a Connect value as ProtobufData.fromConnectData does
// (ProtobufData.java:357-599, the logical types at 246-305) into a
// dynamicpb message of the schema's descriptor, and frames it as
// KafkaProtobufSerializer does: magic byte 0, the schema id (4 bytes, big
// endian), the message indexes ([0]: the file's first message, written as
// the single byte 0, MessageIndexes.java:40-46), then the message.

// Marshal returns v, a *transform.Struct of the schema p was built from,
// as Protobuf bytes (no framing). A null field is left unset (a field with
// a default takes its default first, as Struct.get does); an empty array
// is unset; a null array element has no Protobuf form and is an error.
func (p *Protobuf) Marshal(v any) ([]byte, error) {
	m, err := p.message(v)
	if err != nil {
		return nil, err
	}
	return marshalOpts.Marshal(m)
}

// AppendEncode appends v in Confluent's Protobuf wire format with the
// schema id the registry gave Text under the subject.
func (p *Protobuf) AppendEncode(dst []byte, id int, v any) ([]byte, error) {
	m, err := p.message(v)
	if err != nil {
		return nil, err
	}
	dst, _ = new(sr.ConfluentHeader).AppendEncode(dst, id, []int{0})
	return marshalOpts.MarshalAppend(dst, m)
}

// marshalOpts: proto3 has no required fields, so the initialization check
// (a sixth of the cost) is skipped; no Protobuf maps are written, so
// determinism is moot.
var marshalOpts = proto.MarshalOptions{AllowPartial: true}

func (p *Protobuf) message(v any) (*dynamicpb.Message, error) {
	st, ok := v.(*transform.Struct)
	if !ok || st == nil {
		return nil, fmt.Errorf("protobuf: the value is %T, want a struct of %q", v, p.schema.Name)
	}
	return structMessage(p.Message, p.schema, st)
}

// structMessage fills a message of md with st's fields; md's fields are
// in the schema's order (NewProtobuf numbers them so).
func structMessage(md protoreflect.MessageDescriptor, s *schema.Schema, st *transform.Struct) (*dynamicpb.Message, error) {
	if len(st.Values) != len(s.Fields) || len(s.Fields) != md.Fields().Len() {
		return nil, fmt.Errorf("protobuf: mismatching struct schema for %s (PD:526-528)", md.FullName())
	}
	m := dynamicpb.NewMessage(md)
	for i, f := range s.Fields {
		fd := md.Fields().Get(i)
		v := st.Values[i]
		if v == nil && f.Schema.HasDefault {
			d, err := transform.FromJSON(f.Schema, f.Schema.Default)
			if err != nil {
				return nil, fmt.Errorf("protobuf: field %q: the default: %w", f.Name, err)
			}
			v = d
		}
		if v == nil {
			continue
		}
		if err := setField(m, fd, f.Schema, v); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return m, nil
}

func setField(m *dynamicpb.Message, fd protoreflect.FieldDescriptor, s *schema.Schema, v any) error {
	switch s.Type {
	case schema.TypeArray:
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("protobuf: invalid type for array: %T", v)
		}
		if len(a) == 0 { // PD:486-488
			return nil
		}
		l := m.Mutable(fd).List()
		for i, e := range a {
			if e == nil {
				return fmt.Errorf("protobuf: array element %d is null, which a repeated field cannot hold", i)
			}
			pv, err := fieldValue(fd, s.Items, e)
			if err != nil {
				return fmt.Errorf("array element %d: %w", i, err)
			}
			l.Append(pv)
		}
		return nil
	case schema.TypeMap:
		mv, ok := v.(*transform.Map)
		if !ok {
			return fmt.Errorf("protobuf: invalid type for map: %T", v)
		}
		l := m.Mutable(fd).List()
		entry := fd.Message()
		kf, vf := entry.Fields().ByName("key"), entry.Fields().ByName("value")
		for _, e := range mv.Entries { // PD:493-523
			em := dynamicpb.NewMessage(entry)
			if e.Key != nil {
				if err := setField(em, kf, s.Keys, e.Key); err != nil {
					return fmt.Errorf("map key: %w", err)
				}
			}
			if e.Value != nil {
				if err := setField(em, vf, s.Values, e.Value); err != nil {
					return fmt.Errorf("map value: %w", err)
				}
			}
			l.Append(protoreflect.ValueOfMessage(em))
		}
		return nil
	}
	pv, err := fieldValue(fd, s, v)
	if err != nil {
		return err
	}
	m.Set(fd, pv)
	return nil
}

// fieldValue converts one non-null singular value.
func fieldValue(fd protoreflect.FieldDescriptor, s *schema.Schema, v any) (protoreflect.Value, error) {
	bad := func() (protoreflect.Value, error) {
		return protoreflect.Value{}, fmt.Errorf("protobuf: invalid type for %s: %T", s.Type, v)
	}
	switch s.Name {
	case transform.DecimalName, transform.DateName, transform.TimeName, transform.TimestampName:
		m, err := logicalMessage(fd.Message(), s.Name, v)
		if err != nil {
			return protoreflect.Value{}, err
		}
		return protoreflect.ValueOfMessage(m), nil
	}
	switch s.Type {
	case schema.TypeInt8:
		x, ok := v.(int8)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfInt32(int32(x)), nil
	case schema.TypeInt16:
		x, ok := v.(int16)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfInt32(int32(x)), nil
	case schema.TypeInt32:
		x, ok := v.(int32)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfInt32(x), nil
	case schema.TypeInt64:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfInt64(x), nil
	case schema.TypeFloat32:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfFloat32(x), nil
	case schema.TypeFloat64:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfFloat64(x), nil
	case schema.TypeBoolean:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfBool(x), nil
	case schema.TypeString:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfString(x), nil
	case schema.TypeBytes:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		return protoreflect.ValueOfBytes(x), nil
	case schema.TypeStruct:
		st, ok := v.(*transform.Struct)
		if !ok {
			return bad()
		}
		m, err := structMessage(fd.Message(), s, st)
		if err != nil {
			return protoreflect.Value{}, err
		}
		return protoreflect.ValueOfMessage(m), nil
	}
	return bad()
}

const millisPerDay = 24 * 60 * 60 * 1000

// logicalMessage is TO_PROTOBUF_LOGICAL_CONVERTERS (PD:246-305).
func logicalMessage(md protoreflect.MessageDescriptor, name string, v any) (*dynamicpb.Message, error) {
	m := dynamicpb.NewMessage(md)
	set := func(field string, x protoreflect.Value) { m.Set(md.Fields().ByName(protoreflect.Name(field)), x) }
	if name == transform.DecimalName {
		d, ok := v.(transform.Decimal)
		if !ok || d.Unscaled == nil {
			return nil, fmt.Errorf("protobuf: invalid type for Decimal: %T", v)
		}
		// DecimalUtils.fromBigDecimal: the unscaled value as
		// BigInteger.toByteArray, BigDecimal.precision, the scale.
		set("value", protoreflect.ValueOfBytes(twosComplement(d.Unscaled)))
		set("precision", protoreflect.ValueOfUint32(uint32(precision(d.Unscaled))))
		if d.Scale != 0 {
			set("scale", protoreflect.ValueOfInt32(d.Scale))
		}
		return m, nil
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("protobuf: invalid type for %s: %T", name, v)
	}
	t = t.UTC()
	setNZ := func(field string, x int) {
		if x != 0 { // proto3: a zero is not written, as Java's builder leaves it
			set(field, protoreflect.ValueOfInt32(int32(x)))
		}
	}
	switch name {
	case transform.DateName: // PD:255-273
		if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond()/1e6 != 0 {
			return nil, fmt.Errorf("protobuf: Kafka Connect Date type should not have any time fields set to non-zero values")
		}
		setNZ("year", t.Year())
		setNZ("month", int(t.Month()))
		setNZ("day", t.Day())
	case transform.TimeName: // PD:275-293
		ms := t.UnixMilli()
		if ms < 0 || ms > millisPerDay {
			return nil, fmt.Errorf("protobuf: Time values must use number of millis greater than 0 and less than 86400000")
		}
		setNZ("hours", t.Hour())
		setNZ("minutes", t.Minute())
		setNZ("seconds", t.Second())
		setNZ("nanos", t.Nanosecond()/1e6*1e6)
	case transform.TimestampName: // PD:295-302, Timestamps.fromMillis
		ms := t.UnixMilli()
		sec, rem := ms/1000, ms%1000
		if rem < 0 {
			sec, rem = sec-1, rem+1000
		}
		if sec != 0 {
			m.Set(md.Fields().ByName("seconds"), protoreflect.ValueOfInt64(sec))
		}
		setNZ("nanos", int(rem)*1e6)
	}
	return m, nil
}

// twosComplement is BigInteger.toByteArray: the shortest big-endian two's
// complement with a sign bit (0 is one zero byte).
func twosComplement(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -x-1 in bits, inverted.
	n := new(big.Int).Neg(x)
	n.Sub(n, big.NewInt(1))
	b := n.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

// precision is BigDecimal.precision: the digits of the unscaled value, 1
// for zero.
func precision(x *big.Int) int {
	s := new(big.Int).Abs(x).String()
	return len(s)
}
