// Package stream is the replication session of the main WAL worker: it owns
// one replication connection to Postgres, reads pgoutput, decodes it once
// into the change model (schema.Change) and hands each change to a Handler,
// and tells Postgres how far Kafka has made the stream durable.
//
// Decoding (decoder.go) is pure: bytes in, changes out, fuzzed. Only
// session.go touches the network.
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
package stream
