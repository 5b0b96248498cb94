package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mooncdc/mooncdc/connector"
	"github.com/mooncdc/mooncdc/connector/config"
)

// debeziumDocExample is the example configuration of Debezium's PostgreSQL
// connector documentation (documentation/modules/ROOT/pages/connectors/
// postgresql.adoc:3443-3455 at v3.6.1.Final), without its callout marks.
const debeziumDocExample = `{
  "name": "fulfillment-connector",
  "config": {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "database.hostname": "192.168.99.100",
    "database.port": "5432",
    "database.user": "postgres",
    "database.password": "postgres",
    "database.dbname" : "postgres",
    "topic.prefix": "fulfillment",
    "table.include.list": "public.inventory"
  }
}`

// fullProperties uses the options issue 14 names, as a .properties file.
const fullProperties = `# a Debezium PostgreSQL connector moving to mooncdc
name=shop-connector
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
database.hostname=db.internal
database.port=5433
database.user=cdc
database.password=${directory:/run/secrets:pg_password}
database.dbname=shop
database.sslmode=verify-full
database.sslrootcert=/etc/ssl/ca.pem
topic.prefix=shop
plugin.name=pgoutput
slot.name=shop_slot
publication.name=shop_pub
publication.autocreate.mode=filtered
table.include.list=public\\.orders,public\\.customers,public\\.orders_.*,\
    public\\.debezium_signal
table.exclude.list=public\\.audit_.*
column.exclude.list=public\\.customers\\.password
column.mask.with.8.chars=public.customers.ssn
column.mask.hash.SHA-256.with.salt.CzQMA0cB5K=public.customers.email
column.mask.hash.v2.MD5.with.salt.s2=public.customers.phone
column.truncate.to.100.chars=public.orders.note
message.key.columns=public.orders:tenant_id,order_id;public.customers:id
snapshot.mode=no_data
snapshot.max.threads=8
decimal.handling.mode=string
time.precision.mode=connect
binary.handling.mode=base64
hstore.handling.mode=map
interval.handling.mode=string
money.fraction.digits=4
include.unknown.datatypes=true
unavailable.value.placeholder=__toast
tombstones.on.delete=false
skipped.operations=t,d
heartbeat.interval.ms=5000
heartbeat.action.query=UPDATE heartbeat SET ts = now()
provide.transaction.metadata=true
publish.via.partition.root=true
signal.enabled.channels=source,kafka
signal.data.collection=public.debezium_signal
signal.kafka.topic=shop.signals
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
transforms=unwrap,route
transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
transforms.unwrap.delete.tombstone.handling.mode=rewrite
transforms.unwrap.add.fields=op,table,lsn,source.ts_ms
transforms.unwrap.add.headers=op
transforms.route.type=io.debezium.transforms.ByLogicalTableRouter
transforms.route.topic.regex=shop\\.public\\.orders_(.*)
transforms.route.topic.replacement=shop.public.orders
exactly.once.support=required
max.batch.size=4096
errors.tolerance=all
some.unknown.option=1
`

// yamlGet returns the value at a dotted path of a decoded YAML document.
func yamlGet(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func convertForTest(t *testing.T, input string, opts importOptions) (map[string]any, []byte, []finding) {
	t.Helper()
	props, err := parseConnectorConfig([]byte(input))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	out, findings, err := convertDebezium(props, opts, loaderSupports)
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("output is not YAML: %v\n%s", err, out)
	}
	return doc, out, findings
}

func findingFor(fs []finding, prop string) (finding, bool) {
	for _, f := range fs {
		if f.Property == prop {
			return f, true
		}
	}
	return finding{}, false
}

