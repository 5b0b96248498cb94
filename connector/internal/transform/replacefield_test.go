package transform

import (
	"slices"
	"testing"
)

const replaceFieldTest = "ReplaceFieldTest.java"

func TestReplaceFieldAsKafka(t *testing.T) {
	t.Run(replaceFieldTest+":55 tombstoneSchemaless", func(t *testing.T) {
		tr := one(t, "ReplaceField$Value", "include", "abc,foo", "renames", "abc:xyz,foo:bar")
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0)})
		eq(t, "value", out.Value, nil)
		if out.ValueSchema != nil {
			t.Error("value schema set")
		}
	})
	t.Run(replaceFieldTest+":70 tombstoneWithSchema", func(t *testing.T) {
		tr := one(t, "ReplaceField$Value", "include", "abc,foo", "renames", "abc:xyz,foo:bar")
		s := structOf("dont", sString, "abc", sInt32, "foo", sBool, "etc", sString)
		out := apply(t, tr, Record{Topic: "test", Partition: i32p(0), ValueSchema: s})
		eq(t, "value", out.Value, nil)
		eq(t, "schema", out.ValueSchema, s)
	})
	t.Run(replaceFieldTest+":93 schemaless", func(t *testing.T) {
		tr := one(t, "ReplaceField$Value", "exclude", "dont", "renames", "abc:xyz,foo:bar")
		out := apply(t, tr, Record{Topic: "test", Value: NewMap("dont", "whatever", "abc", int32(42), "foo", true, "etc", "etc")})
		m := out.Value.(*Map)
		eq(t, "size", len(m.Entries), 3)
		eq(t, "xyz", get(t, m, "xyz"), int32(42))
		eq(t, "bar", get(t, m, "bar"), true)
		eq(t, "etc", get(t, m, "etc"), "etc")
	})
	t.Run(replaceFieldTest+":117 withSchema", func(t *testing.T) {
		tr := one(t, "ReplaceField$Value", "include", "abc,foo", "renames", "abc:xyz,foo:bar")
		s := structOf("dont", sString, "abc", sInt32, "foo", sBool, "etc", sString)
		out := apply(t, tr, Record{Topic: "test", ValueSchema: s, Value: newStruct(t, s, "dont", "whatever", "abc", int32(42), "foo", true, "etc", "etc")})
		st := out.Value.(*Struct)
		eq(t, "fields", len(st.Schema.Fields), 2)
		eq(t, "xyz", get(t, st, "xyz"), int32(42))
		eq(t, "bar", get(t, st, "bar"), true)
	})
	for _, c := range []struct {
		replace string
		want    any
	}{{"false", nil}, {"true", int32(42)}} { // data(), ReplaceFieldTest.java:42-46
		t.Run(replaceFieldTest+":154 testReplaceNullWithDefaultConfigOnValue "+c.replace, func(t *testing.T) {
			tr := one(t, "ReplaceField$Value", "include", "abc", "renames", "abc:optional_with_default", "replace.null.with.default", c.replace)
			s := structOf("abc", withDefault(sOptInt32, "42"))
			out := apply(t, tr, Record{Topic: "test", ValueSchema: s, Value: newStruct(t, s, "abc", nil)})
			st := out.Value.(*Struct)
			eq(t, "fields", len(st.Schema.Fields), 1)
			eq(t, "optional_with_default", get(t, st, "optional_with_default"), c.want)
		})
		t.Run(replaceFieldTest+":179 testReplaceNullWithDefaultConfigOnKey "+c.replace, func(t *testing.T) {
			tr := one(t, "ReplaceField$Key", "include", "abc", "renames", "abc:optional_with_default", "replace.null.with.default", c.replace)
			s := structOf("abc", withDefault(sOptInt32, "42"))
			out := apply(t, tr, Record{Topic: "test", KeySchema: s, Key: newStruct(t, s, "abc", nil)})
			st := out.Key.(*Struct)
			eq(t, "fields", len(st.Schema.Fields), 1)
			eq(t, "optional_with_default", get(t, st, "optional_with_default"), c.want)
		})
	}
}

// TestReplaceFieldSchemaBasics: the struct keeps its name, version, doc
// and parameters but not its optionality (SchemaUtil.copySchemaBasics,
// util/SchemaUtil.java:36-45; ReplaceField.java:183-191), and a bad
// rename mapping is refused naming the key (ReplaceField.java:103-113).
func TestReplaceFieldSchemaBasics(t *testing.T) {
	tr := one(t, "ReplaceField$Value", "exclude", "b")
	s := structOf("a", sInt32, "b", sInt32)
	s.Name, s.Version, s.Doc, s.Optional = "n", 3, "d", true
	out := apply(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "a", int32(1), "b", int32(2))})
	vs := out.ValueSchema
	eq(t, "basics", []any{vs.Name, vs.Version, vs.Doc, vs.Optional, len(vs.Fields)}, []any{"n", 3, "d", false, 1})
	_, err := oneErr("ReplaceField$Value", "renames", "a:b:c")
	mustContain(t, err, "transforms.t.renames: invalid rename mapping: a:b:c")
	// Two fields renamed to one name fail as SchemaBuilder.field does.
	tr = one(t, "ReplaceField$Value", "renames", "a:b")
	mustContain(t, applyErr(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "a", int32(1), "b", int32(2))}), "duplication")
}

