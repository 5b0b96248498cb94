package transform

import (
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

const insertFieldTest = "InsertFieldTest.java"

func insertProps(extra ...string) []string {
	return append([]string{"topic.field", "topic_field!", "partition.field", "partition_field",
		"timestamp.field", "timestamp_field?", "static.field", "instance_id", "static.value", "my-instance-id"}, extra...)
}

func TestInsertFieldAsKafka(t *testing.T) {
	t.Run(insertFieldTest+":61 topLevelStructRequired", func(t *testing.T) {
		tr := one(t, "InsertField$Value", "topic.field", "topic_field")
		err := applyErr(t, tr, Record{Topic: "", Partition: i32p(0), ValueSchema: sInt32, Value: int32(42)})
		mustContain(t, err, "only Struct objects supported for [field insertion]")
	})
	t.Run(insertFieldTest+":68 copySchemaAndInsertConfiguredFields", func(t *testing.T) {
		tr := one(t, "InsertField$Value", insertProps()...)
		s := &schema.Schema{Type: schema.TypeStruct, Name: "name", Version: 1, Doc: "doc", Fields: []schema.Field{{Name: "magic", Schema: sOptInt64}}}
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0), ValueSchema: s, Value: newStruct(t, s, "magic", int64(42)), Timestamp: i64p(789)})
		vs := out.ValueSchema
		eq(t, "name, version, doc", []any{vs.Name, vs.Version, vs.Doc}, []any{"name", 1, "doc"})
		eq(t, "magic schema", fieldSchema(t, vs, "magic"), sOptInt64)
		eq(t, "magic", get(t, out.Value, "magic"), int64(42))
		eq(t, "topic_field schema", fieldSchema(t, vs, "topic_field"), stringSchema)
		eq(t, "topic_field", get(t, out.Value, "topic_field"), "test")
		eq(t, "partition_field schema", fieldSchema(t, vs, "partition_field"), optionalInt32Schema)
		eq(t, "partition_field", get(t, out.Value, "partition_field"), int32(0))
		eq(t, "timestamp_field schema", fieldSchema(t, vs, "timestamp_field"), &schema.Schema{Type: schema.TypeInt64, Name: TimestampName, Version: 1, Optional: true})
		eq(t, "timestamp_field", millis(get(t, out.Value, "timestamp_field").(time.Time)), int64(789))
		eq(t, "instance_id schema", fieldSchema(t, vs, "instance_id"), optionalStringSchema)
		eq(t, "instance_id", get(t, out.Value, "instance_id"), "my-instance-id")
		// :103-106, caching: the same input schema gives the same output schema.
		out2 := apply(t, tr, Record{Topic: "test", Partition: i32p(1), ValueSchema: s, Value: NewStruct(s)})
		if out2.ValueSchema != out.ValueSchema {
			t.Errorf("the second record's schema is a new one; Kafka asserts the same (assertSame)")
		}
	})
	t.Run(insertFieldTest+":110 schemalessInsertConfiguredFields", func(t *testing.T) {
		tr := one(t, "InsertField$Value", insertProps()...)
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0), Value: NewMap("magic", int64(42)), Timestamp: i64p(123)})
		eq(t, "magic", get(t, out.Value, "magic"), int64(42))
		eq(t, "topic_field", get(t, out.Value, "topic_field"), "test")
		eq(t, "partition_field", get(t, out.Value, "partition_field"), int32(0))
		eq(t, "timestamp_field", get(t, out.Value, "timestamp_field"), int64(123))
		eq(t, "instance_id", get(t, out.Value, "instance_id"), "my-instance-id")
	})
	t.Run(insertFieldTest+":133 tombstone without schema unchanged", func(t *testing.T) {
		tr := one(t, "InsertField$Value", insertProps()...)
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0)})
		eq(t, "value", out.Value, nil)
		if out.ValueSchema != nil {
			t.Errorf("value schema = %v, want nil", out.ValueSchema)
		}
	})
	t.Run(insertFieldTest+":153 tombstone with schema unchanged", func(t *testing.T) {
		tr := one(t, "InsertField$Value", insertProps()...)
		s := &schema.Schema{Type: schema.TypeStruct, Name: "name", Version: 1, Doc: "doc", Fields: []schema.Field{{Name: "magic", Schema: sOptInt64}}}
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0), ValueSchema: s})
		eq(t, "value", out.Value, nil)
		if out.ValueSchema != s {
			t.Errorf("value schema changed")
		}
	})
	t.Run(insertFieldTest+":175 insertKeyFieldsIntoTombstoneEvent", func(t *testing.T) {
		tr := one(t, "InsertField$Key", insertProps()...)
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0), Key: NewMap("magic", int64(42))})
		eq(t, "magic", get(t, out.Key, "magic"), int64(42))
		eq(t, "topic_field", get(t, out.Key, "topic_field"), "test")
		eq(t, "partition_field", get(t, out.Key, "partition_field"), int32(0))
		eq(t, "timestamp_field", get(t, out.Key, "timestamp_field"), nil)
		eq(t, "instance_id", get(t, out.Key, "instance_id"), "my-instance-id")
		eq(t, "value", out.Value, nil)
	})
	t.Run(insertFieldTest+":199 insertIntoNullKeyLeavesRecordUnchanged", func(t *testing.T) {
		tr := one(t, "InsertField$Key", insertProps()...)
		in := Record{Topic: "test", Partition: i32p(0), Value: NewMap("magic", int64(42))}
		out := apply(t, tr, in)
		eq(t, "record", out, in)
	})
	for _, c := range []struct {
		replace string
		want    any
	}{{"true", int64(42)}, {"false", nil}} { // :225-253 and its data(): true → 42L, false → null
		t.Run(insertFieldTest+":227 testUnsetOptionalField replace.null.with.default="+c.replace, func(t *testing.T) {
			tr := one(t, "InsertField$Value", insertProps("replace.null.with.default", c.replace)...)
			magic := withDefault(sOptInt64, "42")
			s := &schema.Schema{Type: schema.TypeStruct, Name: "name", Version: 1, Doc: "doc", Fields: []schema.Field{{Name: "magic_with_default", Schema: magic}}}
			out := apply(t, tr, Record{Topic: "test", Partition: i32p(0), ValueSchema: s, Value: newStruct(t, s, "magic_with_default", nil), Timestamp: i64p(789)})
			eq(t, "field schema", fieldSchema(t, out.ValueSchema, "magic_with_default"), magic)
			eq(t, "magic_with_default", get(t, out.Value, "magic_with_default"), c.want)
		})
	}
}

