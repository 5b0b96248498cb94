package srtest

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

const (
	v1 = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"int"},
		{"name":"item","type":"string"}]}`
	v1Spaced = `{ "type" : "record", "namespace":"shop", "name" : "Order",
		"fields" : [ {"name":"id", "type":"int"}, {"type":"string", "name":"item"} ] }`
	v2Optional = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"int"},
		{"name":"item","type":"string"},
		{"name":"note","type":["null","string"],"default":null}]}`
	v2Required = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"int"},
		{"name":"item","type":"string"},
		{"name":"qty","type":"int"}]}`
	v2TypeChange = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"string"},
		{"name":"item","type":"string"}]}`
)

func avroSchema(s string) sr.Schema { return sr.Schema{Schema: s, Type: sr.TypeAvro} }

func client(t *testing.T, reg *Registry, opts ...sr.ClientOpt) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(append([]sr.ClientOpt{sr.URLs(reg.URL())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// wantCode asserts err is an *sr.ResponseError with this HTTP status and
// error_code.
func wantCode(t *testing.T, err error, status, code int) *sr.ResponseError {
	t.Helper()
	var re *sr.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want *sr.ResponseError %d/%d, got %T %v", status, code, err, err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d/%d, got %d/%d: %s", status, code, re.StatusCode, re.ErrorCode, re.Message)
	}
	return re
}

func TestRegisterAndRead(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)

	ss, err := cl.CreateSchema(ctx, "orders-value", avroSchema(v1))
	if err != nil {
		t.Fatal(err)
	}
	if ss.Subject != "orders-value" || ss.ID != 1 || ss.Version != 1 || ss.Schema.Schema != v1 {
		t.Fatalf("CreateSchema = %+v", ss)
	}
	// Whitespace and key order do not make a new schema.
	id, err := cl.RegisterSchema(ctx, "orders-value", avroSchema(v1Spaced), -1, -1)
	if err != nil || id != 1 {
		t.Fatalf("RegisterSchema again = %d, %v", id, err)
	}
	if vs, err := cl.SubjectVersions(ctx, "orders-value"); err != nil || len(vs) != 1 || vs[0] != 1 {
		t.Fatalf("SubjectVersions = %v, %v", vs, err)
	}
	// The same schema under another subject: same global id, own version.
	other, err := cl.CreateSchema(ctx, "orders-copy-value", avroSchema(v1))
	if err != nil || other.ID != 1 || other.Version != 1 {
		t.Fatalf("CreateSchema other subject = %+v, %v", other, err)
	}

	if s, err := cl.SchemaByID(ctx, 1); err != nil || s.Schema != v1 || s.Type != sr.TypeAvro {
		t.Fatalf("SchemaByID = %+v, %v", s, err)
	}
	if text, err := cl.SchemaTextByID(ctx, 1); err != nil || text != v1 {
		t.Fatalf("SchemaTextByID = %q, %v", text, err)
	}
	if s, err := cl.SchemaByVersion(ctx, "orders-value", -1); err != nil || s.Version != 1 || s.ID != 1 {
		t.Fatalf("SchemaByVersion latest = %+v, %v", s, err)
	}
	if text, err := cl.SchemaTextByVersion(ctx, "orders-value", 1); err != nil || text != v1 {
		t.Fatalf("SchemaTextByVersion = %q, %v", text, err)
	}
	if got, err := cl.LookupSchema(ctx, "orders-value", avroSchema(v1Spaced)); err != nil || got.ID != 1 || got.Version != 1 || got.Subject != "orders-value" {
		t.Fatalf("LookupSchema = %+v, %v", got, err)
	}
	if subs, err := cl.Subjects(ctx); err != nil || strings.Join(subs, ",") != "orders-copy-value,orders-value" {
		t.Fatalf("Subjects = %v, %v", subs, err)
	}
	if subs, err := cl.SubjectsByID(ctx, 1); err != nil || len(subs) != 2 {
		t.Fatalf("SubjectsByID = %v, %v", subs, err)
	}
	if all, err := cl.AllSchemas(ctx); err != nil || len(all) != 2 {
		t.Fatalf("AllSchemas = %v, %v", all, err)
	}
	if types, err := cl.SupportedTypes(ctx); err != nil || len(types) != 3 {
		t.Fatalf("SupportedTypes = %v, %v", types, err)
	}

	if got := reg.Requests(EndpointRegister); got != 3 {
		t.Fatalf("register requests = %d, want 3", got)
	}
	if s, ok := reg.SchemaByID(1); !ok || s != v1 {
		t.Fatalf("reg.SchemaByID = %q, %v", s, ok)
	}
	if subs := reg.Subjects(); len(subs) != 2 {
		t.Fatalf("reg.Subjects = %v", subs)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)

	_, err := cl.LookupSchema(ctx, "nope", avroSchema(v1))
	re := wantCode(t, err, 404, 40401)
	if re.SchemaError() != sr.ErrSubjectNotFound {
		t.Fatalf("SchemaError = %v", re.SchemaError())
	}
	if _, err := reg.Register("orders-value", v1); err != nil {
		t.Fatal(err)
	}
	_, err = cl.LookupSchema(ctx, "orders-value", avroSchema(v2Optional))
	wantCode(t, err, 404, 40403)
	_, err = cl.SchemaByID(ctx, 99)
	wantCode(t, err, 404, 40403)
	_, err = cl.SchemaByVersion(ctx, "orders-value", 7)
	wantCode(t, err, 404, 40402)
	_, err = cl.SubjectVersions(ctx, "nope")
	wantCode(t, err, 404, 40401)
	err = cl.Do(ctx, "GET", "/subjects/orders-value/versions/zero", nil, nil)
	wantCode(t, err, 422, 42202)
	err = cl.Do(ctx, "GET", "/no/such/path", nil, nil)
	wantCode(t, err, 404, 404)
}

