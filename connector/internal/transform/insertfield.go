package transform

import (
	"fmt"
	"strings"

	"github.com/mooncdc/mooncdc/schema"
)

// InsertField is Kafka Connect's InsertField$Key / InsertField$Value
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/InsertField.java):
// it adds the topic, the partition, the record timestamp and a static
// string as fields of a struct (with schema) or a map (schemaless).
type InsertField struct {
	part                                part
	topic, partition, timestamp, static *insertion
	staticValue                         string
	replaceNull                         bool
	cache                               schemaCache
}

// insertion is InsertField's InsertionSpec (InsertField.java:82-101): a
// field name, optional unless it ends in "!".
type insertion struct {
	name     string
	optional bool
}

func parseInsertion(spec string) *insertion {
	if spec == "" {
		return nil
	}
	if n, ok := strings.CutSuffix(spec, "?"); ok {
		return &insertion{n, true}
	}
	if n, ok := strings.CutSuffix(spec, "!"); ok {
		return &insertion{n, false}
	}
	return &insertion{spec, true}
}

const insertPurpose = "field insertion"

// Apply implements Transform (InsertField.apply, InsertField.java:141-149:
// a null part is left as it is).
func (t *InsertField) Apply(r Record) (Record, bool, error) {
	s, v := t.part.get(&r)
	if v == nil {
		return r, true, nil
	}
	if s == nil {
		m, err := requireMap(v, insertPurpose)
		if err != nil {
			return r, false, err
		}
		// InsertField.applySchemaless (InsertField.java:151-173).
		out := m.Clone()
		if t.topic != nil {
			out.Put(t.topic.name, r.Topic)
		}
		if t.partition != nil && r.Partition != nil {
			out.Put(t.partition.name, *r.Partition)
		}
		if t.timestamp != nil && r.Timestamp != nil {
			out.Put(t.timestamp.name, *r.Timestamp)
		}
		if t.static != nil {
			out.Put(t.static.name, t.staticValue)
		}
		return t.part.set(r, nil, out), true, nil
	}
	st, err := requireStruct(v, insertPurpose)
	if err != nil {
		return r, false, err
	}
	// InsertField.applyWithSchema (InsertField.java:175-207).
	us, err := t.cache.get(st.Schema, t.updatedSchema)
	if err != nil {
		return r, false, err
	}
	out := NewStruct(us)
	for i := range st.Schema.Fields {
		fv, err := fieldValue(st, i, t.replaceNull)
		if err != nil {
			return r, false, err
		}
		out.Values[i] = fv
	}
	put := func(in *insertion, val any) error {
		if in == nil {
			return nil
		}
		if val == nil && !in.optional {
			// Struct.validate at conversion would refuse it
			// (ConnectSchema.validateValue); say so here, naming the field.
			return fmt.Errorf("the required field %q has no value: the record has none to insert (make it optional: %q)", in.name, in.name+"?")
		}
		if val == nil {
			return nil
		}
		return out.Put(in.name, val)
	}
	if err := put(t.topic, r.Topic); err != nil {
		return r, false, err
	}
	var part, ts any
	if r.Partition != nil {
		part = *r.Partition
	}
	if r.Timestamp != nil {
		ts = fromMillis(*r.Timestamp) // new Date(record.timestamp()), InsertField.java:199-201
	}
	if err := put(t.partition, part); err != nil {
		return r, false, err
	}
	if err := put(t.timestamp, ts); err != nil {
		return r, false, err
	}
	if t.static != nil {
		if err := put(t.static, t.staticValue); err != nil {
			return r, false, err
		}
	}
	return t.part.set(r, us, out), true, nil
}

// updatedSchema is InsertField.makeUpdatedSchema (InsertField.java:209-233).
func (t *InsertField) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	out := copyBasics(s, schema.TypeStruct)
	out.Fields = make([]schema.Field, 0, len(s.Fields)+4)
	out.Fields = append(out.Fields, s.Fields...)
	pick := func(in *insertion, opt, req *schema.Schema) error {
		if in == nil {
			return nil
		}
		fs := req
		if in.optional {
			fs = opt
		}
		return addField(out, in.name, fs)
	}
	for _, f := range []struct {
		in       *insertion
		opt, req *schema.Schema
	}{
		{t.topic, optionalStringSchema, stringSchema},
		{t.partition, optionalInt32Schema, int32Schema},
		{t.timestamp, optionalTimestampSchema, timestampSchema},
		{t.static, optionalStringSchema, stringSchema},
	} {
		if err := pick(f.in, f.opt, f.req); err != nil {
			return nil, err
		}
	}
	return out, nil
}
