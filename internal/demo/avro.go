package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
)

// avroDecoder decodes Avro keys and values in Confluent's wire format (a
// zero byte, the schema id as 4 bytes big-endian, the Avro binary), the way
// any consumer with a Schema Registry does: each schema id is looked up in
// the registry once. The result is JSON shaped like mooncdc's JSON records
// (fields in the schema's order, unions unwrapped), so that the rest of the
// demo reads both formats alike. Safe for concurrent use.
type avroDecoder struct {
	cl *sr.Client

	mu      sync.Mutex
	schemas map[int]avro.Schema
}

// registryTimeout bounds one schema lookup.
const registryTimeout = 10 * time.Second

func newAvroDecoder(registryURL string) (*avroDecoder, error) {
	cl, err := sr.NewClient(sr.URLs(registryURL))
	if err != nil {
		return nil, fmt.Errorf("schema registry client for %s: %w", registryURL, err)
	}
	return &avroDecoder{cl: cl, schemas: map[int]avro.Schema{}}, nil
}

// decode returns the JSON of one Confluent-framed Avro payload.
func (d *avroDecoder) decode(b []byte) ([]byte, error) {
	if len(b) < 5 || b[0] != 0 {
		return nil, fmt.Errorf("not in Confluent's wire format: % x", b[:min(len(b), 5)])
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	s, err := d.schema(id)
	if err != nil {
		return nil, err
	}
	var v any
	if err := avro.Unmarshal(s, b[5:], &v); err != nil {
		return nil, fmt.Errorf("decode with schema %d: %w", id, err)
	}
	var out bytes.Buffer
	if err := appendJSON(&out, s, v); err != nil {
		return nil, fmt.Errorf("schema %d: %w", id, err)
	}
	return out.Bytes(), nil
}

// schema returns the parsed schema of id, from the registry the first time.
func (d *avroDecoder) schema(id int) (avro.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[id]; ok {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	rs, err := d.cl.SchemaByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("look up schema %d in the registry: %w", id, err)
	}
	// A cache per schema: the record names of different tables' schemas
	// (…Value, …Key, …Envelope) would collide in a shared one.
	s, err := avro.ParseWithCache(rs.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("parse schema %d from the registry: %w", id, err)
	}
	d.schemas[id] = s
	return s, nil
}

// appendJSON writes v, decoded with schema s by hamba/avro into generic
// values, as JSON: records as objects in field order, a union's value as
// the value itself, decimals as numbers with their scale, timestamps as
// RFC 3339 text, bytes as base64.
func appendJSON(buf *bytes.Buffer, s avro.Schema, v any) error {
	switch s := s.(type) {
	case *avro.RefSchema:
		return appendJSON(buf, s.Schema(), v)
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("record %s decoded as %T", s.FullName(), v)
		}
		buf.WriteByte('{')
		for i, f := range s.Fields() {
			if i > 0 {
				buf.WriteByte(',')
			}
			name, _ := json.Marshal(f.Name())
			buf.Write(name)
			buf.WriteByte(':')
			if err := appendJSON(buf, f.Type(), m[f.Name()]); err != nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
		}
		buf.WriteByte('}')
		return nil
	case *avro.UnionSchema:
		if v == nil {
			buf.WriteString("null")
			return nil
		}
		// hamba decodes a non-null union value into any as a map from the
		// branch's type name to the value.
		if m, ok := v.(map[string]any); ok && len(m) == 1 {
			for name, inner := range m {
				for _, t := range s.Types() {
					if unionBranchName(t) == name {
						return appendJSON(buf, t, inner)
					}
				}
			}
		}
		return appendPlain(buf, nil, v)
	case *avro.ArraySchema:
		items, ok := v.([]any)
		if !ok {
			return appendPlain(buf, s, v)
		}
		buf.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendJSON(buf, s.Items(), item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return appendPlain(buf, s, v)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			name, _ := json.Marshal(k)
			buf.Write(name)
			buf.WriteByte(':')
			if err := appendJSON(buf, s.Values(), m[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	default:
		return appendPlain(buf, s, v)
	}
}

// appendPlain writes a value that is not a record, union, array or map.
func appendPlain(buf *bytes.Buffer, s avro.Schema, v any) error {
	var text any = v
	switch x := v.(type) {
	case *big.Rat: // a decimal
		scale := 0
		if lt, ok := s.(avro.LogicalTypeSchema); ok {
			if dec, ok := lt.Logical().(*avro.DecimalLogicalSchema); ok {
				scale = dec.Scale()
			}
		}
		buf.WriteString(x.FloatString(scale))
		return nil
	case time.Time:
		text = x.UTC().Format(time.RFC3339Nano)
	case time.Duration:
		text = x.String()
	}
	b, err := json.Marshal(text)
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}

// unionBranchName is the name hamba gives a union branch when it decodes
// into any: the full name of a named type, else the type, with its
// logical type after a dot ("long.timestamp-micros").
func unionBranchName(s avro.Schema) string {
	if r, ok := s.(*avro.RefSchema); ok {
		s = r.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	name := string(s.Type())
	if lt, ok := s.(avro.LogicalTypeSchema); ok && lt.Logical() != nil {
		name += "." + string(lt.Logical().Type())
	}
	return name
}