func TestBackward(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)
	const subj = "orders-value"
	if _, err := cl.CreateSchema(ctx, subj, avroSchema(v1)); err != nil {
		t.Fatal(err)
	}

	vctx := sr.WithParams(ctx, sr.Verbose)
	for _, bad := range []string{v2Required, v2TypeChange} {
		res, err := cl.CheckCompatibility(vctx, subj, -1, avroSchema(bad))
		if err != nil || res.Is || len(res.Messages) == 0 {
			t.Fatalf("CheckCompatibility(bad) = %+v, %v", res, err)
		}
		_, err = cl.RegisterSchema(ctx, subj, avroSchema(bad), -1, -1)
		re := wantCode(t, err, 409, 409)
		if !strings.Contains(re.Message, `incompatible with an earlier schema for subject "orders-value"`) {
			t.Fatalf("message = %s", re.Message)
		}
	}
	if res, err := cl.CheckCompatibility(ctx, subj, -1, avroSchema(v2Optional)); err != nil || !res.Is {
		t.Fatalf("CheckCompatibility(optional) = %+v, %v", res, err)
	}
	ss, err := cl.CreateSchema(ctx, subj, avroSchema(v2Optional))
	if err != nil || ss.Version != 2 || ss.ID != 2 {
		t.Fatalf("CreateSchema(optional) = %+v, %v", ss, err)
	}
	// An earlier version is still registered: its id, no new version.
	if id, err := cl.RegisterSchema(ctx, subj, avroSchema(v1), -1, -1); err != nil || id != 1 {
		t.Fatalf("re-register v1 = %d, %v", id, err)
	}
	if vs := reg.Versions(subj); len(vs) != 2 {
		t.Fatalf("versions = %v", vs)
	}
	// Adding a default changes the schema (hamba's fingerprint would not).
	withDefault := strings.Replace(v2Optional, `"name":"item","type":"string"`, `"name":"item","type":"string","default":""`, 1)
	if id, err := reg.Register(subj, withDefault); err != nil || id != 3 {
		t.Fatalf("register with default = %d, %v", id, err)
	}
}

