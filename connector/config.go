package connector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap/zapcore"
	"go.yaml.in/yaml/v3"

	"github.com/mooncdc/mooncdc/schema"
)

// Config is the whole mooncdc configuration. Its yaml keys are a public
// contract: extend them, never rename them. Every key also has an
// environment variable, derived from its path (see EnvVar), so a new field
// needs only a yaml tag to be settable from the file and the environment.
//
// Leaf fields may be strings (or named string types), booleans, integers,
// floats, time.Duration or []string; nested structs group keys. A field
// tagged `secret:"url"` is a connection URL whose password is masked when
// the config is printed or logged; `secret:"true"` masks the whole value.
type Config struct {
	// Name identifies this connector: it keys the offsets topic and gives
	// the default slot, publication and topic prefix. Required.
	Name string `yaml:"name"`
	// DataDir holds the embedded development Kafka's data when
	// kafka.brokers is empty.
	DataDir  string         `yaml:"data_dir"`
	Postgres PostgresConfig `yaml:"postgres"`
	Kafka    KafkaConfig    `yaml:"kafka"`
	Snapshot SnapshotConfig `yaml:"snapshot"`
	Format   FormatConfig   `yaml:"format"`
	// Heartbeat keeps the slot moving when no captured change flows.
	Heartbeat HeartbeatConfig `yaml:"heartbeat"`
	Metrics   MetricsConfig   `yaml:"metrics"`
	Log       LogConfig       `yaml:"log"`
}

// PostgresConfig says where the source database is and what to stream.
type PostgresConfig struct {
	// URL is a libpq connection string (URL or keyword/value form).
	URL string `yaml:"url" secret:"url"`
	// Tables are table patterns (see ParseTablePattern). Empty means: use
	// the publication as it exists.
	Tables []string `yaml:"tables"`
	// Publication defaults to mooncdc_<name>.
	Publication string `yaml:"publication"`
	// Slot is the logical replication slot; defaults to mooncdc_<name>.
	Slot string `yaml:"slot"`
	// PasswordFile holds the password (one line; a trailing newline is
	// ignored), which then overrides any password in the URL. For secrets
	// mounted as files (Docker/Kubernetes secrets).
	PasswordFile string `yaml:"password_file"`
	// PublishViaPartitionRoot makes a publication that mooncdc creates
	// publish a partitioned table's changes as its root's (WITH
	// (publish_via_partition_root = true)): one table, one topic, copied
	// and streamed through the root. Off, each partition is a table of
	// its own. An existing publication is left as it is.
	PublishViaPartitionRoot bool `yaml:"publish_via_partition_root"`
}

// KafkaConfig says where records go.
type KafkaConfig struct {
	// Brokers are seed brokers (host:port). Empty starts an embedded
	// single-node development Kafka on 127.0.0.1:9092.
	Brokers []string `yaml:"brokers"`
	// TopicPrefix defaults to the name; data topics are
	// <prefix>.<schema>.<table>.
	TopicPrefix  string `yaml:"topic_prefix"`
	OffsetsTopic string `yaml:"offsets_topic"`
	// TopicPartitions and TopicReplicationFactor apply to the topics that
	// mooncdc creates; -1 replication means the broker's default.
	TopicPartitions        int32    `yaml:"topic_partitions"`
	TopicReplicationFactor int16    `yaml:"topic_replication_factor"`
	Delivery               Delivery `yaml:"delivery"`
	// MaxInflightBytes bounds memory: bytes decoded but not yet acked.
	MaxInflightBytes int64 `yaml:"max_inflight_bytes"`
	// Compression of produced batches: none (Kafka's producer default),
	// gzip, snappy, lz4 or zstd.
	Compression string `yaml:"compression"`
	// TransactionMaxBytes and TransactionMaxInterval bound a Kafka
	// transaction in exactly-once mode: it is committed, with the offsets
	// record covering it, at the first Postgres commit after either is
	// reached (a larger Postgres transaction is never split).
	TransactionMaxBytes    int64         `yaml:"transaction_max_bytes"`
	TransactionMaxInterval time.Duration `yaml:"transaction_max_interval"`
	// TransactionTimeout is the transaction.timeout.ms mooncdc asks for in
	// exactly-once mode: the longest a Postgres transaction's or a table
	// copy's Kafka transaction may stay open; at most the brokers'
	// transaction.max.timeout.ms (15m by default).
	TransactionTimeout time.Duration `yaml:"transaction_timeout"`
	// MaxRecordBytes is the largest record (key + value) mooncdc writes
	// (Kafka's max.request.size). A larger one parks its table with an
	// error. Topics mooncdc creates get max.message.bytes to match; the
	// brokers' message.max.bytes must allow it for other topics.
	MaxRecordBytes int32 `yaml:"max_record_bytes"`
	// TLS and SASL secure the connections to kafka.brokers (not to the
	// embedded development Kafka, which listens on loopback only).
	TLS  KafkaTLSConfig  `yaml:"tls"`
	SASL KafkaSASLConfig `yaml:"sasl"`
}

