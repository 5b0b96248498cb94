package srtest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// Level is a compatibility level, spelled as the registry spells it.
type Level string

// Compatibility levels. Backward is the registry-wide default.
const (
	None               Level = "NONE"
	Backward           Level = "BACKWARD"
	BackwardTransitive Level = "BACKWARD_TRANSITIVE"
	Forward            Level = "FORWARD"
	ForwardTransitive  Level = "FORWARD_TRANSITIVE"
	Full               Level = "FULL"
	FullTransitive     Level = "FULL_TRANSITIVE"
)

func (l Level) valid() bool {
	switch l {
	case None, Backward, BackwardTransitive, Forward, ForwardTransitive, Full, FullTransitive:
		return true
	}
	return false
}

// Option configures a Registry.
type Option func(*config)

type config struct {
	user, pass string
	auth       bool
	tls        bool
	addr       string
	compat     Level
	logf       func(format string, args ...any)
	latency    time.Duration
}

// WithBasicAuth requires HTTP basic auth with this username and password on
// every request; a missing or wrong one gets 401 with error_code 40101.
func WithBasicAuth(username, password string) Option {
	return func(c *config) { c.user, c.pass, c.auth = username, password, true }
}

// WithTLS serves HTTPS with httptest's self-signed certificate (valid for
// 127.0.0.1, ::1 and example.com). Clients trust it through
// [Registry.ClientTLSConfig], [Registry.CertPool] or [Registry.CACertPEM].
func WithTLS() Option { return func(c *config) { c.tls = true } }

// WithCompatibility sets the initial global compatibility level (default
// BACKWARD).
func WithCompatibility(l Level) Option { return func(c *config) { c.compat = l } }

// WithListenAddr listens on addr (e.g. "127.0.0.1:8081") instead of
// 127.0.0.1 on a free port; meant for demo binaries.
func WithListenAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithLatency delays every request by d before it is served, as a
// registry across a network would: on localhost the stand-in answers in
// microseconds, which hides what a client's round trips one after another
// cost. A client that gives up on the request ends the wait; the request
// is then neither served nor counted by Requests.
func WithLatency(d time.Duration) Option { return func(c *config) { c.latency = d } }

// WithLogf logs one line per request ("srtest: POST /subjects/x/versions -> 200").
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *config) { c.logf = logf }
}

// Registry is a running Schema Registry stand-in. All methods are safe for
// concurrent use.
type Registry struct {
	cfg       config
	srv       *httptest.Server
	closeOnce sync.Once

	mu            sync.Mutex
	nextID        int
	byID          map[int]*schemaRec
	byKey         map[string]*schemaRec
	subjects      map[string]*subjectRec
	global        Level
	subjectCompat map[string]Level
	requests      map[Endpoint]int
	inFlight      int // requests being served, latency included
	maxInFlight   int // the most at once since the start or ResetRequests
	failAny       failure
	failOn        map[Endpoint]*failure
}

type failure struct{ n, status int }