func TestNone(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)
	const subj = "orders-value"
	if _, err := reg.Register(subj, v1); err != nil {
		t.Fatal(err)
	}

	res := cl.Compatibility(ctx, subj)
	wantCode(t, res[0].Err, 404, 40408)
	res = cl.Compatibility(sr.WithParams(ctx, sr.DefaultToGlobal), subj)
	if res[0].Err != nil || res[0].Level != sr.CompatBackward {
		t.Fatalf("Compatibility default to global = %+v", res[0])
	}
	set := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatNone}, subj)
	if set[0].Err != nil || set[0].Level != sr.CompatNone {
		t.Fatalf("SetCompatibility = %+v", set[0])
	}
	if res := cl.Compatibility(ctx); res[0].Err != nil || res[0].Level != sr.CompatBackward {
		t.Fatalf("global Compatibility = %+v", res[0])
	}
	if reg.Compatibility(subj) != None {
		t.Fatalf("reg.Compatibility = %s", reg.Compatibility(subj))
	}
	for _, s := range []string{v2TypeChange, v2Required} {
		if _, err := cl.RegisterSchema(ctx, subj, avroSchema(s), -1, -1); err != nil {
			t.Fatalf("NONE register: %v", err)
		}
	}
	if reset := cl.ResetCompatibility(ctx, subj); reset[0].Err != nil || reset[0].Level != sr.CompatNone {
		t.Fatalf("ResetCompatibility = %+v", reset[0])
	}
	// Back to BACKWARD: a string id cannot read the latest's int id.
	idOnly := `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"string"}]}`
	_, err := cl.RegisterSchema(ctx, subj, avroSchema(idOnly), -1, -1)
	wantCode(t, err, 409, 409)

	reg.SetCompatibility("", None)
	if _, err := cl.RegisterSchema(ctx, subj, avroSchema(idOnly), -1, -1); err != nil {
		t.Fatalf("global NONE register: %v", err)
	}
	put := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatFull})
	if put[0].Err != nil || reg.Compatibility("") != Full {
		t.Fatalf("SetCompatibility global = %+v", put[0])
	}
}

func TestInvalidSchema(t *testing.T) {
	ctx := context.Background()
	cl := client(t, New(t))
	_, err := cl.RegisterSchema(ctx, "x", avroSchema(`{"type":"record","name":"R","fields":[{"name":"a","type":"nope"}]}`), -1, -1)
	re := wantCode(t, err, 422, 42201)
	if re.SchemaError() != sr.ErrInvalidSchema {
		t.Fatalf("SchemaError = %v", re.SchemaError())
	}
	_, err = cl.RegisterSchema(ctx, "x", sr.Schema{Schema: `syntax = "proto3"; message {`, Type: sr.TypeProtobuf}, -1, -1)
	re = wantCode(t, err, 422, 42201)
	if !strings.Contains(re.Message, "of type PROTOBUF") {
		t.Fatalf("message = %s", re.Message)
	}
	_, err = cl.RegisterSchema(ctx, "x", sr.Schema{Schema: `{"type":`, Type: sr.TypeJSON}, -1, -1)
	wantCode(t, err, 422, 42201)
	_, err = cl.RegisterSchema(ctx, "x", sr.Schema{Schema: `"string"`, References: []sr.SchemaReference{{Name: "a", Subject: "b", Version: 1}}}, -1, -1)
	re = wantCode(t, err, 422, 42201)
	if !strings.Contains(re.Message, "not AVRO") {
		t.Fatalf("message = %s", re.Message)
	}
}

