package transform

import (
	"fmt"
	"math"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// TimestampConverter is Kafka Connect's TimestampConverter$Key /
// TimestampConverter$Value
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/TimestampConverter.java):
// a field (or the whole part) converted between a formatted string, Unix
// time and Connect's Timestamp, Date and Time.
type TimestampConverter struct {
	part        part
	field       string
	target      string // "string", "unix", "Date", "Time", "Timestamp"
	format      *dateFormat
	precision   string // unix.precision
	replaceNull bool
	now         func() time.Time // for two-digit years when parsing
	cache       schemaCache
}

// The target.type values (TimestampConverter.java:75-79) and the
// unix.precision values (TimestampConverter.java:81-84).
const (
	tsString    = "string"
	tsUnix      = "unix"
	tsDate      = "Date"
	tsTime      = "Time"
	tsTimestamp = "Timestamp"
)

const tsPurpose = "converting timestamp formats"

// Apply implements Transform (TimestampConverter.java:323-450).
func (t *TimestampConverter) Apply(r Record) (Record, bool, error) {
	s, v := t.part.get(&r)
	if s == nil {
		if v == nil || t.field == "" {
			out, err := t.convert(v, "")
			if err != nil {
				return r, false, err
			}
			return t.part.set(r, nil, out), true, nil
		}
		m, err := requireMap(v, tsPurpose)
		if err != nil {
			return r, false, err
		}
		fv, _ := m.Get(t.field)
		conv, err := t.convert(fv, "")
		if err != nil {
			return r, false, err
		}
		out := m.Clone()
		out.Put(t.field, conv)
		return t.part.set(r, nil, out), true, nil
	}
	if t.field == "" {
		from, err := typeFromSchema(s)
		if err != nil {
			return r, false, err
		}
		out, err := t.convert(v, from)
		if err != nil {
			return r, false, err
		}
		return t.part.set(r, targetSchema(t.target, s.Optional), out), true, nil
	}
	var st *Struct
	if v != nil {
		var err error
		if st, err = requireStruct(v, tsPurpose); err != nil {
			return r, false, err
		}
	}
	us, err := t.cache.get(s, t.updatedSchema)
	if err != nil {
		return r, false, err
	}
	out, err := t.applyStruct(st, us)
	if err != nil {
		return r, false, err
	}
	if out == nil {
		return t.part.set(r, us, nil), true, nil
	}
	return t.part.set(r, us, out), true, nil
}

// updatedSchema is the schema TimestampConverter builds for a struct
// (TimestampConverter.java:390-409): the field's schema replaced by the
// target's, optional as the field was; the struct keeps its optionality.
func (t *TimestampConverter) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	if s.Type != schema.TypeStruct {
		return nil, fmt.Errorf("field %q: the %s schema is not a struct", t.field, s.Type)
	}
	out := copyBasics(s, schema.TypeStruct)
	for _, f := range s.Fields {
		fs := f.Schema
		if f.Name == t.field {
			fs = targetSchema(t.target, f.Schema.Optional)
		}
		out.Fields = append(out.Fields, schema.Field{Name: f.Name, Schema: fs})
	}
	out.Optional = s.Optional
	if s.HasDefault {
		// TimestampConverter.java:402-405 converts the struct's default
		// too; mooncdc's struct schemas have none.
		return nil, fmt.Errorf("a struct schema with a default value is not supported")
	}
	return out, nil
}

// applyStruct is TimestampConverter.applyValueWithSchema (TimestampConverter.java:416-431).
func (t *TimestampConverter) applyStruct(st *Struct, us *schema.Schema) (*Struct, error) {
	if st == nil {
		return nil, nil
	}
	out := NewStruct(us)
	for i, f := range st.Schema.Fields {
		fv, err := fieldValue(st, i, t.replaceNull)
		if err != nil {
			return nil, err
		}
		if f.Name == t.field {
			from, err := typeFromSchema(f.Schema)
			if err != nil {
				return nil, err
			}
			if fv, err = t.convert(fv, from); err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
		}
		out.Values[i] = fv
	}
	return out, nil
}

