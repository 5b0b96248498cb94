// Package ddl holds connector's integration tests of DDL capture, schema
// evolution (with the Schema Registry stand-in), schema-change records and
// heartbeats, on one Postgres cluster for the package (a database per
// test) and a kfake broker per test. It has tests only; its helpers are
// connector/internal/it/ittest's, and it may drive only connector's
// exported API.
package ddl
