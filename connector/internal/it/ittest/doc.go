// Package ittest holds what connector's integration tests share: the test
// environment (Env: a Postgres database and a Kafka broker), running a
// pipeline (Start, StartStreaming, RunPipeline, Running), reading its
// records (Consume, ReadAvro, ReadRaw, Decode), and the checks several
// groups use (CheckChanges, Converge, Mutator, ...). It is test support,
// not product: nothing outside tests imports it.
//
// The integration tests drive connector's exported API only (New, Run,
// TablePhases, Metrics, Hooks) and live in test-only packages grouped by
// what they protect, so that go test runs the groups in parallel:
//
//	connector/internal/it/records     record shapes: Avro, flat, keys, columns, routes, outbox, transaction metadata
//	connector/internal/it/ddl         DDL capture, schema evolution, heartbeats
//	connector/internal/it/snapshot    the copy: snapshots, handover, markers, the registry, signals, publication, selection
//	connector/internal/it/copyfaults  a copy's faults: crashes at each stage, failed copies, snapshot modes
//	connector/internal/it/pipeline    lifecycle: delivery modes, stop, slot loss, takeover, TLS, metrics, failover, half-open links
//
// The tests that need connector's export_test.go hooks (the Debezium type
// comparisons, which share their tables with the AvroData test, a resumed
// copy's checkpoint interval, a seated pipeline) and the standby and worker
// group tests stay in connector's own test package, on the same kind of
// shared cluster.
//
// # One Postgres cluster per package
//
// Each package's TestMain calls Main, and the first NewEnv starts the
// package's cluster (pgtest, from the initdb template). Every test gets a
// database of its own (t_<n>) on it: Env.Config points the pipeline there,
// and Env.Exec, Env.Scan and Env.PG (a Cluster) take the database name
// "postgres" to mean the test's database, so a test reads the same on a
// shared or a private cluster. The test's cleanup, after its pipelines have
// stopped, drops its replication slots and its database: a slot left
// behind would be adopted by a later pipeline of the same name.
//
// Replication slots are the cluster's, not a database's, and a pipeline's
// default slot is mooncdc_<name>. Env.Config therefore claims the pipeline
// name for the test until it ends; another test of the package asking for
// the same name waits for it (two tests waiting on each other fail, naming
// both). The cluster has room for the tests that run at once
// (max_connections, max_replication_slots, max_wal_senders: sharedSettings).
//
// A test keeps a cluster of its own (NewPrivateEnv, or EnvOn over a
// pgtest.Cluster it made) when it stops or restarts the server, changes
// server settings (ALTER SYSTEM, TLS, max_slot_wal_keep_size), makes
// cluster-wide objects (roles, databases), counts every slot of the
// server, needs a standby or a second source, or asserts the database name
// postgres in its records. On the shared cluster, Cluster.Stop, Restart,
// StartAgain and EnableTLS fail.
//
// # One Kafka broker per test
//
// Brokers are not shared: every Env has a kfake broker of its own
// (internal/kafkatest). kfake runs in the test process and starts in
// milliseconds, so a shared broker would save nothing measurable, and it
// would change what the tests see: the offsets topic (mooncdc-offsets,
// keyed by pipeline name) would carry one test's records into another's
// start, which would then resume instead of snapshotting, and topic names
// (<name>.public.t), asserted literally by many tests, would collide.
//
// Under go test -short (make test-unit) every NewEnv skips its test, as
// pgtest.New and kafkatest.New do.
package ittest