func TestImportDebeziumMapsOptions(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		opts   importOptions
		want   map[string]any // path → value
		absent []string
		// unmapped are properties reported as not mapped.
		unmapped []string
	}{
		{
			name:  "documentation example",
			input: debeziumDocExample,
			want: map[string]any{
				"name":                                "fulfillment-connector",
				"postgres.url":                        "postgres://postgres@192.168.99.100:5432/postgres?sslmode=prefer", // sslmode default prefer: PostgresConnectorConfig.java:851-865
				"postgres.slot":                       "debezium",                                                        // ReplicationConnection.java:104
				"postgres.publication":                "dbz_publication",                                                 // ReplicationConnection.java:105
				"postgres.tables":                     []any{"public.inventory"},
				"postgres.publish_via_partition_root": false, // PostgresConnectorConfig.java:1160-1168
				"kafka.topic_prefix":                  "fulfillment",
				"heartbeat.records":                   false, // heartbeat.interval.ms default 0: Heartbeat.java:40-50
			},
			// plugin.name defaults to decoderbufs (PostgresConnectorConfig.java:619-629): no takeover.
			absent: []string{"migrate_from", "postgres.password_file", "format.envelope"},
		},
		{
			name:  "every mapped option, properties",
			input: fullProperties,
			opts:  importOptions{Brokers: []string{"k1:9092", "k2:9092"}, OffsetsTopic: "my-offsets"},
			want: map[string]any{
				"postgres.url":                         "postgres://cdc@db.internal:5433/shop?sslmode=verify-full&sslrootcert=%2Fetc%2Fssl%2Fca.pem",
				"postgres.password_file":               "/run/secrets/pg_password",
				"postgres.slot":                        "shop_slot",
				"postgres.publication":                 "shop_pub",
				"postgres.tables":                      []any{"public.orders", "public.customers", "public.orders_*", "public.debezium_signal"},
				"postgres.tables_exclude":              []any{"public.audit_*"},
				"postgres.columns_exclude":             []any{"public.customers.password"},
				"postgres.publish_via_partition_root":  true,
				"kafka.brokers":                        []any{"k1:9092", "k2:9092"},
				"kafka.topic_prefix":                   "shop",
				"kafka.delivery":                       "exactly-once",
				"kafka.routes":                         []any{map[string]any{"regex": `shop\.public\.orders_(.*)`, "topic": "shop.public.orders", "key_field": "__dbz__physicalTableIdentifier"}}, // ByLogicalTableRouter.java:99-105
				"snapshot.mode":                        "never",
				"snapshot.workers":                     8,
				"format.key":                           "json",
				"format.value":                         "json",
				"format.json_schemas":                  false,
				"format.decimal_handling_mode":         "string",
				"format.time_precision_mode":           "connect",
				"format.binary_handling_mode":          "base64",
				"format.hstore_handling_mode":          "map",
				"format.interval_handling_mode":        "string",
				"format.money_fraction_digits":         4,
				"format.include_unknown_datatypes":     true,
				"format.unavailable_value_placeholder": "__toast",
				"format.tombstones_on_delete":          false,
				"format.skipped_operations":            []any{"t", "d"},
				"format.provide_transaction_metadata":  true,
				"format.message_key_columns":           map[string]any{"public.orders": []any{"tenant_id", "order_id"}, "public.customers": []any{"id"}},
				"format.column_mask":                   []any{map[string]any{"columns": []any{"public.customers.ssn"}, "chars": 8}},
				"format.column_hash": []any{
					map[string]any{"columns": []any{"public.customers.email"}, "algorithm": "SHA-256", "salt": "CzQMA0cB5K", "version": 1},
					map[string]any{"columns": []any{"public.customers.phone"}, "algorithm": "MD5", "salt": "s2", "version": 2},
				},
				"format.column_truncate":               []any{map[string]any{"columns": []any{"public.orders.note"}, "length": 100}},
				"format.envelope":                      "flat",
				"format.flat.delete_handling":          "rewrite",
				"format.flat.add_fields":               []any{"op", "table", "lsn", "source.ts_ms"},
				"format.flat.add_headers":              []any{"op"},
				"heartbeat.interval":                   "5s",
				"heartbeat.records":                    true,
				"signals.table":                        "public.debezium_signal",
				"signals.kafka_topic":                  "shop.signals",
				"migrate_from.debezium.offsets_topic":  "my-offsets",
				"migrate_from.debezium.connector_name": "shop-connector",
			},
		},
		{
			name: "bare JSON map, Avro, outbox, defaults of the transforms",
			input: `{"name": "orders", "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
				"database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p",
				"plugin.name": "pgoutput", "table.include.list": "public.outbox", "tasks.max": 1,
				"key.converter": "io.confluent.connect.avro.AvroConverter",
				"key.converter.schema.registry.url": "http://sr:8081",
				"value.converter": "io.confluent.connect.avro.AvroConverter",
				"value.converter.schema.registry.url": "http://sr:8081",
				"value.converter.auto.register.schemas": false,
				"transforms": "outbox",
				"transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
				"transforms.outbox.table.field.event.key": "order_id",
				"signal.enabled.channels": "kafka"}`,
			want: map[string]any{
				"name":                                 "orders",
				"postgres.url":                         "postgres://u@h:5432/d?sslmode=prefer",
				"format.key":                           "avro",
				"format.value":                         "avro",
				"format.schema_registry.url":           "http://sr:8081",
				"format.schema_registry.auto_register": false,
				"format.envelope":                      "outbox",
				"format.outbox.table":                  "public.outbox",
				"format.outbox.route_by":               "aggregatetype",                 // EventRouterConfigDefinition.java:270-273
				"format.outbox.topic":                  "outbox.event.${routedByValue}", // EventRouterConfigDefinition.java:289-292
				"format.outbox.table_field_event_key":  "order_id",
				"signals.kafka_topic":                  "p-signal", // KafkaSignalChannel.java:154
				"migrate_from.debezium.offsets_topic":  "connect-offsets",
			},
			absent: []string{"format.json_schemas", "format.outbox.table_field_event_id", "signals.table"},
		},
		{
			// EventRouterConfigDefinition.java:195-323, each option to its
			// format.outbox key (docs/records.md "Outbox envelope").
			name:  "outbox, every EventRouter option",
			input: outboxConnector,
			want: map[string]any{
				"format.envelope":                                 "outbox",
				"format.outbox.table":                             "app.events",
				"format.outbox.route_by":                          "kind",
				"format.outbox.route_topic_regex":                 "(?<routedByValue>[a-z]+)",
				"format.outbox.topic":                             "${routedByValue}.events",
				"format.outbox.table_field_event_id":              "event_id",
				"format.outbox.table_field_event_key":             "agg_id",
				"format.outbox.table_field_event_payload":         "body",
				"format.outbox.table_field_event_timestamp":       "created_at",
				"format.outbox.table_fields_additional_placement": []any{"type:header:eventType", "tenant:envelope"},
				"format.outbox.table_expand_json_payload":         true,
				"format.outbox.route_tombstone_on_empty_payload":  true,
				"format.outbox.table_op_invalid_behavior":         "fatal",
				"format.outbox.table_json_payload_null_behavior":  "optional_bytes",
				"format.outbox.table_field_additional_missing":    "ignore",
				"format.outbox.table_field_event_schema_version":  "v",
			},
			absent: []string{"format.outbox.table_field_event_type"},
		},
		{
			// SinkNotificationChannel.java:37-62: notification.sink.topic.name
			// is the sink channel's topic (CommonConnectorConfig.java:995-1000:
			// notification.enabled.channels); log and jmx have no counterpart.
			name: "notifications: the sink channel's topic",
			input: `{"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
				"database.hostname": "h", "topic.prefix": "p", "plugin.name": "pgoutput",
				"notification.enabled.channels": "sink,jmx", "notification.sink.topic.name": "io.debezium.notification"}`,
			want:     map[string]any{"notifications.kafka_topic": "io.debezium.notification"},
			unmapped: []string{"notification.enabled.channels"},
		},
		{
			name: "notifications: a topic without the sink channel writes nothing, as Debezium",
			input: `{"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
				"database.hostname": "h", "topic.prefix": "p", "plugin.name": "pgoutput",
				"notification.sink.topic.name": "io.debezium.notification"}`,
			unmapped: []string{"notification.sink.topic.name"},
			absent:   []string{"notifications.kafka_topic"},
		},
		{
			name: "notifications: the sink channel without a topic, refused by Debezium",
			input: `{"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
				"database.hostname": "h", "topic.prefix": "p", "plugin.name": "pgoutput",
				"notification.enabled.channels": "sink"}`,
			unmapped: []string{"notification.enabled.channels"},
			absent:   []string{"notifications.kafka_topic"},
		},
		{
			name: "JsonConverter schemas.enable defaults to true, schema include list, regex router",
			input: `{"config": {"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
				"database.hostname": "h", "topic.prefix": "p", "plugin.name": "pgoutput",
				"schema.include.list": "inventory,sales",
				"value.converter": "org.apache.kafka.connect.json.JsonConverter",
				"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
				"transforms.r.regex": "p\\.(.*)\\.(.*)", "transforms.r.replacement": "x.$1.$2"}}`,
			want: map[string]any{
				"postgres.tables":     []any{"inventory.*", "sales.*"},
				"format.json_schemas": true,
				"kafka.routes":        []any{map[string]any{"regex": `p\.(.*)\.(.*)`, "topic": "x.${1}.${2}"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, out, findings := convertForTest(t, tt.input, tt.opts)
			for _, prop := range tt.unmapped {
				if f, ok := findingFor(findings, prop); !ok || f.Mapped {
					t.Errorf("%s: finding %+v (found %v), want not mapped", prop, f, ok)
				}
			}
			for path, want := range tt.want {
				got, ok := yamlGet(doc, path)
				if !ok {
					t.Errorf("%s: missing\n%s", path, out)
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			for _, path := range tt.absent {
				if _, ok := yamlGet(doc, path); ok {
					t.Errorf("%s is set, want absent\n%s", path, out)
				}
			}
		})
	}
}

func TestImportDebeziumListsWhatItCannotMap(t *testing.T) {
	_, out, findings := convertForTest(t, fullProperties, importOptions{Brokers: []string{"k:9092"}})
	for prop, reason := range map[string]string{
		"heartbeat.action.query": "logical message",
		"errors.tolerance":       "error handling",
		"max.batch.size":         "kafka.max_inflight_bytes",
		"some.unknown.option":    "unknown",
	} {
		f, ok := findingFor(findings, prop)
		if !ok || f.Mapped || !strings.Contains(f.Reason, reason) {
			t.Errorf("%s: finding %+v (found %v), want not mapped with %q", prop, f, ok, reason)
		}
		if !strings.Contains(string(out), "#   "+prop+": ") {
			t.Errorf("%s is not listed in the YAML comments", prop)
		}
	}
	doc, _, findings := convertForTest(t, debeziumDocExample, importOptions{})
	for _, prop := range []string{"database.password", "plugin.name", "bootstrap.servers", "key.converter", "value.converter"} {
		if f, ok := findingFor(findings, prop); !ok || f.Mapped {
			t.Errorf("documentation example: %s not reported as not mapped (%+v)", prop, f)
		}
	}
	if b, _ := yamlGet(doc, "kafka.brokers"); !reflect.DeepEqual(b, []any{"set-me:9092"}) {
		t.Errorf("kafka.brokers = %v, want the set-me placeholder, never the embedded Kafka", b)
	}
}

func TestImportDebeziumNeverCopiesPasswords(t *testing.T) {
	input := `{"name":"c","config":{"connector.class":"io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname":"h","database.user":"u","database.password":"pg-S3cret!","topic.prefix":"p",
		"database.sslpassword":"key-S3cret!",
		"value.converter":"io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":"http://sr:8081",
		"value.converter.basic.auth.user.info":"sruser:sr-S3cret!"}}`
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, []string{"import-debezium", path}, nil)
	if code != connector.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, secret := range []string{"pg-S3cret!", "key-S3cret!", "sr-S3cret!"} {
		if strings.Contains(stdout, secret) || strings.Contains(stderr, secret) {
			t.Errorf("output contains the secret %q", secret)
		}
	}
	if !strings.Contains(stdout, "username: sruser") {
		t.Errorf("registry user not mapped:\n%s", stdout)
	}
}

// stripUnsupported removes the mapping entries marked notSupported and
// reports whether there were any.
func stripUnsupported(n *yaml.Node) bool {
	stripped := false
	if n.Kind == yaml.DocumentNode {
		for _, c := range n.Content {
			stripped = stripUnsupported(c) || stripped
		}
		return stripped
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	var keep []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if strings.Contains(k.LineComment, notSupported) || strings.Contains(v.LineComment, notSupported) {
			stripped = true
			continue
		}
		stripped = stripUnsupported(v) || stripped
		keep = append(keep, k, v)
	}
	n.Content = keep
	return stripped
}

// outboxConnector is a connector with every option of EventRouter set.
const outboxConnector = `{"name": "events", "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
				"database.hostname": "h", "topic.prefix": "p", "plugin.name": "pgoutput", "table.include.list": "app.events",
				"value.converter": "org.apache.kafka.connect.json.JsonConverter",
				"transforms": "outbox",
				"transforms.outbox.type": "io.debezium.transforms.outbox.EventRouter",
				"transforms.outbox.route.by.field": "kind",
				"transforms.outbox.route.topic.regex": "(?<routedByValue>[a-z]+)",
				"transforms.outbox.route.topic.replacement": "${routedByValue}.events",
				"transforms.outbox.table.field.event.id": "event_id",
				"transforms.outbox.table.field.event.key": "agg_id",
				"transforms.outbox.table.field.event.payload": "body",
				"transforms.outbox.table.field.event.timestamp": "created_at",
				"transforms.outbox.table.field.event.type": "type",
				"transforms.outbox.table.fields.additional.placement": "type:header:eventType, tenant:envelope",
				"transforms.outbox.table.expand.json.payload": "true",
				"transforms.outbox.route.tombstone.on.empty.payload": "true",
				"transforms.outbox.table.op.invalid.behavior": "fatal",
				"transforms.outbox.table.json.payload.null.behavior": "optional_bytes",
				"transforms.outbox.table.field.additional.missing": "ignore",
				"transforms.outbox.table.field.event.schema.version": "v"}`

func TestImportDebeziumOutputLoadsWhereKeysExist(t *testing.T) {
	// Validate reads the password file and the CA file: point them at
	// real files.
	secrets := t.TempDir()
	if err := os.WriteFile(filepath.Join(secrets, "pg_password"), []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	full := strings.NewReplacer("/run/secrets", secrets, "database.sslmode=verify-full", "database.sslmode=require",
		"database.sslrootcert=/etc/ssl/ca.pem\n", "").Replace(fullProperties)
	for name, input := range map[string]string{"documentation example": debeziumDocExample, "full": full, "outbox": outboxConnector} {
		t.Run(name, func(t *testing.T) {
			_, out, _ := convertForTest(t, input, importOptions{Brokers: []string{"k:9092"}})
			var doc yaml.Node
			if err := yaml.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			unsupported := stripUnsupported(&doc)
			supported, err := yaml.Marshal(&doc)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadConfig(writeConfig(t, string(supported)), nil)
			if err != nil {
				t.Fatalf("LoadConfig: %v\n%s", err, supported)
			}
			cfg.ApplyDefaults()
			if err := cfg.Validate(); err != nil {
				t.Errorf("Validate: %v\n%s", err, supported)
			}
			// With the unsupported keys left in, the loader refuses the
			// file: mooncdc never runs without an option Debezium had.
			if _, err := config.LoadConfig(writeConfig(t, string(out)), nil); unsupported && err == nil {
				t.Errorf("LoadConfig accepted keys marked %q", notSupported)
			}
		})
	}
}

func TestImportDebeziumExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", debeziumDocExample)
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"converted", []string{"import-debezium", good}, connector.ExitOK, "not mapped: database.password"},
		{"missing file", []string{"import-debezium", filepath.Join(dir, "nope.json")}, connector.ExitConfig, "no such file"},
		{"directory", []string{"import-debezium", dir}, connector.ExitConfig, "is a directory"},
		{"not UTF-8", []string{"import-debezium", write("bin", "\xff\xfe\x00")}, connector.ExitConfig, "not UTF-8"},
		{"bad JSON", []string{"import-debezium", write("bad.json", `{"config": {`)}, connector.ExitConfig, "JSON"},
		{"another connector", []string{"import-debezium", write("my.json", `{"connector.class":"io.debezium.connector.mysql.MySqlConnector","database.hostname":"h"}`)}, connector.ExitConfig, "reads io.debezium.connector.postgresql.PostgresConnector configs only"},
		{"not a connector config", []string{"import-debezium", write("x.properties", "a=b\n")}, connector.ExitConfig, "not a Debezium connector config"},
		{"no file", []string{"import-debezium"}, connector.ExitConfig, "give one FILE"},
		{"help", []string{"help", "import-debezium"}, connector.ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args, nil)
			if code != tt.code || !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.inStderr)
			}
			if code == connector.ExitOK && tt.args[0] == "import-debezium" && !strings.Contains(stdout, "topic_prefix: fulfillment") {
				t.Errorf("stdout:\n%s", stdout)
			}
		})
	}
}

