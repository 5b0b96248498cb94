package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// validConfig is a config that passes Validate.
func validConfig() Config {
	c := DefaultConfig()
	c.Name = "shop"
	c.Postgres.URL = "postgres://user:s3cret@localhost:5432/shop?sslmode=disable"
	c.Postgres.Tables = []string{"public.orders", "public.*"}
	c.ApplyDefaults()
	return c
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mooncdc.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	want := Config{
		DataDir:         "./mooncdc-data",
		ShutdownTimeout: 30 * time.Second,
		OnSlotLoss:      "fail",
		Postgres:        PostgresConfig{PublishViaPartitionRoot: true},
		Kafka: KafkaConfig{
			OffsetsTopic:           "mooncdc-offsets",
			TopicPartitions:        1,
			TopicReplicationFactor: -1,
			Delivery:               DeliveryAtLeastOnce,
			MaxInflightBytes:       67108864,
			Compression:            "none",
			MaxRecordBytes:         1_000_000,
			TransactionMaxBytes:    8 << 20,
			TransactionMaxInterval: 100 * time.Millisecond,
			TransactionTimeout:     15 * time.Minute,
		},
		Snapshot: SnapshotConfig{
			Mode:                SnapshotInitial,
			Workers:             4,
			ChunkRows:           100000,
			ConnectionsPerTable: min(4, max(1, runtime.GOMAXPROCS(0)/2)), // half the CPUs, 1 to 4
			DiscoveryInterval:   10 * time.Second,
			RetryDelay:          5 * time.Second,
			MaxRetries:          5,
		},
		Format: FormatConfig{
			Key: "json", Value: "json",
			SchemaRegistry:              SchemaRegistryConfig{AutoRegister: true, SchemaEvolution: EvolutionPark},
			DecimalHandlingMode:         "precise",
			BinaryHandlingMode:          "bytes",
			TimePrecisionMode:           "adaptive",
			IntervalHandlingMode:        "numeric",
			HstoreHandlingMode:          "json",
			MoneyFractionDigits:         2,
			UnavailableValuePlaceholder: "__debezium_unavailable_value",
			// Debezium's skipped.operations default: truncates are not
			// written (CommonConnectorConfig.java:838-848).
			SkippedOperations: []string{"t"},
			// JsonConverter's replace.null.with.default default
			// (apache/kafka JsonConverterConfig.java:49-50).
			ReplaceNullWithDefault: true,
			// JsonSchemaDataConfig.java:35 at schema-registry 794611bd86d.
			JSONSchemaAdditionalProperties: true,
			TombstonesOnDelete:             true, // CommonConnectorConfig.java:676-682
			Envelope:                       "debezium",
			// ExtractNewRecordStateConfigDefinition.java:77, 99, 118.
			Flat: FlatConfig{DeleteHandling: "tombstone", AddFieldsPrefix: "__", AddHeadersPrefix: "__"},
			Outbox: OutboxConfig{RouteBy: "aggregatetype", Topic: "outbox.event.${routedByValue}", RouteTopicRegex: "(?<routedByValue>.*)",
				TableFieldEventID: "id", TableFieldEventKey: "aggregateid", TableFieldEventPayload: "payload", TableOpInvalidBehavior: "warn",
				TableJSONPayloadNullBehavior: "ignore", TableFieldAdditionalMissing: "error"},
		},
		Heartbeat: HeartbeatConfig{Interval: 10 * time.Second, Records: true},
		Metrics:   MetricsConfig{Listen: "127.0.0.1:9187"},
		Log:       LogConfig{Level: "info", Format: "json"},
		HA:        HAConfig{SessionTimeout: 10 * time.Second},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("DefaultConfig() = %+v\nwant %+v", c, want)
	}
	if !c.EmbeddedKafka() {
		t.Error("default config should use the embedded Kafka")
	}
}

func TestApplyDefaultsDerivesFromName(t *testing.T) {
	c := DefaultConfig()
	c.Name = "Shop-EU.1"
	c.ApplyDefaults()
	if c.Postgres.Publication != "mooncdc_shop_eu_1" || c.Postgres.Slot != "mooncdc_shop_eu_1" || c.Kafka.TopicPrefix != "Shop-EU.1" {
		t.Fatalf("derived defaults: publication %q slot %q prefix %q", c.Postgres.Publication, c.Postgres.Slot, c.Kafka.TopicPrefix)
	}
	// Debezium's heartbeat topic: heartbeat.topics.prefix __debezium-heartbeat,
	// '.', the topic prefix (HeartbeatImpl.java:46, AbstractTopicNamingStrategy.java:142-147).
	if c.Heartbeat.Topic != "__debezium-heartbeat.Shop-EU.1" {
		t.Errorf("derived heartbeat.topic %q, want __debezium-heartbeat.Shop-EU.1", c.Heartbeat.Topic)
	}

	c = DefaultConfig()
	c.Name = "shop"
	c.Postgres.Publication, c.Postgres.Slot, c.Kafka.TopicPrefix = "pub", "slot", "pre"
	c.ApplyDefaults()
	if c.Postgres.Publication != "pub" || c.Postgres.Slot != "slot" || c.Kafka.TopicPrefix != "pre" {
		t.Fatalf("ApplyDefaults overwrote explicit values: %+v", c)
	}

	c = DefaultConfig()
	c.ApplyDefaults()
	if c.Postgres.Slot != "" || c.Postgres.Publication != "" || c.Kafka.TopicPrefix != "" {
		t.Fatalf("ApplyDefaults without a name derived something: %+v", c)
	}
}