// New starts a Registry for the test and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	r, err := Start(opts...)
	if err != nil {
		t.Fatalf("srtest: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}

// Start starts a Registry; the caller must Close it.
func Start(opts ...Option) (*Registry, error) {
	cfg := config{compat: Backward}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.compat.valid() {
		return nil, fmt.Errorf("invalid compatibility level %q", cfg.compat)
	}
	r := &Registry{
		cfg:           cfg,
		nextID:        1,
		byID:          map[int]*schemaRec{},
		byKey:         map[string]*schemaRec{},
		subjects:      map[string]*subjectRec{},
		global:        cfg.compat,
		subjectCompat: map[string]Level{},
		requests:      map[Endpoint]int{},
		failOn:        map[Endpoint]*failure{},
	}
	r.srv = httptest.NewUnstartedServer(r)
	if cfg.addr != "" {
		l, err := net.Listen("tcp", cfg.addr)
		if err != nil {
			r.srv.Close()
			return nil, fmt.Errorf("listen on %s: %w", cfg.addr, err)
		}
		r.srv.Listener.Close()
		r.srv.Listener = l
	}
	if cfg.tls {
		r.srv.StartTLS()
	} else {
		r.srv.Start()
	}
	return r, nil
}

// URL returns the base URL, "http://127.0.0.1:PORT" (https with WithTLS).
func (r *Registry) URL() string { return r.srv.URL }

// Close stops the server, waiting for requests in flight. It is idempotent.
func (r *Registry) Close() { r.closeOnce.Do(r.srv.Close) }

// CertPool returns a pool trusting the server's certificate, or nil
// without WithTLS.
func (r *Registry) CertPool() *x509.CertPool {
	c := r.srv.Certificate()
	if c == nil {
		return nil
	}
	p := x509.NewCertPool()
	p.AddCert(c)
	return p
}

// ClientTLSConfig returns a client config trusting the server (for
// sr.DialTLSConfig), or nil without WithTLS.
func (r *Registry) ClientTLSConfig() *tls.Config {
	p := r.CertPool()
	if p == nil {
		return nil
	}
	return &tls.Config{RootCAs: p, MinVersion: tls.VersionTLS12}
}

// CACertPEM returns the server's self-signed certificate in PEM, to be
// written to a CA file, or nil without WithTLS.
func (r *Registry) CACertPEM() []byte {
	c := r.srv.Certificate()
	if c == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// SetCompatibility sets the level of subject, or the global level if
// subject is "". It panics on an unknown level.
func (r *Registry) SetCompatibility(subject string, l Level) {
	if !l.valid() {
		panic(fmt.Sprintf("srtest: invalid compatibility level %q", l))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if subject == "" {
		r.global = l
	} else {
		r.subjectCompat[subject] = l
	}
}

// Compatibility returns the level in force for subject (its own, else the
// global one), or the global level if subject is "".
func (r *Registry) Compatibility(subject string) Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.levelLocked(subject)
}

// Register registers an Avro schema under subject as POST
// /subjects/{subject}/versions would (same dedup and compatibility rules,
// not counted as a request); use it to seed state.
func (r *Registry) Register(subject, schema string) (int, error) {
	p, aerr := prepare(schemaRequest{Schema: schema})
	if aerr != nil {
		return 0, aerr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, aerr := r.registerLocked(subject, p)
	if aerr != nil {
		return 0, aerr
	}
	return id, nil
}

// RegisterSchema registers a schema of any type (schemaType "" or AVRO,
// PROTOBUF, JSON) with its references, as Register does for Avro.
func (r *Registry) RegisterSchema(subject, schemaType, schema string, refs ...Reference) (int, error) {
	p, aerr := prepare(schemaRequest{Schema: schema, SchemaType: schemaType, References: refs})
	if aerr != nil {
		return 0, aerr
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, aerr := r.registerLocked(subject, p)
	if aerr != nil {
		return 0, aerr
	}
	return id, nil
}

// Subjects returns the subjects with at least one live (not soft-deleted)
// version, sorted.
func (r *Registry) Subjects() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.subjectNamesLocked(false, false, "")
}

// Versions returns subject's live version numbers, ascending.
func (r *Registry) Versions(subject string) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	if s := r.subjects[subject]; s != nil {
		for _, v := range s.live(false, false) {
			out = append(out, v.num)
		}
	}
	return out
}

// SchemaByID returns the text of the schema with this global id.
func (r *Registry) SchemaByID(id int) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.byID[id]; rec != nil {
		return rec.text, true
	}
	return "", false
}

// FailNext makes the next n requests, whatever their endpoint, fail with
// HTTP status (body {"error_code":status,"message":...}; 50001 for 500).
// Status 0 drops the connection without a response instead, as a registry
// dying mid-request would. n <= 0 cancels. Injected failures are checked
// before authentication; failed requests are still counted by Requests.
func (r *Registry) FailNext(n, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failAny = failure{n: n, status: status}
}

// FailNextOn is FailNext restricted to one endpoint; it takes precedence
// over FailNext for that endpoint.
func (r *Registry) FailNextOn(e Endpoint, n, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failOn[e] = &failure{n: n, status: status}
}

// Requests returns how many requests of this endpoint arrived, including
// ones refused by auth or injected failures.
func (r *Registry) Requests(e Endpoint) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[e]
}

// TotalRequests returns how many requests arrived, on any endpoint.
func (r *Registry) TotalRequests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.requests {
		n += c
	}
	return n
}

// MaxInFlight returns the most requests that were being served at once
// (WithLatency's wait included) since the start or ResetRequests: 1 for a
// client that sends one request after the other.
func (r *Registry) MaxInFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxInFlight
}

// ResetRequests zeroes the request counters and MaxInFlight.
func (r *Registry) ResetRequests() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.requests)
	r.maxInFlight = r.inFlight
}

// subjectNamesLocked lists subjects by visibility; see subjectRec.live.
func (r *Registry) subjectNamesLocked(deleted, deletedOnly bool, prefix string) []string {
	out := []string{}
	for name, s := range r.subjects {
		if len(name) >= len(prefix) && name[:len(prefix)] == prefix && len(s.live(deleted, deletedOnly)) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (r *Registry) levelLocked(subject string) Level {
	if l, ok := r.subjectCompat[subject]; ok && subject != "" {
		return l
	}
	return r.global
}
