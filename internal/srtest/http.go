package srtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Endpoint names a group of requests for [Registry.Requests],
// [Registry.FailNextOn].
type Endpoint string

// Endpoints.
const (
	EndpointRegister      Endpoint = "register"       // POST /subjects/{s}/versions
	EndpointLookup        Endpoint = "lookup"         // POST /subjects/{s}
	EndpointSubjects      Endpoint = "subjects"       // GET /subjects
	EndpointVersions      Endpoint = "versions"       // GET /subjects/{s}/versions
	EndpointVersion       Endpoint = "version"        // GET /subjects/{s}/versions/{v}[/schema]
	EndpointDeleteSubject Endpoint = "delete_subject" // DELETE /subjects/{s}
	EndpointDeleteVersion Endpoint = "delete_version" // DELETE /subjects/{s}/versions/{v}
	EndpointSchemaByID    Endpoint = "schema_by_id"   // GET /schemas/ids/{id}[/schema]
	EndpointIDUsages      Endpoint = "id_usages"      // GET /schemas/ids/{id}/versions|subjects
	EndpointSchemas       Endpoint = "schemas"        // GET /schemas, /schemas/types
	EndpointConfig        Endpoint = "config"         // GET/PUT/DELETE /config[/{s}]
	EndpointCompatibility Endpoint = "compatibility"  // POST /compatibility/subjects/{s}/versions[/{v}]
	EndpointMode          Endpoint = "mode"           // GET /mode[/{s}]
	EndpointUnknown       Endpoint = "unknown"        // anything else
)

const contentType = "application/vnd.schemaregistry.v1+json"

type handler func(w http.ResponseWriter, req *http.Request) (any, *apiError)