func TestValidateAcceptsGoodConfig(t *testing.T) {
	c := validConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	c.Kafka.Brokers = []string{"kafka:9092", "[::1]:9093"}
	c.Metrics.Listen = ""
	c.Postgres.URL = "host=localhost dbname=shop user=me password='a b'"
	c.Postgres.Tables = nil
	c.Log = LogConfig{Level: "debug", Format: "console"}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	c.Metrics.Listen = ":0"
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate with metrics.listen :0: %v", err)
	}
}

func TestValidateNamesTheKeyAndTheFix(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   []string // substrings of the error
	}{
		{"missing name", func(c *Config) { c.Name = "" }, []string{"name: required"}},
		{"bad name", func(c *Config) { c.Name = "shop eu" }, []string{"name:", "letters, digits"}},
		{"missing url", func(c *Config) { c.Postgres.URL = "" }, []string{"postgres.url: required, e.g. postgres://user@host:5432/db"}},
		{"unparsable url", func(c *Config) { c.Postgres.URL = "postgres://u:hunter2@host:notaport/db" }, []string{"postgres.url:", "xxxxx"}},
		{"bad table", func(c *Config) { c.Postgres.Tables = []string{"ok", "public."} }, []string{"postgres.tables:", `"public."`}},
		{"bad slot", func(c *Config) { c.Postgres.Slot = "Bad-Slot" }, []string{"postgres.slot:", "a-z, 0-9"}},
		{"replication timeout too short", func(c *Config) { c.Postgres.ReplicationTimeout = 500 * time.Millisecond },
			[]string{"postgres.replication_timeout: 500ms", "1s to 1h", "or 0 (the default) for the server's wal_sender_timeout"}},
		{"replication timeout negative", func(c *Config) { c.Postgres.ReplicationTimeout = -time.Second }, []string{"postgres.replication_timeout: -1s"}},
		{"long derived slot", func(c *Config) {
			c.Name = strings.Repeat("n", 60)
			c.Postgres.Slot, c.Postgres.Publication, c.Kafka.TopicPrefix = "", "", ""
			c.ApplyDefaults()
		}, []string{"postgres.slot:", "postgres.publication:", "shorter name"}},
		{"bad broker", func(c *Config) { c.Kafka.Brokers = []string{"localhost"} }, []string{"kafka.brokers[0]:", "host:port"}},
		{"bad broker port", func(c *Config) { c.Kafka.Brokers = []string{"a:1", "b:x"} }, []string{"kafka.brokers[1]:"}},
		{"bad prefix", func(c *Config) { c.Kafka.TopicPrefix = "a/b" }, []string{"kafka.topic_prefix:"}},
		{"empty offsets topic", func(c *Config) { c.Kafka.OffsetsTopic = "" }, []string{"kafka.offsets_topic:", "is empty"}},
		{"partitions", func(c *Config) { c.Kafka.TopicPartitions = 0 }, []string{"kafka.topic_partitions: 0"}},
		{"replication", func(c *Config) { c.Kafka.TopicReplicationFactor = 0 }, []string{"kafka.topic_replication_factor: 0", "-1"}},
		{"delivery", func(c *Config) { c.Kafka.Delivery = "twice" }, []string{"kafka.delivery:", "at-least-once, exactly-once"}},
		{"transaction max bytes", func(c *Config) { c.Kafka.TransactionMaxBytes = 0 }, []string{"kafka.transaction_max_bytes: 0", "positive"}},
		{"transaction interval", func(c *Config) { c.Kafka.TransactionMaxInterval = 2 * time.Minute }, []string{"kafka.transaction_max_interval: 2m0s", "1ms to 1m"}},
		{"transaction timeout", func(c *Config) { c.Kafka.TransactionTimeout = 0 }, []string{"kafka.transaction_timeout: 0s", "transaction.max.timeout.ms"}},
		{"bad delivery", func(c *Config) { c.Kafka.Delivery = "twice" }, []string{"kafka.delivery:", "at-least-once"}},
		{"inflight", func(c *Config) { c.Kafka.MaxInflightBytes = 0 }, []string{"kafka.max_inflight_bytes:"}},
		{"compression", func(c *Config) { c.Kafka.Compression = "brotli" }, []string{"kafka.compression:", "lz4"}},
		{"snapshot mode", func(c *Config) { c.Snapshot.Mode = "sometimes" }, []string{"snapshot.mode:", `"sometimes"`, "initial, never, initial_only, always"}},
		{"snapshot workers 0", func(c *Config) { c.Snapshot.Workers = 0 }, []string{"snapshot.workers: 0", "1 to 64"}},
		{"snapshot workers 65", func(c *Config) { c.Snapshot.Workers = 65 }, []string{"snapshot.workers: 65", "1 to 64"}},
		{"snapshot chunk rows", func(c *Config) { c.Snapshot.ChunkRows = 0 }, []string{"snapshot.chunk_rows: 0", "positive"}},
		{"snapshot connections 0", func(c *Config) { c.Snapshot.ConnectionsPerTable = 0 }, []string{"snapshot.connections_per_table: 0", "1 to 32"}},
		{"snapshot connections 33", func(c *Config) { c.Snapshot.ConnectionsPerTable = 33 }, []string{"snapshot.connections_per_table: 33", "1 to 32"}},
		{"snapshot discovery", func(c *Config) { c.Snapshot.DiscoveryInterval = 500 * time.Millisecond }, []string{"snapshot.discovery_interval: 500ms", "1s or more"}},
		{"snapshot retry delay 0", func(c *Config) { c.Snapshot.RetryDelay = 0 }, []string{"snapshot.retry_delay: 0s", "positive", "5m"}},
		{"snapshot retry delay above cap", func(c *Config) { c.Snapshot.RetryDelay = 6 * time.Minute }, []string{"snapshot.retry_delay: 6m0s", "up to 5m "}},
		{"snapshot max retries", func(c *Config) { c.Snapshot.MaxRetries = -1 }, []string{"snapshot.max_retries: -1", "mooncdc resnapshot"}},
		{"schema evolution", func(c *Config) { c.Format.SchemaRegistry.SchemaEvolution = "break" }, []string{"format.schema_registry.schema_evolution:", `"break"`, "park (default), new_subject, force"}},
		{"skipped operation", func(c *Config) { c.Format.SkippedOperations = []string{"t", "r"} }, []string{"format.skipped_operations:", `"r"`, "c, u, d, t, none"}},
		{"skipped none and more", func(c *Config) { c.Format.SkippedOperations = []string{"none", "t"} }, []string{"format.skipped_operations:", "none cannot be listed"}},
		{"metrics", func(c *Config) { c.Metrics.Listen = "9187" }, []string{"metrics.listen:", "host:port"}},
		{"log level", func(c *Config) { c.Log.Level = "loud" }, []string{"log.level:", "debug, info, warn, error"}},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, []string{"log.format:", "json, console"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate accepted a bad config")
			}
			if ExitCode(err) != ExitConfig {
				t.Errorf("ExitCode = %d, want %d", ExitCode(err), ExitConfig)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error leaks a password: %q", err)
			}
		})
	}
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	c := DefaultConfig()
	c.Log.Level = "loud"
	c.Kafka.TopicPartitions = 0
	c.ApplyDefaults()
	err := c.Validate()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, w := range []string{"name: required", "postgres.url: required", "log.level", "kafka.topic_partitions"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	// The name's derived keys are not reported on top of the missing name.
	if strings.Contains(err.Error(), "postgres.slot") {
		t.Errorf("error %q reports postgres.slot although only the name is missing", err)
	}
}