func TestParseProperties(t *testing.T) {
	got, err := parseProperties("# comment\n! also\n  a.b = 1\nc:2\nd 3\ne=x\\\n   y\nf=tab\\tend\ng=\\u00e9\\uD83D\\uDE00\nh\\=k=v\nempty=\n\\#lit=1\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.b": "1", "c": "2", "d": "3", "e": "xy", "f": "tab\tend", "g": "é😀", "h=k": "v", "empty": "", "#lit": "1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if _, err := parseProperties("a=\\u12\n"); err == nil {
		t.Error("a short \\u escape was accepted")
	}
}

func TestRegexToPatterns(t *testing.T) {
	tests := []struct {
		re    string
		parts int
		want  []string
		err   string
	}{
		{`public.inventory`, 2, []string{"public.inventory"}, ""},
		{`public\.orders`, 2, []string{"public.orders"}, ""},
		{`^public\.orders$`, 2, []string{"public.orders"}, ""},
		{`public\..*`, 2, []string{"public.*"}, ""},
		{`public.audit_.*`, 2, []string{"public.audit_*"}, ""},
		{`.*\.orders`, 2, []string{"*.orders"}, ""},
		{`.*orders`, 2, []string{"*.*orders"}, ""},
		{`public\.(orders|items)`, 2, []string{"public.orders", "public.items"}, ""},
		{`public\.a|sales\.b`, 2, []string{"public.a", "sales.b"}, ""},
		{`Public\.Orders`, 2, []string{"public.orders"}, ""},
		{`public\.my\-table`, 2, []string{`public."my-table"`}, ""},
		{`public\.users\.password`, 3, []string{"public.users.password"}, ""},
		{`public\.users\..*`, 3, []string{"public.users.*"}, ""},
		{`public\.orders_\d+`, 2, []string{"public.orders_*"}, ""},
		{`orders`, 2, nil, "matches schema.table whole"},
		{`public\.order[s]`, 2, nil, "has no mooncdc pattern"},
		{`public\.orders?`, 2, nil, "quantifier"},
		{`public\.(a|b)+`, 2, nil, "repeated group"},
		{`public\.users`, 3, nil, "schema.table.column"},
	}
	for _, tt := range tests {
		got, _, err := regexToPatterns(tt.re, tt.parts)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.re, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.re, got, err, tt.want)
		}
		for _, p := range got {
			if tt.parts == 2 {
				if _, err := config.ParseTablePattern(p); err != nil {
					t.Errorf("%s: %q does not parse as a table pattern: %v", tt.re, p, err)
				}
			}
		}
	}
}

