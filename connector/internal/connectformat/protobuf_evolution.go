package connectformat

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// This file checks a schema change before its Protobuf schema replaces
// the registered one. ProtobufData numbers fields by their position in
// the struct (PD:769-775), so a column added at the end is a new number
// (a consumer of the old schema skips it), but a column dropped or
// re-created moves every later field to another number: a consumer
// holding the old schema would read one column's bytes as another's.
// The registry's BACKWARD check refuses that when the types at a number
// differ, and accepts it when they agree (two text columns): silently
// wrong. CheckProtobufEvolution refuses both.

// CheckProtobufEvolution reports whether records written with next can be
// read with prev as the same fields: every field number the two messages
// (and their nested messages, by name) share keeps its name, type and
// cardinality. A field only in one of them is fine.
func CheckProtobufEvolution(prev, next *Protobuf) error {
	if prev.Message.FullName() != next.Message.FullName() {
		return fmt.Errorf("protobuf evolution: the message %s became %s (a new schema name is a new subject's first schema)", prev.Message.FullName(), next.Message.FullName())
	}
	return checkMessages(prev.Message, next.Message)
}

func checkMessages(prev, next protoreflect.MessageDescriptor) error {
	pf, nf := prev.Fields(), next.Fields()
	for i := 0; i < pf.Len(); i++ {
		a := pf.Get(i)
		b := nf.ByNumber(a.Number())
		if b == nil {
			continue
		}
		if a.Name() != b.Name() || a.Kind() != b.Kind() || a.Cardinality() != b.Cardinality() {
			return fmt.Errorf("protobuf evolution: in %s, field number %d was %s %s and would be %s %s: "+
				"Protobuf numbers the fields by column position (as Confluent's converter does), so a dropped or re-created column "+
				"would make consumers read one column as another; resnapshot the table into a new topic (or a new subject) instead",
				prev.FullName(), a.Number(), a.Kind(), a.Name(), b.Kind(), b.Name())
		}
		if a.Kind() == protoreflect.MessageKind {
			if a.Message().FullName() != b.Message().FullName() {
				return fmt.Errorf("protobuf evolution: in %s, field %s changed from %s to %s", prev.FullName(), a.Name(), a.Message().FullName(), b.Message().FullName())
			}
			if a.Message().ParentFile() == prev.ParentFile() { // ours, not an imported type
				if err := checkMessages(a.Message(), b.Message()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