// KafkaTLSConfig is TLS to the brokers.
type KafkaTLSConfig struct {
	// Enabled turns TLS on; with no ca_file the system's CAs are trusted.
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM file of CAs to trust instead of the system's;
	// CertFile and KeyFile a client certificate (mutual TLS).
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName overrides the name checked in the brokers' certificates
	// (default: the host of each broker address).
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// KafkaSASLConfig is SASL authentication to the brokers.
type KafkaSASLConfig struct {
	// Mechanism is empty (no SASL), PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  string `yaml:"password" secret:"true"`
	// PasswordFile holds the password instead of kafka.sasl.password.
	PasswordFile string `yaml:"password_file"`
}

// The SASL mechanisms of kafka.sasl.mechanism.
var SASLMechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// HeartbeatConfig: when no captured change flows for Interval, mooncdc
// confirms the server's WAL end to the slot (nothing being pending), emits a
// logical message (pg_logical_emit_message, prefix mooncdc_heartbeat) so that
// a slot on an idle database moves while other databases write, and writes
// a record to Topic.
type HeartbeatConfig struct {
	// Interval between heartbeats of an idle stream; 0 turns heartbeats
	// off.
	Interval time.Duration `yaml:"interval"`
	// Records writes a heartbeat record to Topic at each heartbeat.
	Records bool `yaml:"records"`
	// Topic defaults to <prefix>.heartbeat.
	Topic string `yaml:"topic"`
}

// Delivery is the delivery guarantee towards Kafka.
type Delivery string

// The delivery guarantees.
const (
	DeliveryAtLeastOnce Delivery = "at-least-once"
	DeliveryExactlyOnce Delivery = "exactly-once"
)

// SnapshotConfig says how tables get their first copy (the snapshot) and
// how failed copies are retried.
type SnapshotConfig struct {
	// Mode says which tables are copied at start; see SnapshotMode.
	Mode SnapshotMode `yaml:"mode"`
	// Workers is the number of copy workers: tables copied at once.
	Workers int `yaml:"workers"`
	// ChunkRows: a table estimated (pg_class.reltuples) above this many
	// rows is copied in ctid ranges by several connections.
	ChunkRows int64 `yaml:"chunk_rows"`
	// ConnectionsPerTable bounds the connections copying one big table.
	ConnectionsPerTable int `yaml:"connections_per_table"`
	// DiscoveryInterval is how often new publication tables (and resnapshot
	// requests) are looked for while streaming.
	DiscoveryInterval time.Duration `yaml:"discovery_interval"`
	// RetryDelay is the first retry delay of a failed copy; later delays
	// grow exponentially, with jitter, up to MaxSnapshotRetryDelay.
	RetryDelay time.Duration `yaml:"retry_delay"`
	// MaxRetries is how many times a failed copy is retried before the
	// table waits for `mooncdc resnapshot`; 0 never retries.
	MaxRetries int `yaml:"max_retries"`
}

// SnapshotMode says which tables are copied when mooncdc starts.
type SnapshotMode string

// The snapshot modes.
const (
	// SnapshotInitial copies the tables not yet ready, then streams.
	SnapshotInitial SnapshotMode = "initial"
	// SnapshotNever copies nothing: tables are marked ready at the slot's
	// start and only changes are streamed.
	SnapshotNever SnapshotMode = "never"
	// SnapshotInitialOnly copies the tables not yet ready, then exits 0.
	SnapshotInitialOnly SnapshotMode = "initial_only"
	// SnapshotAlways re-copies every table at each start.
	SnapshotAlways SnapshotMode = "always"
)

// SnapshotModes lists the valid snapshot.mode values.
var SnapshotModes = []SnapshotMode{SnapshotInitial, SnapshotNever, SnapshotInitialOnly, SnapshotAlways}

// FormatConfig says how records are written: the key and value formats,
// the Schema Registry for Avro, and Debezium's value-mapping options (the
// same names as Debezium's, with '_' for '.').
type FormatConfig struct {
	// Key and Value are "json" (Kafka Connect's JsonConverter) or "avro"
	// (Confluent's AvroConverter with the Schema Registry).
	Key   string `yaml:"key"`
	Value string `yaml:"value"`
	// JSONSchemas wraps JSON keys and values in {"schema":…,"payload":…}
	// (JsonConverter's schemas.enable=true).
	JSONSchemas    bool                 `yaml:"json_schemas"`
	SchemaRegistry SchemaRegistryConfig `yaml:"schema_registry"`
	// DecimalHandlingMode: precise (Connect Decimal), double or string.
	DecimalHandlingMode string `yaml:"decimal_handling_mode"`
	// BinaryHandlingMode: bytes, base64, base64-url-safe or hex.
	BinaryHandlingMode string `yaml:"binary_handling_mode"`
	// TimePrecisionMode: adaptive, adaptive_time_microseconds or connect.
	TimePrecisionMode string `yaml:"time_precision_mode"`
	// IntervalHandlingMode: numeric (MicroDuration) or string (ISO 8601).
	IntervalHandlingMode string `yaml:"interval_handling_mode"`
	// HstoreHandlingMode: json or map.
	HstoreHandlingMode string `yaml:"hstore_handling_mode"`
	// MoneyFractionDigits is the scale of money in precise mode.
	MoneyFractionDigits int `yaml:"money_fraction_digits"`
	// UnavailableValuePlaceholder stands for an unchanged TOASTed value;
	// "hex:" followed by hex digits gives it as bytes.
	UnavailableValuePlaceholder string `yaml:"unavailable_value_placeholder"`
	// IncludeUnknownDatatypes is Debezium's include.unknown.datatypes:
	// box, circle, line, lseg, path and polygon columns, which Debezium
	// 3.6.1 has no schema for and leaves out, are sent as
	// binary_handling_mode's type holding pgjdbc's text of the value.
	IncludeUnknownDatatypes bool `yaml:"include_unknown_datatypes"`
}

// The record formats.
const (
	FormatJSON = "json"
	FormatAvro = "avro"
)

// SchemaRegistryConfig is the Confluent Schema Registry that Avro schemas
// are registered with (subjects <topic>-key and <topic>-value).
type SchemaRegistryConfig struct {
	// URL, e.g. http://localhost:8081; https:// for TLS.
	URL      string `yaml:"url" secret:"url"`
	Username string `yaml:"username"`
	Password string `yaml:"password" secret:"true"`
	// PasswordFile holds the password instead of password.
	PasswordFile string `yaml:"password_file"`
	// CAFile is a PEM file of CAs to trust instead of the system's;
	// CertFile and KeyFile a client certificate (mutual TLS).
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
	// AutoRegister registers new schemas; when false, mooncdc only looks
	// them up and a missing one stops the table with an error.
	AutoRegister bool `yaml:"auto_register"`
}

// MetricsConfig configures the HTTP endpoint for /metrics, /healthz, /readyz.
type MetricsConfig struct {
	// Listen is host:port; empty disables the endpoint.
	Listen string `yaml:"listen"`
}

// LogConfig configures the zap logger built by the command.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // json | console
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

	DefaultSnapshotWorkers             = 4
	DefaultSnapshotChunkRows           = 100_000
	DefaultSnapshotConnectionsPerTable = 4
	DefaultSnapshotDiscoveryInterval   = 10 * time.Second
	DefaultSnapshotRetryDelay          = 5 * time.Second
	DefaultSnapshotMaxRetries          = 5
	// MaxSnapshotRetryDelay caps the exponential backoff of copy retries,
	// and so also snapshot.retry_delay.
	MaxSnapshotRetryDelay = 5 * time.Minute
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
		DataDir:  DefaultDataDir,
		Postgres: PostgresConfig{PublishViaPartitionRoot: true},
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
			ConnectionsPerTable: DefaultSnapshotConnectionsPerTable,
			DiscoveryInterval:   DefaultSnapshotDiscoveryInterval,
			RetryDelay:          DefaultSnapshotRetryDelay,
			MaxRetries:          DefaultSnapshotMaxRetries,
		},
		Format: FormatConfig{
			Key: FormatJSON, Value: FormatJSON,
			SchemaRegistry:              SchemaRegistryConfig{AutoRegister: true},
			DecimalHandlingMode:         schema.DecimalModes[0],
			BinaryHandlingMode:          schema.BinaryModes[0],
			TimePrecisionMode:           schema.TimePrecisionModes[0],
			IntervalHandlingMode:        schema.IntervalModes[0],
			HstoreHandlingMode:          schema.HstoreModes[0],
			MoneyFractionDigits:         2,
			UnavailableValuePlaceholder: schema.DefaultUnavailableValue,
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
		c.Heartbeat.Topic = c.Kafka.TopicPrefix + ".heartbeat"
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

var (
	nameRE       = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	slotRE       = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)
	topicRE      = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	logLevels    = []string{"debug", "info", "warn", "error"}
	logFormats   = []string{"json", "console"}
	maxTopicName = 249 // Kafka's limit
	maxIdentLen  = 63  // Postgres' NAMEDATALEN-1
)

