package connectformat

import (
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// TestProtobufNamingCorners follows ProtobufData's naming rules where the
// Debezium envelope does not reach: an unnamed nested struct takes the
// next ConnectDefaultN (PD:1822-1826, numbered in the order met, the root
// first); a named map's entry is its unqualified name in UpperCamel with
// Entry (ProtobufSchema.toMapEntry, ProtobufSchema.java:2878-2883); an
// array of structs is a repeated nested message; a struct inside a map
// value is nested in the entry message (PD:968-993 builds the entry's
// fields with the entry as parent). The blank line inside a nested
// message keeps its two-space indent: appendIndented indents every line
// (PSU:1124-1134; String.split keeps interior empty lines).
func TestProtobufNamingCorners(t *testing.T) {
	point := structOf("geo.Point", "x", sFloat64, "y", sFloat64)
	s := structOf("",
		"anon", structOf("", "a", sInt32),
		"labels", &schema.Schema{Type: schema.TypeMap, Name: "my.label_map", Keys: sString, Values: sString},
		"points", &schema.Schema{Type: schema.TypeArray, Items: point},
		"byName", &schema.Schema{Type: schema.TypeMap, Keys: sString, Values: point})
	p, err := NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `syntax = "proto3";

message ConnectDefault1 {
  ConnectDefault2 anon = 1;
  repeated LabelMapEntry labels = 2;
  repeated Point points = 3;
  repeated ConnectDefault3Entry byName = 4;

  message ConnectDefault2 {
    int32 a = 1;
  }
  message LabelMapEntry {
    string key = 1;
    string value = 2;
  }
  message Point {
    double x = 1;
    double y = 2;
  }
  message ConnectDefault3Entry {
    string key = 1;
    Point value = 2;
` + "  " + `
    message Point {
      double x = 1;
      double y = 2;
    }
  }
}
`
	if p.Text != want {
		t.Fatalf("text:\n%s\nwant:\n%s", p.Text, want)
	}
	compileProto(t, p.Text)
	v := newStruct(t, s, "anon", newStruct(t, s.Fields[0].Schema, "a", int32(5)),
		"labels", transform.NewMap("k", "v"),
		"points", []any{newStruct(t, point, "x", 1.5, "y", -2.0)},
		"byName", transform.NewMap("home", newStruct(t, point, "x", 0.25, "y", 4.0)))
	m := roundTrip(t, p, v)
	pts := m.Get(p.Message.Fields().ByName("points")).List()
	if pts.Len() != 1 || pts.Get(0).Message().Get(pts.Get(0).Message().Descriptor().Fields().ByName("y")).Float() != -2 {
		t.Errorf("points %v", pts)
	}
	e := m.Get(p.Message.Fields().ByName("byName")).List().Get(0).Message()
	pv := e.Get(e.Descriptor().Fields().ByName("value")).Message()
	if pv.Get(pv.Descriptor().Fields().ByName("x")).Float() != 0.25 {
		t.Errorf("map value %v", pv)
	}
}

// TestProtobufInvalidUTF8IsAnError: a proto3 string must be UTF-8; text
// that is not (a SQL_ASCII database) is an error naming it, never bytes
// a consumer's parser would reject.
func TestProtobufInvalidUTF8IsAnError(t *testing.T) {
	s := structOf("U", "s", sString)
	p, err := NewProtobuf(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Marshal(newStruct(t, s, "s", "a\xffb")); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("err %v", err)
	}
}
