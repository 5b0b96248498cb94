package srtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hamba/avro/v2"
)

// schemaRec is one schema under its global id, shared by every subject
// version that registered the same schema.
type schemaRec struct {
	id         int
	text       string      // as first registered
	key        string      // identity; see identityKey
	parsed     avro.Schema // nil for PROTOBUF and JSON
	schemaType string      // "" for AVRO, else PROTOBUF or JSON
	refs       []Reference
}

type versionRec struct {
	num     int
	rec     *schemaRec
	deleted bool // soft-deleted
}

// subjectRec holds a subject's versions, ascending. Hard deletes remove
// entries; soft deletes only mark them.
type subjectRec struct{ versions []*versionRec }

// live returns the versions visible to a request: not soft-deleted ones, or
// all with deleted, or only soft-deleted ones with deletedOnly.
func (s *subjectRec) live(deleted, deletedOnly bool) []*versionRec {
	var out []*versionRec
	for _, v := range s.versions {
		if (deletedOnly && v.deleted) || (!deletedOnly && (deleted || !v.deleted)) {
			out = append(out, v)
		}
	}
	return out
}

// apiError is a registry error response: HTTP status plus Confluent
// error_code and message.
type apiError struct {
	status, code int
	msg          string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (error_code %d)", e.msg, e.code) }

func errSubjectNotFound(s string) *apiError {
	return &apiError{http.StatusNotFound, 40401, fmt.Sprintf("Subject '%s' not found.", s)}
}

func errVersionNotFound(v int) *apiError {
	return &apiError{http.StatusNotFound, 40402, fmt.Sprintf("Version %d not found.", v)}
}

func errSchemaNotFound(msg string) *apiError {
	return &apiError{http.StatusNotFound, 40403, msg}
}

func errInvalidSchema(msg string) *apiError {
	return &apiError{http.StatusUnprocessableEntity, 42201, msg}
}

// schemaRequest is the body of register, lookup and compatibility calls.
type schemaRequest struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []Reference `json:"references"`
	ID         int         `json:"id"`
	Version    int         `json:"version"`
}

// Reference is a schema reference: the import name a schema uses and
// the subject version that holds the referenced schema.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type prepared struct {
	text, key  string
	parsed     avro.Schema
	schemaType string
	refs       []Reference
}

// prepare validates and parses a request's schema.
func prepare(req schemaRequest) (prepared, *apiError) {
	if strings.TrimSpace(req.Schema) == "" {
		return prepared{}, errInvalidSchema("Empty schema")
	}
	switch t := strings.ToUpper(req.SchemaType); t {
	case "", "AVRO":
	case "PROTOBUF", "JSON":
		return prepareOther(t, req)
	default:
		return prepared{}, errInvalidSchema(fmt.Sprintf("Invalid schema type %s: the types are AVRO, PROTOBUF and JSON", req.SchemaType))
	}
	if len(req.References) > 0 {
		return prepared{}, errInvalidSchema("Invalid schema: srtest takes schema references for PROTOBUF and JSON schemas only, not AVRO")
	}
	parsed, err := avro.ParseWithCache(req.Schema, "", &avro.SchemaCache{})
	if err != nil {
		return prepared{}, errInvalidSchema(fmt.Sprintf("Invalid schema %s with refs [] of type AVRO, details: %v", req.Schema, err))
	}
	return prepared{text: req.Schema, key: identityKey(req.Schema), parsed: parsed}, nil
}

// identityKey is the schema JSON re-encoded compactly with sorted object
// keys, so whitespace and key order do not make a schema new, while
// defaults, docs and aliases (which hamba's fingerprint drops) still do.
func identityKey(text string) string {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return strings.TrimSpace(text)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return strings.TrimSpace(text)
	}
	return string(b)
}

// registerLocked registers p under subject and returns its global id.
func (r *Registry) registerLocked(subject string, p prepared) (int, *apiError) {
	if aerr := r.checkRefsLocked(p.refs); aerr != nil {
		return 0, aerr
	}
	s := r.subjects[subject]
	if s != nil {
		live := s.live(false, false)
		for i := len(live) - 1; i >= 0; i-- {
			if live[i].rec.key == p.key {
				return live[i].rec.id, nil
			}
		}
		level := r.levelLocked(subject)
		if aerr := unchecked(level, p.schemaType, live); aerr != nil {
			return 0, aerr
		}
		if msgs := incompatibilities(level, p.parsed, live); len(msgs) > 0 {
			return 0, &apiError{http.StatusConflict, 409, fmt.Sprintf(
				"Schema being registered is incompatible with an earlier schema for subject %q, details: [%s]",
				subject, strings.Join(msgs, ", "))}
		}
	} else {
		s = &subjectRec{}
		r.subjects[subject] = s
	}
	rec := r.byKey[p.key]
	if rec == nil {
		rec = &schemaRec{id: r.nextID, text: p.text, key: p.key, parsed: p.parsed,
			schemaType: p.schemaType, refs: p.refs}
		r.nextID++
		r.byKey[p.key] = rec
		r.byID[rec.id] = rec
	}
	num := 1
	if n := len(s.versions); n > 0 {
		num = s.versions[n-1].num + 1
	}
	s.versions = append(s.versions, &versionRec{num: num, rec: rec})
	return rec.id, nil
}

// incompatibilities checks a new schema against the live versions (oldest
// first) under level, and describes each failure; none means compatible.
func incompatibilities(level Level, next avro.Schema, live []*versionRec) []string {
	if level == None || len(live) == 0 {
		return nil
	}
	against := live[len(live)-1:]
	if strings.HasSuffix(string(level), "_TRANSITIVE") {
		against = live
	}
	var msgs []string
	for i := len(against) - 1; i >= 0; i-- {
		msgs = append(msgs, checkPair(level, next, against[i])...)
	}
	return msgs
}

// checkPair checks a new schema against one old version under level,
// ignoring transitivity.
func checkPair(level Level, next avro.Schema, old *versionRec) []string {
	var msgs []string
	check := func(reader, writer string, rs, ws avro.Schema) {
		// A fresh SchemaCompatibility each time: its cache is keyed by
		// fingerprints, which ignore defaults.
		if err := avro.NewSchemaCompatibility().Compatible(rs, ws); err != nil {
			msgs = append(msgs, fmt.Sprintf(
				"{description:'the %s schema cannot read data written with the %s schema: %v', oldSchemaVersion: %d, oldSchema: '%s', compatibility: '%s'}",
				reader, writer, err, old.num, old.rec.text, level))
		}
	}
	switch level {
	case Backward, BackwardTransitive, Full, FullTransitive:
		check("new", "old", next, old.rec.parsed)
	}
	switch level {
	case Forward, ForwardTransitive, Full, FullTransitive:
		check("old", "new", old.rec.parsed, next)
	}
	return msgs
}

// findVersion resolves a version to a live version of subject: -1 means
// the latest. Errors are 40401 or 40402.
func (r *Registry) findVersionLocked(subject string, version int, deleted bool) (*versionRec, *apiError) {
	s := r.subjects[subject]
	if s == nil {
		return nil, errSubjectNotFound(subject)
	}
	live := s.live(deleted, false)
	if len(live) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	if version == -1 {
		return live[len(live)-1], nil
	}
	for _, v := range live {
		if v.num == version {
			return v, nil
		}
	}
	return nil, errVersionNotFound(version)
}
