package srtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// subjectSchema is the JSON of one subject version. schemaType is omitted
// for Avro, as Confluent does.
type subjectSchema struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
}

func toJSON(subject string, v *versionRec) subjectSchema {
	return subjectSchema{Subject: subject, Version: v.num, ID: v.rec.id, SchemaType: v.rec.schemaType,
		References: v.rec.refs, Schema: v.rec.text}
}

// register: POST /subjects/{s}/versions → {"id":N}.
func (r *Registry) register(req *http.Request, subject string) (any, *apiError) {
	p, body, aerr := decodeSchema(req)
	if aerr != nil {
		return nil, aerr
	}
	if body.ID > 0 {
		return nil, &apiError{http.StatusUnprocessableEntity, 42205,
			"Registering a schema with an explicit id needs IMPORT mode, which srtest does not implement"}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, aerr := r.registerLocked(subject, p)
	if aerr != nil {
		return nil, aerr
	}
	return map[string]int{"id": id}, nil
}

// lookup: POST /subjects/{s} → the newest version holding the schema.
func (r *Registry) lookup(req *http.Request, subject string) (any, *apiError) {
	p, _, aerr := decodeSchema(req)
	if aerr != nil {
		return nil, aerr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.subjects[subject]
	if s == nil || len(s.live(queryBool(req, "deleted"), false)) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	live := s.live(queryBool(req, "deleted"), false)
	for i := len(live) - 1; i >= 0; i-- {
		if live[i].rec.key == p.key {
			return toJSON(subject, live[i]), nil
		}
	}
	return nil, errSchemaNotFound("Schema not found")
}

// listSubjects: GET /subjects.
func (r *Registry) listSubjects(_ http.ResponseWriter, req *http.Request) (any, *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.subjectNamesLocked(queryBool(req, "deleted"), queryBool(req, "deletedOnly"),
		req.URL.Query().Get("subjectPrefix")), nil
}

// listVersions: GET /subjects/{s}/versions.
func (r *Registry) listVersions(req *http.Request, subject string) (any, *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []int{}
	if s := r.subjects[subject]; s != nil {
		for _, v := range s.live(queryBool(req, "deleted"), queryBool(req, "deletedOnly")) {
			out = append(out, v.num)
		}
	}
	if len(out) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	return out, nil
}

// getVersion: GET /subjects/{s}/versions/{v}, or its raw schema text.
func (r *Registry) getVersion(raw bool) func(*http.Request, string, int) (any, *apiError) {
	return func(req *http.Request, subject string, version int) (any, *apiError) {
		r.mu.Lock()
		defer r.mu.Unlock()
		v, aerr := r.findVersionLocked(subject, version, queryBool(req, "deleted"))
		if aerr != nil {
			return nil, aerr
		}
		if raw {
			return rawText(v.rec.text), nil
		}
		return toJSON(subject, v), nil
	}
}

// deleteSubject: DELETE /subjects/{s}[?permanent=true] → deleted versions.
func (r *Registry) deleteSubject(req *http.Request, subject string) (any, *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.subjects[subject]
	if s == nil || len(s.versions) == 0 {
		return nil, errSubjectNotFound(subject)
	}
	live := s.live(false, false)
	out := []int{}
	if !queryBool(req, "permanent") {
		if len(live) == 0 {
			return nil, &apiError{http.StatusNotFound, 40404, fmt.Sprintf(
				"Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)}
		}
		for _, v := range live {
			v.deleted = true
			out = append(out, v.num)
		}
		delete(r.subjectCompat, subject)
		return out, nil
	}
	if len(live) > 0 {
		return nil, &apiError{http.StatusNotFound, 40405, fmt.Sprintf(
			"Subject '%s' was not deleted first before being permanently deleted", subject)}
	}
	for _, v := range s.versions {
		out = append(out, v.num)
	}
	delete(r.subjects, subject)
	delete(r.subjectCompat, subject)
	return out, nil
}

// deleteVersion: DELETE /subjects/{s}/versions/{v}[?permanent=true] → v.
func (r *Registry) deleteVersion(req *http.Request, subject string, version int) (any, *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	permanent := queryBool(req, "permanent")
	// "latest" is the latest live version for a soft delete, the latest
	// of all for a hard one; a numbered version may be soft-deleted.
	v, aerr := r.findVersionLocked(subject, version, permanent || version != -1)
	if aerr != nil {
		return nil, aerr
	}
	if !permanent {
		if v.deleted {
			return nil, &apiError{http.StatusNotFound, 40406, fmt.Sprintf(
				"Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, v.num)}
		}
		v.deleted = true
		return v.num, nil
	}
	if !v.deleted {
		return nil, &apiError{http.StatusNotFound, 40407, fmt.Sprintf(
			"Subject '%s' Version %d was not deleted first before being permanently deleted", subject, v.num)}
	}
	s := r.subjects[subject]
	for i, x := range s.versions {
		if x == v {
			s.versions = append(s.versions[:i], s.versions[i+1:]...)
			break
		}
	}
	if len(s.versions) == 0 {
		delete(r.subjects, subject)
	}
	return v.num, nil
}

// allSchemas: GET /schemas.
func (r *Registry) allSchemas(_ http.ResponseWriter, req *http.Request) (any, *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	deleted := queryBool(req, "deleted")
	out := []subjectSchema{}
	for _, name := range r.subjectNamesLocked(deleted, false, req.URL.Query().Get("subjectPrefix")) {
		live := r.subjects[name].live(deleted, false)
		if queryBool(req, "latestOnly") {
			live = live[len(live)-1:]
		}
		for _, v := range live {
			out = append(out, toJSON(name, v))
		}
	}
	return out, nil
}

// byIDHandler: GET /schemas/ids/{id}, and tail "schema", "versions" or
// "subjects".
func (r *Registry) byIDHandler(idText, tail string) handler {
	return func(_ http.ResponseWriter, req *http.Request) (any, *apiError) {
		r.mu.Lock()
		defer r.mu.Unlock()
		id, err := strconv.Atoi(idText)
		rec := r.byID[id]
		if err != nil || rec == nil {
			return nil, errSchemaNotFound(fmt.Sprintf("Schema %s not found", idText))
		}
		only := req.URL.Query().Get("subject")
		deleted := queryBool(req, "deleted") || tail == "" || tail == "schema"
		type usage struct {
			Subject string `json:"subject"`
			Version int    `json:"version"`
		}
		usages, subjects := []usage{}, []string{}
		for _, name := range r.subjectNamesLocked(deleted, false, "") {
			if only != "" && name != only {
				continue
			}
			used := false
			for _, v := range r.subjects[name].live(deleted, false) {
				if v.rec == rec {
					usages, used = append(usages, usage{name, v.num}), true
				}
			}
			if used {
				subjects = append(subjects, name)
			}
		}
		switch {
		case only != "" && len(subjects) == 0:
			return nil, errSchemaNotFound(fmt.Sprintf("Schema %d not found under subject '%s'", id, only))
		case tail == "versions":
			return usages, nil
		case tail == "subjects":
			return subjects, nil
		case tail == "schema":
			return rawText(rec.text), nil
		}
		out := map[string]any{"schema": rec.text}
		if rec.schemaType != "" {
			out["schemaType"] = rec.schemaType
		}
		if len(rec.refs) > 0 {
			out["references"] = rec.refs
		}
		if queryBool(req, "fetchMaxId") {
			out["maxId"] = r.nextID - 1
		}
		return out, nil
	}
}

// configHandler: GET/PUT/DELETE /config and /config/{s}.
func (r *Registry) configHandler(subject string) handler {
	return func(w http.ResponseWriter, req *http.Request) (any, *apiError) {
		r.mu.Lock()
		defer r.mu.Unlock()
		own, has := r.subjectCompat[subject]
		if subject == "" {
			own, has = r.global, true
		}
		notConfigured := func() *apiError {
			if r.subjects[subject] == nil {
				return errSubjectNotFound(subject)
			}
			return &apiError{http.StatusNotFound, 40408, fmt.Sprintf(
				"Subject '%s' does not have subject-level compatibility configured", subject)}
		}
		switch req.Method {
		case http.MethodGet:
			if !has {
				if !queryBool(req, "defaultToGlobal") {
					return nil, notConfigured()
				}
				own = r.global
			}
			return map[string]Level{"compatibilityLevel": own}, nil
		case http.MethodPut:
			var body struct {
				Compatibility string `json:"compatibility"`
			}
			if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
				return nil, &apiError{http.StatusBadRequest, 400, fmt.Sprintf("Bad Request: invalid JSON body: %v", err)}
			}
			l := Level(strings.ToUpper(body.Compatibility))
			if !l.valid() {
				return nil, &apiError{http.StatusUnprocessableEntity, 42203, "Invalid compatibility level. Valid values are none, backward, " +
					"forward, full, backward_transitive, forward_transitive, and full_transitive"}
			}
			if subject == "" {
				r.global = l
			} else {
				r.subjectCompat[subject] = l
			}
			return map[string]Level{"compatibility": l}, nil
		case http.MethodDelete:
			if !has {
				return nil, notConfigured()
			}
			if subject == "" {
				r.global = r.cfg.compat
			} else {
				delete(r.subjectCompat, subject)
			}
			// Confluent answers with the old config ("compatibilityLevel");
			// franz-go reads "compatibility". Send both.
			return map[string]Level{"compatibilityLevel": own, "compatibility": own}, nil
		}
		return notAllowed(w, req)
	}
}

// compatibility: POST /compatibility/subjects/{s}/versions[/{v}]. Without a
// version (or for "latest" of an empty subject) it checks what a
// registration would check; with one, only that version, in the subject's
// level's direction(s).
func (r *Registry) compatibility(version string) func(*http.Request, string) (any, *apiError) {
	return func(req *http.Request, subject string) (any, *apiError) {
		p, _, aerr := decodeSchema(req)
		if aerr != nil {
			return nil, aerr
		}
		ver := 0
		if version != "" {
			if ver, aerr = parseVersion(version); aerr != nil {
				return nil, aerr
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		level := r.levelLocked(subject)
		var live []*versionRec
		if s := r.subjects[subject]; s != nil {
			live = s.live(false, false)
		}
		var msgs []string
		switch aerr := unchecked(level, p.schemaType, live); {
		case aerr != nil && !registered(p, live):
			// What registering it would do: refused, naming the fix (a
			// schema the subject holds already registers as it is).
			msgs = []string{aerr.msg}
		case aerr != nil:
		case version == "" || (ver == -1 && len(live) == 0):
			msgs = incompatibilities(level, p.parsed, live)
		default:
			v, aerr := r.findVersionLocked(subject, ver, false)
			if aerr != nil {
				return nil, aerr
			}
			msgs = checkPair(level, p.parsed, v)
		}
		out := map[string]any{"is_compatible": len(msgs) == 0}
		if queryBool(req, "verbose") {
			out["messages"] = append([]string{}, msgs...)
		}
		return out, nil
	}
}

// registered reports whether one of the live versions is p's schema.
func registered(p prepared, live []*versionRec) bool {
	for _, v := range live {
		if v.rec.key == p.key {
			return true
		}
	}
	return false
}
