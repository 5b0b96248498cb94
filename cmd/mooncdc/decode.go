package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"slices"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file turns the key or value bytes of a Kafka record into the JSON
// that "mooncdc tail" prints. It does no I/O: the Schema Registry is behind
// the schemaLookup the caller passes. Whatever the bytes, the result is
// valid JSON; bytes that cannot be decoded are shown as {"raw_base64": …}
// together with the reason, so that one bad record never stops the tail.

// tailRecord is the JSON object that tail prints for one record.
type tailRecord struct {
	Topic     string            `json:"topic"`
	Partition int32             `json:"partition"`
	Offset    int64             `json:"offset"`
	Timestamp string            `json:"timestamp"` // RFC 3339 in UTC, milliseconds
	Headers   map[string]string `json:"headers"`   // a repeated name keeps its last value
	Key       json.RawMessage   `json:"key"`
	Value     json.RawMessage   `json:"value"`
}

// recordJSON returns the line (newline included) that tail prints for r,
// indented over several lines with pretty. problem is non-nil when the key
// or the value could not be decoded and shows as {"raw_base64": …}; the
// line is printed all the same.
func recordJSON(r *kgo.Record, lookup schemaLookup, pretty bool) (line []byte, problem error) {
	out := tailRecord{
		Topic:     r.Topic,
		Partition: r.Partition,
		Offset:    r.Offset,
		Timestamp: r.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Headers:   make(map[string]string, len(r.Headers)),
	}
	for _, h := range r.Headers {
		out.Headers[h.Key] = string(h.Value)
	}
	var keyErr, valueErr error
	out.Key, keyErr = decodePayload(r.Key, lookup)
	out.Value, valueErr = decodePayload(r.Value, lookup)
	switch {
	case keyErr != nil && valueErr != nil:
		problem = fmt.Errorf("key: %v; value: %v", keyErr, valueErr)
	case keyErr != nil:
		problem = fmt.Errorf("key: %v", keyErr)
	case valueErr != nil:
		problem = fmt.Errorf("value: %v", valueErr)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(out); err != nil { // the parts are valid JSON, so this is a bug
		return nil, fmt.Errorf("encode the record: %w", err)
	}
	return buf.Bytes(), problem
}

// schemaLookup returns the Avro schema that the Schema Registry holds under
// id. A nil schemaLookup means no registry is configured.
type schemaLookup func(id int) (avro.Schema, error)

// avroAPIs decode untrusted bytes: a corrupt length or count must fail
// the record, not allocate gigabytes first. A body of n bytes is decoded
// with the first config whose limit is at least n: no bytes or string value
// can be longer than the body, nor (but for zero-size items, which only odd
// schemas have) an array or map have more elements.
var avroAPIs = func() []avroAPI {
	var apis []avroAPI
	for _, limit := range []int{4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20} {
		apis = append(apis, avroAPI{limit, avro.Config{MaxByteSliceSize: limit, MaxSliceAllocSize: limit}.Freeze()})
	}
	return apis
}()

type avroAPI struct {
	limit int
	api   avro.API
}

func avroAPIFor(n int) avro.API {
	for _, a := range avroAPIs {
		if n <= a.limit {
			return a.api
		}
	}
	return avroAPIs[len(avroAPIs)-1].api
}

// confluentMagic is the first byte of Confluent's wire format, followed by
// the 4-byte big-endian schema id and the Avro binary encoding.
const confluentMagic = 0

// decodePayload returns b as JSON: nil (a tombstone's value, a null key)
// as null; Confluent-framed Avro whose schema lookup knows as the decoded
// value; JSON as itself, compacted; anything else as {"raw_base64": …},
// with a non-nil error that says why b was not decoded. The returned JSON
// is always valid.
func decodePayload(b []byte, lookup schemaLookup) (json.RawMessage, error) {
	if b == nil {
		return json.RawMessage("null"), nil
	}
	var avroErr error
	if len(b) >= 5 && b[0] == confluentMagic {
		// A JSON document cannot start with a 0 byte, so this test never
		// takes JSON for Avro.
		id := int(binary.BigEndian.Uint32(b[1:5]))
		if lookup == nil {
			avroErr = fmt.Errorf("it looks like Confluent-framed Avro (schema id %d), but no Schema Registry is configured: set format.schema_registry.url", id)
		} else if out, err := decodeAvro(b[5:], id, lookup); err == nil {
			return out, nil
		} else {
			avroErr = err
		}
	}
	if json.Valid(b) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err == nil {
			return buf.Bytes(), nil
		}
	}
	raw := appendJSON([]byte(`{"raw_base64":`), base64.StdEncoding.EncodeToString(b))
	raw = append(raw, '}')
	if avroErr != nil {
		return raw, avroErr
	}
	return raw, errors.New("neither Confluent-framed Avro nor JSON")
}