// Validate checks every key and returns nil or a *ConfigError joining one
// message per problem, each naming the key path and the fix. Call it after
// ApplyDefaults. It does no network I/O (postgres.url is parsed with pgconn,
// which may read PG* environment variables and a password file).
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	nameOK := false
	switch {
	case c.Name == "":
		bad("name: required, e.g. name: shop (it keys the offsets and names the default slot, publication and topic prefix)")
	case !nameRE.MatchString(c.Name):
		bad("name: %q may contain only letters, digits, '_', '.' and '-'", c.Name)
	case len(c.Name) > maxTopicName:
		bad("name: %d characters is too long; use at most %d", len(c.Name), maxTopicName)
	default:
		nameOK = true
	}

	// postgres
	if c.Postgres.URL == "" {
		bad("postgres.url: required, e.g. postgres://user@host:5432/db")
	} else if _, err := pgconn.ParseConfig(c.Postgres.URL); err != nil {
		bad("postgres.url: %s; use a URL like postgres://user:password@host:5432/db?sslmode=disable or key=value pairs like \"host=h dbname=db\"", RedactURL(err.Error()))
	}
	if _, err := ParseTablePatterns(c.Postgres.Tables); err != nil {
		for _, e := range unjoin(err) {
			bad("postgres.tables: %v", e)
		}
	}
	if c.Postgres.Publication == "" {
		if nameOK {
			bad("postgres.publication: empty; leave it unset for the default mooncdc_<name>, or name a publication")
		}
	} else if len(c.Postgres.Publication) > maxIdentLen || strings.IndexByte(c.Postgres.Publication, 0) >= 0 {
		bad("postgres.publication: %q is not a valid Postgres name: use at most %d bytes and no NUL (the default is mooncdc_<name>: set postgres.publication or use a shorter name)", c.Postgres.Publication, maxIdentLen)
	}
	if c.Postgres.Slot == "" {
		if nameOK {
			bad("postgres.slot: empty; leave it unset for the default mooncdc_<name>, or name a slot")
		}
	} else if !slotRE.MatchString(c.Postgres.Slot) {
		bad("postgres.slot: %q is not a valid replication slot name: use 1-%d characters from a-z, 0-9 and '_' (the default is mooncdc_<name>: set postgres.slot or use a shorter name)", c.Postgres.Slot, maxIdentLen)
	}

	// kafka
	for i, b := range c.Kafka.Brokers {
		if err := checkHostPort(b, false); err != nil {
			bad("kafka.brokers[%d]: %q %v; write host:port, e.g. localhost:9092 (or leave kafka.brokers empty for the embedded development Kafka)", i, b, err)
		}
	}
	if c.Kafka.TopicPrefix == "" {
		if nameOK {
			bad("kafka.topic_prefix: empty; leave it unset for the default <name>, or set a prefix")
		}
	} else if err := checkTopicName(c.Kafka.TopicPrefix); err != nil {
		bad("kafka.topic_prefix: %q %v", c.Kafka.TopicPrefix, err)
	}
	if err := checkTopicName(c.Kafka.OffsetsTopic); err != nil {
		bad("kafka.offsets_topic: %q %v (default %s)", c.Kafka.OffsetsTopic, err, DefaultOffsetsTopic)
	}
	if c.Kafka.TopicPartitions < 1 {
		bad("kafka.topic_partitions: %d; use 1 or more", c.Kafka.TopicPartitions)
	}
	if c.Kafka.TopicReplicationFactor == 0 || c.Kafka.TopicReplicationFactor < -1 {
		bad("kafka.topic_replication_factor: %d; use -1 for the broker's default, or 1 or more", c.Kafka.TopicReplicationFactor)
	}
	switch c.Kafka.Delivery {
	case DeliveryAtLeastOnce:
	case DeliveryExactlyOnce:
	default:
		bad("kafka.delivery: %q is not one of %s, %s", c.Kafka.Delivery, DeliveryAtLeastOnce, DeliveryExactlyOnce)
	}
	if c.Kafka.MaxInflightBytes <= 0 {
		bad("kafka.max_inflight_bytes: %d; use a positive number of bytes (default %d)", c.Kafka.MaxInflightBytes, DefaultMaxInflightBytes)
	}

	if c.Kafka.TransactionMaxBytes < 1 {
		bad("kafka.transaction_max_bytes: %d; use a positive number of bytes (default %d)", c.Kafka.TransactionMaxBytes, DefaultTransactionMaxBytes)
	}
	if c.Kafka.TransactionMaxInterval < time.Millisecond || c.Kafka.TransactionMaxInterval > time.Minute {
		bad("kafka.transaction_max_interval: %s; use 1ms to 1m (default %s)", c.Kafka.TransactionMaxInterval, DefaultTransactionMaxInterval)
	}
	if c.Kafka.TransactionTimeout < time.Second || c.Kafka.TransactionTimeout > time.Hour {
		bad("kafka.transaction_timeout: %s; use 1s to 1h, at most the brokers' transaction.max.timeout.ms (default %s)", c.Kafka.TransactionTimeout, fmtDuration(DefaultTransactionTimeout))
	} else if c.Kafka.TransactionTimeout <= c.Kafka.TransactionMaxInterval {
		bad("kafka.transaction_timeout: %s must be above kafka.transaction_max_interval %s", c.Kafka.TransactionTimeout, c.Kafka.TransactionMaxInterval)
	}
	if c.Kafka.MaxRecordBytes < 1024 || c.Kafka.MaxRecordBytes > 1<<30 {
		bad("kafka.max_record_bytes: %d; use 1024 to 1073741824 bytes (default %d, Kafka's max.request.size)", c.Kafka.MaxRecordBytes, DefaultMaxRecordBytes)
	}

	switch c.Kafka.Compression {
	case "none", "gzip", "snappy", "lz4", "zstd":
	default:
		bad("kafka.compression: %q is not one of none, gzip, snappy, lz4, zstd", c.Kafka.Compression)
	}

	errs = append(errs, c.validateSecurity()...)

	// snapshot
	sn := c.Snapshot
	if !slices.Contains(SnapshotModes, sn.Mode) {
		bad("snapshot.mode: %q is not one of %s (default %s)", sn.Mode, joinModes(), SnapshotInitial)
	}
	if sn.Workers < 1 || sn.Workers > MaxSnapshotWorkers {
		bad("snapshot.workers: %d; use 1 to %d copy workers (default %d)", sn.Workers, MaxSnapshotWorkers, DefaultSnapshotWorkers)
	}
	if sn.ChunkRows < 1 {
		bad("snapshot.chunk_rows: %d; use a positive number of rows above which a table is copied in ctid ranges (default %d)", sn.ChunkRows, DefaultSnapshotChunkRows)
	}
	if sn.ConnectionsPerTable < 1 || sn.ConnectionsPerTable > MaxSnapshotConnectionsPerTable {
		bad("snapshot.connections_per_table: %d; use 1 to %d (default %d)", sn.ConnectionsPerTable, MaxSnapshotConnectionsPerTable, DefaultSnapshotConnectionsPerTable)
	}
	if sn.DiscoveryInterval < time.Second {
		bad("snapshot.discovery_interval: %s; use 1s or more, e.g. 10s (the default) or 1m", sn.DiscoveryInterval)
	}
	if sn.RetryDelay <= 0 || sn.RetryDelay > MaxSnapshotRetryDelay {
		bad("snapshot.retry_delay: %s; use a positive duration up to %s (the backoff's cap), e.g. 5s (the default)", sn.RetryDelay, fmtDuration(MaxSnapshotRetryDelay))
	}
	if sn.MaxRetries < 0 {
		bad("snapshot.max_retries: %d; use 0 (never retry: a failed table waits for `mooncdc resnapshot`) or more (default %d)", sn.MaxRetries, DefaultSnapshotMaxRetries)
	}

	// format
	fm := c.Format
	avro := false
	for _, f := range []struct{ key, v string }{{"format.key", fm.Key}, {"format.value", fm.Value}} {
		switch f.v {
		case FormatJSON:
		case FormatAvro:
			avro = true
		default:
			bad("%s: %q is not one of json, avro", f.key, f.v)
		}
	}
	sc := schema.Config{UnavailableValue: fm.UnavailableValuePlaceholder, DecimalMode: fm.DecimalHandlingMode,
		BinaryMode: fm.BinaryHandlingMode, TimePrecisionMode: fm.TimePrecisionMode, IntervalMode: fm.IntervalHandlingMode,
		HstoreMode: fm.HstoreHandlingMode, MoneyFractionDigits: fm.MoneyFractionDigits}
	if err := sc.Validate(); err != nil {
		for _, e := range unjoin(err) {
			bad("format.%v", e)
		}
	}
	if fm.MoneyFractionDigits == 0 {
		bad("format.money_fraction_digits: 0 is not supported; use 1 to 20 (default 2)")
	}
	if reg := fm.SchemaRegistry; reg.URL != "" {
		if u, err := url.Parse(reg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("format.schema_registry.url: %q is not an http:// or https:// URL, e.g. http://localhost:8081", RedactURL(reg.URL))
		}
		if (reg.CertFile == "") != (reg.KeyFile == "") {
			bad("format.schema_registry.cert_file and key_file: set both (a client certificate and its key) or neither")
		}
	} else if avro {
		bad("format.schema_registry.url: required when format.key or format.value is avro, e.g. http://localhost:8081")
	}

	// heartbeat
	if hb := c.Heartbeat; hb.Interval < 0 || (hb.Interval > 0 && hb.Interval < 100*time.Millisecond) || hb.Interval > time.Hour {
		bad("heartbeat.interval: %s; use 100ms to 1h, or 0 to turn heartbeats off (default %s)", hb.Interval, fmtDuration(DefaultHeartbeatInterval))
	}
	if c.Heartbeat.Topic != "" {
		if err := checkTopicName(c.Heartbeat.Topic); err != nil {
			bad("heartbeat.topic: %q %v (default <prefix>.heartbeat)", c.Heartbeat.Topic, err)
		}
	}

	// metrics, log
	if c.Metrics.Listen != "" {
		if err := checkHostPort(c.Metrics.Listen, true); err != nil {
			bad("metrics.listen: %q %v; write host:port, e.g. 127.0.0.1:9187 or :9187, or empty to disable", c.Metrics.Listen, err)
		}
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		bad("log.level: %q is not one of %s", c.Log.Level, strings.Join(logLevels, ", "))
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		bad("log.format: %q is not one of %s", c.Log.Format, strings.Join(logFormats, ", "))
	}

	if len(errs) == 0 {
		return nil
	}
	return &ConfigError{Err: errors.Join(errs...)}
}

