package config

import (
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// This file holds the configuration's types, one per section, with their
// enumerations; config_defaults.go holds their defaults.

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
	// Signals are Debezium-format signals (snapshot: signals.go).
	Signals SignalsConfig `yaml:"signals"`
	// Notifications are Debezium-format notifications (emit:
	// incremental_notify.go).
	Notifications NotificationsConfig `yaml:"notifications"`
	Metrics       MetricsConfig       `yaml:"metrics"`
	Log           LogConfig           `yaml:"log"`
	// ShutdownTimeout bounds a clean stop: past it, records Kafka has not
	// acknowledged are given up (never confirmed to Postgres, so sent again
	// at the next start) and run exits 1.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// OnSlotLoss is what run does when the slot its offsets stand on is
	// missing or invalidated (wal_status lost): "fail" (default) stops
	// with exit 3; "resnapshot" creates a new slot, copies every table
	// again and tombstones the keys that vanished in the gap, loudly.
	OnSlotLoss string `yaml:"on_slot_loss"`
	// MigrateFrom takes over from a stopped Debezium connector at its
	// first start (takeover.go).
	MigrateFrom MigrateFromConfig `yaml:"migrate_from"`
	// DDL is schema-change capture (pgsource: ddl.go, emit: schemachange.go).
	DDL DDLConfig `yaml:"ddl"`
	// HA runs this instance as one of several with the same config: the
	// member of the Kafka consumer group mooncdc-<name> that holds the
	// offsets topic's one partition is active, the others wait as
	// standbys (connector/group). Ignored with the embedded Kafka.
	HA HAConfig `yaml:"ha"`
	// WorkerGroup names the worker group of "mooncdc run --config DIR"
	// (the Kafka consumer group mooncdc-workers-<worker_group>); empty
	// means DefaultWorkerGroup, --group overrides it, and every file of
	// the directory must give the same. A run of one file ignores it, so
	// that a file of the directory still works alone (status, check,
	// resnapshot, reset --config DIR/FILE).
	WorkerGroup string `yaml:"worker_group"`
	// Transforms is a Kafka Connect connector config's transform and
	// predicate properties, verbatim (transforms, transforms.<alias>.type,
	// predicates, …): the chain every record runs through after mooncdc's
	// own envelope and routing, before it is encoded
	// (connector/internal/transform). Empty: no chain.
	Transforms map[string]string `yaml:"transforms"`
}

// DDLConfig says whether run installs the DDL event trigger.
type DDLConfig struct {
	// Capture installs (or refreshes) the event trigger of `mooncdc
	// setup-ddl` at each start; a role that may not is warned, and schema
	// changes are then derived from Relation messages only.
	Capture bool `yaml:"capture"`
}

// HAConfig turns standby instances on.
type HAConfig struct {
	// Enabled makes run join the group before it starts the pipeline.
	// The active instance then writes in Kafka transactions in both
	// delivery modes, so that the broker fences it once another takes
	// over (connector/internal/delivery: New).
	Enabled bool `yaml:"enabled"`
	// SessionTimeout is the group session: how long after an active
	// instance stops heartbeating (a crash, a network partition) the
	// group gives its partition to a standby. Within the brokers'
	// group.min.session.timeout.ms and group.max.session.timeout.ms
	// (Kafka's defaults: 6s and 30m).
	SessionTimeout time.Duration `yaml:"session_timeout"`
}

// MigrateFromConfig names what a first start takes over from.
type MigrateFromConfig struct {
	Debezium DebeziumMigration `yaml:"debezium"`
}

// DebeziumMigration names a stopped Debezium PostgreSQL connector's stored
// offset: Kafka Connect's offsets topic and the connector's name. Its
// server is kafka.topic_prefix (Debezium's topic.prefix).
type DebeziumMigration struct {
	OffsetsTopic  string `yaml:"offsets_topic"`
	ConnectorName string `yaml:"connector_name"`
}

// Set reports whether a takeover is configured.
func (m DebeziumMigration) Set() bool { return m.OffsetsTopic != "" || m.ConnectorName != "" }