func TestLoadConfigPrecedenceDefaultsFileEnv(t *testing.T) {
	path := writeFile(t, `
name: shop
postgres:
  url: postgres://file@host/db
  tables: [public.orders, "public.*"]
kafka:
  brokers: [a:9092, b:9092]
  topic_partitions: 3
log:
  level: debug
`)
	cfg, err := LoadConfig(path, []string{
		"HOME=/root",
		"MOONCDC_KAFKA_TOPIC_PARTITIONS=6",
		"MOONCDC_LOG_FORMAT=console",
		"MOONCDC_POSTGRES_TABLES=public.a, \"x,y\".b ,",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Name = "shop"
	want.Postgres.URL = "postgres://file@host/db"
	want.Postgres.Tables = []string{"public.a", `"x,y".b`}
	want.Kafka.Brokers = []string{"a:9092", "b:9092"}
	want.Kafka.TopicPartitions = 6
	want.Log = LogConfig{Level: "debug", Format: "console"}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("LoadConfig =\n%+v\nwant\n%+v", cfg, want)
	}
}

// TestMoneyFractionDigitsZeroIsASetting: format.money_fraction_digits 0
// (whole units) is loaded and accepted, as Debezium's money.fraction.digits
// 0 (PostgresConnectorConfig.java:1151-1158, v3.6.1.Final); it used to be
// refused because the encoder's config read 0 as unset (issue 12).
func TestMoneyFractionDigitsZeroIsASetting(t *testing.T) {
	path := writeFile(t, `
name: shop
postgres:
  url: postgres://file@host/db
format:
  money_fraction_digits: 0
`)
	for _, environ := range [][]string{nil, {"MOONCDC_FORMAT_MONEY_FRACTION_DIGITS=0"}} {
		p := path
		if environ != nil {
			p = writeFile(t, "name: shop\npostgres:\n  url: postgres://file@host/db\n")
		}
		cfg, err := LoadConfig(p, environ)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Format.MoneyFractionDigits != 0 {
			t.Fatalf("money_fraction_digits %d, want 0", cfg.Format.MoneyFractionDigits)
		}
		cfg.ApplyDefaults()
		if err := cfg.Validate(); err != nil {
			t.Errorf("money_fraction_digits 0 refused: %v", err)
		}
	}
	c := validConfig()
	c.Format.MoneyFractionDigits = 21
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "money_fraction_digits") {
		t.Errorf("money_fraction_digits 21: %v, want refused", err)
	}
}