func joinModes() string {
	names := make([]string, len(SnapshotModes))
	for i, m := range SnapshotModes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// fmtDuration prints d without the zero units time.Duration.String adds
// (5m rather than 5m0s).
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// TablePatterns returns the parsed postgres.tables.
func (c Config) TablePatterns() ([]TablePattern, error) {
	return ParseTablePatterns(c.Postgres.Tables)
}

// EmbeddedKafka reports whether kafka.brokers is empty, so that mooncdc runs
// its own development Kafka.
func (c Config) EmbeddedKafka() bool { return len(c.Kafka.Brokers) == 0 }

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func checkHostPort(s string, emptyHostOK bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return errors.New("is not host:port")
	}
	if host == "" && !emptyHostOK {
		return errors.New("has no host")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && !emptyHostOK) {
		return fmt.Errorf("has an invalid port %q", port)
	}
	return nil
}

func checkTopicName(s string) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case s == "." || s == "..":
		return errors.New("is not a valid Kafka topic name")
	case len(s) > maxTopicName:
		return fmt.Errorf("is longer than %d characters", maxTopicName)
	case !topicRE.MatchString(s):
		return errors.New("may contain only letters, digits, '.', '_' and '-' (Kafka topic names)")
	}
	return nil
}

// ---- keys, environment and flags ----

