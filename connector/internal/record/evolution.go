package record

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the schema evolution policy
// (format.schema_registry.schema_evolution): what a table's schema change
// does when the Schema Registry would refuse the new shape's Avro schemas.
// It is decided once, at the change: at the DDL message of mooncdc's event
// trigger (emit: schemachange.go), or, without one, at the Relation message of a
// changed shape, which pgoutput sends before the first row of that shape.
// Either way no row of the new shape has been written yet, and every row
// of the old shape before the change has.
//
//   - park (default): the table goes errored at the change, with the DDL
//     and the registry's message; its later changes are not written until
//     `mooncdc resnapshot` copies it again. The other tables go on.
//   - new_subject: the new schema is registered under a new subject, the
//     old one's name with -v2, -v3, … appended (<topic>-value-v2); the
//     table streams on. Records carry the new schema id, which is all a
//     Confluent deserializer needs.
//   - force: the subject's compatibility is set to NONE for the one
//     registration and put back as it was (its own level, or none).
//
// A change the registry accepts streams without a pause. With JSON
// formats there is no registry and nothing to decide.

// SchemaEvolutionError is an incompatible schema change of a table parked
// at its DDL (policy park).
type SchemaEvolutionError struct {
	Table   string
	DDL     string // "" when derived from a Relation message
	Subject string
	Message string // the registry's
}

func (e *SchemaEvolutionError) Error() string {
	msg := e.Message
	if len(msg) > 600 { // the registry quotes the whole old schema
		msg = strings.ToValidUTF8(msg[:600], "") + "…"
	}
	ddl := e.DDL
	if len(ddl) > 300 { // current_query() is the client's whole string
		ddl = strings.ToValidUTF8(ddl[:300], "") + "…"
	}
	if ddl == "" {
		ddl = "(no DDL text: derived from pgoutput's Relation message)"
	}
	return fmt.Sprintf("schema change of %s is incompatible with Schema Registry subject %q, parked at its DDL %s: %s; "+
		"the table's later changes are not written (format.schema_registry.schema_evolution park). Make the registry accept the new schema "+
		"(change the subject's compatibility level, or delete the subject), or set schema_evolution to new_subject or force, "+
		"then run `mooncdc resnapshot` for the table", e.Table, e.Subject, ddl, msg)
}

// evolveRefused applies the policy to a registration of sp's schemas on
// topic that the registry refused (err) with no check at a DDL before it:
// a copy's catch-up over the change, a shape changed while mooncdc was
// stopped, or a DDL check that could not be made. Under park err stands;
// new_subject and force act on the refused subject (key, value or both)
// and register again.
func (c *Codec) evolveRefused(ctx context.Context, topic string, sp *schema.Plan, err error) error {
	reg := c.reg
	for range 2 { // the key and the value subject
		var inc *SchemaIncompatibleError
		if reg == nil || reg.evolution == config.EvolutionPark || !errors.As(err, &inc) {
			return err
		}
		isKey := strings.HasPrefix(inc.Subject, topic+"-key")
		enc := c.valueAvro
		if isKey {
			enc = c.keyAvro
		}
		text, terr := avroSchemaOf(enc, sp, isKey)
		if enc == nil || terr != nil || text == "" {
			return err
		}
		var perr error
		if reg.evolution == config.EvolutionNewSubject {
			perr = reg.newSubject(ctx, topicSubject(topic, isKey), text)
		} else {
			perr = reg.force(ctx, inc.Subject, text)
		}
		if perr != nil {
			return refusal(ctx, perr)
		}
		if err = c.Prepare(ctx, topic, sp); err == nil {
			return nil
		}
	}
	return err
}

// Registers says the codec registers Avro schemas (a Schema Registry is
// configured).
func (c *Codec) Registers() bool { return c.reg != nil }

