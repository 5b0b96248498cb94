package record

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/mooncdc/mooncdc/schema"
)

// This file is the registry pre-check at a DDL (evolution.go) for a codec
// that writes through the Connect view with no transform: format.key or
// format.value protobuf or json_schema (registered_formats.go). Its
// records' schemas are the plan's Connect schemas, known at the DDL, so
// the new shape's Protobuf, JSON Schema (and, beside them, Avro) schemas
// are rendered as the first row will register them and put to the
// registry's compatibility check under the same policy as Avro's:
// park (the table stops at its DDL with the registry's reason, the
// others go on), new_subject or force. With a chain the schemas are the
// chain's, known only from a record: the first row decides.

// evolveView is Evolve for the Connect view without a chain.
func (c *Codec) evolveView(ctx context.Context, name, topic string, sp *schema.Plan, ddl string) error {
	ch := c.chain
	ks, vs := sp.ConnectSchemas(&schema.Change{Op: schema.OpCreate})
	for _, role := range []struct {
		s     *schema.Schema
		side  int
		isKey bool
	}{{ks, ch.key, true}, {vs, ch.value, false}} {
		if role.s == nil {
			continue // no key: nothing registered
		}
		s, err := ch.render(role.s, role.side)
		var rw *registryError
		switch {
		case errors.As(err, &rw):
			return rw.err // stopping, credentials, the registry unreachable
		case err != nil, s.Schema == "":
			continue // JSON (nothing registered), or no valid schema: the first row parks the table, saying why
		}
		if err := c.evolveSubject(ctx, name, topic, ddl, role.isKey, s, sr.Schema{}); err != nil {
			return err
		}
	}
	return nil
}

// render is the schema a side's converter registers for s: the Avro text,
// the Protobuf text with its references (registered first), or the JSON
// Schema document; none for the JSON converter.
func (ch *chained) render(s *schema.Schema, side int) (sr.Schema, error) {
	switch side {
	case sideAvro:
		text, ok := ch.texts[s]
		if !ok {
			var err error
			if text, err = schema.RenderAvro(s); err != nil {
				return sr.Schema{}, &TableSchemaError{Err: err}
			}
			ch.texts[s] = text
		}
		return sr.Schema{Schema: text, Type: sr.TypeAvro}, nil
	case sideProtobuf:
		p, err := ch.protobuf(s)
		if err != nil {
			return sr.Schema{}, err
		}
		refs, err := ch.references(p.Imports)
		if err != nil {
			return sr.Schema{}, err
		}
		return sr.Schema{Schema: p.Text, Type: sr.TypeProtobuf, References: refs}, nil
	case sideJSONSchema:
		j, err := ch.jsonSchema(s)
		if err != nil {
			return sr.Schema{}, err
		}
		return sr.Schema{Schema: string(j.Document), Type: sr.TypeJSON}, nil
	}
	return sr.Schema{}, nil
}