// configKey is one leaf of Config, found by reflection over yaml tags.
type configKey struct {
	path   string // dotted yaml path, e.g. kafka.topic_partitions
	env    string // MOONCDC_KAFKA_TOPIC_PARTITIONS
	index  []int
	typ    reflect.Type
	secret string
}

var durationType = reflect.TypeFor[time.Duration]()

var configKeys = sync.OnceValue(func() []configKey {
	var keys []configKey
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			idx := append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct && f.Type != durationType {
				walk(f.Type, path, idx)
				continue
			}
			keys = append(keys, configKey{
				path:   path,
				env:    EnvVar(path),
				index:  idx,
				typ:    f.Type,
				secret: f.Tag.Get("secret"),
			})
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return keys
})

func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

func lookupKey(path string) (configKey, bool) {
	for _, k := range configKeys() {
		if k.path == path {
			return k, true
		}
	}
	return configKey{}, false
}

// ConfigKeys returns every configuration key as a dotted path
// (name, postgres.url, kafka.topic_partitions, …) in declaration order.
func ConfigKeys() []string {
	var out []string
	for _, k := range configKeys() {
		out = append(out, k.path)
	}
	return out
}

// EnvVar returns the environment variable for a dotted key path:
// MOONCDC_ followed by the path upper-cased with dots turned into '_'
// (kafka.topic_partitions → MOONCDC_KAFKA_TOPIC_PARTITIONS).
func EnvVar(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// Set sets one key, given as a dotted path, from its text form, the way an
// environment variable or flag does: lists are comma-separated (commas inside
// double quotes do not split, so "a,b".t is one table), and an empty value
// makes an empty list or string. The error says what the value should be.
func (c *Config) Set(path, value string) error {
	k, ok := lookupKey(path)
	if !ok {
		return fmt.Errorf("unknown key %q", path)
	}
	fv := reflect.ValueOf(c).Elem().FieldByIndex(k.index)
	return setFromString(fv, value)
}

func setFromString(fv reflect.Value, value string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%q is not a duration; write a number with a unit, e.g. 10s, 1m30s or 500ms", value)
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(value)
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return fmt.Errorf("%q is not a boolean; use true or false", value)
		}
		fv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer in the range of %s", value, fv.Type().Kind())
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a non-negative integer in the range of %s", value, fv.Type().Kind())
		}
		fv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(value), fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a number", value)
		}
		fv.SetFloat(f)
	case reflect.Slice:
		if fv.Type().Elem().Kind() != reflect.String {
			panic("connector: unsupported config list type " + fv.Type().String())
		}
		items := SplitList(value)
		s := reflect.MakeSlice(fv.Type(), len(items), len(items))
		for i, it := range items {
			s.Index(i).SetString(it)
		}
		fv.Set(s)
	default:
		panic("connector: unsupported config field type " + fv.Type().String())
	}
	return nil
}

