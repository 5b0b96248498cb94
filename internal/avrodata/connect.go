package avrodata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file reads a Kafka Connect schema from JsonConverter's JSON.

// connectSchema is a Kafka Connect schema read from JsonConverter's JSON
// (JsonConverter.asJsonSchema): the fields ConnectSchema.equals compares.
type connectSchema struct {
	Type     string
	Optional bool
	Name     string // "" for none
	Version  *int64
	Doc      *string
	Params   []param // in order: Connect keeps parameters in a LinkedHashMap
	Default  json.RawMessage
	Fields   []connectField
	Items    *connectSchema // JsonConverter's "items", Connect's valueSchema of an array
	Keys     *connectSchema
	Values   *connectSchema
	identity string // the schema's JSON without field names: ConnectSchema.equals
}

type param struct{ key, value string }

type connectField struct {
	name   string
	schema *connectSchema
}

// parseConnect reads JsonConverter's JSON of a schema.
func parseConnect(raw json.RawMessage) (*connectSchema, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", err
	}
	s := &connectSchema{}
	if err := json.Unmarshal(m["type"], &s.Type); err != nil {
		return nil, "", fmt.Errorf("type: %w", err)
	}
	if v, ok := m["optional"]; ok {
		if err := json.Unmarshal(v, &s.Optional); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["name"]; ok {
		if err := json.Unmarshal(v, &s.Name); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["version"]; ok {
		s.Version = new(int64)
		if err := json.Unmarshal(v, s.Version); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["doc"]; ok {
		s.Doc = new(string)
		if err := json.Unmarshal(v, s.Doc); err != nil {
			return nil, "", err
		}
	}
	if v, ok := m["parameters"]; ok {
		ps, err := orderedStrings(v)
		if err != nil {
			return nil, "", fmt.Errorf("parameters: %w", err)
		}
		s.Params = ps
	}
	if v, ok := m["default"]; ok && string(v) != "null" {
		s.Default = v
	}
	var field string
	if v, ok := m["field"]; ok {
		if err := json.Unmarshal(v, &field); err != nil {
			return nil, "", err
		}
	}
	id := map[string]any{"type": s.Type, "optional": s.Optional, "name": s.Name, "version": s.Version, "doc": s.Doc, "params": s.Params, "default": string(s.Default)}
	switch s.Type {
	case "struct":
		var fields []json.RawMessage
		if err := json.Unmarshal(m["fields"], &fields); err != nil {
			return nil, "", fmt.Errorf("fields: %w", err)
		}
		var ids []string
		for _, f := range fields {
			fs, name, err := parseConnect(f)
			if err != nil {
				return nil, "", fmt.Errorf("field %s: %w", f, err)
			}
			s.Fields = append(s.Fields, connectField{name, fs})
			ids = append(ids, name+"="+fs.identity)
		}
		id["fields"] = ids
	case "array":
		items, _, err := parseConnect(m["items"])
		if err != nil {
			return nil, "", fmt.Errorf("items: %w", err)
		}
		s.Items = items
		id["items"] = items.identity
	case "map":
		var err error
		if s.Keys, _, err = parseConnect(m["keys"]); err != nil {
			return nil, "", fmt.Errorf("keys: %w", err)
		}
		if s.Values, _, err = parseConnect(m["values"]); err != nil {
			return nil, "", fmt.Errorf("values: %w", err)
		}
		id["keys"], id["values"] = s.Keys.identity, s.Values.identity
	}
	b, err := json.Marshal(id)
	if err != nil {
		return nil, "", err
	}
	s.identity = string(b)
	return s, field, nil
}

// orderedStrings reads a JSON object of strings keeping its key order.
func orderedStrings(raw json.RawMessage) ([]param, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %s", raw)
	}
	var out []param
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v string
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, param{k.(string), v})
	}
	return out, nil
}

// nonOptional is AvroData.nonOptional (AvroData.java:2543-2550): the same
// schema, required.
func (s *connectSchema) nonOptional() *connectSchema {
	if !s.Optional {
		return s
	}
	c := *s
	c.Optional = false
	c.identity = strings.Replace(s.identity, `"optional":true`, `"optional":false`, 1)
	return &c
}

func (s *connectSchema) param(k string) (string, bool) {
	for _, p := range s.Params {
		if p.key == k {
			return p.value, true
		}
	}
	return "", false
}
