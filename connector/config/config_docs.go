package config

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds what each config key means to a user: the one source of
// the configuration reference (docs/configuration.md is generated from
// ConfigReference, and a test fails when it is stale or when a key has no
// entry here).

// keyDoc is the user's description of one key.
type keyDoc struct {
	doc string // what the key does, its values, and the Debezium option it follows
	def string // the default as a user reads it, when DefaultConfig's value does not say it (a derived default)
}

var configDocs = map[string]keyDoc{
	"name":     {doc: "Required. Identifies the connector: it keys the offsets topic and gives the default slot, publication and topic prefix."},
	"data_dir": {doc: "The embedded development Kafka's data, when `kafka.brokers` is empty."},

	"postgres.url":                        {doc: "Required. A libpq connection string (URL or keyword/value form); TLS as libpq has it (`sslmode=verify-full&sslrootcert=…`). Its password is masked wherever the config is printed or logged."},
	"postgres.tables":                     {doc: "Table patterns: `schema.table`, `*` allowed, `\"Quoted\".\"Names\"` work, a bare name means `public.<name>`. Optional when the publication exists. In the file an entry may also be `{table: public.orders, where: \"id < 1000\", columns: [id, status]}`: a row filter and column list (Postgres 15+) in the publication mooncdc creates, which the copy follows."},
	"postgres.tables_exclude":             {doc: "Table patterns never captured, even when `postgres.tables` or the publication select them (Debezium's `table.exclude.list`)."},
	"postgres.columns_include":            {doc: "`schema.table.column` patterns of the value columns sent (Debezium's `column.include.list`); empty sends all. Keys keep their columns."},
	"postgres.columns_exclude":            {doc: "Value columns never sent (Debezium's `column.exclude.list`; an exclusion wins over an inclusion). Keys keep their columns."},
	"postgres.publication":                {doc: "The publication streamed; created `FOR TABLE <matches>` if missing, left alone if it exists.", def: "`mooncdc_<name>`"},
	"postgres.slot":                       {doc: "The logical replication slot (pgoutput, permanent), created if missing.", def: "`mooncdc_<name>`"},
	"postgres.password_file":              {doc: "A file whose first line is the password; it overrides the URL's (for Docker/Kubernetes secrets)."},
	"postgres.publish_via_partition_root": {doc: "A publication mooncdc creates sends a partitioned table's changes as its root's: one table, one topic. Off, each partition is a table of its own. An existing publication is left as it is."},
	"postgres.replication_timeout":        {doc: "How long a Postgres connection may stay silent before mooncdc ends it and reconnects from the durable LSN: no message on a replication connection (data or keepalive; a keepalive is asked for after a quarter of it), no data on a COPY; also the sockets' `TCP_USER_TIMEOUT`. 1s to 1h, or 0: the server's `wal_sender_timeout` (60s where that is 0). See [A half-open link](high-availability.md#a-half-open-link).", def: "`0` (the server's `wal_sender_timeout`)"},
	"postgres.slot_failover":              {doc: "PostgreSQL 17+: the slot is a failover slot, kept on the standbys that `sync_replication_slots` sync, so that mooncdc continues on it after a promotion."},

	"kafka.brokers":                  {doc: "Seed brokers, `host:port`. Empty starts an embedded single-node Kafka on 127.0.0.1:9092 (development only)."},
	"kafka.topic_prefix":             {doc: "Data topics are `<prefix>.<schema>.<table>` (Debezium's `topic.prefix`).", def: "`<name>`"},
	"kafka.offsets_topic":            {doc: "mooncdc's offsets topic, created compacted with 1 partition."},
	"kafka.routes":                   {doc: "Topic routes: `[{regex: 'a\\.b\\.c_.*', topic: a.b.c, key_field: __dbz__physicalTableIdentifier}]` (Debezium's `ByLogicalTableRouter`, or Kafka's `RegexRouter` without `key_field`)."},
	"kafka.topic_partitions":         {doc: "Partitions of the data topics mooncdc creates."},
	"kafka.topic_replication_factor": {doc: "Replication factor of the topics mooncdc creates; -1 is the brokers' default."},
	"kafka.delivery":                 {doc: "`at-least-once` or `exactly-once` (Kafka transactions holding whole Postgres transactions and the offsets that cover them; see [Delivery](delivery.md))."},
	"kafka.max_inflight_bytes":       {doc: "The memory bound: bytes of records produced and not yet acknowledged, the main worker's and every copy's together; past it mooncdc stops reading from Postgres. Peak RSS stays within this + 64 MiB. The rows an incremental snapshot's open windows hold count in it too (up to half of it; [Incremental snapshots](incremental-snapshots.md), Memory)."},
	"kafka.compression":              {doc: "Producer batch compression: `none`, `gzip`, `snappy`, `lz4` (recommended: see [Operations](operations.md#compression)) or `zstd`."},
	"kafka.transaction_max_bytes":    {doc: "Exactly-once: a Kafka transaction is committed, with the offsets record covering it, at the first Postgres commit past this many bytes (a larger Postgres transaction is never split)."},
	"kafka.transaction_max_interval": {doc: "Exactly-once: likewise, at the first Postgres commit past this time."},
	"kafka.transaction_timeout":      {doc: "Exactly-once: the `transaction.timeout.ms` asked for, the longest a Kafka transaction may stay open; at most the brokers' `transaction.max.timeout.ms` (15m by default)."},
	"kafka.max_record_bytes":         {doc: "The largest record (key + value) mooncdc writes (Kafka's `max.request.size`); a larger one parks its table with an error. Topics mooncdc creates get `max.message.bytes` to match."},
	"kafka.tls.enabled":              {doc: "TLS to `kafka.brokers` (not to the embedded Kafka); with no `ca_file` the system's CAs are trusted."},
	"kafka.tls.ca_file":              {doc: "A PEM file of CAs to trust instead of the system's."},
	"kafka.tls.cert_file":            {doc: "A client certificate (mutual TLS), with `key_file`."},
	"kafka.tls.key_file":             {doc: "The client certificate's key."},
	"kafka.tls.server_name":          {doc: "The name checked in the brokers' certificates.", def: "each broker's host"},
	"kafka.tls.insecure_skip_verify": {doc: "Do not verify the brokers' certificates (testing only)."},
	"kafka.sasl.mechanism":           {doc: "Empty (no SASL), `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`."},
	"kafka.sasl.username":            {doc: "The SASL user."},
	"kafka.sasl.password":            {doc: "The SASL password (masked when printed); or `kafka.sasl.password_file`."},
	"kafka.sasl.password_file":       {doc: "A file whose first line is the SASL password."},

	"snapshot.mode":                  {doc: "Which tables are copied at start: `initial` (those not `ready`, then stream), `never` (only changes from now on), `initial_only` (copy, then exit 0), `always` (every table again at each start). See [Snapshots](snapshots.md)."},
	"snapshot.workers":               {doc: "Copy workers: tables copied at once."},
	"snapshot.chunk_rows":            {doc: "A table estimated (`pg_class.reltuples`) above this many rows is copied in ctid ranges, by several connections, and resumes by chunk after a crash."},
	"snapshot.connections_per_table": {doc: "Connections copying one big table at once; also an incremental snapshot's chunk readers per table ([Incremental snapshots](incremental-snapshots.md)).", def: "half the CPUs (GOMAXPROCS), 1 to 4"},
	"snapshot.discovery_interval":    {doc: "How often new tables, dropped tables and `resnapshot` requests are looked for while streaming."},
	"snapshot.retry_delay":           {doc: "The first retry of a failed copy; later ones double, with jitter, up to 5m."},
	"snapshot.max_retries":           {doc: "Retries of a failed copy; then the table waits for `mooncdc resnapshot`. 0 never retries."},

	"format.key":                                      {doc: "The key format: `json` (Kafka Connect's JsonConverter), `avro` (Confluent's AvroConverter with the Schema Registry), `protobuf` or `json_schema` (Confluent's ProtobufConverter and JsonSchemaConverter, with the registry; see [Formats](transforms.md#formats))."},
	"format.value":                                    {doc: "The value format: `json`, `avro`, `protobuf`, `json_schema` or `cloudevents` (Debezium's CloudEventsConverter, structured JSON mode, with `format.envelope: debezium`; see [Formats](transforms.md#formats))."},
	"format.json_schemas":                             {doc: "JSON keys and values as `{\"schema\":…,\"payload\":…}` (JsonConverter's `schemas.enable=true`); with `cloudevents`, the event's `data` so (the converter's `json.schemas.enable`)."},
	"format.schema_registry.url":                      {doc: "Required for Avro, Protobuf and JSON Schema: the Schema Registry, e.g. `http://localhost:8081` (`https://` for TLS); subjects `<topic>-key` and `<topic>-value`."},
	"format.schema_registry.username":                 {doc: "Basic auth user."},
	"format.schema_registry.password":                 {doc: "Basic auth password (masked when printed); or `password_file`."},
	"format.schema_registry.password_file":            {doc: "A file whose first line is the registry password."},
	"format.schema_registry.ca_file":                  {doc: "A PEM file of CAs to trust instead of the system's."},
	"format.schema_registry.cert_file":                {doc: "A client certificate (mutual TLS), with `key_file`."},
	"format.schema_registry.key_file":                 {doc: "The client certificate's key."},
	"format.schema_registry.insecure_skip_verify":     {doc: "Do not verify the registry's certificate (testing only)."},
	"format.schema_registry.auto_register":            {doc: "Register new schemas; `false` only looks them up, and a missing one parks the table."},
	"format.schema_registry.schema_evolution":         {doc: "What a schema change the registry refuses as incompatible does, decided at its DDL: `park`, `new_subject` or `force` (see [Records](records.md#schema-evolution))."},
	"format.decimal_handling_mode":                    {doc: "Debezium's `decimal.handling.mode`: `precise` (Connect Decimal), `double` or `string`."},
	"format.binary_handling_mode":                     {doc: "Debezium's `binary.handling.mode`: `bytes`, `base64`, `base64-url-safe` or `hex`."},
	"format.time_precision_mode":                      {doc: "Debezium's `time.precision.mode`: `adaptive`, `adaptive_time_microseconds`, `connect`, `microseconds`, `nanoseconds` or `isostring`."},
	"format.interval_handling_mode":                   {doc: "Debezium's `interval.handling.mode`: `numeric` (MicroDuration) or `string` (ISO 8601)."},
	"format.hstore_handling_mode":                     {doc: "Debezium's `hstore.handling.mode`: `json` or `map`."},
	"format.money_fraction_digits":                    {doc: "The scale of `money` in precise mode, 0 to 20 (0: whole units, rounded half up)."},
	"format.unavailable_value_placeholder":            {doc: "What stands for an unchanged TOASTed value; `hex:` followed by hex digits gives it as bytes."},
	"format.include_unknown_datatypes":                {doc: "Debezium's `include.unknown.datatypes`: columns of types Debezium has no schema for are sent as `binary_handling_mode`'s type holding the value's text instead of being left out."},
	"format.skipped_operations":                       {doc: "Streamed operations not written (Debezium's `skipped.operations`): `c`, `u`, `d`, `t`; `[none]` or `[]` writes them all."},
	"format.provide_transaction_metadata":             {doc: "Fill each change's `transaction` block and write BEGIN and END records to `<prefix>.transaction` (Debezium's `provide.transaction.metadata`)."},
	"format.json_schema_additional_properties":        {doc: "With `json_schema`: each struct's object allows additional properties, as JsonSchemaConverter's `object.additional.properties` (default `true`); `false` writes `\"additionalProperties\": false`, which a registry's `BACKWARD` check needs to accept a column added (see [Formats](transforms.md#formats))."},
	"format.replace_null_with_default":                {doc: "A NULL in a column that has a default is written as that default, as JsonConverter's `replace.null.with.default` and AvroConverter write Debezium's records; `false` keeps the null."},
	"format.message_key_columns":                      {doc: "Record keys other than the primary key (Debezium's `message.key.columns`), e.g. `{\"public.events\": [tenant_id, event_id]}`; the columns must be part of the replica identity (or the identity FULL)."},
	"format.tombstones_on_delete":                     {doc: "A tombstone (the key, a null value) after each delete, so compaction removes the row (Debezium's `tombstones.on.delete`)."},
	"format.column_mask":                              {doc: "Column masks on record values: `[{columns: [public.users.ssn], chars: 8}]` (Debezium's `column.mask.with.N.chars`)."},
	"format.column_hash":                              {doc: "Column hashes: `[{columns: [public.users.email], algorithm: SHA-256, salt: s, version: 1}]` (Debezium's `column.mask.hash[.v2].ALG.with.salt.SALT`)."},
	"format.column_truncate":                          {doc: "Column truncation: `[{columns: [public.posts.body], length: 100}]` (Debezium's `column.truncate.to.N.chars`)."},
	"format.envelope":                                 {doc: "The value's shape: `debezium` (the change event envelope), `flat` (ExtractNewRecordState) or `outbox` (the outbox EventRouter); see [Records](records.md)."},
	"format.flat.delete_handling":                     {doc: "`delete.tombstone.handling.mode`: `drop`, `tombstone`, `rewrite`, `rewrite-with-tombstone` or `delete-to-tombstone`."},
	"format.flat.add_fields":                          {doc: "`add.fields`: envelope fields appended to the value, e.g. `[op, table, lsn, source.ts_ms]` → `__op`, `__table`, `__lsn`, `__source_ts_ms`."},
	"format.flat.add_headers":                         {doc: "`add.headers`: envelope fields added as headers, e.g. `[op]` → header `__op`."},
	"format.flat.add_fields_prefix":                   {doc: "`add.fields.prefix`."},
	"format.flat.add_headers_prefix":                  {doc: "`add.headers.prefix`."},
	"format.outbox.table":                             {doc: "With `envelope: outbox`, required: the outbox table (a captured table)."},
	"format.outbox.route_by":                          {doc: "`route.by.field`: the column whose value names the topic."},
	"format.outbox.topic":                             {doc: "`route.topic.replacement`."},
	"format.outbox.route_topic_regex":                 {doc: "`route.topic.regex` (`(?P<name>)` works too)."},
	"format.outbox.table_field_event_id":              {doc: "`table.field.event.id`: the column of the `id` header."},
	"format.outbox.table_field_event_key":             {doc: "`table.field.event.key`: the column of the record key."},
	"format.outbox.table_field_event_payload":         {doc: "`table.field.event.payload`: the column of the value."},
	"format.outbox.table_field_event_timestamp":       {doc: "`table.field.event.timestamp`: the column of the record timestamp (empty: processing time)."},
	"format.outbox.table_field_event_schema_version":  {doc: "`table.field.event.schema.version`: an int column, the value struct's schema version."},
	"format.outbox.table_fields_additional_placement": {doc: "`table.fields.additional.placement`, e.g. `[type:header, type:envelope:eventType, part:partition]`."},
	"format.outbox.table_expand_json_payload":         {doc: "`table.expand.json.payload`."},
	"format.outbox.route_tombstone_on_empty_payload":  {doc: "`route.tombstone.on.empty.payload`."},
	"format.outbox.table_op_invalid_behavior":         {doc: "`table.op.invalid.behavior` for updates: `warn`, `error` or `fatal`."},
	"format.outbox.table_json_payload_null_behavior":  {doc: "`table.json.payload.null.behavior`: `ignore` or `optional_bytes`."},
	"format.outbox.table_field_additional_missing":    {doc: "`table.field.additional.missing`: `error` or `ignore`."},
	"format.outbox.message_prefix":                    {doc: "Outbox events sent as `pg_logical_emit_message(true, '<prefix>', '<json>')` are read too."},

	"heartbeat.interval": {doc: "When the stream is idle this long, a logical message into the database keeps the slot moving; 0 turns heartbeats off."},
	"heartbeat.records":  {doc: "Each heartbeat also writes a record to `heartbeat.topic`."},
	"heartbeat.topic":    {doc: "The heartbeat records' topic (Debezium's).", def: "`__debezium-heartbeat.<prefix>`"},

	"signals.kafka_topic": {doc: "A topic of Debezium-format signals (`execute-snapshot`, `stop-snapshot`, `pause-snapshot`, `resume-snapshot`, `log`), keyed by the topic prefix."},
	"signals.table":       {doc: "A signal table (`id`, `type`, `data`) whose inserted rows are signals; captured without being listed."},

	"notifications.kafka_topic": {doc: "A topic for the incremental snapshots' notifications (`STARTED`, `IN_PROGRESS`, `TABLE_SCAN_COMPLETED`, `PAUSED`, `RESUMED`, `ABORTED`, `COMPLETED`), as Debezium's sink channel writes them (`notification.sink.topic.name`); empty for none. See [Incremental snapshots](incremental-snapshots.md#the-surface)."},

	"metrics.listen": {doc: "`host:port` of `/metrics`, `/healthz`, `/readyz` and `/status`; empty disables them. See [Metrics](metrics.md)."},
	"log.level":      {doc: "`debug`, `info`, `warn` or `error`."},
	"log.format":     {doc: "`json` or `console`."},

	"shutdown_timeout": {doc: "The longest a clean stop waits for Kafka (1s to 1h); past it mooncdc exits 1 and the unacknowledged records are sent again at the next start."},
	"on_slot_loss":     {doc: "What a lost or missing slot does: `fail` (exit 3) or `resnapshot` (a new slot, every table copied again, a streamed one incrementally, vanished keys tombstoned)."},

	"migrate_from.debezium.offsets_topic":  {doc: "Take over from a stopped Debezium connector at the first start: Kafka Connect's offsets topic (see [Coming from Debezium](debezium.md#taking-over-from-debezium))."},
	"migrate_from.debezium.connector_name": {doc: "The Debezium connector's name in that offsets topic."},

	"ddl.capture": {doc: "Install (or refresh) the DDL event trigger at each start, so each DDL on a captured table becomes a schema change record (see [Records](records.md#schema-changes))."},

	"ha.enabled":         {doc: "Run as one of several instances with the same config: the member of the Kafka group `mooncdc-<name>` holding the offsets topic's partition is active, the others wait as standbys (see [High availability](high-availability.md)). Needs `kafka.brokers`."},
	"ha.session_timeout": {doc: "How long after an active instance stops heartbeating the group gives its turn to a standby (within the brokers' `group.min/max.session.timeout.ms`)."},

	"transforms":   {doc: "A Kafka Connect connector config's transform and predicate properties, verbatim (`transforms: addRegion`, `transforms.addRegion.type: org.apache.kafka.connect.transforms.InsertField$Value`, …, `predicates`, …): Kafka Connect's `InsertField`, `ReplaceField`, `Cast`, `TimestampConverter`, `HeaderFrom`, `ValueToKey`, Debezium's `Filter` and `ContentBasedRouter` with CEL conditions, the predicates `TopicNameMatches`, `RecordIsTombstone`, `HasHeaderKey`. Every record runs through the chain after `format.envelope` and `kafka.routes`, before it is encoded; a transform failing on a record parks its table."},
	"worker_group": {doc: "`run --config DIR`: the worker group (the consumer group `mooncdc-workers-<worker_group>`); every file of the directory must agree; a one-file run ignores it.", def: "`default`"},
}