func TestSplitRegexList(t *testing.T) {
	got := splitRegexList(` a\.b , c\.d{1,2},(x|y)\.z,, `)
	want := []string{`a\.b`, `c\.d{1,2}`, `(x|y)\.z`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzParseConnectorConfig(f *testing.F) {
	f.Add([]byte(debeziumDocExample))
	f.Add([]byte(fullProperties))
	f.Add([]byte("a=\\u00e9\\\n b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := parseConnectorConfig(data)
		if err != nil {
			return
		}
		if _, _, err := convertDebezium(props, importOptions{}, loaderSupports); err != nil && !strings.Contains(err.Error(), "connector.class") {
			t.Fatalf("convert: %v", err)
		}
	})
}

func TestImportDebeziumPassesHarmlessValuesAndListsOthers(t *testing.T) {
	base := "connector.class=io.debezium.connector.postgresql.PostgresConnector\ndatabase.hostname=h\ntopic.prefix=p\nplugin.name=pgoutput\n"
	tests := []struct {
		line   string
		listed bool
		reason string
	}{
		{"tasks.max=1", false, ""},
		{"slot.drop.on.stop=false", false, ""}, // the default: PostgresConnectorConfig.java:642-646
		{"slot.drop.on.stop=true", true, "reset --drop-slot"},
		{"flush.lsn.source=true", false, ""}, // the default: PostgresConnectorConfig.java:1336-1345
		{"flush.lsn.source=false", true, "always confirms"},
		{"topic.delimiter=.", false, ""},
		{"topic.delimiter=_", true, "joins topic names"},
		{"snapshot.locking.mode=custom", true, "locks no tables"},
		{"database.server.name=old", true, "removed in Debezium 2"},
		{"table.whitelist=public.a", true, "removed in Debezium 2"},
		{"snapshot.mode=configuration_based", true, "no mooncdc equivalent"},
		{"decimal.handling.mode=exact", true, "mooncdc takes precise, double, string"},
		{"column.mask.hash.MD2.with.salt.x=public.t.c", true, "unknown hash algorithm"},
		{"transforms=f\ntransforms.f.type=org.apache.kafka.connect.transforms.Filter", true, "no mooncdc equivalent"},
		{"transforms=u\ntransforms.u.type=io.debezium.transforms.ExtractNewRecordState\ntransforms.u.drop.tombstones=false", true, "removed in Debezium 3"},
		{"table.include.list=public\\\\.t[0-9]", true, "has no mooncdc pattern"},
		{"schema.include.list=inventory\ntable.include.list=inventory\\\\.a,sales\\\\.b", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			doc, _, findings := convertForTest(t, base+tt.line+"\n", importOptions{Brokers: []string{"k:9092"}})
			if strings.HasPrefix(tt.line, "schema.include.list") {
				// Debezium captures what both lists match.
				if got, _ := yamlGet(doc, "postgres.tables"); !reflect.DeepEqual(got, []any{"inventory.a"}) {
					t.Errorf("postgres.tables = %v, want [inventory.a]", got)
				}
			}
			var listed []finding
			for _, f := range findings {
				if !f.Mapped && f.Property != "key.converter" && f.Property != "value.converter" {
					listed = append(listed, f)
				}
			}
			switch {
			case !tt.listed && len(listed) > 0:
				t.Errorf("listed %+v, want nothing", listed)
			case tt.listed && (len(listed) != 1 || !strings.Contains(listed[0].Reason, tt.reason)):
				t.Errorf("listed %+v, want one with %q", listed, tt.reason)
			}
		})
	}
}

func TestImportDebeziumNamesConfigProviderReferences(t *testing.T) {
	in := "connector.class=io.debezium.connector.postgresql.PostgresConnector\ndatabase.hostname=h\ntopic.prefix=p\n" +
		"database.user=${file:/etc/kafka/pg.properties:user}\ndatabase.password=${file:/etc/kafka/pg.properties:password}\n"
	_, out, findings := convertForTest(t, in, importOptions{})
	if f, ok := findingFor(findings, "database.user"); !ok || !strings.Contains(f.Reason, "config provider reference") {
		t.Errorf("database.user: %+v", f)
	}
	if f, ok := findingFor(findings, "database.password"); !ok || f.Mapped || !strings.Contains(f.Reason, "password_file") {
		t.Errorf("database.password: %+v", f)
	}
	if strings.Contains(string(out), "password_file: ") {
		t.Errorf("a FileConfigProvider reference became password_file:\n%s", out)
	}
}