// TestProtobufAndJSONWithReferences: the schema type and the references
// come back in every answer a client reads them from (get by id, get a
// subject version, look up), a reference must name a live subject
// version, and a new PROTOBUF version under a checked compatibility is
// refused naming the fix, since srtest cannot judge it (its compatibility
// check answers so too).
func TestProtobufAndJSONWithReferences(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)
	ts := "syntax = \"proto3\";\npackage google.protobuf;\nmessage Timestamp {\n  int64 seconds = 1;\n  int32 nanos = 2;\n}\n"
	tsID, err := reg.RegisterSchema("google/protobuf/timestamp.proto", "PROTOBUF", ts)
	if err != nil {
		t.Fatal(err)
	}
	ref := sr.SchemaReference{Name: "google/protobuf/timestamp.proto", Subject: "google/protobuf/timestamp.proto", Version: 1}
	text := "syntax = \"proto3\";\npackage shop;\nimport \"google/protobuf/timestamp.proto\";\nmessage Order {\n  google.protobuf.Timestamp at = 1;\n}\n"
	ss, err := cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: text, Type: sr.TypeProtobuf, References: []sr.SchemaReference{ref}})
	if err != nil {
		t.Fatal(err)
	}
	if ss.ID == tsID || ss.Type != sr.TypeProtobuf || len(ss.References) != 1 || ss.References[0] != ref {
		t.Fatalf("CreateSchema = %+v", ss)
	}
	byID, err := cl.SchemaByID(ctx, ss.ID)
	if err != nil || byID.Type != sr.TypeProtobuf || byID.Schema != text || len(byID.References) != 1 || byID.References[0] != ref {
		t.Fatalf("SchemaByID = %+v, %v", byID, err)
	}
	dep, err := cl.SchemaByVersion(ctx, ref.Subject, 1)
	if err != nil || dep.Type != sr.TypeProtobuf || dep.Schema.Schema != ts {
		t.Fatalf("SchemaByVersion = %+v, %v", dep, err)
	}
	// The same text without its reference is another schema.
	if _, err := cl.LookupSchema(ctx, "orders-value", sr.Schema{Schema: text, Type: sr.TypeProtobuf}); err == nil {
		t.Fatal("LookupSchema without the reference found the schema")
	}
	if got, err := cl.LookupSchema(ctx, "orders-value", sr.Schema{Schema: text, Type: sr.TypeProtobuf, References: []sr.SchemaReference{ref}}); err != nil || got.ID != ss.ID {
		t.Fatalf("LookupSchema = %+v, %v", got, err)
	}
	_, err = cl.CreateSchema(ctx, "other-value", sr.Schema{Schema: text, Type: sr.TypeProtobuf,
		References: []sr.SchemaReference{{Name: ref.Name, Subject: ref.Subject, Version: 2}}})
	wantCode(t, err, 422, 42201)

	_, err = cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: strings.Replace(text, "at = 1", "at = 2", 1), Type: sr.TypeProtobuf, References: []sr.SchemaReference{ref}})
	if re := wantCode(t, err, 422, 42201); !strings.Contains(re.Message, "NONE") {
		t.Fatalf("message = %s", re.Message)
	}
	// The compatibility check says what the registration does.
	res, err := cl.CheckCompatibility(sr.WithParams(ctx, sr.Verbose), "orders-value", -1,
		sr.Schema{Schema: strings.Replace(text, "at = 1", "at = 2", 1), Type: sr.TypeProtobuf, References: []sr.SchemaReference{ref}})
	if err != nil || res.Is || len(res.Messages) != 1 || !strings.Contains(res.Messages[0], "NONE") {
		t.Fatalf("CheckCompatibility of an unchecked PROTOBUF version = %+v, %v", res, err)
	}
	if res, err := cl.CheckCompatibility(ctx, "orders-value", -1, sr.Schema{Schema: text, Type: sr.TypeProtobuf, References: []sr.SchemaReference{ref}}); err != nil || !res.Is {
		t.Fatalf("CheckCompatibility of the PROTOBUF version the subject holds = %+v, %v", res, err)
	}
	reg.SetCompatibility("orders-value", None)
	if _, err := cl.CreateSchema(ctx, "orders-value", sr.Schema{Schema: strings.Replace(text, "at = 1", "at = 2", 1), Type: sr.TypeProtobuf, References: []sr.SchemaReference{ref}}); err != nil {
		t.Fatal(err)
	}

	doc := `{"type":"object","properties":{"id":{"type":"integer"}}}`
	js, err := cl.CreateSchema(ctx, "orders-json-value", sr.Schema{Schema: doc, Type: sr.TypeJSON})
	if err != nil || js.Type != sr.TypeJSON {
		t.Fatalf("CreateSchema JSON = %+v, %v", js, err)
	}
	// Key order and spaces do not make a JSON schema new.
	again, err := cl.CreateSchema(ctx, "orders-json-value", sr.Schema{Schema: `{"properties": {"id": {"type": "integer"}}, "type": "object"}`, Type: sr.TypeJSON})
	if err != nil || again.ID != js.ID {
		t.Fatalf("CreateSchema JSON again = %+v, %v", again, err)
	}
}

