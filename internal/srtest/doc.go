// Package srtest is a test stand-in for a Confluent Schema Registry: an
// in-process HTTP server (net/http/httptest) that speaks the subset of the
// Schema Registry REST API that franz-go's pkg/sr client and the Protobuf and
// JSON Schema clients (kafkajs's @kafkajs/confluent-schema-registry) use.
// It is NOT a registry to run in production; state lives in memory and dies
// with the server.
//
// [New] starts one for a test and closes it with t.Cleanup; [Start] does the
// same without a testing.TB (for demo binaries; note that importing
// httptest registers its -httptest.serve flag on the default flag set).
//
// Implemented (paths, methods, status codes and error_code values follow
// Confluent; responses use Content-Type application/vnd.schemaregistry.v1+json):
//
//	POST   /subjects/{s}/versions                  register → {"id":N}
//	POST   /subjects/{s}                           look up → {subject,id,version,schema}
//	GET    /subjects                               (?deleted, ?deletedOnly, ?subjectPrefix)
//	GET    /subjects/{s}/versions                  (?deleted, ?deletedOnly)
//	GET    /subjects/{s}/versions/{v|latest}[/schema]
//	DELETE /subjects/{s}[?permanent=true]          soft, then hard delete
//	DELETE /subjects/{s}/versions/{v|latest}[?permanent=true]
//	GET    /schemas                                (?subjectPrefix, ?deleted, ?latestOnly)
//	GET    /schemas/types                          ["JSON","PROTOBUF","AVRO"]
//	GET    /schemas/ids/{id}[/schema|/versions|/subjects]  (?subject, ?deleted, ?fetchMaxId)
//	GET/PUT/DELETE /config, /config/{s}            (?defaultToGlobal)
//	POST   /compatibility/subjects/{s}/versions[/{v|latest}]  (?verbose)
//	GET    /mode, /mode/{s}                        always READWRITE
//
// Semantics:
//   - Schema types AVRO (schemaType absent or "AVRO"), PROTOBUF and JSON
//     (other.go). PROTOBUF and JSON schemas are checked for syntax only
//     (a .proto file that parses, imports unresolved; a JSON object or
//     boolean) and may carry references, each to a live subject version
//     (else 422/42201); the type and the references are served back in
//     the register, look-up, get-version and get-by-id answers, as the
//     Protobuf and JSON Schema clients read them. Their identity is the
//     type, the text (for JSON the identity below) and the references.
//     Compatibility is checked between AVRO schemas only: a new version
//     of a subject holding or getting a PROTOBUF or JSON schema under any
//     level but NONE is refused with 422/42201 naming NONE as the fix,
//     rather than accepted unchecked; the compatibility check of such a
//     version answers is_compatible false with the same message (what
//     registering it would do), and true for a schema the subject holds. Avro schemas take no references
//     (422/42201). Each Avro schema is parsed
//     by github.com/hamba/avro/v2 with a fresh name cache, so record names
//     never collide across subjects; a parse error is 422/42201.
//   - Identity is the schema JSON with whitespace removed and object keys
//     sorted (not hamba's Parsing Canonical Form fingerprint, which drops
//     "default" and "doc": adding a default must make a new version).
//     Registering an identical schema under the same subject returns the
//     existing id without a new version; under another subject it gets a
//     new version with the same global id, as Confluent does. The text
//     stored and served back is the text of the first registration.
//   - Compatibility levels NONE, BACKWARD (default), BACKWARD_TRANSITIVE,
//     FORWARD, FORWARD_TRANSITIVE, FULL and FULL_TRANSITIVE are checked
//     with hamba's SchemaCompatibility (BACKWARD: the new schema must read
//     data written with the latest version). Incompatible → 409/409.
//   - Soft-deleted versions are hidden unless ?deleted=true, keep counting
//     toward version numbers and keep their ids; soft-deleting a subject
//     also drops its subject-level compatibility.
//
// Test hooks: HTTP basic auth ([WithBasicAuth], 401/40101), TLS ([WithTLS],
// [Registry.ClientTLSConfig]), injected failures ([Registry.FailNext],
// [Registry.FailNextOn]; status 0 drops the connection), per-endpoint
// request counters ([Registry.Requests]), a delay on every request as a
// remote registry would have ([WithLatency]) and the most requests served
// at once ([Registry.MaxInFlight]), and direct access to the state
// ([Registry.Register], [Registry.SchemaByID], [Registry.Subjects], ...).
//
// Not implemented: compatibility checks for Protobuf and JSON Schema,
// Avro schema references, contexts
// (/contexts/... paths), import mode and registration with an explicit id,
// setting modes, exporters, data contracts (metadata and ruleSet are
// accepted and ignored), GUIDs, pagination (offset/limit), ?normalize (the
// identity above always applies) and ?format.
package srtest