// TestReplaceFieldSchemalessKeysAreStrings: a schemaless map's keys are
// field names; Java casts each to String (ReplaceField.java:153-154,
// ClassCastException), so a map with other keys fails instead of having
// them renamed to "" (where two would silently become one).
func TestReplaceFieldSchemalessKeysAreStrings(t *testing.T) {
	tr := one(t, "ReplaceField$Value", "exclude", "x")
	err := applyErr(t, tr, Record{Value: NewMap(int32(1), "a", int32(2), "b")})
	mustContain(t, err, "java.lang.Integer key")
}

const valueToKeyTest = "ValueToKeyTest.java"

func TestValueToKeyAsKafka(t *testing.T) {
	t.Run(valueToKeyTest+":57 schemaless", func(t *testing.T) {
		tr := one(t, "ValueToKey", "fields", "a,b")
		out := apply(t, tr, Record{Value: NewMap("a", int32(1), "b", int32(2), "c", int32(3))})
		if out.KeySchema != nil {
			t.Error("key schema set")
		}
		eq(t, "key", out.Key, NewMap("a", int32(1), "b", int32(2)))
	})
	t.Run(valueToKeyTest+":77 withSchema", func(t *testing.T) {
		tr := one(t, "ValueToKey", "fields", "a,b")
		s := structOf("a", sInt32, "b", sInt32, "c", sInt32)
		out := apply(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "a", int32(1), "b", int32(2), "c", int32(3))})
		ks := structOf("a", sInt32, "b", sInt32)
		eq(t, "key schema", out.KeySchema, ks)
		eq(t, "key", out.Key, newStruct(t, ks, "a", int32(1), "b", int32(2)))
	})
	t.Run(valueToKeyTest+":108 nonExistingField", func(t *testing.T) {
		tr := one(t, "ValueToKey", "fields", "not_exist")
		s := structOf("a", sInt32)
		err := applyErr(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "a", int32(1))})
		mustContain(t, err, "field does not exist: not_exist")
	})
	for _, c := range []struct {
		replace string
		want    any
	}{{"false", nil}, {"true", int32(42)}} { // data(), ValueToKeyTest.java:44-48
		t.Run(valueToKeyTest+":131 testReplaceNullWithDefaultConfig "+c.replace, func(t *testing.T) {
			tr := one(t, "ValueToKey", "fields", "optional_with_default", "replace.null.with.default", c.replace)
			s := structOf("optional_with_default", withDefault(sOptInt32, "42"))
			out := apply(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "optional_with_default", nil)})
			eq(t, "key field", get(t, out.Key, "optional_with_default"), c.want)
		})
	}
	// A tombstone has no value to take fields from: Kafka fails
	// (ValueToKey.java:83-84, Requirements.requireMap(null)).
	tr := one(t, "ValueToKey", "fields", "a")
	mustContain(t, applyErr(t, tr, Record{Key: NewMap("a", 1)}), "found: null")
}

// TestJavaSplit pins String.split's trailing-empty rule the mapping
// parsers rely on (ReplaceField.java:106, Cast.java:413).
func TestJavaSplit(t *testing.T) {
	for in, want := range map[string][]string{"a:b": {"a", "b"}, "a:": {"a"}, ":b": {"", "b"}, "ab": {"ab"}, "": {""}, ":": {}, "a:b:c": {"a", "b", "c"}} {
		got := javaSplit(in, ":")
		if len(got) != len(want) || (len(got) > 0 && !slices.Equal(got, want)) {
			t.Errorf("split %q = %q, want %q", in, got, want)
		}
	}
}

// TestNonEmptyListsAsKafka: ValueToKey's and HeaderFrom's lists use
// NonEmptyListValidator (util/NonEmptyListValidatorTest.java:30, 35, 41:
// null and empty refused, one element accepted).
func TestNonEmptyListsAsKafka(t *testing.T) {
	for name, kv := range map[string][]string{
		"util/NonEmptyListValidatorTest.java:30 testNullList":  nil,
		"util/NonEmptyListValidatorTest.java:35 testEmptyList": {"fields", " "},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := oneErr("ValueToKey", kv...)
			mustContain(t, err, "transforms.t.fields: empty list")
			_, err = oneErr("HeaderFrom$Value", append([]string{"headers", "h", "operation", "copy"}, kv...)...)
			mustContain(t, err, "transforms.t.fields: empty list")
		})
	}
	t.Run("util/NonEmptyListValidatorTest.java:41 testValidList", func(t *testing.T) {
		one(t, "ValueToKey", "fields", "foo")
		one(t, "HeaderFrom$Key", "fields", "foo", "headers", "h", "operation", "copy")
	})
}