// decodeAvro decodes the Avro binary body with the schema of id and renders
// it as JSON.
func decodeAvro(body []byte, id int, lookup schemaLookup) (json.RawMessage, error) {
	s, err := lookup(id)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	r := avro.NewReader(nil, 0, avro.WithReaderConfig(avroAPIFor(len(body)))).Reset(body)
	var v any
	r.ReadVal(s, &v)
	if r.Error != nil {
		return nil, fmt.Errorf("decode Avro with schema id %d: %w", id, r.Error)
	}
	if r.Peek(); !errors.Is(r.Error, io.EOF) {
		return nil, fmt.Errorf("decode Avro with schema id %d: bytes left over after the value", id)
	}
	out, err := appendAvroJSON(nil, s, v)
	if err != nil {
		return nil, fmt.Errorf("render Avro with schema id %d as JSON: %w", id, err)
	}
	return out, nil
}

// appendAvroJSON appends v, which hamba's generic decoding made from data
// of schema s, as JSON. Records keep the schema's field order; a union
// shows as its value, not as Avro's {"type": value}, so that an Avro record
// reads like the same record in the json format. Bytes and fixed are
// base64; decimals are JSON numbers with the schema's scale; dates, times
// and timestamps are ISO 8601 strings; NaN and infinities are strings.
func appendAvroJSON(dst []byte, s avro.Schema, v any) ([]byte, error) {
	switch s := s.(type) {
	case *avro.RefSchema:
		return appendAvroJSON(dst, s.Schema(), v)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("record %s decoded as %T", s.FullName(), v)
		}
		dst = append(dst, '{')
		for i, f := range s.Fields() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, f.Name())
			dst = append(dst, ':')
			var err error
			if dst, err = appendAvroJSON(dst, f.Type(), m[f.Name()]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("array decoded as %T", v)
		}
		dst = append(dst, '[')
		for i, e := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendAvroJSON(dst, s.Items(), e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("map decoded as %T", v)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendAvroJSON(dst, s.Values(), m[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case *avro.UnionSchema:
		return appendUnion(dst, s, v)
	case *avro.FixedSchema:
		if r, ok := v.(*big.Rat); ok {
			if d, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
				return append(dst, r.FloatString(d.Scale())...), nil
			}
		}
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return appendJSON(dst, b), nil
		}
		return appendLeaf(dst, v)
	case *avro.PrimitiveSchema:
		return appendPrimitive(dst, s, v)
	}
	return appendLeaf(dst, v) // enum (a string), null
}

// appendUnion appends the value of a union. hamba gives it either as
// {"branch name": value} or, when it resolves every branch to a Go type
// (unions of primitive types only), as the value itself.
func appendUnion(dst []byte, s *avro.UnionSchema, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for name, inner := range m {
			if branch, _ := s.Types().Get(name); branch != nil {
				return appendAvroJSON(dst, branch, inner)
			}
		}
	}
	for _, branch := range s.Types() {
		if p, ok := branch.(*avro.PrimitiveSchema); ok && p.Type() != avro.Null {
			if out, err := appendPrimitive(dst, p, v); err == nil {
				return out, nil
			}
		}
	}
	return nil, fmt.Errorf("union value of type %T matches none of its branches", v)
}

