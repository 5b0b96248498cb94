package schema

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// encodedRow is one inserted row as each encoder writes it.
type encodedRow struct {
	plain   map[string]any // plain JSON "after"
	schemas map[string]any // JSON with schemas: the "after" field's schema
	payload map[string]any // JSON with schemas: the payload's "after"
	avro    map[string]any // Avro "after", decoded with the registered schema
	avsc    string         // the registered Avro value schema
}

// encodeRow encodes an insert of after into rel with cfg through plain
// JSON, JSON with schemas and Avro, failing the test on any error.
func encodeRow(t *testing.T, cfg Config, rel *Relation, after Tuple) encodedRow {
	t.Helper()
	ch := &Change{Op: OpCreate, Relation: rel, After: after}
	var r encodedRow
	out, err := NewJSONEncoder(cfg).AppendValue(nil, NewPlan(cfg, ch.Relation), ch, time.UnixMilli(1))
	if err != nil {
		t.Fatalf("plain JSON: %v", err)
	}
	var plain map[string]any
	if err := json.Unmarshal(out, &plain); err != nil {
		t.Fatalf("plain JSON %s: %v", out, err)
	}
	r.plain, _ = plain["after"].(map[string]any)

	out, err = NewJSONSchemaEncoder(cfg).AppendValue(nil, NewPlan(cfg, ch.Relation), ch, time.UnixMilli(1))
	if err != nil {
		t.Fatalf("JSON with schemas: %v", err)
	}
	var ws struct {
		Schema struct {
			Fields []map[string]any `json:"fields"`
		} `json:"schema"`
		Payload map[string]any `json:"payload"`
	}
	if err := json.Unmarshal(out, &ws); err != nil {
		t.Fatalf("JSON with schemas %s: %v", out, err)
	}
	r.payload, _ = ws.Payload["after"].(map[string]any)
	for _, f := range ws.Schema.Fields {
		if f["field"] == "after" {
			r.schemas = f
		}
	}

	e := NewAvroEncoder(cfg)
	_, r.avsc = registered(t, e, rel)
	out, err = e.AppendValue(nil, e.Plan(ch.Relation), testIDs, ch, time.UnixMilli(1))
	if err != nil {
		t.Fatalf("Avro: %v", err)
	}
	// hamba wraps the ["null", record] union's value as {"<name>": record}.
	wrapped, _ := avroDecode(t, r.avsc, 8, out)["after"].(map[string]any)
	r.avro = wrapped
	if len(wrapped) == 1 {
		for k, v := range wrapped {
			if m, ok := v.(map[string]any); ok && strings.HasSuffix(k, ".Value") {
				r.avro = m
			}
		}
	}
	return r
}

// afterField returns the Connect schema of column name in the "after"
// struct schema of a JSON-with-schemas record, or nil.
func (r encodedRow) afterField(name string) map[string]any {
	fields, _ := r.schemas["fields"].([]any)
	for _, f := range fields {
		if m, _ := f.(map[string]any); m["field"] == name {
			return m
		}
	}
	return nil
}

// unwrapAvro returns v without hamba's union wrapper ({"type": value}).
func unwrapAvro(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for k, in := range m {
			switch k {
			case "array", "map", "bytes", "string", "double", "long", "int", "boolean", "float":
				return in
			}
		}
	}
	return v
}