// ServeHTTP counts the request, waits WithLatency's delay, applies
// injected failures and auth, then routes it.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.inFlight++
	r.maxInFlight = max(r.maxInFlight, r.inFlight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()
	ep, h := r.route(req)
	if d := r.cfg.latency; d > 0 {
		// Read the body first: net/http notices a client that gives up
		// only once the body is read.
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return // the client gave up: not served, not counted
		}
	}
	status := r.serve(w, req, ep, h)
	if r.cfg.logf != nil {
		r.cfg.logf("srtest: %s %s -> %d", req.Method, req.URL.RequestURI(), status)
	}
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request, ep Endpoint, h handler) int {
	r.mu.Lock()
	r.requests[ep]++
	f := r.failOn[ep]
	if f == nil || f.n <= 0 {
		f = &r.failAny
	}
	injected, fstatus := f.n > 0, f.status
	if injected {
		f.n--
	}
	r.mu.Unlock()

	if injected {
		if fstatus == 0 {
			panic(http.ErrAbortHandler) // net/http drops the connection silently
		}
		code := fstatus
		if fstatus == http.StatusInternalServerError {
			code = 50001
		}
		return writeError(w, &apiError{fstatus, code, fmt.Sprintf("srtest: injected failure (HTTP %d)", fstatus)})
	}
	if r.cfg.auth {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.cfg.user || p != r.cfg.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="srtest"`)
			return writeError(w, &apiError{http.StatusUnauthorized, 40101, "Unauthorized"})
		}
	}
	out, aerr := h(w, req)
	if aerr != nil {
		return writeError(w, aerr)
	}
	if s, ok := out.(rawText); ok {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write([]byte(s))
		return http.StatusOK
	}
	return writeJSON(w, http.StatusOK, out)
}

// rawText is a handler result written as is (the .../schema endpoints).
type rawText string

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
	return status
}

func writeError(w http.ResponseWriter, e *apiError) int {
	return writeJSON(w, e.status, map[string]any{"error_code": e.code, "message": e.msg})
}

func notFound(http.ResponseWriter, *http.Request) (any, *apiError) {
	return nil, &apiError{http.StatusNotFound, 404, "HTTP 404 Not Found"}
}

func notAllowed(http.ResponseWriter, *http.Request) (any, *apiError) {
	return nil, &apiError{http.StatusMethodNotAllowed, 405, "HTTP 405 Method Not Allowed"}
}

// route maps a request to its endpoint and handler. Path segments are
// unescaped one by one, so a subject may contain an escaped "/".
func (r *Registry) route(req *http.Request) (Endpoint, handler) {
	var seg []string
	for _, s := range strings.Split(strings.Trim(req.URL.EscapedPath(), "/"), "/") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return EndpointUnknown, notFound
		}
		seg = append(seg, u)
	}
	m := req.Method
	pick := func(ep Endpoint, want string, h handler) (Endpoint, handler) {
		if m != want {
			return ep, notAllowed
		}
		return ep, h
	}
	n := len(seg)
	switch {
	case n == 1 && seg[0] == "subjects":
		return pick(EndpointSubjects, http.MethodGet, r.listSubjects)
	case n == 2 && seg[0] == "subjects":
		if m == http.MethodDelete {
			return EndpointDeleteSubject, r.withSubject(seg[1], r.deleteSubject)
		}
		return pick(EndpointLookup, http.MethodPost, r.withSubject(seg[1], r.lookup))
	case n == 3 && seg[0] == "subjects" && seg[2] == "versions":
		if m == http.MethodPost {
			return EndpointRegister, r.withSubject(seg[1], r.register)
		}
		return pick(EndpointVersions, http.MethodGet, r.withSubject(seg[1], r.listVersions))
	case n == 4 && seg[0] == "subjects" && seg[2] == "versions":
		if m == http.MethodDelete {
			return EndpointDeleteVersion, r.withVersion(seg[1], seg[3], r.deleteVersion)
		}
		return pick(EndpointVersion, http.MethodGet, r.withVersion(seg[1], seg[3], r.getVersion(false)))
	case n == 5 && seg[0] == "subjects" && seg[2] == "versions" && seg[4] == "schema":
		return pick(EndpointVersion, http.MethodGet, r.withVersion(seg[1], seg[3], r.getVersion(true)))
	case n == 1 && seg[0] == "schemas":
		return pick(EndpointSchemas, http.MethodGet, r.allSchemas)
	case n == 2 && seg[0] == "schemas" && seg[1] == "types":
		return pick(EndpointSchemas, http.MethodGet, func(http.ResponseWriter, *http.Request) (any, *apiError) {
			return []string{"JSON", "PROTOBUF", "AVRO"}, nil
		})
	case n >= 3 && n <= 4 && seg[0] == "schemas" && seg[1] == "ids":
		tail := ""
		if n == 4 {
			tail = seg[3]
		}
		ep := EndpointSchemaByID
		if tail == "versions" || tail == "subjects" {
			ep = EndpointIDUsages
		} else if tail != "" && tail != "schema" {
			return EndpointUnknown, notFound
		}
		return pick(ep, http.MethodGet, r.byIDHandler(seg[2], tail))
	case (n == 1 || n == 2) && seg[0] == "config":
		subject := ""
		if n == 2 {
			subject = seg[1]
		}
		return EndpointConfig, r.configHandler(subject)
	case (n == 4 || n == 5) && seg[0] == "compatibility" && seg[1] == "subjects" && seg[3] == "versions":
		v := ""
		if n == 5 {
			v = seg[4]
		}
		return pick(EndpointCompatibility, http.MethodPost, r.withSubject(seg[2], r.compatibility(v)))
	case (n == 1 || n == 2) && seg[0] == "mode":
		return pick(EndpointMode, http.MethodGet, func(http.ResponseWriter, *http.Request) (any, *apiError) {
			return map[string]string{"mode": "READWRITE"}, nil
		})
	}
	return EndpointUnknown, notFound
}

// parseVersion parses "latest", -1 (both → -1) or a positive version.
func parseVersion(s string) (int, *apiError) {
	if s == "latest" {
		return -1, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v == 0 || v < -1 {
		return 0, &apiError{http.StatusUnprocessableEntity, 42202, fmt.Sprintf(
			"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", s)}
	}
	return v, nil
}

func (r *Registry) withSubject(subject string, h func(*http.Request, string) (any, *apiError)) handler {
	return func(_ http.ResponseWriter, req *http.Request) (any, *apiError) { return h(req, subject) }
}

func (r *Registry) withVersion(subject, version string, h func(*http.Request, string, int) (any, *apiError)) handler {
	return func(_ http.ResponseWriter, req *http.Request) (any, *apiError) {
		v, aerr := parseVersion(version)
		if aerr != nil {
			return nil, aerr
		}
		return h(req, subject, v)
	}
}

func queryBool(req *http.Request, name string) bool {
	b, _ := strconv.ParseBool(req.URL.Query().Get(name))
	return b
}

// decodeSchema reads a schema request body and parses its schema.
func decodeSchema(req *http.Request) (prepared, schemaRequest, *apiError) {
	var body schemaRequest
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		return prepared{}, body, &apiError{http.StatusBadRequest, 400, fmt.Sprintf("Bad Request: invalid JSON body: %v", err)}
	}
	p, aerr := prepare(body)
	return p, body, aerr
}
