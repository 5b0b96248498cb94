package transform

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

// The Kafka tests the SMT tests mirror are at apache/kafka
// 1eb7644349cb07139d6a3c1ad1986979647cac99 (trunk, 2024-10-25) under
// connect/transforms/src/test/java/org/apache/kafka/connect/transforms/;
// each case cites its file and line. Expected values are theirs.

// one configures a single transform of type typ (a Kafka class name
// suffix, e.g. "InsertField$Value") with the given key, value pairs.
func one(t *testing.T, typ string, kv ...string) Transform {
	t.Helper()
	tr, err := oneErr(typ, kv...)
	if err != nil {
		t.Fatalf("configure %s: %v", typ, err)
	}
	return tr
}

func oneErr(typ string, kv ...string) (Transform, error) {
	if !strings.Contains(typ, ".") {
		typ = kt + typ
	}
	props := map[string]string{"transforms": "t", "transforms.t.type": typ}
	for i := 0; i+1 < len(kv); i += 2 {
		props["transforms.t."+kv[i]] = kv[i+1]
	}
	c, err := Parse(props)
	if err != nil {
		return nil, err
	}
	return c.Stages[0].Transform, nil
}

func apply(t *testing.T, tr Transform, r Record) Record {
	t.Helper()
	out, keep, err := tr.Apply(r)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !keep {
		t.Fatalf("apply dropped the record")
	}
	return out
}

func applyErr(t *testing.T, tr Transform, r Record) error {
	t.Helper()
	_, _, err := tr.Apply(r)
	if err == nil {
		t.Fatalf("apply: no error, want one")
	}
	return err
}

func i32p(v int32) *int32 { return &v }
func i64p(v int64) *int64 { return &v }

// Schema builders as Connect's SchemaBuilder presets.
var (
	sInt8     = &schema.Schema{Type: schema.TypeInt8}
	sInt16    = &schema.Schema{Type: schema.TypeInt16}
	sInt32    = &schema.Schema{Type: schema.TypeInt32}
	sInt64    = &schema.Schema{Type: schema.TypeInt64}
	sFloat32  = &schema.Schema{Type: schema.TypeFloat32}
	sFloat64  = &schema.Schema{Type: schema.TypeFloat64}
	sBool     = &schema.Schema{Type: schema.TypeBoolean}
	sString   = &schema.Schema{Type: schema.TypeString}
	sBytes    = &schema.Schema{Type: schema.TypeBytes}
	sOptInt64 = &schema.Schema{Type: schema.TypeInt64, Optional: true}
	sOptStr   = &schema.Schema{Type: schema.TypeString, Optional: true}
	sOptInt32 = &schema.Schema{Type: schema.TypeInt32, Optional: true}
)

func opt(s *schema.Schema) *schema.Schema {
	c := *s
	c.Optional = true
	return &c
}

func withDefault(s *schema.Schema, json string) *schema.Schema {
	c := *s
	c.Default, c.HasDefault = []byte(json), true
	return &c
}

// structOf builds a struct schema of name, field pairs.
func structOf(kv ...any) *schema.Schema {
	s := &schema.Schema{Type: schema.TypeStruct}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Fields = append(s.Fields, schema.Field{Name: kv[i].(string), Schema: kv[i+1].(*schema.Schema)})
	}
	return s
}

// structVal builds a struct of s with name, value pairs, checked by Put.
func newStruct(t *testing.T, s *schema.Schema, kv ...any) *Struct {
	t.Helper()
	st := NewStruct(s)
	for i := 0; i+1 < len(kv); i += 2 {
		if err := st.Put(kv[i].(string), kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func get(t *testing.T, v any, name string) any {
	t.Helper()
	switch x := v.(type) {
	case *Struct:
		fv, ok := x.Get(name)
		if !ok {
			t.Fatalf("no field %q in %v", name, x.Schema.Fields)
		}
		return fv
	case *Map:
		fv, _ := x.Get(name)
		return fv
	}
	t.Fatalf("get %q of %T", name, v)
	return nil
}

func fieldSchema(t *testing.T, s *schema.Schema, name string) *schema.Schema {
	t.Helper()
	i := index(s, name)
	if i < 0 {
		t.Fatalf("no field %q in %v", name, s.Fields)
	}
	return s.Fields[i].Schema
}

// norm turns maps into Go maps, so that values compare as Java's
// equals does: a map's entries in any order, an empty map equal to
// another empty map.
func norm(v any) any {
	switch x := v.(type) {
	case *Map:
		m := map[any]any{}
		for _, e := range x.Entries {
			m[e.Key] = norm(e.Value)
		}
		return m
	case *Struct:
		vals := make([]any, len(x.Values))
		for i, e := range x.Values {
			vals[i] = norm(e)
		}
		return &Struct{Schema: x.Schema, Values: vals}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = norm(e)
		}
		return out
	case Record:
		x.Key, x.Value = norm(x.Key), norm(x.Value)
		hs := make([]Header, len(x.Headers))
		for i, h := range x.Headers {
			h.Value = norm(h.Value)
			hs[i] = h
		}
		x.Headers = hs
		return x
	}
	return v
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}
