package record

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/connectformat"
	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file is format.key and format.value protobuf and json_schema:
// Confluent's ProtobufConverter and JsonSchemaConverter with the Schema
// Registry. Both convert Kafka Connect data, so every record is made
// through its Connect view, as a transforms chain makes it (chain.go):
// the codec runs the chained path with the configured chain, or with an
// empty one when there is none (Formats.Codec decides once). Each side's
// schema is rendered by connectformat from the record's Connect schema
// (built once per schema pointer, which the plans and the transforms'
// caches keep stable), registered under the record's topic's
// TopicNameStrategy subject (<topic>-key, <topic>-value), and its id kept
// per schema and subject; the bytes are connectformat's, in Confluent's
// framing (magic byte 0, the schema id, for Protobuf the message indexes
// [0]).
//
// Which records: every one the writer makes, as the Avro path registers
// and writes them (changes, tombstones, transaction BEGIN/END, schema
// changes, heartbeats): Kafka Connect runs the configured converter on
// each record a source task returns, whatever its schema
// (AbstractWorkerSourceTask.convertTransformedRecord, apache/kafka
// connect/runtime/src/main/java/org/apache/kafka/connect/runtime/AbstractWorkerSourceTask.java:479-497
// at 1eb7644349c), so each of those gets its own subjects under its topic.
//
// A null key or value (a tombstone, a truncate's key) is no bytes, as both
// converters write it (ProtobufConverter.java:121-126,
// JsonSchemaConverter.java:123-125 at schema-registry 794611bd86d).
//
// Protobuf references: the .proto files a schema imports (Confluent's
// decimal, Google's date, time of day and timestamp) are registered under
// subjects named by their path and referenced by the schema, as
// Confluent's serializer does with skip.known.types=false
// (AbstractKafkaProtobufSerializer.java:404-426). With its default (true)
// it registers no reference and the registry resolves the imports itself;
// a reader that resolves every import through the registry, as kafkajs's
// @kafkajs/confluent-schema-registry does, then cannot load the schema
// (connectformat's doc.go, finding 2). The references make both read.

// The converters a side is written with, besides chain.go's.
const (
	sideProtobuf = iota + sideAvro + 1
	sideJSONSchema
)

// viewFormat reports whether format is written through the Connect view
// whether or not a chain is configured.
func viewFormat(format string) bool {
	return format == config.FormatProtobuf || format == config.FormatJSONSchema
}

// registeredSide is the side of a registered format other than Avro;
// false for the others.
func registeredSide(format string) (int, bool) {
	switch format {
	case config.FormatProtobuf:
		return sideProtobuf, true
	case config.FormatJSONSchema:
		return sideJSONSchema, true
	}
	return 0, false
}

// noChain is the transforms of a codec whose format needs the Connect
// view when no chain is configured: an empty chain, no context headers
// (the plain path writes none), no topics to create.
func noChain() *Transforms { return &Transforms{Chain: &transform.Chain{}} }

// schemas is a chained codec's rendered Protobuf and JSON Schema schemas,
// by Connect schema pointer, and the references it registered, by path.
type schemas struct {
	pb   map[*schema.Schema]*connectformat.Protobuf
	js   map[*schema.Schema]*connectformat.JSONSchema
	refs map[string]sr.SchemaReference
}

// appendRegistered writes one side of a record as Protobuf or JSON Schema
// (side); ok is false for a null, which is no bytes.
func (ch *chained) appendRegistered(dst []byte, topic string, s *schema.Schema, v any, isKey bool, side int) ([]byte, bool, error) {
	if v == nil {
		return dst, false, nil
	}
	if s == nil {
		return dst, false, fmt.Errorf("a schemaless %T cannot be written with a schema", v)
	}
	id, ok := ch.avro[avroSubject{s, topic, isKey}]
	if !ok { // the first record of this schema on this subject
		rendered, err := ch.render(s, side)
		if err != nil {
			return dst, false, err
		}
		if id, err = ch.registeredID(topic, s, isKey, rendered); err != nil {
			return dst, false, err
		}
	}
	var out []byte
	var err error
	if side == sideProtobuf {
		out, err = ch.schemas.pb[s].AppendEncode(dst, id, v)
	} else {
		out, err = ch.schemas.js[s].AppendEncode(dst, id, v)
	}
	if err != nil {
		return dst, false, err
	}
	return out, true, nil
}

// protobuf is the Protobuf schema of s, built at its first use; a schema
// that has none is a *TableSchemaError.
func (ch *chained) protobuf(s *schema.Schema) (*connectformat.Protobuf, error) {
	if p, ok := ch.schemas.pb[s]; ok {
		return p, nil
	}
	p, err := connectformat.NewProtobuf(s)
	if err != nil {
		return nil, &TableSchemaError{Err: err}
	}
	ch.schemas.pb[s] = p
	return p, nil
}

