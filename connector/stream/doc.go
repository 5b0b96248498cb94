// Package stream is the replication session of the main WAL worker: it owns
// one replication connection to Postgres, reads pgoutput, decodes it once
// into the change model (schema.Change) and hands each change to a Handler,
// and tells Postgres how far Kafka has made the stream durable.
//
// Decoding (decoder.go) is pure: bytes in, changes out, fuzzed. Only
// session.go touches the network; silence.go is its guard against a
// half-open link.
//
// Neighbours: connector's main worker runs the session and is its Handler,
// Progress and Observer; connector/pgsource opens the replication
// connection it is given; connector/internal/fault reads its two error
// types (ProtocolError, ConnError) to classify them. It imports only
// schema (the change model) and the Postgres drivers: no other package of
// connector, so the session knows nothing of records, sinks or phases.
//
// Invariants:
//   - The flush position sent to Postgres is only ever the durable LSN given
//     by the caller (the end LSN of the newest transaction whose records Kafka
//     acknowledged), never the received position.
//   - One goroutine owns the connection: Session.Run reads, decodes, answers
//     keepalives and sends standby status updates; nothing else touches it.
//   - Relation messages are per session: a new session starts with an empty
//     relation cache.
//   - A graceful stop ends only between transactions, so a clean stop never
//     leaves half a transaction in Kafka.
//   - A server silent for the session's timeout (no message of any kind,
//     though asked for a reply after a quarter of it) ends the session with
//     a retryable *SilenceError; time spent not reading (backpressure) is
//     not silence. A status update's write is bounded by the timeout too.
package stream
