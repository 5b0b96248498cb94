package transform

import (
	"fmt"

	"github.com/mooncdc/mooncdc/schema"
)

// ValueToKey is Kafka Connect's ValueToKey
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/ValueToKey.java):
// the key becomes a struct (or map) of some fields of the value. A
// tombstone fails it, as in Kafka (requireMap(null)): guard it with the
// RecordIsTombstone predicate and negate.
type ValueToKey struct {
	fields      []string
	replaceNull bool
	cache       schemaCache
}

const valueToKeyPurpose = "copying fields from value to key"

// Apply implements Transform (ValueToKey.java:75-115).
func (t *ValueToKey) Apply(r Record) (Record, bool, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return r, false, err
		}
		key := &Map{Entries: make([]MapEntry, 0, len(t.fields))}
		for _, f := range t.fields {
			fv, _ := m.Get(f)
			key.Put(f, fv)
		}
		r.KeySchema, r.Key = nil, key
		return r, true, nil
	}
	st, err := requireStruct(r.Value, valueToKeyPurpose)
	if err != nil {
		return r, false, err
	}
	ks, err := t.cache.get(st.Schema, t.keySchema)
	if err != nil {
		return r, false, err
	}
	key := NewStruct(ks)
	for i, f := range t.fields {
		fv, err := fieldValue(st, index(st.Schema, f), t.replaceNull)
		if err != nil {
			return r, false, err
		}
		if err := Validate(ks.Fields[i].Schema, fv); err != nil {
			return r, false, fmt.Errorf("field %q: %w", f, err)
		}
		key.Values[i] = fv
	}
	r.KeySchema, r.Key = ks, key
	return r, true, nil
}

// keySchema is the key schema ValueToKey builds (ValueToKey.java:95-107):
// an unnamed required struct of the fields' schemas.
func (t *ValueToKey) keySchema(s *schema.Schema) (*schema.Schema, error) {
	out := &schema.Schema{Type: schema.TypeStruct}
	for _, f := range t.fields {
		i := index(s, f)
		if i < 0 {
			return nil, fmt.Errorf("field does not exist: %s", f)
		}
		if err := addField(out, f, s.Fields[i].Schema); err != nil {
			return nil, err
		}
	}
	return out, nil
}
