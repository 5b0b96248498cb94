package transform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mooncdc/mooncdc/schema"
)

// ReplaceField is Kafka Connect's ReplaceField$Key / ReplaceField$Value
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/ReplaceField.java):
// it drops fields (exclude), keeps only some (include) and renames them.
type ReplaceField struct {
	part             part
	exclude, include []string
	renames, reverse map[string]string
	replaceNull      bool
	cache            schemaCache
}

// parseRenames is ReplaceField.parseRenameMappings (ReplaceField.java:103-113):
// each mapping is exactly two names split by ':'.
func parseRenames(mappings []string) (map[string]string, error) {
	m := make(map[string]string, len(mappings))
	for _, mapping := range mappings {
		parts := javaSplit(mapping, ":")
		if len(parts) != 2 {
			return nil, fmt.Errorf("invalid rename mapping: %s", mapping)
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

// javaSplit is Java's String.split for a literal separator: a string
// without the separator is itself; otherwise trailing empty strings are
// removed ("a:" splits into ["a"], ":" into none).
func javaSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// filter is ReplaceField.filter (ReplaceField.java:123-125).
func (t *ReplaceField) filter(name string) bool {
	return !slices.Contains(t.exclude, name) && (len(t.include) == 0 || slices.Contains(t.include, name))
}

func (t *ReplaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

func (t *ReplaceField) reverseRenamed(name string) string {
	if n, ok := t.reverse[name]; ok {
		return n
	}
	return name
}

const replacePurpose = "field replacement"

// Apply implements Transform (ReplaceField.java:137-181).
func (t *ReplaceField) Apply(r Record) (Record, bool, error) {
	s, v := t.part.get(&r)
	if v == nil {
		return r, true, nil
	}
	if s == nil {
		m, err := requireMap(v, replacePurpose)
		if err != nil {
			return r, false, err
		}
		out := &Map{Entries: make([]MapEntry, 0, len(m.Entries))}
		for _, e := range m.Entries {
			name, ok := e.Key.(string)
			if !ok {
				// Java's String fieldName = e.getKey() throws a
				// ClassCastException (ReplaceField.java:153-154); a key
				// must not become "" and collide with others.
				return r, false, fmt.Errorf("a schemaless %s with a %s key: field names are strings", t.part, javaClass(e.Key))
			}
			if t.filter(name) {
				out.Put(t.renamed(name), e.Value)
			}
		}
		return t.part.set(r, nil, out), true, nil
	}
	st, err := requireStruct(v, replacePurpose)
	if err != nil {
		return r, false, err
	}
	us, err := t.cache.get(st.Schema, t.updatedSchema)
	if err != nil {
		return r, false, err
	}
	out := NewStruct(us)
	for i, f := range us.Fields {
		j := index(st.Schema, t.reverseRenamed(f.Name))
		if j < 0 {
			return r, false, fmt.Errorf("%s is not a valid field name", t.reverseRenamed(f.Name))
		}
		fv, err := fieldValue(st, j, t.replaceNull)
		if err != nil {
			return r, false, err
		}
		if err := Validate(f.Schema, fv); err != nil {
			return r, false, fmt.Errorf("field %q: %w", f.Name, err)
		}
		out.Values[i] = fv
	}
	return t.part.set(r, us, out), true, nil
}

// updatedSchema is ReplaceField.makeUpdatedSchema (ReplaceField.java:183-191).
func (t *ReplaceField) updatedSchema(s *schema.Schema) (*schema.Schema, error) {
	out := copyBasics(s, schema.TypeStruct)
	for _, f := range s.Fields {
		if t.filter(f.Name) {
			if err := addField(out, t.renamed(f.Name), f.Schema); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
