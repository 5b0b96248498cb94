package avrodata

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// writer prints an Avro schema as org.apache.avro.Schema.toString does.
// Line numbers cite lang/java/avro/src/main/java/org/apache/avro/Schema.java
// of apache/avro at release-1.12.1 (the Avro of schema-registry's build,
// confluentinc/common pom.xml:49): a primitive is its name, or an object
// with its properties (Schema.java:460-469); array and map write items or
// values, then properties (:1198-1205, :1238-1245); a union is the array of
// its branches (:1316-1321); a record is type, name, namespace, doc,
// fields, properties (:1033-1051), a field name, type, doc, default,
// properties (:1055-1083). A named type is written in full once and by
// name afterwards (writeNameRef, :862-870); a namespace, and the namespace
// of a reference, are left out inside a record of the same namespace
// (Name.writeName and getQualified, :762-797). Properties keep their
// insertion order (JsonProperties.java:142-161).
type writer struct {
	buf   bytes.Buffer
	names map[string]*avroSchema
	space string // the enclosing namespace, "" for none
}

func (w *writer) raw(s string) { w.buf.WriteString(s) }

func (w *writer) str(s string) { w.buf.Write(jsonString(s)) }

func (w *writer) props(ps []prop) {
	for _, p := range ps {
		w.raw(",")
		w.str(p.key)
		w.raw(":")
		w.buf.Write(p.value)
	}
}

func (w *writer) schema(a *avroSchema) error {
	switch a.typ {
	case "union": // UnionSchema.toJson: the branches only
		w.raw("[")
		for i, b := range a.branches {
			if i > 0 {
				w.raw(",")
			}
			if err := w.schema(b); err != nil {
				return err
			}
		}
		w.raw("]")
		return nil
	case "array":
		w.raw(`{"type":"array","items":`)
		if err := w.schema(a.items); err != nil {
			return err
		}
		w.props(a.props)
		w.raw("}")
		return nil
	case "map":
		w.raw(`{"type":"map","values":`)
		if err := w.schema(a.values); err != nil {
			return err
		}
		w.props(a.props)
		w.raw("}")
		return nil
	case "record":
		return w.record(a)
	}
	if len(a.props) == 0 {
		w.str(a.typ)
		return nil
	}
	w.raw(`{"type":`)
	w.str(a.typ)
	w.props(a.props)
	w.raw("}")
	return nil
}

func (w *writer) record(a *avroSchema) error {
	full := a.name
	if a.ns != "" {
		full = a.ns + "." + a.name
	}
	// NamedSchema.writeNameRef and Name.getQualified.
	if prev, ok := w.names[full]; ok {
		if prev != a {
			// Avro writes a reference to the first one; AvroData built
			// two records of one name from two different Connect schemas.
			return fmt.Errorf("two different records named %s (Connect schema %s)", full, a.connectID)
		}
		if a.ns != "" && a.ns == w.space && !primitiveName(a.name) {
			w.str(a.name)
		} else {
			w.str(full)
		}
		return nil
	}
	w.names[full] = a
	saved := w.space
	w.raw(`{"type":"record","name":`)
	w.str(a.name)
	// Name.writeName: the namespace unless it is the enclosing one.
	switch {
	case a.ns != "" && a.ns != w.space:
		w.raw(`,"namespace":`)
		w.str(a.ns)
	case a.ns == "" && w.space != "":
		w.raw(`,"namespace":""`)
	}
	w.space = a.ns
	if a.doc != nil {
		w.raw(`,"doc":`)
		w.str(*a.doc)
	}
	w.raw(`,"fields":[`)
	for i, f := range a.fields {
		if i > 0 {
			w.raw(",")
		}
		w.raw(`{"name":`)
		w.str(f.name)
		w.raw(`,"type":`)
		if err := w.schema(f.typ); err != nil {
			return err
		}
		if f.doc != nil {
			w.raw(`,"doc":`)
			w.str(*f.doc)
		}
		if f.def != nil {
			w.raw(`,"default":`)
			w.buf.Write(compact(f.def))
		}
		w.props(f.props)
		w.raw("}")
	}
	w.raw("]")
	w.props(a.props)
	w.raw("}")
	w.space = saved
	return nil
}

func primitiveName(n string) bool {
	switch n {
	case "null", "boolean", "int", "long", "float", "double", "bytes", "string", "record", "enum", "array", "map", "union", "fixed":
		return true
	}
	return false
}

func compact(b json.RawMessage) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}
