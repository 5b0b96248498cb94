package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// This file expands an outbox payload held as a JSON string into the JSON
// itself, with the Connect schema Debezium infers for it
// (table.expand.json.payload: EventRouterDelegate.java:162-181, 317-322,
// and JsonSchemaData.java, "JSD" below, with its default null behaviour
// ignore). It parses untrusted bytes and never panics on them.

// jsonKind is the kind of a parsed JSON value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonString
	jsonBool
	jsonInt32 // an integer literal that fits an int (Jackson's IntNode)
	jsonInt64 // one that fits a long (LongNode)
	jsonBig   // a larger integer (BigIntegerNode)
	jsonDouble
	jsonArray
	jsonObject
)

// jsonNode is a parsed JSON value; an object keeps its keys in order,
// and a repeated key keeps its first place with its last value, as
// Jackson's ObjectNode (a LinkedHashMap) does.
type jsonNode struct {
	kind  jsonKind
	str   string // string
	b     bool
	i     int64
	f     float64
	num   string // a number's text
	keys  []string
	elems []*jsonNode // object values (aligned with keys) or array elements
}

// maxJSONDepth bounds nesting, so that a hostile payload cannot exhaust the
// stack.
const maxJSONDepth = 200

// parseJSONNode parses exactly one JSON value from data.
func parseJSONNode(data []byte) (*jsonNode, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	n, err := decodeJSONNode(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return n, nil
}

func decodeJSONNode(d *json.Decoder, depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonNode{kind: jsonNull}, nil
	case string:
		return &jsonNode{kind: jsonString, str: t}, nil
	case bool:
		return &jsonNode{kind: jsonBool, b: t}, nil
	case json.Number:
		return numberNode(string(t)), nil
	case json.Delim:
		switch t {
		case '[':
			n := &jsonNode{kind: jsonArray}
			for d.More() {
				e, err := decodeJSONNode(d, depth+1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, e)
			}
			_, err := d.Token()
			return n, err
		case '{':
			n := &jsonNode{kind: jsonObject}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeJSONNode(d, depth+1)
				if err != nil {
					return nil, err
				}
				if i := indexOf(n.keys, k); i >= 0 {
					n.elems[i] = v
					continue
				}
				n.keys, n.elems = append(n.keys, k), append(n.elems, v)
			}
			_, err := d.Token()
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

func indexOf(s []string, k string) int {
	for i, x := range s {
		if x == k {
			return i
		}
	}
	return -1
}

// numberNode classifies a JSON number as Jackson does: an integer literal
// is an IntNode, LongNode or BigIntegerNode by size, anything with a
// fraction or exponent a DoubleNode.
func numberNode(s string) *jsonNode {
	n := numberKind(s)
	n.num = s
	return n
}

func numberKind(s string) *jsonNode {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return &jsonNode{kind: jsonInt32, i: i}
			}
			return &jsonNode{kind: jsonInt64, i: i}
		}
		return &jsonNode{kind: jsonBig}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Past a double's range: Jackson reads ±Infinity, which
		// JsonConverter cannot write as JSON; refused like a big integer.
		return &jsonNode{kind: jsonBig}
	}
	return &jsonNode{kind: jsonDouble, f: f}
}

var (
	schemaOptionalDouble = &Schema{Type: TypeFloat64, Optional: true}
	schemaOptionalBytes  = &Schema{Type: TypeBytes, Optional: true}
)

// errExpand is a payload JsonSchemaData cannot turn into Connect data;
// Debezium then warns and keeps the payload string (ERD.java:172-174).
var errExpand = errors.New("the payload cannot be expanded")

// jsonInfer infers Connect schemas from JSON as JsonSchemaData does;
// nullBytes is table.json.payload.null.behavior optional_bytes (a null
// gets an optional bytes schema, JSD.java:80-84), else ignore.
type jsonInfer struct{ nullBytes bool }

// schema is JSD.toConnectSchema (JSD.java:52-88): nil for a value that
// has no schema (null unless nullBytes, an empty array), which its object
// leaves out. key names structs: the payload field, then key.field for
// nested ones.
func (in jsonInfer) schema(key string, n *jsonNode) (*Schema, error) {
	switch n.kind {
	case jsonString:
		return schemaOptionalString, nil
	case jsonBool:
		return schemaOptionalBoolean, nil
	case jsonInt32:
		return schemaOptionalInt32, nil
	case jsonInt64:
		return schemaOptionalInt64, nil
	case jsonNull:
		if in.nullBytes {
			return schemaOptionalBytes, nil
		}
		return nil, nil
	case jsonBig, jsonDouble:
		return schemaOptionalDouble, nil // a big integer then fails at its value (JSD.java:231)
	case jsonArray:
		if len(n.elems) == 0 {
			return nil, nil
		}
		items, err := in.arrayItems(key, n)
		if err != nil {
			return nil, err
		}
		return &Schema{Type: TypeArray, Optional: true, Items: items}, nil
	case jsonObject:
		s := &Schema{Type: TypeStruct, Optional: true, Name: key}
		for i, k := range n.keys {
			if k == "" {
				// SchemaBuilder.field refuses an empty name.
				return nil, fmt.Errorf("%w: an object has a field without a name", errExpand)
			}
			fk := k
			if strings.TrimSpace(key) != "" {
				fk = key + "." + k
			}
			fs, err := in.schema(fk, n.elems[i])
			if err != nil {
				return nil, err
			}
			if fs != nil {
				s.Fields = append(s.Fields, Field{k, fs})
			}
		}
		return s, nil
	}
	return nil, nil
}

