// Package connectformat writes Kafka Connect data (the record model of
// connector/internal/transform: schema.Schema schemas and Struct, Map …
// values) in the formats a Kafka Connect deployment picks as its
// converter besides JSON and Avro: Confluent's Protobuf converter (issue
// 30, point 4). It is pure: no Postgres, no Kafka, no registry calls; the
// caller registers the schema text and passes the id it got.
//
// Built:
//   - Protobuf (protobuf_schema.go, protobuf_text.go, protobuf_value.go):
//     NewProtobuf turns a struct schema into the .proto text and the
//     descriptor ProtobufData.fromConnectSchema makes with its defaults
//     (proto3; package and message from the schema name; fields numbered
//     in order; nested structs as nested messages named by their
//     unqualified name, "Message" appended when it equals the field's;
//     maps as repeated key/value entry messages ConnectDefaultNEntry;
//     arrays as repeated; int8/int16 as int32 with connect.type in
//     confluent.field_meta; Decimal, Date, Time, Timestamp as
//     confluent.type.Decimal, google.type.Date, google.type.TimeOfDay,
//     google.protobuf.Timestamp). The text is what canonicalString writes
//     (the registered form). AppendEncode writes a value with
//     google.golang.org/protobuf's dynamicpb in the Confluent framing:
//     magic byte 0, 4-byte schema id, message indexes [0] as one byte.
//
// Differences from Confluent, each deliberate: a root schema that is not
// a struct is refused (ProtobufData writes a wrapper type; mooncdc's keys
// and values are structs); names that are not Protobuf identifiers are an
// error (as in Java with scrub.invalid.names off, its default); the
// parameters only a Protobuf-sourced schema carries (enums, unions, tags,
// unsigned types) are refused; a null array element is an error (Java
// fails on it too, with a NullPointerException); a field default is not
// put in the descriptor (Java puts it in a proto3 descriptor, where
// Go's protodesc refuses it; the registered text never shows it).
//
// What remains (the wiring, later): the `format:` keys; registering the
// text under TopicNameStrategy subjects (<topic>-key, <topic>-value) with
// pkg/sr and the registry pre-check at a DDL that Avro has (evolution:
// a column added is a field added with the next number, which Confluent's
// BACKWARD check accepts); kafkajs end-to-end tests with
// @kafkajs/confluent-schema-registry; a per-relation cache of the built
// schemas (NewProtobuf is per schema, not per record).
package connectformat
