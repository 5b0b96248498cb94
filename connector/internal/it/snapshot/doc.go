// Package snapshot holds connector's integration tests of the copy:
// snapshots under writes, the handover, snapshot markers, the registry
// prefetch, signals, the publication and table selection, on one Postgres
// cluster for the package (a database per test) and a kfake broker per
// test. It has tests only; its helpers are connector/internal/it/ittest's,
// and it may drive only connector's exported API.
package snapshot
