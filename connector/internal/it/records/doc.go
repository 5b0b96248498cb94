// Package records holds connector's integration tests of record shapes:
// Avro, CloudEvents (read by the CloudEvents SDK), Protobuf and JSON Schema
// (read by kafkajs with @kafkajs/confluent-schema-registry), flat, keys and key
// columns, columns and their mappers, defaults, absent values,
// identifiers, routes, the outbox and transaction metadata,
// against a real Postgres (one cluster for the package, a database per
// test) and a kfake broker per test. It has tests only; its helpers are
// connector/internal/it/ittest's, and it may drive only connector's
// exported API.
package records
