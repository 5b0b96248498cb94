package transform

import (
	"fmt"
	"sync"

	"github.com/mooncdc/mooncdc/schema"
)

// This file holds what the SMTs share: the part of a record they work on
// (their Key and Value variants), the per-schema cache of updated schemas
// (Kafka's LRUCache of 16 per transform) and a struct schema builder that
// refuses duplicate field names as SchemaBuilder.field does.

// part is the record part an SMT works on: the key (…$Key) or the value
// (…$Value).
type part bool

const (
	partKey   part = true
	partValue part = false
)

func (p part) get(r *Record) (*schema.Schema, any) {
	if p == partKey {
		return r.KeySchema, r.Key
	}
	return r.ValueSchema, r.Value
}

// set returns r with the part replaced (ConnectRecord.newRecord: topic,
// partition, the other part, timestamp and headers kept).
func (p part) set(r Record, s *schema.Schema, v any) Record {
	if p == partKey {
		r.KeySchema, r.Key = s, v
	} else {
		r.ValueSchema, r.Value = s, v
	}
	return r
}

func (p part) String() string {
	if p == partKey {
		return "key"
	}
	return "value"
}

// schemaCache maps an input schema to the schema a transform makes of
// it. Schemas are made once per relation and never changed, so the
// pointer is the identity; the cache is cleared past maxCached entries
// (many relations, each schema change a new pointer) to stay bounded.
type schemaCache struct {
	mu sync.Mutex
	m  map[*schema.Schema]*schema.Schema
}

const maxCached = 256

func (c *schemaCache) get(in *schema.Schema, build func(*schema.Schema) (*schema.Schema, error)) (*schema.Schema, error) {
	c.mu.Lock()
	out, ok := c.m[in]
	c.mu.Unlock()
	if ok {
		return out, nil
	}
	out, err := build(in)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = make(map[*schema.Schema]*schema.Schema)
	}
	c.m[in] = out
	c.mu.Unlock()
	return out, nil
}

// addField appends a field to a struct schema being built, refusing a
// name it has already (SchemaBuilder.field:
// connect/api/src/main/java/org/apache/kafka/connect/data/SchemaBuilder.java:321-333).
func addField(s *schema.Schema, name string, fs *schema.Schema) error {
	if name == "" {
		return fmt.Errorf("field name cannot be empty")
	}
	if index(s, name) >= 0 {
		return fmt.Errorf("cannot create field %q because of field name duplication", name)
	}
	s.Fields = append(s.Fields, schema.Field{Name: name, Schema: fs})
	return nil
}

// requireStruct is Requirements.requireStruct
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/util/Requirements.java:50-55).
func requireStruct(v any, purpose string) (*Struct, error) {
	st, ok := v.(*Struct)
	if !ok {
		return nil, fmt.Errorf("only Struct objects supported for [%s], found: %s", purpose, javaClass(v))
	}
	return st, nil
}

// requireMap is Requirements.requireMap (Requirements.java:36-41).
func requireMap(v any, purpose string) (*Map, error) {
	m, ok := v.(*Map)
	if !ok {
		return nil, fmt.Errorf("only Map objects supported in absence of schema for [%s], found: %s", purpose, javaClass(v))
	}
	return m, nil
}

// javaClass names a value's type as Connect's messages do.
func javaClass(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case bool:
		return "java.lang.Boolean"
	case string:
		return "java.lang.String"
	case []byte:
		return "[B"
	case *Struct:
		return "org.apache.kafka.connect.data.Struct"
	case *Map:
		return "java.util.HashMap"
	case []any:
		return "java.util.ArrayList"
	case Decimal:
		return "java.math.BigDecimal"
	}
	return fmt.Sprintf("%T", v)
}
