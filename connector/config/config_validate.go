package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/internal/transform"
	"github.com/mooncdc/mooncdc/schema"
)

// This file holds Config.Validate and the checks it uses.

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
	if c.Signals.Table != "" {
		if p, err := ParseTablePattern(c.Signals.Table); err != nil {
			bad("signals.table: %v", err)
		} else if p.HasWildcard() {
			bad("signals.table: %q has a '*'; name the one signal table, e.g. public.debezium_signal", c.Signals.Table)
		} else if exc, err := ParseTablePatterns(c.Postgres.TablesExclude); err == nil && matchAny(exc, p.Schema, p.Table) {
			bad("signals.table: %s is excluded by postgres.tables_exclude; take it out of the exclude list, or set no signal table", p)
		}
	}
	if m := c.MigrateFrom.Debezium; m.Set() {
		if m.OffsetsTopic == "" {
			bad("migrate_from.debezium.offsets_topic: required with connector_name: Kafka Connect's offset.storage.topic, e.g. connect-offsets")
		} else if err := CheckTopicName(m.OffsetsTopic); err != nil {
			bad("migrate_from.debezium.offsets_topic: %v", err)
		}
		if m.ConnectorName == "" {
			bad("migrate_from.debezium.connector_name: required with offsets_topic: the Debezium connector's name in Kafka Connect")
		}
		if c.Snapshot.Mode == SnapshotAlways {
			bad("migrate_from: snapshot.mode always copies every table again; a takeover copies none: drop one of them")
		}
	}
	if c.Signals.KafkaTopic != "" {
		if err := CheckTopicName(c.Signals.KafkaTopic); err != nil {
			bad("signals.kafka_topic: %v", err)
		}
	}
	if t := c.Notifications.KafkaTopic; t != "" {
		if err := CheckTopicName(t); err != nil {
			bad("notifications.kafka_topic: %v", err)
		} else if t == c.Signals.KafkaTopic {
			bad("notifications.kafka_topic: %q is signals.kafka_topic too; give the notifications a topic of their own", t)
		}
	}
	if _, err := c.TopicNaming(); err != nil {
		for _, e := range strings.Split(err.Error(), "; ") {
			bad("%s", e)
		}
	}
	if _, err := NewColumnRules(c); err != nil {
		for _, e := range strings.Split(err.Error(), "; ") {
			bad("%s", e)
		}
	}
	for pattern, cols := range c.Format.MessageKeyColumns {
		if _, err := ParseTablePattern(pattern); err != nil {
			bad("format.message_key_columns: %v", err)
		}
		if len(cols) == 0 {
			bad("format.message_key_columns: %s lists no column; list the key's columns, e.g. %s: [id]", pattern, pattern)
		}
	}
	for name, tf := range c.Postgres.TableFilters {
		if p, err := ParseTablePattern(name); err == nil && p.HasWildcard() {
			bad("postgres.tables: the entry %s has where or columns, so it must name one table (no '*')", name)
		}
		if strings.Contains(tf.Where, ";") {
			bad("postgres.tables: the where of %s holds ';'; give one boolean expression, e.g. status <> 'draft'", name)
		}
	}
	if _, err := ParseTablePatterns(c.Postgres.TablesExclude); err != nil {
		for _, e := range unjoin(err) {
			bad("postgres.tables_exclude: %v", e)
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
	} else if err := CheckTopicName(c.Kafka.TopicPrefix); err != nil {
		bad("kafka.topic_prefix: %q %v", c.Kafka.TopicPrefix, err)
	}
	if err := CheckTopicName(c.Kafka.OffsetsTopic); err != nil {
		bad("kafka.offsets_topic: %q %v (default %s)", c.Kafka.OffsetsTopic, err, DefaultOffsetsTopic)
	}
	if rt := c.Postgres.ReplicationTimeout; rt != 0 && (rt < MinReplicationTimeout || rt > MaxReplicationTimeout) {
		bad("postgres.replication_timeout: %s; use %s to %s, or 0 (the default) for the server's wal_sender_timeout (%s where that is off): how long a silent connection to Postgres is kept",
			rt, fmtDuration(MinReplicationTimeout), fmtDuration(MaxReplicationTimeout), fmtDuration(DefaultReplicationTimeout))
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
		bad("snapshot.connections_per_table: %d; use 1 to %d (default %d)", sn.ConnectionsPerTable, MaxSnapshotConnectionsPerTable, DefaultSnapshotConnectionsPerTable())
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
	registered := false
	for _, f := range []struct{ key, v string }{{"format.key", fm.Key}, {"format.value", fm.Value}} {
		switch f.v {
		case FormatJSON:
		case FormatAvro, FormatProtobuf, FormatJSONSchema:
			registered = true
		case FormatCloudEvents:
			if f.key == "format.key" {
				bad("format.key: cloudevents is a value format (Debezium's CloudEventsConverter writes record values); use json, avro, protobuf or json_schema for the key")
			}
		default:
			bad("%s: %q is not one of json, avro, protobuf, json_schema, cloudevents (value only)", f.key, f.v)
		}
	}
	if fm.Envelope == EnvelopeOutbox {
		for _, f := range []struct{ key, v string }{{"format.key", fm.Key}, {"format.value", fm.Value}} {
			if f.v == FormatProtobuf || f.v == FormatJSONSchema {
				// Both are written through the Connect view, as a transforms
				// chain is, which the outbox envelope does not have yet.
				bad("%s: %s is not supported with format.envelope outbox yet; use json or avro", f.key, f.v)
			}
		}
	}
	if fm.Value == FormatCloudEvents && fm.Envelope != "" && fm.Envelope != EnvelopeDebezium {
		// Envelope.isEnvelopeSchema (Envelope.java:393-403) is false for a
		// flattened row or an outbox event: CloudEventsConverter.java:268-272
		// writes null for each.
		bad("format.value: cloudevents writes Debezium's change envelope as a CloudEvent; with format.envelope %s every value would be null (as Debezium's converter writes it): use format.envelope debezium", fm.Envelope)
	}
	sc := schema.Config{UnavailableValue: fm.UnavailableValuePlaceholder, DecimalMode: fm.DecimalHandlingMode,
		BinaryMode: fm.BinaryHandlingMode, TimePrecisionMode: fm.TimePrecisionMode, IntervalMode: fm.IntervalHandlingMode,
		HstoreMode: fm.HstoreHandlingMode, MoneyFractionDigits: &fm.MoneyFractionDigits}
	if err := sc.Validate(); err != nil {
		for _, e := range unjoin(err) {
			bad("format.%v", e)
		}
	}
	for _, op := range fm.SkippedOperations {
		switch {
		case !slices.Contains(SkippableOperations, op):
			bad("format.skipped_operations: %q is not one of %s (default [t])", op, strings.Join(SkippableOperations, ", "))
		case op == "none" && len(fm.SkippedOperations) > 1:
			bad("format.skipped_operations: none cannot be listed with other operations; write [none] to skip nothing")
		}
	}
	switch fm.Envelope {
	case EnvelopeDebezium, "":
		if fl := fm.Flat; len(fl.AddFields) > 0 || len(fl.AddHeaders) > 0 || fl.DeleteHandling != "" && fl.DeleteHandling != string(schema.DeleteTombstone) {
			bad("format.flat: set, but format.envelope is %s; set format.envelope: flat, or remove format.flat", EnvelopeDebezium)
		}
	case EnvelopeFlat:
		flat, err := fm.SchemaFlat()
		switch {
		case err != nil:
			bad("format.flat.%v", err)
		case flat.HasSnapshotField() && fm.Value == FormatAvro:
			bad("format.flat.add_fields: source.snapshot with format.value avro is not built yet (a copy's last row could not be marked); " +
				"add it as a header (format.flat.add_headers) or use json")
		}
	case EnvelopeOutbox:
	default:
		bad("format.envelope: %q is not one of %s, %s, %s", fm.Envelope, EnvelopeDebezium, EnvelopeFlat, EnvelopeOutbox)
	}
	fm.validateOutbox(bad)
	if ob, err := fm.SchemaOutbox(); err == nil && ob != nil {
		if sel, err := c.TableSelection(); err == nil && !sel.Captures(ob.Schema, ob.Table) {
			bad("format.outbox.table: %s.%s is not captured (postgres.tables, postgres.tables_exclude); add it to postgres.tables", ob.Schema, ob.Table)
		}
	}
	if reg := fm.SchemaRegistry; reg.URL != "" {
		if u, err := url.Parse(reg.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("format.schema_registry.url: %q is not an http:// or https:// URL, e.g. http://localhost:8081", RedactURL(reg.URL))
		}
		if (reg.CertFile == "") != (reg.KeyFile == "") {
			bad("format.schema_registry.cert_file and key_file: set both (a client certificate and its key) or neither")
		}
	} else if registered {
		bad("format.schema_registry.url: required when format.key or format.value is avro, protobuf or json_schema, e.g. http://localhost:8081")
	}
	switch ev := fm.SchemaRegistry.SchemaEvolution; ev {
	case EvolutionPark, EvolutionNewSubject, EvolutionForce:
	default:
		bad("format.schema_registry.schema_evolution: %q is not one of %s (default), %s, %s", ev, EvolutionPark, EvolutionNewSubject, EvolutionForce)
	}

	if c.OnSlotLoss != SlotLossFail && c.OnSlotLoss != SlotLossResnapshot {
		bad("on_slot_loss: %q is not %s or %s", c.OnSlotLoss, SlotLossFail, SlotLossResnapshot)
	}
	if c.ShutdownTimeout < time.Second || c.ShutdownTimeout > time.Hour {
		bad("shutdown_timeout: %s; use 1s to 1h (default %s): how long a clean stop may wait for Kafka", c.ShutdownTimeout, fmtDuration(DefaultShutdownTimeout))
	}

	if st := c.HA.SessionTimeout; st < time.Second || st > 30*time.Minute {
		bad("ha.session_timeout: %s; use 1s to 30m, within the brokers' group.min.session.timeout.ms and group.max.session.timeout.ms (default %s): how long a dead active instance keeps its standbys waiting", st, fmtDuration(DefaultHASessionTimeout))
	}
	if g := c.WorkerGroup; g != "" && !nameRE.MatchString(g) {
		bad("worker_group: %q may contain only letters, digits, '_', '.' and '-' (it names the Kafka consumer group mooncdc-workers-<worker_group>)", g)
	}

	// heartbeat
	if hb := c.Heartbeat; hb.Interval < 0 || (hb.Interval > 0 && hb.Interval < 100*time.Millisecond) || hb.Interval > time.Hour {
		bad("heartbeat.interval: %s; use 100ms to 1h, or 0 to turn heartbeats off (default %s)", hb.Interval, fmtDuration(DefaultHeartbeatInterval))
	}
	if c.Heartbeat.Topic != "" {
		if err := CheckTopicName(c.Heartbeat.Topic); err != nil {
			bad("heartbeat.topic: %q %v (default __debezium-heartbeat.<prefix>)", c.Heartbeat.Topic, err)
		}
	}

	// transforms: the chain is built here once, so that a bad key or
	// expression stops the start, naming the key (and, for an
	// expression, its line and column)
	if len(c.Transforms) > 0 {
		if _, err := transform.Parse(c.Transforms); err != nil {
			for _, e := range unjoin(err) {
				bad("transforms: %v", e)
			}
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

// TableSelection returns postgres.tables less postgres.tables_exclude.
func (c Config) TableSelection() (TableSelection, error) {
	inc, err := ParseTablePatterns(c.Postgres.Tables)
	if err != nil {
		return TableSelection{}, fmt.Errorf("postgres.tables: %w", err)
	}
	exc, err := ParseTablePatterns(c.Postgres.TablesExclude)
	if err != nil {
		return TableSelection{}, fmt.Errorf("postgres.tables_exclude: %w", err)
	}
	if t, ok := c.SignalTable(); ok && len(inc) > 0 {
		// The signal table is captured whatever postgres.tables says, as
		// Debezium needs it in no include list (signalling.adoc:85).
		inc = append(inc, TablePattern(t))
	}
	sel := TableSelection{Include: inc, Exclude: exc}
	for name, tf := range c.Postgres.TableFilters {
		p, err := ParseTablePattern(name)
		if err != nil {
			return TableSelection{}, fmt.Errorf("postgres.tables: %w", err)
		}
		if sel.Filters == nil {
			sel.Filters = map[TableName]TableFilter{}
		}
		sel.Filters[TableName(p)] = tf
	}
	return sel, nil
}

// SignalTable returns signals.table, if set and valid.
func (c Config) SignalTable() (TableName, bool) {
	if c.Signals.Table == "" {
		return TableName{}, false
	}
	p, err := ParseTablePattern(c.Signals.Table)
	if err != nil || p.HasWildcard() {
		return TableName{}, false
	}
	return TableName(p), true
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

func CheckTopicName(s string) error {
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
