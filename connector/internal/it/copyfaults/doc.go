// Package copyfaults holds connector's integration tests of a copy's
// faults: a crash at each stage of the copy, failed copies and the snapshot
// modes after them, on one Postgres cluster for the package (a database per
// test) and a kfake broker per test. It has tests only; its helpers are
// connector/internal/it/ittest's, and it may drive only connector's
// exported API.
package copyfaults
