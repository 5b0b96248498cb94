package jsclients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Decoding says how the script reads a record's key or value.
type Decoding string

const (
	// Registry is SchemaRegistry.decode of @kafkajs/confluent-schema-registry:
	// the schema fetched by the id in the Confluent framing, Protobuf
	// through protobufjs, JSON Schema through Ajv.
	Registry Decoding = "registry"
	// CloudEvent is the CloudEvents SDK reading the value as a structured
	// JSON event (see Decoded's CloudEvents fields).
	CloudEvent Decoding = "cloudevent"
	// String is the bytes as UTF-8 text.
	String Decoding = "string"
	// None leaves the part unread.
	None Decoding = "none"
)

// Topic is one topic to read and how.
type Topic struct {
	Name string
	// Count is how many records to read from it before the script stops.
	Count int
	// Key and Value say how to decode; an empty Key is None.
	Key, Value Decoding
	// RegistryOptions are the SchemaRegistry constructor's options for
	// this topic's records (an application's choice, e.g.
	// {"JSON": {"strict": false}} for Ajv); nil is the client's defaults.
	RegistryOptions map[string]any
}

// Request is one run of the reader.
type Request struct {
	Broker   string // host:port
	Registry string // the registry's URL
	Topics   []Topic
	// Timeout bounds the wait for the records (default one minute).
	Timeout time.Duration
}

// Decoded is what the client made of a key or a value.
type Decoded struct {
	// Null is a null key or value (not decoded).
	Null bool `json:"null"`
	// SchemaID is the id in the Confluent framing (Registry).
	SchemaID *int `json:"schemaId"`
	// Decoded is the client's result as JSON: the registry client's
	// object (Protobuf through protobufjs's toObject with 64-bit integers
	// and bytes as strings, defaults included), or for CloudEvent the
	// value's JSON as parsed.
	Decoded json.RawMessage `json:"decoded"`
	// Error is the client's error when it could not decode.
	Error string `json:"error"`

	// CloudEvents: Event is the SDK's CloudEvent (strict mode, every check
	// the SDK makes) and StrictError its refusal; Refused lists the
	// extension attributes the SDK refuses one by one (a name not [a-z0-9]
	// or a value outside the CloudEvents type system) and RestError is the
	// SDK's validation of the event without them; BindingError is the
	// SDK's Kafka protocol binding reading the record as it came.
	Event        json.RawMessage `json:"event"`
	StrictError  *string         `json:"strictError"`
	Refused      []string        `json:"refused"`
	RestError    *string         `json:"restError"`
	BindingError *string         `json:"bindingError"`
}

// Record is one record as the client read it.
type Record struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    string  `json:"offset"`
	Key       Decoded `json:"key"`
	Value     Decoded `json:"value"`
}

type wireTopic struct {
	Topic           string         `json:"topic"`
	Count           int            `json:"count"`
	Key             Decoding       `json:"key"`
	Value           Decoding       `json:"value"`
	RegistryOptions map[string]any `json:"registryOptions,omitempty"`
}

type wireRequest struct {
	Brokers   []string    `json:"brokers"`
	Registry  string      `json:"registry"`
	TimeoutMS int64       `json:"timeoutMs"`
	Topics    []wireTopic `json:"topics"`
}

// Read installs the clients if needed (see Install), then runs one node
// process that consumes every topic of req from its start with kafkajs (a
// consumer group of its own) and decodes each record; it returns the
// records in the order the client saw them (per partition, offset order).
// It blocks until every topic gave its Count records, or fails after
// req.Timeout (plus the install and the node start) with what was
// missing.
func Read(ctx context.Context, req Request) ([]Record, error) {
	tc, script, err := install(ctx)
	if err != nil {
		return nil, err
	}
	if req.Timeout <= 0 {
		req.Timeout = time.Minute
	}
	w := wireRequest{Brokers: []string{req.Broker}, Registry: req.Registry, TimeoutMS: req.Timeout.Milliseconds()}
	want := 0
	for _, t := range req.Topics {
		if t.Count <= 0 {
			return nil, fmt.Errorf("jsclients: topic %q: Count must be positive", t.Name)
		}
		if t.Key == "" {
			t.Key = None
		}
		w.Topics = append(w.Topics, wireTopic{t.Name, t.Count, t.Key, t.Value, t.RegistryOptions})
		want += t.Count
	}
	arg, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, req.Timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tc.node, script, string(arg))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out []Record
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("jsclients: read.js printed a line that is not a record: %w: %s", err, sc.Text())
		}
		out = append(out, r)
	}
	if runErr != nil {
		return out, fmt.Errorf("jsclients: node %s: %w: %s", script, runErr, strings.TrimSpace(stderr.String()))
	}
	if len(out) != want {
		return out, fmt.Errorf("jsclients: read %d records, want %d: %s", len(out), want, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// ReadT is Read for a test: it skips under -short (make test-unit), as
// the other integration harnesses do, and fails the test on an error
// (a failed fetch of Node.js included: the error names the fix).
func ReadT(t testing.TB, req Request) []Record {
	t.Helper()
	SkipInShort(t)
	out, err := Read(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SkipInShort skips t under go test -short, as pgtest.SkipIntegrationInShort.
func SkipInShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (node with kafkajs): -short (make test-unit) leaves it out; make test runs it")
	}
}
