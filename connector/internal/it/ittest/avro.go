package ittest

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/internal/srtest"
)

// AvroRecord is a record decoded with the schema the registry returns for
// the id in its Confluent header.
type AvroRecord struct {
	KeyID, ValueID int
	Key, Value     map[string]any // nil for a tombstone's value
}

// DecodeAvro decodes one Confluent wire-format payload.
func DecodeAvro(t *testing.T, reg *srtest.Registry, b []byte) (int, map[string]any) {
	t.Helper()
	if len(b) < 5 || b[0] != 0 {
		t.Fatalf("not Confluent wire format: % x", b[:min(len(b), 8)])
	}
	id := int(binary.BigEndian.Uint32(b[1:5]))
	text, ok := reg.SchemaByID(id)
	if !ok {
		t.Fatalf("schema id %d is not in the registry", id)
	}
	s, err := avro.ParseWithCache(text, "", &avro.SchemaCache{})
	if err != nil {
		t.Fatalf("registry schema %d does not parse: %v", id, err)
	}
	var v map[string]any
	if err := avro.Unmarshal(s, b[5:], &v); err != nil {
		t.Fatalf("decode with schema %d: %v", id, err)
	}
	return id, UnwrapUnions(v).(map[string]any)
}

// UnwrapUnions replaces hamba's generic form of a union value, a map from
// the branch's type name to the value, by the value.
func UnwrapUnions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, inner := range x {
				if AvroTypeName(k) {
					return UnwrapUnions(inner)
				}
			}
		}
		for k, inner := range x {
			x[k] = UnwrapUnions(inner)
		}
		return x
	case []any:
		for i := range x {
			x[i] = UnwrapUnions(x[i])
		}
	}
	return v
}

// AvroTypeName reports whether k names an Avro type (a primitive, array,
// map or a named type): the key of a union branch in Avro's JSON encoding.
func AvroTypeName(k string) bool {
	switch k {
	case "string", "bytes", "int", "long", "float", "double", "boolean", "array", "map":
		return true
	}
	return strings.Contains(k, ".")
}

// ReadAvro reads n records of topic and decodes their Avro keys and
// values with the schemas registered in reg.
func ReadAvro(t *testing.T, reg *srtest.Registry, addr string, n int, topic string) []AvroRecord {
	t.Helper()
	recs := ReadRaw(t, addr, n, topic)
	out := make([]AvroRecord, 0, len(recs))
	for _, r := range recs {
		var ar AvroRecord
		if r.Key != nil {
			ar.KeyID, ar.Key = DecodeAvro(t, reg, r.Key)
		}
		if r.Value != nil {
			ar.ValueID, ar.Value = DecodeAvro(t, reg, r.Value)
		}
		out = append(out, ar)
	}
	return out
}

// AvroConfig is e.Config with Avro keys and values against the registry
// reg.
func AvroConfig(e *Env, reg *srtest.Registry, name string, tables ...string) config.Config {
	cfg := e.Config(name, tables...)
	cfg.Format.Key, cfg.Format.Value = config.FormatAvro, config.FormatAvro
	cfg.Format.SchemaRegistry.URL = reg.URL()
	return cfg
}

// After returns the after image of a decoded envelope.
func After(t *testing.T, r AvroRecord) map[string]any {
	t.Helper()
	a, ok := r.Value["after"].(map[string]any)
	if !ok {
		t.Fatalf("record has no after image: %v", r.Value)
	}
	return a
}