// SplitList splits a comma-separated list, trimming spaces and dropping empty
// items. A comma inside double quotes does not split, so quoted identifiers
// such as "a,b".orders survive.
func SplitList(s string) []string {
	var out []string
	start, quoted := 0, false
	add := func(item string) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}

// applyEnv sets every key that has a MOONCDC_* variable in environ
// ("KEY=value" entries, as os.Environ returns). Unknown MOONCDC_* variables
// are errors, to catch typos. The first entry of a duplicated variable wins,
// as with os.Getenv.
func (c *Config) applyEnv(environ []string) error {
	vals := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if _, dup := vals[name]; !dup {
			vals[name] = value
		}
	}
	byEnv := map[string]configKey{}
	for _, k := range configKeys() {
		byEnv[k.env] = k
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		k, ok := byEnv[name]
		if !ok {
			msg := fmt.Sprintf("%s: unknown variable (all %s* variables are reserved for configuration)", name, EnvPrefix)
			if s := suggest(name, slices.Collect(maps.Keys(byEnv))); s != "" {
				msg += "; did you mean " + s + "?"
			}
			errs = append(errs, errors.New(msg))
			continue
		}
		fv := reflect.ValueOf(c).Elem().FieldByIndex(k.index)
		if err := setFromString(fv, vals[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (sets %s)", name, err, k.path))
		}
	}
	return errors.Join(errs...)
}