func TestDeleteSubject(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)
	const subj = "orders-value"
	if _, err := reg.Register(subj, v1); err != nil {
		t.Fatal(err)
	}
	_, err := cl.DeleteSubject(ctx, subj, sr.HardDelete)
	wantCode(t, err, 404, 40405)
	if vs, err := cl.DeleteSubject(ctx, subj, sr.SoftDelete); err != nil || len(vs) != 1 {
		t.Fatalf("soft DeleteSubject = %v, %v", vs, err)
	}
	if subs, _ := cl.Subjects(ctx); len(subs) != 0 {
		t.Fatalf("Subjects after soft delete = %v", subs)
	}
	if subs, _ := cl.Subjects(sr.WithParams(ctx, sr.ShowDeleted)); len(subs) != 1 {
		t.Fatalf("Subjects(ShowDeleted) = %v", subs)
	}
	_, err = cl.DeleteSubject(ctx, subj, sr.SoftDelete)
	wantCode(t, err, 404, 40404)
	// Soft-deleted versions keep counting; the id is kept.
	ss, err := cl.CreateSchema(ctx, subj, avroSchema(v1))
	if err != nil || ss.Version != 2 || ss.ID != 1 {
		t.Fatalf("re-register after soft delete = %+v, %v", ss, err)
	}
	if _, err := cl.DeleteSubject(ctx, subj, sr.SoftDelete); err != nil {
		t.Fatal(err)
	}
	if vs, err := cl.DeleteSubject(ctx, subj, sr.HardDelete); err != nil || len(vs) != 2 {
		t.Fatalf("hard DeleteSubject = %v, %v", vs, err)
	}
	if subs, _ := cl.Subjects(sr.WithParams(ctx, sr.ShowDeleted)); len(subs) != 0 {
		t.Fatalf("Subjects after hard delete = %v", subs)
	}
	if err := cl.DeleteSchema(ctx, subj, 1, sr.SoftDelete); err == nil {
		t.Fatal("DeleteSchema on a gone subject succeeded")
	}
}