func TestLoadConfigWithoutFile(t *testing.T) {
	cfg, err := LoadConfig("", nil)
	if err != nil || !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Fatalf("LoadConfig(\"\", nil) = %+v, %v; want the defaults", cfg, err)
	}
	cfg, err = LoadConfig(writeFile(t, ""), nil)
	if err != nil || !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Fatalf("empty file: %+v, %v; want the defaults", cfg, err)
	}
	cfg, err = LoadConfig(writeFile(t, "# only a comment\n"), nil)
	if err != nil || !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Fatalf("comment-only file: %+v, %v; want the defaults", cfg, err)
	}
}

// TestSkippedOperationsAndTransactionMetadataFromFileAndEnv: the two
// Debezium options come from the file and from
// MOONCDC_FORMAT_SKIPPED_OPERATIONS / MOONCDC_FORMAT_PROVIDE_TRANSACTION_METADATA;
// an empty list skips nothing.
func TestSkippedOperationsAndTransactionMetadataFromFileAndEnv(t *testing.T) {
	path := writeFile(t, "format:\n  skipped_operations: []\n  provide_transaction_metadata: true\n")
	cfg, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Format.SkippedOperations) != 0 || !cfg.Format.ProvideTransactionMetadata {
		t.Errorf("file: skipped %q, transaction metadata %v", cfg.Format.SkippedOperations, cfg.Format.ProvideTransactionMetadata)
	}
	cfg, err = LoadConfig("", []string{"MOONCDC_FORMAT_SKIPPED_OPERATIONS=u,d", "MOONCDC_FORMAT_PROVIDE_TRANSACTION_METADATA=true"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Format.SkippedOperations, []string{"u", "d"}) || !cfg.Format.ProvideTransactionMetadata {
		t.Errorf("env: skipped %q, transaction metadata %v", cfg.Format.SkippedOperations, cfg.Format.ProvideTransactionMetadata)
	}
}

func TestLoadConfigEmptyEnvClearsAList(t *testing.T) {
	path := writeFile(t, "kafka:\n  brokers: [a:9092]\nmetrics:\n  listen: 127.0.0.1:1\n")
	cfg, err := LoadConfig(path, []string{"MOONCDC_KAFKA_BROKERS=", "MOONCDC_METRICS_LISTEN="})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Kafka.Brokers) != 0 || cfg.Metrics.Listen != "" {
		t.Fatalf("empty env values did not clear: brokers %q listen %q", cfg.Kafka.Brokers, cfg.Metrics.Listen)
	}
}