// suggest returns the candidate closest to s by edit distance, if close.
func suggest(s string, candidates []string) string {
	best, bestD := "", 4
	for _, c := range slices.Sorted(slices.Values(candidates)) {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ---- loading ----

// LoadConfig builds a Config from DefaultConfig, then the YAML file at path
// ("" means no file), then the MOONCDC_* variables in environ. Unknown keys
// in the file and unknown MOONCDC_* variables are errors. It neither applies
// the derived defaults nor validates: the caller does both, after applying
// flags. Errors are *ConfigError, naming the file and line or the variable.
func LoadConfig(path string, environ []string) (Config, error) {
	cfg := DefaultConfig()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, &ConfigError{Err: fmt.Errorf("config file: %w", err)}
		}
		if err := decodeYAML(path, data, &cfg); err != nil {
			return Config{}, &ConfigError{Err: err}
		}
	}
	if err := cfg.applyEnv(environ); err != nil {
		return Config{}, &ConfigError{Err: err}
	}
	return cfg, nil
}

// decodeYAML decodes data over cfg key by key, so that every error names the
// key path and line, unknown keys are rejected (like yaml.v3's KnownFields,
// but with the full path and a suggestion) and duplicate keys are caught.
func decodeYAML(file string, data []byte, cfg *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty file
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: holds more than one YAML document; keep one", file)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	var errs []error
	decodeMapping(file, root, "", reflect.ValueOf(cfg).Elem(), &errs)
	return errors.Join(errs...)
}

func decodeMapping(file string, n *yaml.Node, prefix string, v reflect.Value, errs *[]error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if isNull(n) {
		return
	}
	where := prefix
	if where == "" {
		where = "top level"
	}
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, fmt.Errorf("%s:%d: %s: expected a mapping of keys, found %s", file, n.Line, where, describeNode(n)))
		return
	}
	fields := map[string]reflect.StructField{}
	var names []string
	for i := range v.NumField() {
		if name := yamlName(v.Type().Field(i)); name != "" {
			fields[name] = v.Type().Field(i)
			names = append(names, name)
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		key := kn.Value
		path := key
		if prefix != "" {
			path = prefix + "." + key
		}
		if first, dup := seen[key]; dup {
			*errs = append(*errs, fmt.Errorf("%s:%d: %s: duplicate key (first set on line %d)", file, kn.Line, path, first))
			continue
		}
		seen[key] = kn.Line
		f, ok := fields[key]
		if !ok {
			msg := fmt.Sprintf("%s:%d: unknown key %s", file, kn.Line, path)
			if s := suggest(key, names); s != "" {
				if prefix != "" {
					s = prefix + "." + s
				}
				msg += "; did you mean " + s + "?"
			} else {
				msg += fmt.Sprintf("; known keys under %s: %s", where, strings.Join(names, ", "))
			}
			*errs = append(*errs, errors.New(msg))
			continue
		}
		fv := v.FieldByIndex(f.Index)
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			decodeMapping(file, vn, path, fv, errs)
			continue
		}
		if isNull(vn) {
			// "listen:" with no value means empty, as the comments in the
			// reference config promise ("empty disables").
			fv.Set(reflect.Zero(fv.Type()))
			continue
		}
		if f.Type == durationType {
			// Parsed like the environment and flags do, so "10s" means the
			// same everywhere and a bare number (no unit) is refused.
			sn := vn
			for sn.Kind == yaml.AliasNode && sn.Alias != nil {
				sn = sn.Alias
			}
			if sn.Kind != yaml.ScalarNode {
				*errs = append(*errs, fmt.Errorf("%s:%d: %s: expected a duration such as 10s or 1m30s, found %s", file, vn.Line, path, describeNode(sn)))
			} else if err := setFromString(fv, sn.Value); err != nil {
				*errs = append(*errs, fmt.Errorf("%s:%d: %s: %v", file, vn.Line, path, err))
			}
			continue
		}
		if err := vn.Decode(fv.Addr().Interface()); err != nil {
			*errs = append(*errs, fmt.Errorf("%s:%d: %s: %s", file, vn.Line, path, yamlErrorText(err)))
		}
	}
}

