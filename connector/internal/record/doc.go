// Package record makes the records: one Plan per relation (its topic, its
// key, the envelope, whether it is the outbox table, and the relation's
// one schema.Plan, decided once by the Planner and holding nothing that
// changes per record or per phase), the
// key rule as a pure function of the catalog's answer (KeyColumns), the
// codecs of format.key and format.value (JSON, JSON with schemas, Avro in
// Confluent's wire format; CloudEvents; Protobuf and JSON Schema through
// the Connect view, registered_formats.go), the Schema Registry client with its shared
// requests and the schema-evolution policy, the record headers (the
// mooncdc.* dedupe headers and the flat envelope's), the heartbeat and
// transaction-metadata records, the outbox envelope's events, and the one
// record Writer: encode, size-check, count in the tracker, hand to the
// sink, for the stream and the copies alike.
//
// Place in the pipeline: below the emitter and the copies (which decide
// what to write and when) and above the delivery (which the Writer hands
// records to, counting them in its Tracker). A Codec is not safe for
// concurrent use: each worker has its own, from the Formats they share.
// A schema.Plan is immutable: the stream and every copy connection of a
// table encode with the one its record Plan made; what depends on the
// subject (the registry ids) each Codec keeps per plan (avro_ids.go).
//
// It must not import connector, emit, snapshot or pgsource (no catalog
// query: the catalog's answer is an argument), nor phases directly (a
// plan holds no phase state): of connector/ only config, internal/fault
// and internal/delivery (and what they import).
package record
