package offsets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// PipelineKey returns the canonical key of the pipeline partition,
// `["<name>",{"source":"pipeline"}]`. It is pure and deterministic: the same
// name always gives the same bytes, which compaction relies on. name must be
// valid UTF-8 (see PipelineRecord).
func PipelineKey(name string) []byte {
	return encodeKey(name, "source", "pipeline")
}

// TableKey returns the canonical key of a table's partition,
// `["<name>",{"table":"<schema.table>"}]`. Pure and deterministic; name and
// table must be valid UTF-8.
func TableKey(name, table string) []byte {
	return encodeKey(name, "table", table)
}

// encodeKey writes the key the way Kafka Connect's JsonConverter does:
// compact JSON, no HTML escaping.
func encodeKey(name, field, value string) []byte {
	return marshal([]any{name, map[string]string{field: value}})
}

// marshal encodes v compactly without HTML escaping (so "<" stays "<", as
// Connect writes it). v is always one of this package's types, which cannot
// fail to encode.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("offsets: encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

type keyKind int

const (
	keyPipeline keyKind = iota + 1
	keyTable
)

// parsedKey is a key of our connector name.
type parsedKey struct {
	kind  keyKind
	table string // keyTable only
}

// parseKey decodes a Connect source-offset key. ours is false, with no
// error, for a well-formed key of another connector name, whose partition
// is not looked at. Any JSON spelling is accepted; see the package doc.
func parseKey(name string, key []byte) (k parsedKey, ours bool, err error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil || !isJSON(key, '[') {
		return k, false, errors.New(`key is not a JSON array ["<connector name>",{partition}]`)
	}
	if len(parts) != 2 {
		return k, false, fmt.Errorf(`key has %d elements, want 2: ["<connector name>",{partition}]`, len(parts))
	}
	var keyName string
	if err := json.Unmarshal(parts[0], &keyName); err != nil || !isJSON(parts[0], '"') {
		return k, false, errors.New("key's first element, the connector name, is not a string")
	}
	if keyName != name {
		return k, false, nil
	}

	var partition map[string]json.RawMessage
	if err := json.Unmarshal(parts[1], &partition); err != nil || !isJSON(parts[1], '{') {
		return k, true, errors.New("key's second element, the partition, is not a JSON object")
	}
	if len(partition) != 1 {
		return k, true, fmt.Errorf(`partition has %d fields, want one: {"source":"pipeline"} or {"table":"<schema.table>"}`, len(partition))
	}
	for field, raw := range partition {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil || !isJSON(raw, '"') {
			return k, true, fmt.Errorf("partition field %q is not a string", field)
		}
		switch {
		case field == "source" && v == "pipeline":
			return parsedKey{kind: keyPipeline}, true, nil
		case field == "table" && v != "":
			return parsedKey{kind: keyTable, table: v}, true, nil
		case field == "table":
			return k, true, errors.New("partition names an empty table")
		}
		return k, true, fmt.Errorf(`unknown partition {%q:%q}, want {"source":"pipeline"} or {"table":"<schema.table>"}`, field, v)
	}
	panic("unreachable")
}

// isJSON reports whether the JSON text b starts, after white space, with
// the byte open: it tells an object, array or string from null, which
// json.Unmarshal accepts into any of them.
func isJSON(b []byte, open byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == open
}