// appendPrimitive appends v as a value of schema s, failing when v is not
// of the Go type hamba decodes s to (which picks a union's branch).
func appendPrimitive(dst []byte, s *avro.PrimitiveSchema, v any) ([]byte, error) {
	var logical avro.LogicalType
	if ls := s.Logical(); ls != nil {
		logical = ls.Type()
	}
	mismatch := func() ([]byte, error) {
		if logical != "" {
			return nil, fmt.Errorf("%s.%s decoded as %T", s.Type(), logical, v)
		}
		return nil, fmt.Errorf("%s decoded as %T", s.Type(), v)
	}
	switch x := v.(type) {
	case time.Time:
		switch logical {
		case avro.Date:
			return appendJSON(dst, x.Format(time.DateOnly)), nil
		case avro.TimestampMillis, avro.TimestampMicros:
			return appendJSON(dst, x.Format(time.RFC3339Nano)), nil
		case avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			return appendJSON(dst, x.Format("2006-01-02T15:04:05.999999999")), nil
		}
		return mismatch()
	case time.Duration:
		switch logical {
		case avro.TimeMillis:
			return appendTimeOfDay(dst, x, time.Millisecond, "15:04:05.000"), nil
		case avro.TimeMicros:
			return appendTimeOfDay(dst, x, time.Microsecond, "15:04:05.000000"), nil
		}
		return mismatch()
	case *big.Rat:
		if d, ok := s.Logical().(*avro.DecimalLogicalSchema); ok && s.Type() == avro.Bytes {
			return append(dst, x.FloatString(d.Scale())...), nil
		}
		return mismatch()
	}
	if logical != "" && logical != avro.UUID {
		return mismatch()
	}
	ok := false
	switch v.(type) {
	case bool:
		ok = s.Type() == avro.Boolean
	case int, int32, int64:
		ok = s.Type() == avro.Int || s.Type() == avro.Long
	case float32:
		ok = s.Type() == avro.Float
	case float64:
		ok = s.Type() == avro.Double
	case string:
		ok = s.Type() == avro.String
	case []byte:
		ok = s.Type() == avro.Bytes
	case nil:
		ok = s.Type() == avro.Null
	}
	if !ok {
		return mismatch()
	}
	return appendLeaf(dst, v)
}

// appendTimeOfDay appends d, a time of day, as "15:04:05.000"; a value
// outside a day (only corrupt data has one) as its count of units.
func appendTimeOfDay(dst []byte, d, unit time.Duration, layout string) []byte {
	if d < 0 || d >= 24*time.Hour {
		return fmt.Appendf(dst, "%d", d/unit)
	}
	return appendJSON(dst, time.Time{}.Add(d).Format(layout))
}

// appendLeaf appends a scalar with encoding/json ([]byte as base64), and
// NaN and the infinities, which JSON lacks, as strings.
func appendLeaf(dst []byte, v any) ([]byte, error) {
	var f float64
	switch x := v.(type) {
	case float32:
		f = float64(x)
	case float64:
		f = x
	}
	switch {
	case math.IsNaN(f):
		return appendJSON(dst, "NaN"), nil
	case math.IsInf(f, 1):
		return appendJSON(dst, "Infinity"), nil
	case math.IsInf(f, -1):
		return appendJSON(dst, "-Infinity"), nil
	}
	b, err := marshalJSON(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// appendJSON appends a string or []byte, which encoding/json always
// marshals.
func appendJSON(dst []byte, v any) []byte {
	b, _ := marshalJSON(v)
	return append(dst, b...)
}

// marshalJSON is json.Marshal without the escaping of <, > and &, which
// only matters inside HTML and makes text harder to read.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
