package avrodata

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
)

// This file converts a Connect default into an Avro field's default, and
// checks it against the field's schema as Avro does.

// avroDefault is AvroData.defaultValueFromConnect (AvroData.java:1372-1458)
// applied to JsonConverter's JSON of the default: bytes (base64 there,
// decimal.format=BASE64 for Decimal) become an ISO-8859-1 string, other
// values keep their JSON. The Avro field constructor turns it into an
// object and back (JacksonUtils.toObject then toJsonNode,
// AvroData.java:1242-1243, Schema.java:614-618); with Avro 1.12.1, the
// version of confluentinc/common's pom.xml:49 that schema-registry builds
// with, a float stays a float (JacksonUtils.java:151-162 at
// release-1.12.1), so that is the identity here. (Avro 1.11 made it a
// double: 1.1 became 1.100000023841858.)
func avroDefault(s *connectSchema, v json.RawMessage) (json.RawMessage, error) {
	if string(v) == "null" {
		return v, nil
	}
	switch s.Type {
	case "bytes":
		var b64 string
		if err := json.Unmarshal(v, &b64); err != nil {
			return nil, err
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, err
		}
		r := make([]rune, len(raw))
		for i, c := range raw {
			r[i] = rune(c)
		}
		return jsonString(string(r)), nil
	case "array":
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return nil, err
		}
		out := []byte{'['}
		for i, e := range elems {
			d, err := avroDefault(s.Items, e)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, d...)
		}
		return append(out, ']'), nil
	case "map", "struct":
		return nil, fmt.Errorf("a %s default is not needed by these schemas", s.Type)
	}
	return v, nil
}

// validDefault is Avro's Schema.isValidDefault for these schemas.
func validDefault(a *avroSchema, v json.RawMessage) bool {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return false
	}
	return validValue(a, x)
}

func validValue(a *avroSchema, x any) bool {
	switch a.typ {
	case "union":
		return validValue(a.branches[0], x)
	case "null":
		return x == nil
	case "string", "bytes":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "int":
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(string(n), 10, 32)
		return err == nil
	case "long":
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil
	case "float", "double":
		_, ok := x.(json.Number)
		return ok
	case "array":
		l, ok := x.([]any)
		if !ok {
			return false
		}
		for _, e := range l {
			if !validValue(a.items, e) {
				return false
			}
		}
		return true
	case "map":
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		for _, e := range m {
			if !validValue(a.values, e) {
				return false
			}
		}
		return true
	case "record":
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range a.fields {
			e, has := m[f.name]
			if !has {
				if f.def == nil {
					return false
				}
				continue
			}
			if !validValue(f.typ, e) {
				return false
			}
		}
		return true
	}
	return false
}
