package record

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"go.uber.org/zap"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
)

// RegistryConns is how many requests to the Schema Registry at once reuse
// their connections (and TLS sessions): the client keeps that many idle
// connections per host. A caller that sends more at once opens more, and
// closes them after.
const RegistryConns = 20

// Registry gives Avro schemas their Schema Registry ids. A schema is
// registered (or, with auto_register off, looked up) once per subject per
// process: the answer is cached by subject and schema text, which the
// encoders build deterministically, and callers that ask for the same one
// while its request is out wait for that request's answer instead of
// sending another (so a copy finds in flight the subjects another caller
// asked for first). Safe for concurrent use; id blocks while
// the registry answers, retrying an unreachable or failing registry with
// backoff until ctx ends.
type Registry struct {
	cl           *sr.Client
	autoRegister bool
	evolution    string // format.schema_registry.schema_evolution (evolution.go)
	log          *zap.Logger

	mu      sync.Mutex
	ids     map[string]int     // subject + "\x00" + schema
	flights map[string]*flight // requests out, by the same key as ids
	gens    map[string]int     // new_subject: each base subject's newest generation (evolution.go)

	// Stopping ends when the pipeline is asked to stop (set by Run before
	// any record is encoded); nil for the commands that only look up.
	Stopping context.Context
}

// SchemaIncompatibleError is a schema the registry refused as incompatible
// with the subject's earlier versions (HTTP 409).
type SchemaIncompatibleError struct {
	Subject string
	Message string
}

func (e *SchemaIncompatibleError) Error() string {
	msg := e.Message
	if len(msg) > 600 { // the registry quotes the whole old schema
		msg = msg[:600] + "…"
	}
	return fmt.Sprintf("the Schema Registry refused the new schema of subject %q as incompatible: %s; "+
		"make the change compatible (for example add columns as nullable), or change the subject's compatibility level, then run `mooncdc resnapshot` for the table",
		e.Subject, msg)
}

// SchemaNotRegisteredError is a schema that is not registered while
// format.schema_registry.auto_register is false.
type SchemaNotRegisteredError struct {
	Subject string
	Err     error
}

func (e *SchemaNotRegisteredError) Error() string {
	return fmt.Sprintf("schema of subject %q is not registered and format.schema_registry.auto_register is false: %v; "+
		"register the schema (mooncdc logs it at debug level) or set format.schema_registry.auto_register: true", e.Subject, e.Err)
}

func (e *SchemaNotRegisteredError) Unwrap() error { return e.Err }

// NewRegistry builds the client of format.schema_registry. It reads the TLS
// files but does not contact the registry.
func NewRegistry(cfg config.SchemaRegistryConfig, log *zap.Logger) (*Registry, error) {
	cl, err := NewRegistryClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Registry{cl: cl, autoRegister: cfg.AutoRegister, evolution: cfg.SchemaEvolution, log: log,
		ids: map[string]int{}, flights: map[string]*flight{}, gens: map[string]int{}}, nil
}

// NewRegistryClient returns a Schema Registry client configured as
// format.schema_registry says (URL, basic auth with the password or its
// file, TLS). It reads the files but does not contact the registry. Errors
// are *ConfigError.
func NewRegistryClient(cfg config.SchemaRegistryConfig) (*sr.Client, error) {
	opts := []sr.ClientOpt{sr.URLs(cfg.URL), sr.UserAgent("mooncdc/" + config.Version)}
	pw, err := config.SecretValue(cfg.Password, "format.schema_registry.password_file", cfg.PasswordFile)
	if err != nil {
		return nil, err
	}
	if cfg.Username != "" || pw != "" {
		opts = append(opts, sr.BasicAuth(cfg.Username, pw))
	}
	tlsCfg, err := registryTLS(cfg)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: RegistryConns,
	}
	opts = append(opts, sr.HTTPClient(&http.Client{Transport: tr, Timeout: 30 * time.Second}))
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, &config.ConfigError{Err: fmt.Errorf("format.schema_registry.url: %w", err)}
	}
	return cl, nil
}

func registryTLS(cfg config.SchemaRegistryConfig) (*tls.Config, error) {
	return config.LoadTLS("format.schema_registry", cfg.CAFile, cfg.CertFile, cfg.KeyFile, cfg.InsecureSkipVerify)
}

