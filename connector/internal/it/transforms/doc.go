// Package transforms holds connector's integration tests of the
// `transforms` chain (Kafka Connect's SMTs and Debezium's CEL Filter
// through the writer): snapshot rows and streamed changes across a schema
// change, in JSON with and without schemas and in Avro, and a failing
// transform parking only its table, against a real Postgres (one cluster
// for the package, a database per test) and a kfake broker per test. It
// has tests only; its helpers are connector/internal/it/ittest's.
package transforms