// PostgresConfig says where the source database is and what to stream.
type PostgresConfig struct {
	// URL is a libpq connection string (URL or keyword/value form).
	URL string `yaml:"url" secret:"url"`
	// Tables are table patterns (see ParseTablePattern). Empty means: use
	// the publication as it exists.
	Tables []string `yaml:"tables"`
	// TableFilters are the row filters and column lists of postgres.tables
	// entries written as {table, where, columns} in the config file
	// (Postgres 15+): a publication mooncdc creates publishes the table
	// with them, and the copy follows the publication. Keyed by the
	// entry's table as written.
	TableFilters map[string]TableFilter `yaml:"-"`
	// TablesExclude are table patterns never captured, even when Tables
	// or the publication select them (Debezium's table.exclude.list).
	TablesExclude []string `yaml:"tables_exclude"`
	// ColumnsInclude and ColumnsExclude select the columns of record
	// values by schema.table.column patterns (Debezium's
	// column.include.list and column.exclude.list; an exclusion wins).
	// Record keys keep their columns.
	ColumnsInclude []string `yaml:"columns_include"`
	ColumnsExclude []string `yaml:"columns_exclude"`
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
	// SlotFailover makes the slot a failover slot (PostgreSQL 17+): the
	// standbys that sync_replication_slots keep a copy, and after a
	// promotion mooncdc continues on it (a multi-host postgres.url with
	// target_session_attrs=read-write finds the new primary).
	SlotFailover bool `yaml:"slot_failover"`
	// ReplicationTimeout is how long a connection to Postgres may stay
	// silent before mooncdc ends it and reconnects: no message on a
	// replication connection (data or keepalive; mooncdc asks for a
	// keepalive once it has been quiet a quarter of it), no COPY data on a
	// copy connection, no answer to a query. 0 (the default) takes the
	// server's wal_sender_timeout, or DefaultReplicationTimeout where that
	// is 0 (off). It is also each socket's TCP_USER_TIMEOUT (snapshot: link.go).
	ReplicationTimeout time.Duration `yaml:"replication_timeout"`
}

// TableFilter is the row filter and column list of one postgres.tables
// entry.
type TableFilter struct {
	Table   string   `yaml:"table"`
	Where   string   `yaml:"where"`
	Columns []string `yaml:"columns"`
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
	// Routes rename topics (Debezium's ByLogicalTableRouter, or Kafka's
	// RegexRouter without a key_field); see routes.go.
	Routes []RouteRule `yaml:"routes"`
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
	// Topic defaults to Debezium's __debezium-heartbeat.<prefix>
	// (DefaultHeartbeatTopic).
	Topic string `yaml:"topic"`
}

// DefaultHeartbeatTopic is Debezium's heartbeat topic for a topic prefix:
// heartbeat.topics.prefix (default __debezium-heartbeat), '.', the prefix
// (HeartbeatImpl.java:46, AbstractTopicNamingStrategy.java:142-147).
func DefaultHeartbeatTopic(prefix string) string { return "__debezium-heartbeat." + prefix }

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
	// Key and Value are "json" (Kafka Connect's JsonConverter), "avro"
	// (Confluent's AvroConverter with the Schema Registry), "protobuf" or
	// "json_schema" (Confluent's ProtobufConverter and
	// JsonSchemaConverter, with the registry); Value also
	// "cloudevents" (Debezium's CloudEventsConverter, structured JSON mode,
	// JSON data with JSONSchemas saying whether it carries its schema).
	Key   string `yaml:"key"`
	Value string `yaml:"value"`
	// JSONSchemas wraps JSON keys and values in {"schema":…,"payload":…}
	// (JsonConverter's schemas.enable=true).
	JSONSchemas bool `yaml:"json_schemas"`
	// JSONSchemaAdditionalProperties is JsonSchemaConverter's
	// object.additional.properties (default true): with json_schema, every
	// struct's object allows additional properties; false writes
	// "additionalProperties": false, which a registry's BACKWARD check
	// needs to accept a column added.
	JSONSchemaAdditionalProperties bool                 `yaml:"json_schema_additional_properties"`
	SchemaRegistry                 SchemaRegistryConfig `yaml:"schema_registry"`
	// DecimalHandlingMode: precise (Connect Decimal), double or string.
	DecimalHandlingMode string `yaml:"decimal_handling_mode"`
	// BinaryHandlingMode: bytes, base64, base64-url-safe or hex.
	BinaryHandlingMode string `yaml:"binary_handling_mode"`
	// TimePrecisionMode: adaptive, adaptive_time_microseconds, connect,
	// microseconds or nanoseconds.
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
	// SkippedOperations are the streamed operations not written, as
	// Debezium's skipped.operations: c (insert), u (update), d (delete),
	// t (truncate); [none] or [] writes them all. Default [t]: truncates
	// are skipped, as in Debezium.
	SkippedOperations []string `yaml:"skipped_operations"`
	// ProvideTransactionMetadata fills each change's transaction block and
	// writes BEGIN and END records to <prefix>.transaction, as Debezium's
	// provide.transaction.metadata (default false).
	ProvideTransactionMetadata bool `yaml:"provide_transaction_metadata"`
	// ReplaceNullWithDefault writes a NULL in a column that has a default
	// as that default (default true), as Kafka Connect's JsonConverter
	// (replace.null.with.default) and Confluent's AvroConverter
	// (ignore.default.for.nullables=false) write Debezium's records; false
	// keeps the null. Either way the default is in the record schema.
	ReplaceNullWithDefault bool `yaml:"replace_null_with_default"`
	// MessageKeyColumns keys the records of the tables a pattern selects
	// by the columns listed, in that order, instead of the primary key
	// (Debezium's message.key.columns); also for tables without one. The
	// columns must be part of the replica identity, or the identity FULL,
	// for deletes to carry them.
	MessageKeyColumns map[string][]string `yaml:"message_key_columns"`
	// TombstonesOnDelete follows each delete with a tombstone, its key
	// and a null value, so that compaction removes the row (Debezium's
	// tombstones.on.delete, default true: CommonConnectorConfig.java:676-682).
	TombstonesOnDelete bool `yaml:"tombstones_on_delete"`
	// ColumnMask, ColumnHash and ColumnTruncate are Debezium's column
	// mappers (column.mask.with.N.chars, column.mask.hash[.v2].ALG.with.salt.SALT,
	// column.truncate.to.N.chars) on record values, in snapshot rows and
	// changes alike; keys are not mapped. A column gets the first rule
	// that names it: truncation, then masks, then hashes.
	ColumnMask     []ColumnMaskRule     `yaml:"column_mask"`
	ColumnHash     []ColumnHashRule     `yaml:"column_hash"`
	ColumnTruncate []ColumnTruncateRule `yaml:"column_truncate"`
	// Envelope is the shape of table records' values: debezium (default,
	// the change event envelope) or flat (the row itself, as Debezium's
	// ExtractNewRecordState SMT writes it; Flat says how) or outbox (the
	// outbox table's rows as events, as Debezium's outbox EventRouter SMT
	// writes them; Outbox says how).
	Envelope string       `yaml:"envelope"`
	Flat     FlatConfig   `yaml:"flat"`
	Outbox   OutboxConfig `yaml:"outbox"`
}