// id returns the id of schema under subject, registering it when
// auto_register is on. Incompatible and not-registered schemas are typed
// errors; other failures (registry down, 5xx, timeouts) are retried with
// backoff until ctx ends, logged once per outage. A caller that finds the
// same request out waits for its answer, and takes its failure as its own
// (then retries on its own backoff), unless that request ended only
// because its caller stopped: then it asks itself, at once.
func (r *Registry) id(ctx context.Context, subject, schema string) (int, error) {
	return r.idOf(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
}

// idOf is id for a schema of any type, with its references
// (registered_formats.go).
func (r *Registry) idOf(ctx context.Context, subject string, s sr.Schema) (int, error) {
	schema := s.Schema
	k := subject + "\x00" + schema
	if s.Type != sr.TypeAvro {
		k = subject + "\x00" + s.Type.String() + "\x00" + schema
		for _, ref := range s.References {
			k += "\x00" + ref.Name + "\x00" + ref.Subject + "\x00" + strconv.Itoa(ref.Version)
		}
	}
	r.mu.Lock()
	id, ok := r.ids[k]
	r.mu.Unlock()
	if ok {
		return id, nil
	}
	b := fault.NewBackoff(100*time.Millisecond, 10*time.Second)
	for attempt := 0; ; {
		id, err := r.shared(ctx, k, func() (int, error) { return r.call(ctx, subject, s) })
		switch {
		case errors.Is(err, errOtherStopped):
			continue // ask again, ourselves
		case err == nil:
			if attempt > 0 {
				r.log.Info("Schema Registry reachable again", zap.String("subject", subject))
			}
			r.log.Debug("schema registered", zap.String("subject", subject), zap.Int("id", id), zap.String("schema", schema))
			return id, nil
		case !registryRetryable(err):
			return 0, err
		}
		if attempt == 0 {
			r.log.Warn("Schema Registry unavailable; retrying (the stream waits, nothing is skipped)",
				zap.String("subject", subject), zap.Error(err))
		}
		attempt++
		if !r.sleep(ctx, b.Next()) {
			return 0, fmt.Errorf("register schema of subject %q: %w (last error: %v)", subject, context.Canceled, err)
		}
	}
}

// flight is one request for an id, which callers asking for the same
// subject and schema meanwhile share.
type flight struct {
	done chan struct{} // closed once id and err are set
	id   int
	err  error
	// stopped: the request failed because its caller's ctx ended, which
	// says nothing about the registry to the others.
	stopped bool
}

// errOtherStopped is a shared request that failed only because the caller
// that sent it stopped.
var errOtherStopped = errors.New("the shared registry request was abandoned by its caller")

// shared returns the cached id of k, or the answer of the request for k
// that is out, or sends one with call and caches its success. Waiting for
// another caller's request ends with ctx.
func (r *Registry) shared(ctx context.Context, k string, call func() (int, error)) (int, error) {
	r.mu.Lock()
	if id, ok := r.ids[k]; ok {
		r.mu.Unlock()
		return id, nil
	}
	if f := r.flights[k]; f != nil {
		r.mu.Unlock()
		select {
		case <-f.done:
			if f.stopped {
				return 0, errOtherStopped
			}
			return f.id, f.err
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	r.flights[k] = f
	r.mu.Unlock()

	f.id, f.err = call()
	f.stopped = f.err != nil && ctx.Err() != nil
	r.mu.Lock()
	if f.err == nil {
		r.ids[k] = f.id
	}
	delete(r.flights, k)
	r.mu.Unlock()
	close(f.done)
	return f.id, f.err
}

// sleep waits d between attempts; false when ctx ends or the pipeline is
// stopping. A stop while the registry is down ends the wait: the record is
// not produced, its transaction is not acknowledged, and the next start
// replays it, where waiting on might never end.
func (r *Registry) sleep(ctx context.Context, d time.Duration) bool {
	if r.Stopping != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(r.Stopping, cancel)()
	}
	return fault.Sleep(ctx, d)
}

func (r *Registry) call(ctx context.Context, subject string, s sr.Schema) (int, error) {
	var re *sr.ResponseError
	if r.autoRegister {
		id, err := r.cl.RegisterSchema(ctx, subject, s, -1, -1)
		if errors.As(err, &re) && re.ErrorCode == 409 {
			return 0, &SchemaIncompatibleError{Subject: subject, Message: re.Message}
		}
		return id, wrapRegistryErr(subject, err)
	}
	ss, err := r.cl.LookupSchema(ctx, subject, s)
	if errors.As(err, &re) && (re.ErrorCode == 40401 || re.ErrorCode == 40403) {
		return 0, &SchemaNotRegisteredError{Subject: subject, Err: err}
	}
	return ss.ID, wrapRegistryErr(subject, err)
}

func wrapRegistryErr(subject string, err error) error {
	if err == nil {
		return nil
	}
	var re *sr.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden) {
		// Every table would fail the same way: stop, as for a bad config.
		return &config.ConfigError{Err: fmt.Errorf("format.schema_registry: the registry refused mooncdc's credentials for subject %q (HTTP %d: %v); "+
			"check format.schema_registry.username and password", subject, re.StatusCode, err)}
	}
	return fmt.Errorf("register schema of subject %q: %w", subject, err)
}

// registryRetryable reports whether a registry failure may pass: no answer
// (network, timeout), a server error (5xx), or rate limiting (429). A
// refusal of the request itself (4xx: bad schema, bad credentials) needs a
// person.
func registryRetryable(err error) bool {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode >= 500 || re.StatusCode == http.StatusTooManyRequests
	}
	var inc *SchemaIncompatibleError
	var nr *SchemaNotRegisteredError
	var ce *config.ConfigError
	return !errors.As(err, &inc) && !errors.As(err, &nr) && !errors.As(err, &ce)
}