// targetSchema is TimestampTranslator.typeSchema of the target type.
func targetSchema(target string, optional bool) *schema.Schema {
	pick := func(opt, req *schema.Schema) *schema.Schema {
		if optional {
			return opt
		}
		return req
	}
	switch target {
	case tsString:
		return pick(optionalStringSchema, stringSchema)
	case tsUnix:
		return pick(optionalInt64Schema, int64Schema)
	case tsDate:
		return pick(optionalDateSchema, dateSchema)
	case tsTime:
		return pick(optionalTimeSchema, timeSchema)
	}
	return pick(optionalTimestampSchema, timestampSchema)
}

// typeFromSchema is TimestampConverter.timestampTypeFromSchema
// (TimestampConverter.java:455-470): by logical name, else a string is a
// formatted string and an int64 Unix time (so Debezium's MicroTimestamp
// is Unix time in unix.precision).
func typeFromSchema(s *schema.Schema) (string, error) {
	switch {
	case s.Name == TimestampName:
		return tsTimestamp, nil
	case s.Name == DateName:
		return tsDate, nil
	case s.Name == TimeName:
		return tsTime, nil
	case s.Type == schema.TypeString:
		return tsString, nil
	case s.Type == schema.TypeInt64:
		return tsUnix, nil
	}
	return "", fmt.Errorf("schema %s (%s) does not correspond to a known timestamp type format", s.Type, s.Name)
}

// convert is TimestampConverter.convertTimestamp (TimestampConverter.java:494-513);
// from "" infers the type from the value (inferTimestampType, 475-486).
func (t *TimestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if from == "" {
		switch v.(type) {
		case time.Time:
			from = tsTimestamp
		case int64:
			from = tsUnix
		case string:
			from = tsString
		default:
			return nil, fmt.Errorf("TimestampConverter does not support %s objects as timestamps", javaClass(v))
		}
	}
	var raw time.Time
	switch from {
	case tsString:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected string timestamp to be a String, but found %s", javaClass(v))
		}
		if t.format == nil {
			return nil, fmt.Errorf("a string timestamp needs the format option to parse it")
		}
		var err error
		if raw, err = t.format.parse(str, t.now()); err != nil {
			return nil, err
		}
	case tsUnix:
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("expected Unix timestamp to be a Long, but found %s", javaClass(v))
		}
		raw = fromMillis(unixToMillis(n, t.precision))
	default:
		d, ok := v.(time.Time)
		if !ok {
			return nil, fmt.Errorf("expected %s to be a java.util.Date, but found %s", from, javaClass(v))
		}
		raw = d
	}
	ms := millis(raw)
	switch t.target {
	case tsString:
		return t.format.format(raw), nil
	case tsUnix:
		return millisToUnix(ms, t.precision), nil
	case tsDate:
		return fromMillis(floorDiv(ms, epochDay) * epochDay), nil
	case tsTime:
		return fromMillis(ms - floorDiv(ms, epochDay)*epochDay), nil
	}
	// A java.util.Date holds milliseconds: a finer time.Time is cut to
	// them, as Timestamp.toLogical / the Date in hand would be.
	return fromMillis(ms), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// unixToMillis is TimeUnit.{SECONDS,MICROSECONDS,NANOSECONDS}.toMillis
// (TimestampConverter.java:170-180): toward zero, saturating.
func unixToMillis(n int64, precision string) int64 {
	switch precision {
	case "seconds":
		return saturatingMul(n, 1000)
	case "microseconds":
		return n / 1000
	case "nanoseconds":
		return n / 1_000_000
	}
	return n
}

// millisToUnix is TimeUnit.MILLISECONDS.to… (TimestampConverter.java:189-202).
func millisToUnix(ms int64, precision string) int64 {
	switch precision {
	case "seconds":
		return ms / 1000
	case "microseconds":
		return saturatingMul(ms, 1000)
	case "nanoseconds":
		return saturatingMul(ms, 1_000_000)
	}
	return ms
}

// saturatingMul is TimeUnit's x(d, m, over): Long.MAX_VALUE or MIN_VALUE
// past the range.
func saturatingMul(d, m int64) int64 {
	over := math.MaxInt64 / m
	switch {
	case d > over:
		return math.MaxInt64
	case d < -over:
		return math.MinInt64
	}
	return d * m
}