// The record envelopes (format.envelope).
const (
	EnvelopeDebezium = "debezium"
	EnvelopeFlat     = "flat"
	EnvelopeOutbox   = "outbox"
)

// FlatConfig is format.flat, ExtractNewRecordState's options
// (ExtractNewRecordStateConfigDefinition.java:72-130 in Debezium 3.6.1).
type FlatConfig struct {
	// DeleteHandling is delete.tombstone.handling.mode: drop, tombstone
	// (default), rewrite, rewrite-with-tombstone or delete-to-tombstone.
	DeleteHandling string `yaml:"delete_handling"`
	// AddFields and AddHeaders are add.fields and add.headers: envelope
	// fields (op, ts_ms, source.<field>, transaction.<field>, or a bare
	// source or transaction field such as lsn or table) appended to the
	// value or added as headers, named prefix+field (prefix+struct_field
	// when qualified, prefix+new for field:new).
	AddFields  []string `yaml:"add_fields"`
	AddHeaders []string `yaml:"add_headers"`
	// AddFieldsPrefix and AddHeadersPrefix default to "__".
	AddFieldsPrefix  string `yaml:"add_fields_prefix"`
	AddHeadersPrefix string `yaml:"add_headers_prefix"`
}

// flat returns the flat envelope of f, nil for Debezium's envelope (or a
// configuration Validate refuses).
func (f *FormatConfig) SchemaFlat() (*schema.FlatConfig, error) {
	if f.Envelope != EnvelopeFlat {
		return nil, nil
	}
	fl := f.Flat
	return schema.NewFlatConfig(schema.DeleteHandling(fl.DeleteHandling), fl.AddFields, fl.AddFieldsPrefix, fl.AddHeaders, fl.AddHeadersPrefix)
}

// SkippableOperations are the values of format.skipped_operations.
var SkippableOperations = []string{"c", "u", "d", "t", "none"}

// The record formats.
const (
	FormatJSON = "json"
	FormatAvro = "avro"
	// FormatCloudEvents (format.value only) is Debezium's
	// CloudEventsConverter in its structured JSON mode with JSON data.
	FormatCloudEvents = "cloudevents"
	// FormatProtobuf is Confluent's ProtobufConverter and FormatJSONSchema
	// its JsonSchemaConverter, each with the Schema Registry
	// (connector/internal/record: registered_formats.go).
	FormatProtobuf   = "protobuf"
	FormatJSONSchema = "json_schema"
)

// UsesRegistry reports whether format.key or format.value registers its
// schemas with the Schema Registry (avro, protobuf, json_schema).
func (f FormatConfig) UsesRegistry() bool {
	for _, v := range []string{f.Key, f.Value} {
		switch v {
		case FormatAvro, FormatProtobuf, FormatJSONSchema:
			return true
		}
	}
	return false
}

// SchemaRegistryConfig is the Confluent Schema Registry that Avro,
// Protobuf and JSON Schema schemas are registered with (subjects
// <topic>-key and <topic>-value).
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
	// SchemaEvolution is what a schema change that the registry refuses
	// as incompatible does, decided at the DDL (connector/internal/record: evolution.go): park
	// (default), new_subject or force.
	SchemaEvolution string `yaml:"schema_evolution"`
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