func TestBasicAuth(t *testing.T) {
	ctx := context.Background()
	reg := New(t, WithBasicAuth("alice", "s3cret"))

	_, err := client(t, reg).Subjects(ctx)
	wantCode(t, err, 401, 40101)
	_, err = client(t, reg, sr.BasicAuth("alice", "wrong")).Subjects(ctx)
	wantCode(t, err, 401, 40101)
	if _, err := client(t, reg, sr.BasicAuth("alice", "s3cret")).Subjects(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestTLS(t *testing.T) {
	ctx := context.Background()
	reg := New(t, WithTLS(), WithBasicAuth("u", "p"))
	if !strings.HasPrefix(reg.URL(), "https://") {
		t.Fatalf("URL = %s", reg.URL())
	}
	cl := client(t, reg, sr.DialTLSConfig(reg.ClientTLSConfig()), sr.BasicAuth("u", "p"))
	if _, err := cl.CreateSchema(ctx, "orders-value", avroSchema(v1)); err != nil {
		t.Fatal(err)
	}
	if _, err := client(t, reg, sr.BasicAuth("u", "p")).Subjects(ctx); err == nil {
		t.Fatal("client without the CA trusted the server")
	}
	block, _ := pem.Decode(reg.CACertPEM())
	if block == nil {
		t.Fatal("no PEM")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		t.Fatal(err)
	}
	if plain := New(t); plain.ClientTLSConfig() != nil || plain.CACertPEM() != nil {
		t.Fatal("plain registry has TLS material")
	}
}

func TestFailNext(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)

	reg.FailNext(2, 503)
	for range 2 {
		_, err := cl.Subjects(ctx)
		wantCode(t, err, 503, 503)
	}
	if _, err := cl.Subjects(ctx); err != nil {
		t.Fatal(err)
	}
	if got := reg.Requests(EndpointSubjects); got != 3 {
		t.Fatalf("subjects requests = %d", got)
	}

	reg.FailNextOn(EndpointRegister, 1, 500)
	if _, err := cl.Subjects(ctx); err != nil {
		t.Fatalf("other endpoint failed: %v", err)
	}
	_, err := cl.RegisterSchema(ctx, "s", avroSchema(v1), -1, -1)
	wantCode(t, err, 500, 50001)
	if _, err := cl.RegisterSchema(ctx, "s", avroSchema(v1), -1, -1); err != nil {
		t.Fatal(err)
	}

	// Dropped connections. net/http retries a GET once when a reused
	// connection dies before any response, so fail a GET twice.
	var re *sr.ResponseError
	reg.FailNext(1, 0)
	if _, err = cl.RegisterSchema(ctx, "s", avroSchema(v1), -1, -1); err == nil || errors.As(err, &re) {
		t.Fatalf("dropped connection on POST: got %v", err)
	}
	reg.FailNext(2, 0)
	if _, err = cl.Subjects(ctx); err == nil || errors.As(err, &re) {
		t.Fatalf("dropped connection on GET: got %v", err)
	}
	reg.FailNext(0, 0) // cancel what the GET did not use
	if _, err := cl.Subjects(ctx); err != nil {
		t.Fatal(err)
	}
	if reg.Requests(EndpointRegister) != 3 || reg.TotalRequests() < 9 {
		t.Fatalf("requests: register %d, total %d", reg.Requests(EndpointRegister), reg.TotalRequests())
	}
	reg.ResetRequests()
	if reg.TotalRequests() != 0 {
		t.Fatal("ResetRequests")
	}
}

// Concurrent registrations of one schema make one version and one id.
func TestConcurrentRegister(t *testing.T) {
	ctx := context.Background()
	reg := New(t)
	cl := client(t, reg)
	var wg sync.WaitGroup
	ids := make([]int, 16)
	errs := make([]error, 16)
	for i := range ids {
		wg.Go(func() { ids[i], errs[i] = cl.RegisterSchema(ctx, "s", avroSchema(v1), -1, -1) })
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != 1 {
			t.Fatalf("register %d = %d, %v", i, ids[i], errs[i])
		}
	}
	if vs := reg.Versions("s"); len(vs) != 1 {
		t.Fatalf("versions = %v", vs)
	}
}

func TestStart(t *testing.T) {
	reg, err := Start(WithListenAddr("127.0.0.1:0"), WithCompatibility(None), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, err := client(t, reg).Subjects(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reg.Compatibility("") != None {
		t.Fatal("WithCompatibility ignored")
	}
	if _, err := Start(WithCompatibility("SIDEWAYS")); err == nil {
		t.Fatal("Start accepted a bad level")
	}
	reg.Close()
}

// TestLatencyDelaysEveryRequestAndCountsOverlap: WithLatency holds each
// request for its delay, so requests sent one after the other take n
// delays and MaxInFlight says 1, while requests sent together overlap and
// MaxInFlight counts them; a client that gives up ends the wait.
func TestLatencyDelaysEveryRequestAndCountsOverlap(t *testing.T) {
	const d = 50 * time.Millisecond
	ctx := context.Background()
	reg := New(t, WithLatency(d))
	cl := client(t, reg)
	start := time.Now()
	for range 3 {
		if _, err := cl.RegisterSchema(ctx, "s", avroSchema(v1), -1, -1); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took < 3*d {
		t.Fatalf("3 requests one after the other took %s, want ≥ %s", took, 3*d)
	}
	if got := reg.MaxInFlight(); got != 1 {
		t.Fatalf("MaxInFlight after sequential requests = %d, want 1", got)
	}

	reg.ResetRequests()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, err := cl.RegisterSchema(ctx, fmt.Sprintf("s%d", i), avroSchema(v1), -1, -1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := reg.MaxInFlight(); got < 2 || got > 8 {
		t.Fatalf("MaxInFlight of 8 requests sent together = %d, want 2 to 8", got)
	}
	if got := reg.Requests(EndpointRegister); got != 8 {
		t.Fatalf("register requests = %d, want 8", got)
	}

	slow := New(t, WithLatency(3*time.Second))
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := client(t, slow).Subjects(cctx); err == nil {
		t.Fatal("a request answered before its latency")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("a cancelled request waited %s", took)
	}
	cctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := client(t, slow).RegisterSchema(cctx, "s", avroSchema(v1), -1, -1); err == nil {
		t.Fatal("a registration answered before its latency")
	}
	// The handler returns once it sees the client gone.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		slow.mu.Lock()
		busy := slow.inFlight
		slow.mu.Unlock()
		if busy == 0 {
			break
		}
	}
	if n, subjects := slow.Requests(EndpointRegister), slow.Subjects(); n != 0 || len(subjects) != 0 {
		t.Fatalf("an abandoned registration was served: %d requests, subjects %v", n, subjects)
	}
}
