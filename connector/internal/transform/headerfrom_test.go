package transform

import (
	"fmt"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

const headerFromTest = "HeaderFromTest.java"

// hfBuilder is HeaderFromTest's RecordBuilder (HeaderFromTest.java:49-137).
type hfBuilder struct {
	fields  []string
	schemas []*schema.Schema
	values  []any
	headers []Header
}

func (b hfBuilder) field(name string, s *schema.Schema, v any) hfBuilder {
	b.fields = append(append([]string(nil), b.fields...), name)
	b.schemas = append(append([]*schema.Schema(nil), b.schemas...), s)
	b.values = append(append([]any(nil), b.values...), v)
	return b
}

func (b hfBuilder) header(name string, s *schema.Schema, v any) hfBuilder {
	b.headers = append(append([]Header(nil), b.headers...), Header{Key: name, Schema: s, Value: v})
	return b
}

// record is RecordBuilder.schemaless / withSchema (:70-126): the other
// part is the string "key" or "value", topic "topic", partition 0,
// timestamp 0; schemaless headers lose their schemas.
func (b hfBuilder) record(t *testing.T, key, withSchema bool) Record {
	var s *schema.Schema
	var v any
	hs := b.headers
	if withSchema {
		s = &schema.Schema{Type: schema.TypeStruct}
		for i, f := range b.fields {
			s.Fields = append(s.Fields, schema.Field{Name: f, Schema: b.schemas[i]})
		}
		st := NewStruct(s)
		for i, f := range b.fields {
			if err := st.Put(f, b.values[i]); err != nil {
				t.Fatal(err)
			}
		}
		v = st
	} else {
		m := &Map{}
		for i, f := range b.fields {
			m.Put(f, b.values[i])
		}
		v = m
		hs = nil
		for _, h := range b.headers {
			hs = append(hs, Header{Key: h.Key, Value: h.Value})
		}
	}
	r := Record{Topic: "topic", Partition: i32p(0), Timestamp: i64p(0), Headers: hs}
	if key {
		r.KeySchema, r.Key, r.Value = s, v, "value"
	} else {
		r.Key, r.ValueSchema, r.Value = "key", s, v
	}
	return r
}

func TestHeaderFromAsKafka(t *testing.T) {
	str := sString
	nested := structOf("foo", str)
	defStr := withDefault(opt(sString), `"default"`)
	base := hfBuilder{}.field("field1", str, "field1-value").field("field2", str, "field2-value")
	cases := []struct {
		line        int
		name        string
		in          hfBuilder
		fields, hds string
		op          string
		replace     bool
		want        hfBuilder
	}{
		{146, "basic copy", base.header("header1", str, "existing-value"), "field1", "inserted1", "copy", true,
			base.header("header1", str, "existing-value").header("inserted1", str, "field1-value")},
		{161, "basic move", base.header("header1", str, "existing-value"), "field1", "inserted1", "move", true,
			hfBuilder{}.field("field2", str, "field2-value").header("header1", str, "existing-value").header("inserted1", str, "field1-value")},
		{176, "copy with preexisting header", base.header("inserted1", str, "existing-value"), "field1", "inserted1", "copy", true,
			base.header("inserted1", str, "existing-value").header("inserted1", str, "field1-value")},
		{191, "move with preexisting header", base.header("inserted1", str, "existing-value"), "field1", "inserted1", "move", true,
			hfBuilder{}.field("field2", str, "field2-value").header("inserted1", str, "existing-value").header("inserted1", str, "field1-value")},
		{208, "copy with struct value", hfBuilder{}.field("field1", nested, &Struct{Schema: nested, Values: []any{"foo-value"}}).field("field2", str, "field2-value").header("header1", str, "existing-value"), "field1", "inserted1", "copy", true,
			hfBuilder{}.field("field1", nested, &Struct{Schema: nested, Values: []any{"foo-value"}}).field("field2", str, "field2-value").header("header1", str, "existing-value").header("inserted1", nested, &Struct{Schema: nested, Values: []any{"foo-value"}})},
		{223, "move with struct value", hfBuilder{}.field("field1", nested, &Struct{Schema: nested, Values: []any{"foo-value"}}).field("field2", str, "field2-value").header("header1", str, "existing-value"), "field1", "inserted1", "move", true,
			hfBuilder{}.field("field2", str, "field2-value").header("header1", str, "existing-value").header("inserted1", nested, &Struct{Schema: nested, Values: []any{"foo-value"}})},
		{238, "two headers from same field", base.header("header1", str, "existing-value"), "field1,field1", "inserted1,inserted2", "move", true,
			hfBuilder{}.field("field2", str, "field2-value").header("header1", str, "existing-value").header("inserted1", str, "field1-value").header("inserted2", str, "field1-value")},
		{255, "two fields to same header", base.header("header1", str, "existing-value"), "field1,field2", "inserted1,inserted1", "move", true,
			hfBuilder{}.header("header1", str, "existing-value").header("inserted1", str, "field1-value").header("inserted1", str, "field2-value")},
		{271, "Copy null field without default", hfBuilder{}.field("field1", defStr, "field1-value").field("field2", defStr, nil).header("header1", str, "existing-value"), "field1,field2", "inserted1,inserted2", "copy", false,
			hfBuilder{}.field("field1", defStr, "field1-value").field("field2", defStr, nil).header("header1", str, "existing-value").header("inserted1", defStr, "field1-value").header("inserted2", defStr, nil)},
		{287, "Move null field without default", hfBuilder{}.field("field1", defStr, "field1-value").field("field2", defStr, nil).header("header1", str, "existing-value"), "field1,field2", "inserted1,inserted2", "move", false,
			hfBuilder{}.header("header1", str, "existing-value").header("inserted1", defStr, "field1-value").header("inserted2", defStr, nil)},
	}
	for _, c := range cases {
		for _, key := range []bool{true, false} {
			for _, withSchema := range []bool{false, true} {
				name := fmt.Sprintf("%s:%d %s key=%v schema=%v (schemaless :314, withSchema :333)", headerFromTest, c.line, c.name, key, withSchema)
				t.Run(name, func(t *testing.T) {
					typ := "HeaderFrom$Value"
					if key {
						typ = "HeaderFrom$Key"
					}
					tr := one(t, typ, "fields", c.fields, "headers", c.hds, "operation", c.op, "replace.null.with.default", fmt.Sprint(c.replace))
					got := apply(t, tr, c.in.record(t, key, withSchema))
					eq(t, "record", got, c.want.record(t, key, withSchema))
				})
			}
		}
	}
}

func TestHeaderFromConfigAsKafka(t *testing.T) {
	for _, c := range []struct {
		name, fields, headers string
	}{
		{headerFromTest + ":355 invalidConfigExtraHeaderConfig", "foo,bar", "foo"},
		{headerFromTest + ":363 invalidConfigExtraFieldConfig", "foo", "foo,bar"},
		{headerFromTest + ":371 invalidConfigEmptyHeadersAndFieldsConfig", "", ""},
	} {
		for _, typ := range []string{"HeaderFrom$Key", "HeaderFrom$Value"} {
			_, err := oneErr(typ, "fields", c.fields, "headers", c.headers, "operation", "copy")
			mustContain(t, err, "transforms.t.")
		}
	}
	_, err := oneErr("HeaderFrom$Value", "fields", "a", "headers", "b", "operation", "cut")
	mustContain(t, err, "transforms.t.operation", `"cut" is not one of move, copy`)
}
