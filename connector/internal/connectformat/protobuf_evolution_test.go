package connectformat

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/mooncdc/mooncdc/schema"
)

func envelopeOf(row *schema.Schema) *schema.Schema {
	return structOf("dbserver1.public.t.Envelope", "before", opt(row), "after", opt(row), "source", pgSource, "op", sString)
}

// TestProtobufEvolutionAddedColumnIsReadByOldConsumers: a column added at
// the end is the next field number; a consumer holding the old schema
// reads the new record's old columns unchanged.
func TestProtobufEvolutionAddedColumnIsReadByOldConsumers(t *testing.T) {
	v1 := structOf("dbserver1.public.t.Value", "id", sInt32, "name", sOptStr)
	v2 := structOf("dbserver1.public.t.Value", "id", sInt32, "name", sOptStr, "email", sOptStr)
	p1, err := NewProtobuf(envelopeOf(v1))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := NewProtobuf(envelopeOf(v2))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckProtobufEvolution(p1, p2); err != nil {
		t.Fatal(err)
	}
	if n := p2.Message.Fields().ByName("after").Message().Fields().ByName("email").Number(); n != 3 {
		t.Errorf("email is field %d, want 3", n)
	}
	e2 := envelopeOf(v2)
	row := newStruct(t, opt(v2), "id", int32(7), "name", "n", "email", "e@x")
	row.Schema = e2.Fields[1].Schema
	src := newStruct(t, pgSource, "version", "v", "connector", "postgresql", "name", "s", "ts_ms", int64(1), "db", "d", "schema", "public", "table", "t")
	b, err := p2.Marshal(newStruct(t, e2, "after", row, "source", src, "op", "c"))
	if err != nil {
		t.Fatal(err)
	}
	old := dynamicpb.NewMessage(p1.Message)
	if err := proto.Unmarshal(b, old); err != nil {
		t.Fatal(err)
	}
	after := old.Get(p1.Message.Fields().ByName("after")).Message()
	if after.Get(after.Descriptor().Fields().ByName("id")).Int() != 7 || after.Get(after.Descriptor().Fields().ByName("name")).String() != "n" {
		t.Errorf("old consumer read %v", after)
	}
}

// TestProtobufEvolutionRefusesRenumbering: a dropped column moves the
// later ones to other numbers. With two text columns the registry's own
// check would accept it (the types agree) and old consumers would read
// the email as the name; CheckProtobufEvolution refuses it, naming why.
func TestProtobufEvolutionRefusesRenumbering(t *testing.T) {
	v1 := structOf("dbserver1.public.t.Value", "id", sInt32, "name", sOptStr, "email", sOptStr)
	v2 := structOf("dbserver1.public.t.Value", "id", sInt32, "email", sOptStr)
	p1, _ := NewProtobuf(envelopeOf(v1))
	p2, _ := NewProtobuf(envelopeOf(v2))
	err := CheckProtobufEvolution(p1, p2)
	if err == nil || !strings.Contains(err.Error(), "field number 2 was string name and would be string email") {
		t.Fatalf("err %v", err)
	}
	// A type change at one number is refused too.
	v3 := structOf("dbserver1.public.t.Value", "id", sInt64, "name", sOptStr, "email", sOptStr)
	p3, _ := NewProtobuf(envelopeOf(v3))
	if err := CheckProtobufEvolution(p1, p3); err == nil || !strings.Contains(err.Error(), string(protoreflect.Int32Kind.String())) {
		t.Fatalf("int32 to int64: err %v", err)
	}
}
