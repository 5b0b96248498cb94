// Package config is mooncdc's configuration: the Config types, their
// defaults, the keys and their environment variables, loading from YAML and
// the environment, validation (errors that name the key and the fix,
// ConfigError), printing with secrets redacted, the configuration reference
// (config_docs.go, the source of docs/configuration.md), the table, column
// and route patterns, topic naming, TLS and SASL for both sides, and the
// dialers of the Postgres and Kafka connections (dial.go, links.go).
//
// Place in the pipeline: none; every stage reads its part of a validated
// Config. Its neighbours are its users: connector (New validates, Run hands
// each stage its part and builds the Kafka clients from KafkaOpts),
// connector/pgsource (connections from PostgresConnConfig, through its
// dialer), connector/internal/fault (the TLS certificate check),
// connector/group (standby and worker-group settings) and cmd/mooncdc
// (loading, printing, the reference). It is a leaf: it must import no
// package of connector (only schema, for the encoder settings it validates),
// so a stage never reaches another stage through it. Values here are decided
// once per Config; nothing in this package holds pipeline state, and apart
// from the dialers it does no I/O.
package config