// jsonSchema is the JSON Schema of s, built at its first use.
func (ch *chained) jsonSchema(s *schema.Schema) (*connectformat.JSONSchema, error) {
	if j, ok := ch.schemas.js[s]; ok {
		return j, nil
	}
	j, err := connectformat.NewJSONSchemaOptions(s, ch.jsonSchemaOpts)
	if err != nil {
		return nil, &TableSchemaError{Err: err}
	}
	ch.schemas.js[s] = j
	return j, nil
}

// references registers each import under the subject of its path and
// returns the references to them, in the text's import order.
func (ch *chained) references(imports []string) ([]sr.SchemaReference, error) {
	if len(imports) == 0 {
		return nil, nil
	}
	refs := make([]sr.SchemaReference, 0, len(imports))
	for _, path := range imports {
		ref, ok := ch.schemas.refs[path]
		if !ok {
			text, known := connectformat.ImportText(path)
			if !known {
				return nil, &TableSchemaError{Err: fmt.Errorf("protobuf: the schema imports %s, which mooncdc cannot register", path)}
			}
			var err error
			if ref, err = ch.reg.reference(ch.ctx(), path, text); err != nil {
				return nil, ch.classify(err)
			}
			ch.schemas.refs[path] = ref
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func (ch *chained) ctx() context.Context {
	if ch.reg.Stopping != nil {
		return ch.reg.Stopping
	}
	return context.Background()
}

// registeredID is the registry id of rendered, the schema of s, under
// topic's key or value subject, registered at its first use.
func (ch *chained) registeredID(topic string, s *schema.Schema, isKey bool, rendered sr.Schema) (int, error) {
	k := avroSubject{s, topic, isKey}
	if id, ok := ch.avro[k]; ok {
		return id, nil
	}
	ctx := ch.ctx()
	subject, err := ch.reg.subject(ctx, topicSubject(topic, isKey))
	if err != nil {
		return 0, &registryError{err}
	}
	id, err := ch.reg.idOf(ctx, subject, rendered)
	if err != nil {
		if id, err = ch.evolveRefused(ctx, topic, isKey, subject, rendered, err); err != nil {
			return 0, ch.classify(err)
		}
	}
	ch.avro[k] = id
	return id, nil
}

// evolveRefused applies schema_evolution to a registration the registry
// refused as incompatible (err) with no check at a DDL before it (a copy's
// catch-up over the change, a shape changed while mooncdc was stopped),
// as Codec.evolveRefused does for Avro: under park err stands;
// new_subject registers rendered under the next generation of the
// subject, force under the subject with NONE for the one registration;
// then the id is the one registered.
func (ch *chained) evolveRefused(ctx context.Context, topic string, isKey bool, subject string, rendered sr.Schema, err error) (int, error) {
	reg := ch.reg
	var inc *SchemaIncompatibleError
	if reg.evolution == config.EvolutionPark || !errors.As(err, &inc) {
		return 0, err
	}
	base := topicSubject(topic, isKey)
	if reg.evolution == config.EvolutionNewSubject {
		if err := reg.newSubjectOf(ctx, base, rendered); err != nil {
			return 0, err
		}
		if subject, err = reg.subject(ctx, base); err != nil {
			return 0, err
		}
	} else if err := reg.forceOf(ctx, subject, rendered); err != nil {
		return 0, err
	}
	return reg.idOf(ctx, subject, rendered) // registered just now: cached
}

// classify makes a registry failure the table's (*TableSchemaError: a
// refusal) or the pipeline's (*registryError: unreachable, stopping,
// credentials), as avroID does.
func (ch *chained) classify(err error) error {
	if ch.ctx().Err() != nil || errors.As(err, new(*config.ConfigError)) || registryRetryable(err) {
		return &registryError{err}
	}
	return &TableSchemaError{Err: err}
}

// reference registers text, the .proto file path, under the subject path
// (Confluent's DefaultReferenceSubjectNameStrategy: the reference name is
// the subject) and returns the reference to the version it is.
func (r *Registry) reference(ctx context.Context, path, text string) (sr.SchemaReference, error) {
	s := sr.Schema{Type: sr.TypeProtobuf, Schema: text}
	if _, err := r.idOf(ctx, path, s); err != nil {
		return sr.SchemaReference{}, err
	}
	ss, err := r.cl.LookupSchema(ctx, path, s)
	if err != nil {
		return sr.SchemaReference{}, wrapRegistryErr(path, err)
	}
	return sr.SchemaReference{Name: path, Subject: path, Version: ss.Version}, nil
}
