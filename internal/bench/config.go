package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
)

// This file holds mooncdc's configuration for the streaming benchmark and
// its rendering as a YAML file for mooncdc run --config.

// pipelineConfig is the mooncdc configuration of the benchmark.
func pipelineConfig(s *source, brokerAddr, metricsAddr string) config.Config {
	cfg := config.DefaultConfig()
	cfg.Name = connectorName
	cfg.Postgres.URL = s.c.URL("")
	cfg.Postgres.Tables = []string{"public." + table}
	cfg.Postgres.Publication = publication
	cfg.Postgres.Slot = mooncdcSlot
	// The table is loaded after the slot was made; the benchmark measures
	// streaming, so the table must not be copied first (snapshot.mode
	// initial, the default, would copy it and then skip every streamed
	// change before the copy's snapshot: the whole load).
	cfg.Snapshot.Mode = config.SnapshotNever
	cfg.Kafka.Brokers = []string{brokerAddr}
	cfg.Kafka.Compression = compression
	cfg.Metrics.Listen = metricsAddr
	cfg.Log.Level = "warn"
	cfg.Log.Format = "console"
	return cfg
}

// compression is kafka.compression for both runs (-compression).
var compression = "none"

// configYAML renders the keys pipelineConfig and snapshotConfig set, for
// mooncdc run --config.
func configYAML(cfg config.Config) string {
	return baseYAML(cfg) + transformsYAML(cfg.Transforms)
}

// transformsYAML renders the transforms key (the properties sorted), or
// nothing.
func transformsYAML(props map[string]string) string {
	if len(props) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("transforms:\n")
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&b, "  %s: %s\n", strconv.Quote(k), strconv.Quote(props[k]))
	}
	return b.String()
}

func baseYAML(cfg config.Config) string {
	q := strconv.Quote
	return fmt.Sprintf(`name: %s
postgres:
  url: %s
  tables: [%s]
  publication: %s
  slot: %s
kafka:
  brokers: [%s]
  compression: %s
  delivery: %s
snapshot:
  mode: %s
  workers: %d
  chunk_rows: %d
  connections_per_table: %d
format:
  key: %s
  value: %s
  schema_registry:
    url: %s
metrics:
  listen: %s
log:
  level: %s
  format: %s
`, q(cfg.Name), q(cfg.Postgres.URL), quoteAll(cfg.Postgres.Tables), q(cfg.Postgres.Publication), q(cfg.Postgres.Slot),
		q(cfg.Kafka.Brokers[0]), q(cfg.Kafka.Compression), q(string(cfg.Kafka.Delivery)), q(string(cfg.Snapshot.Mode)), cfg.Snapshot.Workers, cfg.Snapshot.ChunkRows,
		cfg.Snapshot.ConnectionsPerTable, q(cfg.Format.Key), q(cfg.Format.Value), q(cfg.Format.SchemaRegistry.URL), q(cfg.Metrics.Listen), q(cfg.Log.Level), q(cfg.Log.Format))
}

// quoteAll renders a YAML flow sequence's items.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
