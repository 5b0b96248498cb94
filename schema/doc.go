// Package schema holds mooncdc's change model and everything that turns a
// change into bytes: the relation and column descriptions decoded from the
// replication stream, Postgres value parsing, and the record encoders.
//
// Place in the pipeline: the replication stream (connector/stream) decodes
// pgoutput bytes once into [Change] values; the router decides by table phase
// which changes go on; the encoders here turn each one into a Kafka key and
// value. Everything in this package is pure: no I/O, no goroutines, no
// knowledge of workers, so it is tested without a server.
//
// Invariants:
//   - An unchanged TOASTed value is marked ([ValueUnchangedToast]), never
//     guessed: encoders write a placeholder for it, never null and never an
//     older value.
//   - Encoders append into caller-owned buffers; they keep no reference to
//     their inputs after they return.
//   - A value whose text does not parse for its column type is a
//     *[ValueError] naming table, column and type, never a panic, a null or
//     a guess; on error the destination buffer is returned unchanged.
//   - A record key is never built from a placeholder: an unchanged TOASTed
//     key value without an old image is [ErrUnchangedToastKey].
//
// The JSON encoder ([JSONEncoder]) writes Debezium's PostgreSQL connector
// records (plain JSON, as Kafka Connect's JsonConverter with
// schemas.enable=false). What is decided per [Relation] is its [Plan]
// (NewPlan, plan.go), immutable, which the caller keeps beside the
// relation and may share between goroutines; an encoder keeps only
// scratch buffers, so one encoder serves one goroutine; its hot path does
// not allocate. Registry ids are the caller's too ([AvroIDs]).
// With [Config].Flat the encoders write the flat envelope instead, Debezium's
// ExtractNewRecordState (flat.go, flat_encode.go): the choice is made once
// per relation when its plan is built (plan.go), and [FlatConfig.Records]
// says which records a change becomes. The outbox envelope, Debezium's
// EventRouter (outbox.go, outbox_event.go, outbox_json.go,
// outbox_message.go), is not a plan: [OutboxConfig] says what a change of
// the outbox table becomes, [JSONEncoder.OutboxEvent] and
// [ParseOutboxMessage] take an event's parts, and the JSON encoders write
// its key and value.
// The date and time parsers ([ParseDate], [ParseTimestamptz], …) are pure
// functions of the text Postgres sends with DateStyle=ISO.
package schema
