package config

import (
	"runtime"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the configuration's defaults: the constants, DefaultConfig
// and the defaults derived from the name (ApplyDefaults).

// DefaultSnapshotConnectionsPerTable is snapshot.connections_per_table's
// default: half the CPUs mooncdc may use (GOMAXPROCS), from 1 to
// MaxDefaultSnapshotConnectionsPerTable. Each connection's writer parses,
// encodes and produces its rows on a core (some 3 µs of mooncdc's CPU per
// row against 0.5 µs of the Postgres backend's), beside the producer's own
// goroutines: connections beyond the cores only fight over them. On 2 CPUs
// one connection copied make bench's table at 0.93 of franz-go alone and
// 2.7 µs per row, four at 0.80 and 4.2 µs.
func DefaultSnapshotConnectionsPerTable() int { return connectionsForCPUs(runtime.GOMAXPROCS(0)) }

func connectionsForCPUs(cpus int) int {
	return min(MaxDefaultSnapshotConnectionsPerTable, max(1, cpus/2))
}

// Defaults that do not depend on the name.
const (
	DefaultDataDir          = "./mooncdc-data"
	DefaultOffsetsTopic     = "mooncdc-offsets"
	DefaultMaxInflightBytes = 64 << 20
	// DefaultMaxRecordBytes keeps a record, with its batch framing, under
	// the brokers' default message.max.bytes (1048588) and franz-go's
	// default batch size (1000012).
	DefaultMaxRecordBytes = 1_000_000
	// Exactly-once transaction bounds and timeout.
	DefaultTransactionMaxBytes    = 8 << 20
	DefaultTransactionMaxInterval = 100 * time.Millisecond
	DefaultTransactionTimeout     = 15 * time.Minute
	DefaultMetricsListen          = "127.0.0.1:9187"
	DefaultHeartbeatInterval      = 10 * time.Second
	DefaultShutdownTimeout        = 30 * time.Second
	DefaultHASessionTimeout       = 10 * time.Second
	// DefaultReplicationTimeout is postgres.replication_timeout where the
	// server's wal_sender_timeout is 0 (off), and the sockets'
	// TCP_USER_TIMEOUT while postgres.replication_timeout is 0: Postgres's
	// own default wal_sender_timeout and wal_receiver_timeout.
	DefaultReplicationTimeout = 60 * time.Second
	// Bounds of postgres.replication_timeout when set.
	MinReplicationTimeout = time.Second
	MaxReplicationTimeout = time.Hour

	DefaultSnapshotWorkers           = 4
	DefaultSnapshotChunkRows         = 100_000
	DefaultSnapshotDiscoveryInterval = 10 * time.Second
	DefaultSnapshotRetryDelay        = 5 * time.Second
	DefaultSnapshotMaxRetries        = 5
	// MaxSnapshotRetryDelay caps the exponential backoff of copy retries,
	// and so also snapshot.retry_delay.
	MaxSnapshotRetryDelay = 5 * time.Minute
	// MaxDefaultSnapshotConnectionsPerTable caps
	// DefaultSnapshotConnectionsPerTable.
	MaxDefaultSnapshotConnectionsPerTable = 4
	// Bounds of snapshot.workers and snapshot.connections_per_table.
	MaxSnapshotWorkers             = 64
	MaxSnapshotConnectionsPerTable = 32
	// EnvPrefix starts every configuration environment variable. All
	// variables with it are reserved: an unknown one is an error.
	EnvPrefix = "MOONCDC_"
)

// DefaultConfig returns every default that does not depend on the name.
func DefaultConfig() Config {
	return Config{
		DataDir:         DefaultDataDir,
		ShutdownTimeout: DefaultShutdownTimeout,
		OnSlotLoss:      SlotLossFail,
		HA:              HAConfig{SessionTimeout: DefaultHASessionTimeout},
		Postgres:        PostgresConfig{PublishViaPartitionRoot: true},
		Kafka: KafkaConfig{
			OffsetsTopic:           DefaultOffsetsTopic,
			TopicPartitions:        1,
			TopicReplicationFactor: -1,
			Delivery:               DeliveryAtLeastOnce,
			MaxInflightBytes:       DefaultMaxInflightBytes,
			Compression:            "none",
			MaxRecordBytes:         DefaultMaxRecordBytes,
			TransactionMaxBytes:    DefaultTransactionMaxBytes,
			TransactionMaxInterval: DefaultTransactionMaxInterval,
			TransactionTimeout:     DefaultTransactionTimeout,
		},
		Snapshot: SnapshotConfig{
			Mode:                SnapshotInitial,
			Workers:             DefaultSnapshotWorkers,
			ChunkRows:           DefaultSnapshotChunkRows,
			ConnectionsPerTable: DefaultSnapshotConnectionsPerTable(),
			DiscoveryInterval:   DefaultSnapshotDiscoveryInterval,
			RetryDelay:          DefaultSnapshotRetryDelay,
			MaxRetries:          DefaultSnapshotMaxRetries,
		},
		Format: FormatConfig{
			Key: FormatJSON, Value: FormatJSON,
			SchemaRegistry:                 SchemaRegistryConfig{AutoRegister: true, SchemaEvolution: EvolutionPark},
			DecimalHandlingMode:            schema.DecimalModes[0],
			BinaryHandlingMode:             schema.BinaryModes[0],
			TimePrecisionMode:              schema.TimePrecisionModes[0],
			IntervalHandlingMode:           schema.IntervalModes[0],
			HstoreHandlingMode:             schema.HstoreModes[0],
			MoneyFractionDigits:            2,
			UnavailableValuePlaceholder:    schema.DefaultUnavailableValue,
			SkippedOperations:              []string{"t"},
			ReplaceNullWithDefault:         true,
			TombstonesOnDelete:             true,
			JSONSchemaAdditionalProperties: true,
			Envelope:                       EnvelopeDebezium,
			Flat: FlatConfig{DeleteHandling: string(schema.DeleteTombstone),
				AddFieldsPrefix: schema.DefaultFlatPrefix, AddHeadersPrefix: schema.DefaultFlatPrefix},
			Outbox: defaultOutbox(),
		},
		Heartbeat: HeartbeatConfig{Interval: DefaultHeartbeatInterval, Records: true},
		Metrics:   MetricsConfig{Listen: DefaultMetricsListen},
		Log:       LogConfig{Level: "info", Format: "json"},
	}
}

// ApplyDefaults fills the defaults derived from the name: publication and
// slot mooncdc_<name> (lower-cased, characters outside [a-z0-9_] turned into
// '_'), topic prefix <name>. Fields already set are kept. With an empty name
// it changes nothing (Validate then reports the name).
func (c *Config) ApplyDefaults() {
	if c.Name == "" {
		return
	}
	derived := "mooncdc_" + sanitizeSlotName(c.Name)
	if c.Postgres.Publication == "" {
		c.Postgres.Publication = derived
	}
	if c.Postgres.Slot == "" {
		c.Postgres.Slot = derived
	}
	if c.Kafka.TopicPrefix == "" {
		c.Kafka.TopicPrefix = c.Name
	}
	if c.Heartbeat.Topic == "" {
		c.Heartbeat.Topic = DefaultHeartbeatTopic(c.Kafka.TopicPrefix)
	}
}

func sanitizeSlotName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '_':
			return r
		case 'A' <= r && r <= 'Z':
			return r + ('a' - 'A')
		default:
			return '_'
		}
	}, s)
}