// TestInsertFieldRefusesWhatKafkaRefuses covers the configuration checks
// of InsertField.configure (InsertField.java:129-135) and the offset
// field a source record cannot have (Requirements.requireSinkRecord).
func TestInsertFieldRefusesWhatKafkaRefuses(t *testing.T) {
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{nil, "no field insertion configured"},
		{[]string{"static.field", "x"}, "transforms.t.static.value: no value specified for static field: x"},
		{[]string{"offset.field", "off"}, "transforms.t.offset.field: only sink connectors"},
		// An empty name is a field "" to Kafka, which SchemaBuilder.field
		// refuses at every record (SchemaBuilder.java:321-333).
		{[]string{"topic.field", "t", "static.field", " ", "static.value", "v"}, "transforms.t.static.field: an empty field name"},
		{[]string{"timestamp.field", "!"}, "transforms.t.timestamp.field: an empty field name"},
	} {
		_, err := oneErr("InsertField$Value", c.kv...)
		mustContain(t, err, c.want)
	}
	// A duplicate name fails as SchemaBuilder.field does.
	tr := one(t, "InsertField$Value", "topic.field", "magic")
	s := structOf("magic", sOptInt64)
	mustContain(t, applyErr(t, tr, Record{Topic: "x", ValueSchema: s, Value: NewStruct(s)}), "field name duplication")
	// A required inserted field without a value is an error naming it,
	// not a struct that fails later in the converter.
	tr = one(t, "InsertField$Value", "timestamp.field", "ts!")
	mustContain(t, applyErr(t, tr, Record{Topic: "x", ValueSchema: s, Value: NewStruct(s)}), `required field "ts"`)
}