func TestLoadConfigFileErrorsNameKeyAndLine(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown nested key", "name: shop\npostgres:\n  urll: x\n", []string{":3: unknown key postgres.urll", "did you mean postgres.url?"}},
		{"unknown top key", "name: shop\nkafak:\n  brokers: []\n", []string{":2: unknown key kafak", "did you mean kafka?"}},
		{"unknown key far from any", "zzzzzzzzzz: 1\n", []string{":1: unknown key zzzzzzzzzz", "known keys under top level: name, data_dir"}},
		{"wrong type", "kafka:\n  topic_partitions: many\n", []string{":2: kafka.topic_partitions:", "int32"}},
		{"overflow", "kafka:\n  topic_replication_factor: 70000\n", []string{":2: kafka.topic_replication_factor:"}},
		{"list expected", "postgres:\n  tables: public.orders\n", []string{":2: postgres.tables:"}},
		{"mapping expected", "postgres: postgres://x\n", []string{":1: postgres: expected a mapping", `"postgres://x"`}},
		{"top level not a mapping", "- a\n- b\n", []string{":1: top level: expected a mapping", "a list"}},
		{"duplicate key", "name: a\nname: b\n", []string{":2: name: duplicate key (first set on line 1)"}},
		{"syntax", "name: [\n", []string{"mooncdc.yaml"}},
		{"two documents", "name: a\n---\nname: b\n", []string{"more than one YAML document"}},
		{"several errors", "nam: a\nlog:\n  levl: x\n", []string{"unknown key nam", "unknown key log.levl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(writeFile(t, tt.yaml), nil)
			if err == nil {
				t.Fatal("LoadConfig accepted a bad file")
			}
			if ExitCode(err) != ExitConfig {
				t.Errorf("ExitCode = %d, want %d", ExitCode(err), ExitConfig)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if err == nil || ExitCode(err) != ExitConfig || !strings.Contains(err.Error(), "nope.yaml") {
		t.Fatalf("LoadConfig(missing) = %v", err)
	}
}

func TestLoadConfigYAMLNullsAndAnchors(t *testing.T) {
	cfg, err := LoadConfig(writeFile(t, "postgres:\nkafka:\n  brokers: &b [x:1]\nmetrics:\n  listen:\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Metrics.Listen != "" || !reflect.DeepEqual(cfg.Kafka.Brokers, []string{"x:1"}) {
		t.Fatalf("got %+v", cfg)
	}
}

func TestLoadConfigEnvErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		env  string
		want []string
	}{
		{"MOONCDC_KAFKA_TOPIC_PARTITIONS=abc", []string{"MOONCDC_KAFKA_TOPIC_PARTITIONS:", `"abc" is not an integer`, "kafka.topic_partitions"}},
		{"MOONCDC_KAFKA_TOPIC_REPLICATION_FACTOR=99999", []string{"MOONCDC_KAFKA_TOPIC_REPLICATION_FACTOR:"}},
		{"MOONCDC_KAFKA_MAX_INFLIGHT_BYTES=1.5", []string{"MOONCDC_KAFKA_MAX_INFLIGHT_BYTES:"}},
		{"MOONCDC_POSTGRES_URI=x", []string{"MOONCDC_POSTGRES_URI: unknown variable", "did you mean MOONCDC_POSTGRES_URL?"}},
		{"MOONCDC_WHATEVER_ELSE_ENTIRELY=x", []string{"MOONCDC_WHATEVER_ELSE_ENTIRELY: unknown variable"}},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			_, err := LoadConfig("", []string{"PATH=/bin", tt.env})
			if err == nil {
				t.Fatal("LoadConfig accepted a bad variable")
			}
			if ExitCode(err) != ExitConfig {
				t.Errorf("ExitCode = %d, want %d", ExitCode(err), ExitConfig)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEveryKeyHasAUniqueEnvVar(t *testing.T) {
	want := []string{
		"name", "data_dir",
		"postgres.url", "postgres.tables", "postgres.tables_exclude", "postgres.columns_include", "postgres.columns_exclude", "postgres.publication", "postgres.slot", "postgres.password_file", "postgres.publish_via_partition_root", "postgres.slot_failover", "postgres.replication_timeout",
		"kafka.brokers", "kafka.topic_prefix", "kafka.offsets_topic", "kafka.routes", "kafka.topic_partitions",
		"kafka.topic_replication_factor", "kafka.delivery", "kafka.max_inflight_bytes", "kafka.compression",
		"kafka.transaction_max_bytes", "kafka.transaction_max_interval", "kafka.transaction_timeout",
		"kafka.max_record_bytes",
		"kafka.tls.enabled", "kafka.tls.ca_file", "kafka.tls.cert_file", "kafka.tls.key_file",
		"kafka.tls.server_name", "kafka.tls.insecure_skip_verify",
		"kafka.sasl.mechanism", "kafka.sasl.username", "kafka.sasl.password", "kafka.sasl.password_file",
		"snapshot.mode", "snapshot.workers", "snapshot.chunk_rows", "snapshot.connections_per_table",
		"snapshot.discovery_interval", "snapshot.retry_delay", "snapshot.max_retries",
		"format.key", "format.value", "format.json_schemas", "format.json_schema_additional_properties",
		"format.schema_registry.url", "format.schema_registry.username", "format.schema_registry.password",
		"format.schema_registry.password_file", "format.schema_registry.ca_file", "format.schema_registry.cert_file", "format.schema_registry.key_file",
		"format.schema_registry.insecure_skip_verify", "format.schema_registry.auto_register", "format.schema_registry.schema_evolution",
		"format.decimal_handling_mode", "format.binary_handling_mode", "format.time_precision_mode",
		"format.interval_handling_mode", "format.hstore_handling_mode", "format.money_fraction_digits",
		"format.unavailable_value_placeholder", "format.include_unknown_datatypes", "format.skipped_operations", "format.provide_transaction_metadata",
		"format.replace_null_with_default", "format.message_key_columns", "format.tombstones_on_delete",
		"format.column_mask", "format.column_hash", "format.column_truncate",
		"format.envelope", "format.flat.delete_handling", "format.flat.add_fields", "format.flat.add_headers", "format.flat.add_fields_prefix", "format.flat.add_headers_prefix",
		"format.outbox.table", "format.outbox.route_by", "format.outbox.topic", "format.outbox.route_topic_regex",
		"format.outbox.table_field_event_id", "format.outbox.table_field_event_key", "format.outbox.table_field_event_payload",
		"format.outbox.table_field_event_timestamp", "format.outbox.table_field_event_schema_version",
		"format.outbox.table_fields_additional_placement", "format.outbox.table_expand_json_payload",
		"format.outbox.route_tombstone_on_empty_payload", "format.outbox.table_op_invalid_behavior",
		"format.outbox.table_json_payload_null_behavior", "format.outbox.table_field_additional_missing", "format.outbox.message_prefix",
		"heartbeat.interval", "heartbeat.records", "heartbeat.topic", "signals.kafka_topic", "signals.table", "notifications.kafka_topic",
		"metrics.listen", "log.level", "log.format", "shutdown_timeout", "on_slot_loss",
		"migrate_from.debezium.offsets_topic", "migrate_from.debezium.connector_name", "ddl.capture",
		"ha.enabled", "ha.session_timeout", "worker_group", "transforms",
	}
	if got := ConfigKeys(); !reflect.DeepEqual(got, want) {
		t.Fatalf("ConfigKeys() = %q\nwant %q (keys are a public contract: extend, never rename)", got, want)
	}
	seen := map[string]string{}
	for _, k := range ConfigKeys() {
		env := EnvVar(k)
		if other, dup := seen[env]; dup {
			t.Errorf("keys %s and %s share the variable %s", other, k, env)
		}
		seen[env] = k
	}
	if EnvVar("kafka.topic_replication_factor") != "MOONCDC_KAFKA_TOPIC_REPLICATION_FACTOR" {
		t.Errorf("EnvVar = %s", EnvVar("kafka.topic_replication_factor"))
	}
}

// Every key can be set from the environment, and lands in the right field.
func TestEveryKeySettableFromEnv(t *testing.T) {
	samples := map[reflect.Kind]string{
		reflect.String: "v", reflect.Int: "7", reflect.Int16: "7", reflect.Int32: "7", reflect.Int64: "7", reflect.Slice: "a,b",
		reflect.Bool: "true", reflect.Map: "public.t:a,b",
	}
	structList := reflect.Slice + 100 // a list of rules: YAML flow
	samples[structList] = "[{columns: [a.b.c]}]"
	for _, k := range configKeys() {
		kind := k.typ.Kind()
		if kind == reflect.Slice && k.typ.Elem().Kind() == reflect.Struct {
			kind = structList
		}
		val, ok := samples[kind]
		if k.typ == durationType {
			val = "7ns"
		}
		props := k.typ == reflect.TypeFor[map[string]string]() // transforms: a JSON object
		if props {
			val = `{"transforms":"a"}`
		}
		if !ok {
			t.Fatalf("no sample for %s (%s): add one", k.path, k.typ)
		}
		cfg, err := LoadConfig("", []string{k.env + "=" + val})
		if err != nil {
			t.Fatalf("%s: %v", k.env, err)
		}
		got := reflect.ValueOf(cfg).FieldByIndex(k.index)
		var want any
		switch k.typ.Kind() {
		case reflect.Slice:
			want = []string{"a", "b"}
			if kind == structList {
				want = got.Interface() // checked below: one rule with one column
				if got.Len() != 1 {
					t.Errorf("%s: got %#v, want one rule", k.env, got.Interface())
				} else if f := got.Index(0).FieldByName("Columns"); f.IsValid() && !reflect.DeepEqual(f.Interface(), []string{"a.b.c"}) {
					t.Errorf("%s: got %#v, want one rule of column a.b.c", k.env, got.Interface())
				}
			}
		case reflect.Map:
			want = map[string][]string{"public.t": {"a", "b"}}
			if props {
				want = map[string]string{"transforms": "a"}
			}
		case reflect.String:
			want = "v"
		case reflect.Bool:
			want = true
		default:
			want = int64(7)
		}
		var gotV any = got.Interface()
		switch got.Kind() {
		case reflect.String:
			gotV = got.String()
		case reflect.Int, reflect.Int16, reflect.Int32, reflect.Int64:
			gotV = got.Int()
		case reflect.Bool:
			gotV = got.Bool()
		}
		if !reflect.DeepEqual(gotV, want) {
			t.Errorf("%s=%s set %s to %v", k.env, val, k.path, gotV)
		}
	}
}

func TestSetNamesTheFix(t *testing.T) {
	c := DefaultConfig()
	if err := c.Set("kafka.topic_partitions", "x"); err == nil || !strings.Contains(err.Error(), "integer") {
		t.Errorf("Set(bad int) = %v", err)
	}
	if err := c.Set("no.such", "x"); err == nil || !strings.Contains(err.Error(), "no.such") {
		t.Errorf("Set(unknown) = %v", err)
	}
	if err := c.Set("kafka.brokers", " a:1 , b:2 "); err != nil || !reflect.DeepEqual(c.Kafka.Brokers, []string{"a:1", "b:2"}) {
		t.Errorf("Set(brokers) = %v, %q", err, c.Kafka.Brokers)
	}
}

func TestSnapshotDurationsFromFileEnvAndSet(t *testing.T) {
	path := writeFile(t, `
snapshot:
  mode: initial_only
  workers: 8
  chunk_rows: 5000
  connections_per_table: 2
  discovery_interval: 1m30s
  retry_delay: 250ms
  max_retries: 0
`)
	cfg, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := SnapshotConfig{Mode: SnapshotInitialOnly, Workers: 8, ChunkRows: 5000, ConnectionsPerTable: 2,
		DiscoveryInterval: 90 * time.Second, RetryDelay: 250 * time.Millisecond, MaxRetries: 0}
	if cfg.Snapshot != want {
		t.Fatalf("snapshot from file = %+v, want %+v", cfg.Snapshot, want)
	}

	cfg, err = LoadConfig(path, []string{"MOONCDC_SNAPSHOT_DISCOVERY_INTERVAL=30s", "MOONCDC_SNAPSHOT_MODE=always"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Snapshot.DiscoveryInterval != 30*time.Second || cfg.Snapshot.Mode != SnapshotAlways || cfg.Snapshot.RetryDelay != 250*time.Millisecond {
		t.Fatalf("env did not override the file: %+v", cfg.Snapshot)
	}

	if err := cfg.Set("snapshot.retry_delay", "2m"); err != nil || cfg.Snapshot.RetryDelay != 2*time.Minute {
		t.Fatalf("Set(retry_delay, 2m) = %v, %s", err, cfg.Snapshot.RetryDelay)
	}
	if err := cfg.Set("snapshot.retry_delay", "5"); err == nil || !strings.Contains(err.Error(), `"5" is not a duration`) || !strings.Contains(err.Error(), "1m30s") {
		t.Fatalf("Set(retry_delay, 5) = %v, want an error with an example", err)
	}
	cfg.Name, cfg.Postgres.URL = "shop", "postgres://u@h/db"
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if s := cfg.String(); !strings.Contains(s, "snapshot.discovery_interval=30s") || !strings.Contains(s, "snapshot.mode=always") {
		t.Errorf("String() = %s", s)
	}
}

func TestSnapshotDurationErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		name, yaml string
		environ    []string
		want       []string
	}{
		{name: "bare number in file", yaml: "snapshot:\n  retry_delay: 10\n", want: []string{":2: snapshot.retry_delay:", `"10" is not a duration`, "10s"}},
		{name: "word in file", yaml: "snapshot:\n  discovery_interval: often\n", want: []string{":2: snapshot.discovery_interval:", `"often"`, "1m30s"}},
		{name: "list in file", yaml: "snapshot:\n  discovery_interval: [1s]\n", want: []string{":2: snapshot.discovery_interval:", "expected a duration", "a list"}},
		{name: "env", environ: []string{"MOONCDC_SNAPSHOT_DISCOVERY_INTERVAL=10 seconds"}, want: []string{"MOONCDC_SNAPSHOT_DISCOVERY_INTERVAL:", `"10 seconds" is not a duration`, "snapshot.discovery_interval"}},
		{name: "workers not a number", yaml: "snapshot:\n  workers: many\n", want: []string{":2: snapshot.workers:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.yaml != "" {
				path = writeFile(t, tt.yaml)
			}
			_, err := LoadConfig(path, tt.environ)
			if err == nil {
				t.Fatal("LoadConfig accepted a bad value")
			}
			if ExitCode(err) != ExitConfig {
				t.Errorf("ExitCode = %d, want %d", ExitCode(err), ExitConfig)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestSplitList(t *testing.T) {
	tests := map[string][]string{
		"":                     nil,
		" , ,":                 nil,
		"a":                    {"a"},
		"a,b":                  {"a", "b"},
		" a , b ":              {"a", "b"},
		`"a,b".c,d`:            {`"a,b".c`, "d"},
		`public.*,"X"."y,z"`:   {"public.*", `"X"."y,z"`},
		`"unterminated,still"`: {`"unterminated,still"`},
	}
	for in, want := range tests {
		if got := SplitList(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	tests := map[string]string{
		"postgres://user:s3cret@host:5432/db?sslmode=disable":     "postgres://user:xxxxx@host:5432/db?sslmode=disable",
		"postgres://user@host/db":                                 "postgres://user@host/db",
		"postgresql://u:p%40ss@h1:5432,h2:5432/db":                "postgresql://u:xxxxx@h1:5432,h2:5432/db",
		"postgres://u:pa/ss@h/db":                                 "postgres://u:xxxxx@h/db",
		"postgres://u:pa@ss@h/db":                                 "postgres://u:xxxxx@h/db",
		"postgres://h/db?user=u&password=s3cret&sslmode=x":        "postgres://h/db?user=u&password=xxxxx&sslmode=x",
		"postgres://h/db?sslpassword=s3cret":                      "postgres://h/db?sslpassword=xxxxx",
		"host=h password=s3cret dbname=db":                        "host=h password=xxxxx dbname=db",
		"host=h password = 's3 cret' dbname=db":                   "host=h password = xxxxx dbname=db",
		`host=h password='it\'s' dbname=db`:                       "host=h password=xxxxx dbname=db",
		"host=h PASSWORD=s3cret":                                  "host=h PASSWORD=xxxxx",
		`cannot parse "postgres://u:s3cret@h:x/db": invalid port`: `cannot parse "postgres://u:xxxxx@h:x/db": invalid port`,
	}
	for in, want := range tests {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigPrintingNeverShowsThePassword(t *testing.T) {
	c := validConfig()
	if s := c.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "postgres.url=postgres://user:xxxxx@localhost") || !strings.Contains(s, "kafka.topic_partitions=1") {
		t.Errorf("String() = %s", s)
	}
	if c.Postgres.URL != "postgres://user:s3cret@localhost:5432/shop?sslmode=disable" {
		t.Error("String modified the config")
	}

	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zap.DebugLevel))
	log.Info("start", zap.Any("config", c), zap.Object("cfg", c), zap.Stringer("s", c))
	out := buf.String()
	if strings.Contains(out, "s3cret") {
		t.Errorf("log leaks the password: %s", out)
	}
	for _, w := range []string{`"postgres":{"url":"postgres://user:xxxxx@localhost:5432/shop?sslmode=disable","tables":["public.orders","public.*"]`, `"topic_partitions":1`, `"delivery":"at-least-once"`} {
		if !strings.Contains(out, w) {
			t.Errorf("log %s does not contain %s", out, w)
		}
	}
}

func TestConfigErrorWrapsForExitCode(t *testing.T) {
	err := validConfig().Validate()
	if err != nil {
		t.Fatal(err)
	}
	c := validConfig()
	c.Name = ""
	var ce *ConfigError
	if err := c.Validate(); !errors.As(err, &ce) {
		t.Fatalf("Validate error %T is not a *ConfigError", err)
	}
}

// TestTableEntriesWithWhereAndColumnsFromFile: postgres.tables mixes
// patterns and {table, where, columns} entries; an entry with a filter must
// name one table, and its keys are checked.
func TestTableEntriesWithWhereAndColumnsFromFile(t *testing.T) {
	path := writeFile(t, "name: shop\npostgres:\n  url: postgres://h/db\n  tables:\n    - public.items\n"+
		"    - {table: public.orders, where: \"status <> 'draft'\", columns: [id, status]}\n")
	cfg, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.Postgres.Tables, []string{"public.items", "public.orders"}) {
		t.Errorf("tables %q", cfg.Postgres.Tables)
	}
	want := TableFilter{Table: "public.orders", Where: "status <> 'draft'", Columns: []string{"id", "status"}}
	if got := cfg.Postgres.TableFilters["public.orders"]; !reflect.DeepEqual(got, want) {
		t.Errorf("filter %+v, want %+v", got, want)
	}
	for _, bad := range []struct{ yaml, want string }{
		{"    - {table: public.*, where: \"x > 1\"}\n", "must name one table"},
		{"    - {table: public.o, whre: \"x > 1\"}\n", "unknown key postgres.tables[].whre"},
		{"    - {where: \"x > 1\"}\n", "needs table: schema.table"},
	} {
		path := writeFile(t, "name: shop\npostgres:\n  url: postgres://h/db\n  tables:\n"+bad.yaml)
		cfg, err := LoadConfig(path, nil)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err %v, want %q", bad.yaml, err, bad.want)
		}
	}
}

func TestDefaultConnectionsPerTableIsHalfTheCPUs(t *testing.T) {
	for _, c := range []struct{ cpus, want int }{{1, 1}, {2, 1}, {3, 1}, {4, 2}, {6, 3}, {8, 4}, {64, 4}} {
		if got := connectionsForCPUs(c.cpus); got != c.want {
			t.Errorf("%d CPUs: %d connections per table, want %d", c.cpus, got, c.want)
		}
	}
	if got, want := DefaultConfig().Snapshot.ConnectionsPerTable, connectionsForCPUs(runtime.GOMAXPROCS(0)); got != want {
		t.Errorf("DefaultConfig: %d connections per table, want %d for GOMAXPROCS %d", got, want, runtime.GOMAXPROCS(0))
	}
}

// TestTransformsFromFileAndEnvAreCheckedAtValidate: the transforms key
// holds a Kafka Connect config's properties verbatim, from the file (YAML
// scalars of any kind read as their text, as a .properties file has
// them) and from MOONCDC_TRANSFORMS (a JSON object); Validate builds the
// chain, so a bad key or expression is a ConfigError naming the key, and
// a CEL error its line and column.
func TestTransformsFromFileAndEnvAreCheckedAtValidate(t *testing.T) {
	path := writeFile(t, `
name: shop
postgres:
  url: postgres://file@host/db
transforms:
  transforms: dropDeletes,addRegion
  transforms.dropDeletes.type: io.debezium.transforms.Filter
  transforms.dropDeletes.language: cel
  transforms.dropDeletes.condition: value.op != 'd'
  transforms.addRegion.type: org.apache.kafka.connect.transforms.InsertField$Value
  transforms.addRegion.static.field: region
  transforms.addRegion.static.value: 5
  transforms.addRegion.predicate: isTombstone
  transforms.addRegion.negate: true
  predicates: isTombstone
  predicates.isTombstone.type: org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
`)
	cfg, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Transforms; len(got) != 11 || got["transforms.addRegion.static.value"] != "5" || got["transforms.addRegion.negate"] != "true" ||
		got["transforms.dropDeletes.condition"] != "value.op != 'd'" {
		t.Fatalf("transforms from the file = %q", got)
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a valid chain refused: %v", err)
	}

	cfg, err = LoadConfig("", []string{`MOONCDC_TRANSFORMS={"transforms":"f","transforms.f.type":"io.debezium.transforms.Filter","transforms.f.language":"cel","transforms.f.condition":"value.op ==\n  'd' &&"}`})
	if err != nil {
		t.Fatal(err)
	}
	c := validConfig()
	c.Transforms = cfg.Transforms
	err = c.Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "transforms: transforms.f.condition") || !strings.Contains(err.Error(), "line 2, column") {
		t.Errorf("a CEL syntax error on line 2: %v; want a ConfigError naming transforms.f.condition and line 2", err)
	}
	c.Transforms = map[string]string{"transforms": "x", "transforms.x.type": "org.apache.kafka.connect.transforms.Nope"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "transforms.x.type") {
		t.Errorf("an unknown transform type: %v; want an error naming transforms.x.type", err)
	}
	if _, err := LoadConfig("", []string{"MOONCDC_TRANSFORMS=transforms=a"}); err == nil || !strings.Contains(err.Error(), "MOONCDC_TRANSFORMS") || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("MOONCDC_TRANSFORMS not JSON: %v; want an error naming the variable and the form", err)
	}
}