func isNull(n *yaml.Node) bool {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	default:
		return "something else"
	}
}

var yamlLineRE = regexp.MustCompile(`^line \d+: `)

// yamlErrorText drops yaml.v3's "yaml: unmarshal errors:\n  line N:" framing:
// the caller names the file, line and key itself.
func yamlErrorText(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var parts []string
		for _, e := range te.Errors {
			parts = append(parts, yamlLineRE.ReplaceAllString(e, ""))
		}
		return strings.Join(parts, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// ---- printing without secrets ----

var (
	// userinfo password: up to the last '@' that still precedes the host
	urlPasswordRE = regexp.MustCompile(`(://[^:/?#@\s]*:)[^@\s]*(?:@[^@\s/?#]*)*@`)
	kvPasswordRE  = regexp.MustCompile(`(?i)\b((?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)`)
)

const redactedMask = "xxxxx"

// RedactURL masks the passwords in a Postgres connection string (URL
// userinfo, password= and sslpassword= parameters, keyword/value pairs),
// wherever they occur in s, so it can also clean an error message that
// quotes one. It over-masks rather than leak on malformed input.
func RedactURL(s string) string {
	s = urlPasswordRE.ReplaceAllString(s, "${1}"+redactedMask+"@")
	return kvPasswordRE.ReplaceAllString(s, "${1}"+redactedMask)
}

// Redacted returns a copy of c with every secret masked (fields tagged
// `secret`), safe to print or log.
func (c Config) Redacted() Config {
	v := reflect.ValueOf(&c).Elem()
	for _, k := range configKeys() {
		if k.secret == "" {
			continue
		}
		fv := v.FieldByIndex(k.index)
		if fv.Kind() != reflect.String || fv.String() == "" {
			continue
		}
		if k.secret == "url" {
			fv.SetString(RedactURL(fv.String()))
		} else {
			fv.SetString(redactedMask)
		}
	}
	return c
}

// String formats the redacted config on one line as key=value pairs, e.g.
// name=shop postgres.url=postgres://u:xxxxx@h/db postgres.tables=[public.*] …
func (c Config) String() string {
	v := reflect.ValueOf(c.Redacted())
	var b strings.Builder
	for i, k := range configKeys() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fv := v.FieldByIndex(k.index)
		b.WriteString(k.path)
		b.WriteByte('=')
		if fv.Kind() == reflect.Slice {
			b.WriteByte('[')
			for j := range fv.Len() {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprint(&b, fv.Index(j).Interface())
			}
			b.WriteByte(']')
			continue
		}
		s := fmt.Sprint(fv.Interface())
		if s == "" || strings.ContainsAny(s, " \t\n\"") {
			s = strconv.Quote(s)
		}
		b.WriteString(s)
	}
	return b.String()
}

// MarshalLogObject writes the redacted config as nested zap fields, so that
// zap.Any("config", cfg) and zap.Object("config", cfg) never log a password.
func (c Config) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return marshalStruct(enc, reflect.ValueOf(c.Redacted()))
}

func marshalStruct(enc zapcore.ObjectEncoder, v reflect.Value) error {
	for i := range v.NumField() {
		name := yamlName(v.Type().Field(i))
		if name == "" {
			continue
		}
		fv := v.Field(i)
		switch {
		case fv.Type() == durationType:
			enc.AddDuration(name, time.Duration(fv.Int()))
		case fv.Kind() == reflect.Struct:
			sub := fv
			if err := enc.AddObject(name, zapcore.ObjectMarshalerFunc(func(e zapcore.ObjectEncoder) error {
				return marshalStruct(e, sub)
			})); err != nil {
				return err
			}
		case fv.Kind() == reflect.String:
			enc.AddString(name, fv.String())
		case fv.Kind() == reflect.Bool:
			enc.AddBool(name, fv.Bool())
		case fv.CanInt():
			enc.AddInt64(name, fv.Int())
		case fv.CanUint():
			enc.AddUint64(name, fv.Uint())
		case fv.CanFloat():
			enc.AddFloat64(name, fv.Float())
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.String:
			list := fv
			if err := enc.AddArray(name, zapcore.ArrayMarshalerFunc(func(ae zapcore.ArrayEncoder) error {
				for j := range list.Len() {
					ae.AppendString(list.Index(j).String())
				}
				return nil
			})); err != nil {
				return err
			}
		default:
			if err := enc.AddReflected(name, fv.Interface()); err != nil {
				return err
			}
		}
	}
	return nil
}
