package schema

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"

	"github.com/hamba/avro/v2"
)

// This file writes outbox records in Avro: each part's Connect schema
// rendered as Confluent's AvroConverter renders it (avro_schema.go), its
// JSON (the form JsonConverter writes, outbox_event.go) written as the Avro
// binary of that schema, behind Confluent's wire-format header.

// OutboxAvroSchema is the Avro schema of part p; one the registry would
// refuse (not valid Avro) is an error. valid holds the schemas checked
// already (parsing one costs more than encoding a record); a valid one is
// added.
func OutboxAvroSchema(p OutboxPart, valid map[string]bool) (string, error) {
	s := renderAvro(p.Schema)
	if valid[s] {
		return s, nil
	}
	if err := checkAvro("the outbox record", s); err != nil {
		return "", err
	}
	valid[s] = true
	return s, nil
}

// AppendOutboxAvro appends part p in Confluent's wire format: magic byte,
// registry id, then p's JSON written as the Avro binary of its schema. A
// JSON value its schema cannot hold is an error. It does not block.
func (e *AvroEncoder) AppendOutboxAvro(dst []byte, id int32, p OutboxPart) ([]byte, error) {
	n, err := parseJSONNode(p.JSON)
	if err != nil {
		return dst, fmt.Errorf("encode outbox record in Avro: %w", err)
	}
	w := e.reset()
	if err := writeAvroJSON(w, p.Schema, n); err != nil {
		return dst, fmt.Errorf("encode outbox record in Avro: %w", err)
	}
	return append(appendHeader(dst, id), w.Buffer()...), nil
}

// writeAvroJSON writes n as Avro schema s: the union branch of an optional
// schema, then the value. JsonConverter's forms are read back: bytes (and
// Decimal) as base64, NaN and infinities of a double as strings, a map as
// an object.
func writeAvroJSON(w *avro.Writer, s *Schema, n *jsonNode) error {
	if n.kind == jsonNull {
		if !s.Optional {
			return fmt.Errorf("a null for the required %s", s.Type)
		}
		w.WriteLong(nullBranch(s))
		return nil
	}
	if s.Optional {
		w.WriteLong(valueBranch(s))
	}
	bad := func() error { return fmt.Errorf("a JSON %s for %s", kindName(n), s.Type) }
	switch s.Type {
	case TypeString:
		if n.kind != jsonString {
			return bad()
		}
		w.WriteString(n.str)
	case TypeBoolean:
		if n.kind != jsonBool {
			return bad()
		}
		w.WriteBool(n.b)
	case TypeInt8, TypeInt16, TypeInt32:
		i, err := strconv.ParseInt(n.num, 10, 32)
		if err != nil || !isNumber(n) {
			return bad()
		}
		w.WriteInt(int32(i))
	case TypeInt64:
		i, err := strconv.ParseInt(n.num, 10, 64)
		if err != nil || !isNumber(n) {
			return bad()
		}
		w.WriteLong(i)
	case TypeFloat32, TypeFloat64:
		f, err := avroJSONFloat(n)
		if err != nil {
			return bad()
		}
		if s.Type == TypeFloat32 {
			w.WriteFloat(float32(f))
		} else {
			w.WriteDouble(f)
		}
	case TypeBytes:
		b, err := base64.StdEncoding.DecodeString(n.str)
		if n.kind != jsonString || err != nil {
			return bad()
		}
		w.WriteBytes(b)
	case TypeArray:
		if n.kind != jsonArray {
			return bad()
		}
		if len(n.elems) > 0 {
			w.WriteLong(int64(len(n.elems)))
			for _, el := range n.elems {
				if err := writeAvroJSON(w, s.Items, el); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
	case TypeMap:
		if n.kind != jsonObject {
			return bad()
		}
		if len(n.keys) > 0 {
			w.WriteLong(int64(len(n.keys)))
			for i, k := range n.keys {
				w.WriteString(k)
				if err := writeAvroJSON(w, s.Values, n.elems[i]); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
	case TypeStruct:
		if n.kind != jsonObject {
			return bad()
		}
		for _, f := range s.Fields {
			v := &jsonNode{kind: jsonNull}
			if j := indexOf(n.keys, f.Name); j >= 0 {
				v = n.elems[j]
			}
			if err := writeAvroJSON(w, f.Schema, v); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
	default:
		return bad()
	}
	return nil
}

// avroJSONFloat reads a double as JsonConverter writes it: a number, or
// "NaN", "Infinity", "-Infinity".
func avroJSONFloat(n *jsonNode) (float64, error) {
	if n.kind == jsonString {
		switch n.str {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		return 0, errExpand
	}
	if !isNumber(n) {
		return 0, errExpand
	}
	return strconv.ParseFloat(n.num, 64)
}

func kindName(n *jsonNode) string {
	switch n.kind {
	case jsonString:
		return "string"
	case jsonBool:
		return "boolean"
	case jsonArray:
		return "array"
	case jsonObject:
		return "object"
	}
	return "number"
}
