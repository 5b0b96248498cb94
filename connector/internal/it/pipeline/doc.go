// Package pipeline holds connector's integration tests of the lifecycle:
// both delivery modes, the bounded stop, slot loss, takeover from Debezium,
// TLS, metrics, failover to a standby and half-open links. Most need a
// cluster of their own (server options, restarts, standbys: ittest's
// NewPrivateEnv says why in each); the rest share the package's. It has
// tests only; its helpers are connector/internal/it/ittest's.
package pipeline