// ConfigKeyDoc is one configuration key as the reference shows it.
type ConfigKeyDoc struct {
	Path    string // dotted yaml path, e.g. kafka.topic_partitions
	Env     string // its environment variable
	EnvForm string // how a list or map is written in the variable; empty for a scalar
	Default string // the default, as Markdown
	Doc     string // what it means, as Markdown
}

// ConfigReference returns every configuration key with its environment
// variable, default and meaning, in declaration order. A key without an
// entry in configDocs panics: TestEveryConfigKeyIsDocumented keeps them in
// step.
func ConfigReference() []ConfigKeyDoc {
	defaults := DefaultConfig()
	dv := reflect.ValueOf(defaults)
	var out []ConfigKeyDoc
	for _, k := range configKeys() {
		d, ok := configDocs[k.path]
		if !ok {
			panic("connector: config key " + k.path + " has no entry in configDocs")
		}
		def := d.def
		if def == "" {
			def = defaultText(dv.FieldByIndex(k.index), k.secret != "")
		}
		out = append(out, ConfigKeyDoc{Path: k.path, Env: k.env, EnvForm: envForm(k.typ), Default: def, Doc: d.doc})
	}
	return out
}

// envForm says how a key of type t is written in its environment variable
// (setFromString reads it so).
func envForm(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "comma-separated"
	case t.Kind() == reflect.Slice:
		return "YAML flow, e.g. `[{…}]`"
	case t == reflect.TypeFor[map[string]string]():
		return "a JSON object of strings"
	case t.Kind() == reflect.Map:
		return "Debezium's form, `public.events:tenant_id,event_id;public.logs:id`"
	}
	return ""
}

