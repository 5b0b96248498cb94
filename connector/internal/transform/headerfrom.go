package transform

import (
	"fmt"
	"slices"

	"github.com/mooncdc/mooncdc/schema"
)

// HeaderFrom is Kafka Connect's HeaderFrom$Key / HeaderFrom$Value
// (connect/transforms/src/main/java/org/apache/kafka/connect/transforms/HeaderFrom.java):
// fields copied or moved into headers.
type HeaderFrom struct {
	part        part
	fields      []string
	headers     []string
	move        bool
	replaceNull bool
	cache       schemaCache
}

func (t *HeaderFrom) op() string {
	if t.move {
		return "move"
	}
	return "copy"
}

// Apply implements Transform (HeaderFrom.java:114-184). A header is
// appended; headers already there stay (Headers.add).
func (t *HeaderFrom) Apply(r Record) (Record, bool, error) {
	s, v := t.part.get(&r)
	headers := make([]Header, len(r.Headers), len(r.Headers)+len(t.fields))
	copy(headers, r.Headers)
	purpose := "header " + t.op()
	if s == nil {
		m, err := requireMap(v, purpose)
		if err != nil {
			return r, false, err
		}
		out := m
		if t.move {
			out = m.Clone()
		}
		for i, f := range t.fields {
			fv, _ := m.Get(f)
			if t.move {
				out.Remove(f)
			}
			headers = append(headers, Header{Key: t.headers[i], Value: fv})
		}
		r = t.part.set(r, nil, out)
		r.Headers = headers
		return r, true, nil
	}
	st, err := requireStruct(v, purpose)
	if err != nil {
		return r, false, err
	}
	us, out := s, st
	if t.move {
		if us, err = t.cache.get(s, t.moveSchema); err != nil {
			return r, false, err
		}
		out = NewStruct(us)
		for i, f := range us.Fields {
			fv, err := fieldValue(st, index(st.Schema, f.Name), t.replaceNull)
			if err != nil {
				return r, false, err
			}
			out.Values[i] = fv
		}
	}
	for i, f := range t.fields {
		j := index(st.Schema, f)
		if j < 0 {
			// Kafka fails here with a NullPointerException
			// (HeaderFrom.java:149, operatingSchema.field(fieldName).schema()).
			return r, false, fmt.Errorf("field does not exist: %s", f)
		}
		fv, err := fieldValue(st, j, t.replaceNull)
		if err != nil {
			return r, false, err
		}
		headers = append(headers, Header{Key: t.headers[i], Schema: st.Schema.Fields[j].Schema, Value: fv})
	}
	r = t.part.set(r, us, out)
	r.Headers = headers
	return r, true, nil
}

// moveSchema is HeaderFrom.moveSchema (HeaderFrom.java:155-168).
func (t *HeaderFrom) moveSchema(s *schema.Schema) (*schema.Schema, error) {
	out := copyBasics(s, schema.TypeStruct)
	for _, f := range s.Fields {
		if !slices.Contains(t.fields, f.Name) {
			out.Fields = append(out.Fields, f)
		}
	}
	return out, nil
}