// arrayItems is JSD.toConnectSchemaWithCycles and
// getFirstArrayElement (JSD.java:90-182): the elements other than null
// must be of one kind (numbers of one schema); objects' schemas are
// merged, a field keeping its first schema unless that was bytes.
func (in jsonInfer) arrayItems(key string, n *jsonNode) (*Schema, error) {
	var ref *jsonNode
	for _, e := range n.elems {
		switch {
		case e.kind == jsonNull:
		case ref == nil:
			ref = e
		case nodeType(e) != nodeType(ref), isNumber(ref) && numberSchema(e) != numberSchema(ref):
			return nil, fmt.Errorf("%w: the array is not homogeneous", errExpand)
		}
	}
	if ref == nil {
		ref = &jsonNode{kind: jsonNull} // JSD.java:145-181 returns NullNode
	}
	if ref.kind != jsonObject {
		s, err := in.schema("", ref)
		if err == nil && s == nil {
			err = fmt.Errorf("%w: the array has unrecognized member schema", errExpand) // JSD.java:109-112
		}
		return s, err
	}
	var merged *Schema
	for _, e := range n.elems {
		if e.kind != jsonObject {
			continue
		}
		s, err := in.schema(key, e)
		if err != nil {
			return nil, err
		}
		if merged == nil {
			merged = s
			continue
		}
		m := &Schema{Type: TypeStruct, Optional: true, Name: merged.Name, Fields: append([]Field(nil), merged.Fields...)}
		for _, f := range s.Fields {
			j := -1
			for k := range m.Fields {
				if m.Fields[k].Name == f.Name {
					j = k
				}
			}
			switch {
			case j < 0:
				m.Fields = append(m.Fields, f)
			case m.Fields[j].Schema.Type == TypeBytes && f.Schema.Type != TypeBytes:
				m.Fields[j] = f
			}
		}
		merged = m
	}
	return merged, nil
}

// nodeType is Jackson's JsonNodeType: every number is NUMBER.
func nodeType(n *jsonNode) jsonKind {
	if isNumber(n) {
		return jsonInt32
	}
	return n.kind
}

func isNumber(n *jsonNode) bool { return n.kind >= jsonInt32 && n.kind <= jsonDouble }

func numberSchema(n *jsonNode) *Schema { s, _ := jsonInfer{}.schema("", n); return s }

// appendConnectValue writes n with schema s as JsonConverter writes the
// Struct JSD.toConnectData makes of it (JSD.java:194-248): a struct's
// fields in its schema's order, null for one the object lacks; a value of
// another type than its schema's fails the expansion, as Connect's
// Struct.put validation does.
func appendConnectValue(dst []byte, s *Schema, n *jsonNode) ([]byte, error) {
	if n == nil || n.kind == jsonNull {
		return append(dst, "null"...), nil
	}
	switch s.Type {
	case TypeString:
		if n.kind == jsonString {
			return appendJSONString(dst, n.str), nil
		}
	case TypeBoolean:
		if n.kind == jsonBool {
			return strconv.AppendBool(dst, n.b), nil
		}
	case TypeInt32:
		if n.kind == jsonInt32 {
			return strconv.AppendInt(dst, n.i, 10), nil
		}
	case TypeInt64:
		if n.kind == jsonInt64 {
			return strconv.AppendInt(dst, n.i, 10), nil
		}
	case TypeFloat64:
		if n.kind == jsonDouble {
			return appendJavaDouble(dst, n.f), nil // Jackson writes a double with Double.toString
		}
	case TypeArray:
		if n.kind == jsonArray {
			dst = append(dst, '[')
			for i, e := range n.elems {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = appendConnectValue(dst, s.Items, e); err != nil {
					return dst, err
				}
			}
			return append(dst, ']'), nil
		}
	case TypeStruct:
		if n.kind == jsonObject {
			dst = append(dst, '{')
			for i, f := range s.Fields {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, f.Name)
				dst = append(dst, ':')
				var v *jsonNode
				if j := indexOf(n.keys, f.Name); j >= 0 {
					v = n.elems[j]
				}
				var err error
				if dst, err = appendConnectValue(dst, f.Schema, v); err != nil {
					return dst, err
				}
			}
			return append(dst, '}'), nil
		}
	}
	return dst, fmt.Errorf("%w: a value does not match its field's schema %s", errExpand, s.Type)
}

// expandPayload parses a payload string into its JSON and inferred
// schema, named name (the payload field). Only an object can be expanded:
// the text must start with { or [ (ERD.java:317-322) and JSD.toConnectData
// makes a Struct, which an array's schema cannot hold.
func expandPayload(in jsonInfer, name, text string) (json []byte, s *Schema, err error) {
	if !strings.HasPrefix(text, "{") && !strings.HasPrefix(text, "[") {
		return nil, nil, fmt.Errorf("%w: it does not start with { or [", errExpand)
	}
	n, err := parseJSONNode([]byte(text))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errExpand, err)
	}
	if n.kind != jsonObject {
		return nil, nil, fmt.Errorf("%w: it is not a JSON object", errExpand)
	}
	if s, err = in.schema(name, n); err != nil {
		return nil, nil, err
	}
	if json, err = appendConnectValue(nil, s, n); err != nil {
		return nil, nil, err
	}
	return json, s, nil
}
