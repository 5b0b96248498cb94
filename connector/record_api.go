package connector

import (
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/record"
)

// The names of connector/internal/record that callers outside connector/
// (cmd/mooncdc, internal/*) use.

// The record headers every change record (and its tombstone) carries, so
// that a consumer in at-least-once mode can drop the repeats a restart
// produces (record.HeaderLSN).
const (
	HeaderLSN       = record.HeaderLSN       // the change's own LSN
	HeaderCommitLSN = record.HeaderCommitLSN // its transaction's commit LSN (the snapshot's LSN for a snapshot row)
	HeaderTxSeq     = record.HeaderTxSeq     // its index in the transaction from 0 (a snapshot row's number in its copy)
)

// NewRegistryClient returns a Schema Registry client configured as
// format.schema_registry says (URL, basic auth with the password or its
// file, TLS). It reads the files but does not contact the registry. Errors
// are *config.ConfigError.
func NewRegistryClient(cfg config.SchemaRegistryConfig) (*sr.Client, error) {
	return record.NewRegistryClient(cfg)
}