// Evolve checks sp's relation, the new shape of table name, against the subjects
// of topic, and applies schema_registry.evolution to a subject that would
// refuse it: nil when the registry accepts it (the first row registers
// it), or after a new subject or a forced schema; a *tableSchemaError
// (the table is to be parked) when the policy is park or the registry
// refuses; other errors (stopping, credentials, the registry unreachable)
// as they are. It blocks while the registry is unreachable.
func (c *Codec) Evolve(ctx context.Context, name, topic string, sp *schema.Plan, ddl string) error {
	if c.chain != nil {
		if c.chain.t.Chain.Len() == 0 {
			// Protobuf or JSON Schema without a chain: the schemas
			// written are the plan's Connect schemas (evolution_view.go).
			return c.evolveView(ctx, name, topic, sp, ddl)
		}
		// The schemas written are the chain's, known only from a record
		// (chain.go): the first record after the DDL registers them, and
		// a refusal parks the table there.
		return nil
	}
	for _, role := range []struct {
		enc   *schema.AvroEncoder
		isKey bool
	}{{c.keyAvro, true}, {c.valueAvro, false}} {
		if role.enc == nil {
			continue
		}
		text, err := avroSchemaOf(role.enc, sp, role.isKey)
		if err != nil || text == "" {
			continue // not valid Avro: the first row parks the table, saying why
		}
		loose, _ := avroSchemaOf(role.enc, allOptional(sp), role.isKey)
		if loose == text {
			loose = "" // no NOT NULL column to relax: one question is enough
		}
		if err := c.evolveSubject(ctx, name, topic, ddl, role.isKey,
			sr.Schema{Schema: text, Type: sr.TypeAvro}, sr.Schema{Schema: loose, Type: sr.TypeAvro}); err != nil {
			return err
		}
	}
	return nil
}

// evolveSubject asks the registry whether s (or loose, when it has a
// text) may follow the latest version of topic's key or value subject,
// and applies the policy when neither may: nil to go on, else the error
// Evolve returns.
func (c *Codec) evolveSubject(ctx context.Context, name, topic, ddl string, isKey bool, s, loose sr.Schema) error {
	reg := c.reg
	var msg string
	subject, err := reg.subject(ctx, topicSubject(topic, isKey))
	if err == nil {
		msg, err = reg.incompatibleOf(ctx, subject, s, loose)
	}
	switch {
	case err == nil:
	case ctx.Err() != nil, errors.As(err, new(*config.ConfigError)), registryRetryable(err):
		return err // stopping, or bad credentials (every table alike)
	default:
		// The registry refuses the question itself (a 4xx): the
		// first row's registration decides, as without the policy.
		reg.log.Warn("the Schema Registry did not answer the compatibility check; the first row of the new shape decides",
			zap.String("table", name), zap.String("subject", subject), zap.Error(err))
		return nil
	}
	if msg == "" {
		return nil // the registry accepts it: the first row registers it
	}
	switch reg.evolution {
	case config.EvolutionNewSubject:
		err = reg.newSubjectOf(ctx, topicSubject(topic, isKey), s)
	case config.EvolutionForce:
		err = reg.forceOf(ctx, subject, s)
	default:
		return &TableSchemaError{Err: &SchemaEvolutionError{Table: name, DDL: ddl, Subject: subject, Message: msg}}
	}
	if err != nil {
		return refusal(ctx, err)
	}
	return nil
}

// refusal classifies a failure of the policy's own registration: the
// table's (parked, or its copy failed) unless it is the pipeline's
// (stopping, credentials, registry unreachable).
func refusal(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.As(err, new(*config.ConfigError)) || registryRetryable(err) {
		return err
	}
	return &TableSchemaError{Err: err}
}

// avroSchemaOf is the key or value schema of sp's records.
func avroSchemaOf(enc *schema.AvroEncoder, sp *schema.Plan, isKey bool) (string, error) {
	k, v, err := enc.Schemas(sp)
	if isKey {
		return k, err
	}
	return v, err
}

// topicSubject is a topic's subject under TopicNameStrategy.
func topicSubject(topic string, isKey bool) string {
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

// subject returns the subject that base's schemas are registered under
// now: base itself, or under new_subject its newest generation, base-vN,
// found in the registry the first time and followed after each change.
func (r *Registry) subject(ctx context.Context, base string) (string, error) {
	if r.evolution != config.EvolutionNewSubject {
		return base, nil
	}
	r.mu.Lock()
	gen, ok := r.gens[base]
	r.mu.Unlock()
	if !ok {
		err := r.retrying(ctx, base, func() error {
			subjects, err := r.cl.Subjects(sr.WithParams(ctx, sr.SubjectPrefix(base+"-v")))
			for _, s := range subjects {
				if n, err := strconv.Atoi(strings.TrimPrefix(s, base+"-v")); err == nil && n > gen {
					gen = n
				}
			}
			return err
		})
		if err != nil {
			return "", err
		}
		r.mu.Lock()
		r.gens[base] = gen
		r.mu.Unlock()
	}
	return generation(base, gen), nil
}

func generation(base string, gen int) string {
	if gen < 2 {
		return base
	}
	return base + "-v" + strconv.Itoa(gen)
}

// incompatibleOf returns the registry's reason why none of schemas may
// follow the latest version of subject (for Avro: the schema and the
// schema with every field optional, what the first row falls back to:
// nullable.go); "" when one may, or the subject has no version yet. A
// schema without text is skipped.
func (r *Registry) incompatibleOf(ctx context.Context, subject string, schemas ...sr.Schema) (string, error) {
	var reason string
	for _, s := range schemas {
		if s.Schema == "" {
			continue
		}
		var res sr.CheckCompatibilityResult
		err := r.retrying(ctx, subject, func() error {
			var err error
			res, err = r.cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), subject, -1, s)
			var re *sr.ResponseError
			if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
				res, err = sr.CheckCompatibilityResult{Is: true}, nil // no subject or version: nothing to follow
			}
			return wrapRegistryErr(subject, err)
		})
		if err != nil || res.Is {
			return "", err
		}
		if reason == "" {
			reason = strings.Join(res.Messages, "; ")
			if reason == "" {
				reason = "not compatible with the latest version"
			}
		}
	}
	return reason, nil
}