// defaultText renders a default value as the YAML a user would write.
func defaultText(v reflect.Value, secret bool) string {
	if v.Type() == durationType {
		d := time.Duration(v.Int())
		if d == 0 {
			return "`0`"
		}
		return "`" + shortDuration(d) + "`"
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" || secret {
			return "empty"
		}
		return "`" + v.String() + "`"
	case reflect.Bool:
		return "`" + strconv.FormatBool(v.Bool()) + "`"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "`" + strconv.FormatInt(v.Int(), 10) + "`"
	case reflect.Slice:
		if v.Len() == 0 {
			return "`[]`"
		}
		var items []string
		for i := range v.Len() {
			items = append(items, fmt.Sprint(v.Index(i).Interface()))
		}
		return "`[" + strings.Join(items, ", ") + "]`"
	case reflect.Map:
		if v.Len() == 0 {
			return "`{}`"
		}
	}
	panic("connector: no default text for " + v.Type().String())
}

// shortDuration is d as written in a config: 10s, 1m30s, 15m, 100ms.
func shortDuration(d time.Duration) string {
	s := d.String()
	for _, suffix := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, suffix) {
			s = strings.TrimSuffix(s, suffix[1:])
		}
	}
	return s
}

// undocumentedKeys lists configDocs entries that are no key (stale) and keys
// without an entry.
func undocumentedKeys() (missing, stale []string) {
	var paths []string
	for _, k := range configKeys() {
		paths = append(paths, k.path)
		if _, ok := configDocs[k.path]; !ok {
			missing = append(missing, k.path)
		}
	}
	for p := range configDocs {
		if !slices.Contains(paths, p) {
			stale = append(stale, p)
		}
	}
	slices.Sort(stale)
	return missing, stale
}