// newSubject registers schema under the next generation of base.
func (r *Registry) newSubject(ctx context.Context, base, schema string) error {
	return r.newSubjectOf(ctx, base, sr.Schema{Schema: schema, Type: sr.TypeAvro})
}

// newSubjectOf is newSubject for a schema of any type.
func (r *Registry) newSubjectOf(ctx context.Context, base string, schema sr.Schema) error {
	cur, err := r.subject(ctx, base)
	if err != nil {
		return err
	}
	r.mu.Lock()
	gen := max(r.gens[base], 1) + 1
	r.mu.Unlock()
	next := generation(base, gen)
	if _, err := r.idOf(ctx, next, schema); err != nil {
		return err
	}
	r.mu.Lock()
	r.gens[base] = gen
	r.mu.Unlock()
	r.log.Warn("incompatible schema change: registered under a new subject (schema_evolution new_subject)",
		zap.String("subject", cur), zap.String("new_subject", next))
	return nil
}

// force registers schema under subject with the subject's compatibility
// NONE, then puts back the level it had: its own, or none (the global one
// applies again). A registration by someone else in between is not
// checked either.
func (r *Registry) force(ctx context.Context, subject, schema string) error {
	return r.forceOf(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
}

// forceOf is force for a schema of any type.
func (r *Registry) forceOf(ctx context.Context, subject string, schema sr.Schema) error {
	var own *sr.CompatibilityLevel
	err := r.retrying(ctx, subject, func() error {
		res := r.cl.Compatibility(ctx, subject)[0]
		var re *sr.ResponseError
		switch {
		case errors.As(res.Err, &re) && re.StatusCode == http.StatusNotFound:
			own = nil // no level of its own
		case res.Err != nil:
			return wrapRegistryErr(subject, res.Err)
		default:
			own = &res.Level
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := r.setLevel(ctx, subject, ptr(sr.CompatNone)); err != nil {
		return err
	}
	_, regErr := r.idOf(ctx, subject, schema)
	// Put the level back even when the registration failed or ctx ended.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := r.setLevel(rctx, subject, own); err != nil {
		r.log.Error("could not put back the subject's compatibility level after schema_evolution force; it is NONE now",
			zap.String("subject", subject), zap.Error(err))
	}
	if regErr == nil {
		r.log.Warn("incompatible schema change: registered with compatibility NONE (schema_evolution force)", zap.String("subject", subject))
	}
	return regErr
}

// setLevel sets subject's own compatibility level, or removes it (nil).
func (r *Registry) setLevel(ctx context.Context, subject string, l *sr.CompatibilityLevel) error {
	return r.retrying(ctx, subject, func() error {
		var res sr.CompatibilityResult
		if l == nil {
			res = r.cl.ResetCompatibility(ctx, subject)[0]
			var re *sr.ResponseError
			if errors.As(res.Err, &re) && re.StatusCode == http.StatusNotFound {
				return nil // had none
			}
		} else {
			res = r.cl.SetCompatibility(ctx, sr.SetCompatibility{Level: *l}, subject)[0]
		}
		return wrapRegistryErr(subject, res.Err)
	})
}

// retrying runs call until it succeeds or fails for good, waiting with
// backoff while the registry is unreachable, as id does.
func (r *Registry) retrying(ctx context.Context, subject string, call func() error) error {
	b := fault.NewBackoff(100*time.Millisecond, 10*time.Second)
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil || !registryRetryable(err) {
			return err
		}
		if attempt == 0 {
			r.log.Warn("Schema Registry unavailable; retrying (the stream waits, nothing is skipped)",
				zap.String("subject", subject), zap.Error(err))
		}
		if !r.sleep(ctx, b.Next()) {
			return fmt.Errorf("schema registry, subject %q: %w (last error: %v)", subject, context.Canceled, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
