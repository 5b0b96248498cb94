package main

import (
	"github.com/mooncdc/mooncdc/connector/config"

	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// This file maps the record shaping (format.*), heartbeats, signals and the
// takeover (migrate_from) of a Debezium PostgreSQL connector config.

// format maps the value-mapping options, which mooncdc names as Debezium
// does with '_' for '.', and the column and key shaping.
func (im *importer) format() {
	modes := []struct {
		prop   string
		values []string
	}{
		{"decimal.handling.mode", schema.DecimalModes},
		{"binary.handling.mode", schema.BinaryModes},
		{"time.precision.mode", schema.TimePrecisionModes},
		{"interval.handling.mode", schema.IntervalModes},
		{"hstore.handling.mode", schema.HstoreModes},
	}
	for _, m := range modes {
		v, ok := im.get(m.prop)
		if !ok {
			continue
		}
		if slices.Contains(m.values, v) {
			im.out.set("format."+underscore(m.prop), v, "")
		} else {
			im.unmapped(m.prop, fmt.Sprintf("%q: mooncdc takes %s", v, strings.Join(m.values, ", ")))
		}
	}
	if v, ok := im.get("money.fraction.digits"); ok {
		im.setInt("money.fraction.digits", "format.money_fraction_digits", v)
	}
	for _, p := range []string{"include.unknown.datatypes", "provide.transaction.metadata", "tombstones.on.delete"} {
		if v, ok := im.get(p); ok {
			im.out.set("format."+underscore(p), javaBool(v), "")
		}
	}
	if v, ok := im.get("unavailable.value.placeholder"); ok {
		im.out.set("format.unavailable_value_placeholder", v, "")
	}
	// skipped.operations defaults to t (CommonConnectorConfig.java:838-845).
	if v, ok := im.get("skipped.operations"); ok {
		ops := []string{}
		for _, op := range strings.Split(v, ",") {
			if op = strings.TrimSpace(op); op != "" {
				ops = append(ops, op)
			}
		}
		im.out.set("format.skipped_operations", ops, "")
	}
	im.messageKeyColumns()
	im.columnMappers()
}

// messageKeyColumns maps message.key.columns, "<table regex>:<col>,<col>;…"
// (RelationalDatabaseConnectorConfig.java:323-335).
func (im *importer) messageKeyColumns() {
	v, ok := im.get("message.key.columns")
	if !ok {
		return
	}
	keys := &orderedMap{}
	for _, entry := range strings.Split(v, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.LastIndexByte(entry, ':')
		if i < 0 {
			im.unmapped("message.key.columns", fmt.Sprintf("%q is not <table>:<columns>", entry))
			continue
		}
		var cols []string
		for _, c := range strings.Split(entry[i+1:], ",") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		for _, p := range im.patterns("message.key.columns", entry[:i], 2) {
			keys.add(p, cols)
		}
	}
	if len(keys.keys) > 0 {
		n := keys.node()
		n.Style = 0
		im.out.set("format.message_key_columns", n, "")
	}
}

// The column mappers' property names (ColumnMappers.java:56-76).
var (
	maskProp     = regexp.MustCompile(`^column\.mask\.with\.(\d+)\.chars$`)
	truncateProp = regexp.MustCompile(`^column\.truncate\.to\.(\d+)\.chars$`)
	hashProp     = regexp.MustCompile(`^column\.mask\.hash\.(v2\.)?([^.]+)\.with\.salt\.(.+)$`)
)

// The rules are the config's own types, so that what the importer writes
// is what run reads.
type (
	maskRule     = config.ColumnMaskRule
	hashRule     = config.ColumnHashRule
	truncateRule = config.ColumnTruncateRule
)

func (im *importer) columnMappers() {
	var masks []maskRule
	var hashes []hashRule
	var truncs []truncateRule
	for _, key := range sortedKeys(im.props) {
		columns := func() []string {
			v, _ := im.get(key)
			var pats []string
			for _, s := range splitRegexList(v) {
				pats = append(pats, im.patterns(key, s, 3)...)
			}
			return pats
		}
		if m := maskProp.FindStringSubmatch(key); m != nil {
			n, _ := strconv.Atoi(m[1])
			if cols := columns(); len(cols) > 0 {
				masks = append(masks, maskRule{Columns: cols, Chars: n})
			}
		} else if m := truncateProp.FindStringSubmatch(key); m != nil {
			n, _ := strconv.Atoi(m[1])
			if cols := columns(); len(cols) > 0 {
				truncs = append(truncs, truncateRule{Columns: cols, Length: n})
			}
		} else if m := hashProp.FindStringSubmatch(key); m != nil {
			version := 1
			if m[1] != "" {
				version = 2
			}
			r := schema.ColumnRewrite{Kind: schema.RewriteHash, Algorithm: m[2], Salt: m[3], Version: version}
			if err := r.Validate(); err != nil {
				im.unmapped(key, err.Error())
				continue
			}
			if cols := columns(); len(cols) > 0 {
				hashes = append(hashes, hashRule{Columns: cols, Algorithm: m[2], Salt: m[3], Version: version})
			}
		}
	}
	if len(masks) > 0 {
		im.out.set("format.column_mask", masks, "")
	}
	if len(hashes) > 0 {
		im.out.set("format.column_hash", hashes, "")
	}
	if len(truncs) > 0 {
		im.out.set("format.column_truncate", truncs, "")
	}
	if len(masks)+len(hashes)+len(truncs) > 1 {
		im.findings = append(im.findings, finding{Property: "column.*", Mapped: true,
			Reason: "several column mappers: to a column matching more than one, Debezium applies only the first (truncate, then mask, then hash; ColumnMappers.java:56-76, 329-331)"})
	}
}

// heartbeat maps heartbeat.interval.ms (default 0, off; Heartbeat.java:40-50)
// and heartbeat.topics.prefix (default __debezium-heartbeat; Heartbeat.java:53-61).
func (im *importer) heartbeat() {
	ms := int64(0)
	if v, ok := im.get("heartbeat.interval.ms"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			im.unmapped("heartbeat.interval.ms", fmt.Sprintf("%q is not a number of milliseconds", v))
		}
		ms = n
	}
	if ms > 0 {
		im.out.set("heartbeat.interval", (time.Duration(ms) * time.Millisecond).String(), "")
		im.out.set("heartbeat.records", true, "")
	} else {
		im.out.set("heartbeat.records", false, "Debezium's heartbeats were off; mooncdc's interval still moves the slot on an idle database")
	}
	if v, ok := im.get("heartbeat.topics.prefix"); ok && v != "__debezium-heartbeat" {
		prefix, _ := im.peek("topic.prefix")
		im.out.set("heartbeat.topic", v+"."+prefix, "")
	}
	if _, ok := im.get("heartbeat.action.query"); ok {
		im.unmapped("heartbeat.action.query", "mooncdc's heartbeat writes a logical message (pg_logical_emit_message) that moves the slot without a heartbeat table; keep the query running elsewhere if something else reads that table")
	}
}

// signals maps signal.enabled.channels (default source;
// CommonConnectorConfig.java:965-971), signal.data.collection
// (CommonConnectorConfig.java:944) and signal.kafka.topic (default
// <topic.prefix>-signal; KafkaSignalChannel.java:150-155).
func (im *importer) signals() {
	channels, ok := im.get("signal.enabled.channels")
	if !ok {
		channels = "source"
	}
	table, hasTable := im.get("signal.data.collection")
	for _, ch := range strings.Split(channels, ",") {
		switch ch = strings.TrimSpace(ch); ch {
		case "source":
			if hasTable {
				ids, err := splitDebeziumTableID(table)
				if err != nil {
					im.unmapped("signal.data.collection", err.Error())
					continue
				}
				im.out.set("signals.table", ids, "")
			}
		case "kafka":
			topic, ok := im.get("signal.kafka.topic")
			if !ok {
				prefix, _ := im.peek("topic.prefix")
				topic = prefix + "-signal"
			}
			im.out.set("signals.kafka_topic", topic, "")
			if v, ok := im.get("signal.kafka.bootstrap.servers"); ok && len(im.opts.Brokers) > 0 && v != strings.Join(im.opts.Brokers, ",") {
				im.unmapped("signal.kafka.bootstrap.servers", "mooncdc reads the signal topic from kafka.brokers")
			} else if ok && len(im.opts.Brokers) == 0 {
				im.out.set("kafka.brokers", splitList(v), "from signal.kafka.bootstrap.servers")
				im.findings = slices.DeleteFunc(im.findings, func(f finding) bool { return f.Property == "bootstrap.servers" })
			}
		case "":
		default:
			im.unmapped("signal.enabled.channels", fmt.Sprintf("the %q channel: mooncdc reads signals from a table and a Kafka topic only", ch))
		}
	}
	for _, k := range []string{"signal.kafka.groupId", "signal.kafka.poll.timeout.ms", "signal.poll.interval.ms"} {
		if _, ok := im.get(k); ok {
			im.unmapped(k, "mooncdc has no such setting")
		}
	}
}

// splitDebeziumTableID turns signal.data.collection, a table name (not a
// regex) as schema.table, into a postgres.tables-style name.
func splitDebeziumTableID(s string) (string, error) {
	parts := strings.Split(s, ".")
	if len(parts) == 3 {
		parts = parts[1:] // database.schema.table
	}
	if len(parts) != 2 {
		return "", fmt.Errorf("%q is not schema.table", s)
	}
	return quoteIdent(parts[0]) + "." + quoteIdent(parts[1]), nil
}

// migrateFrom names this connector's stored offsets, which mooncdc reads to
// continue on the same slot without a new snapshot.
func (im *importer) migrateFrom() {
	if plugin, _ := im.peek("plugin.name"); plugin != "pgoutput" {
		return // a decoderbufs slot cannot be continued on
	}
	topic := im.opts.OffsetsTopic
	comment := ""
	if topic == "" {
		topic = "connect-offsets"
		comment = "the Connect worker's offset.storage.topic (or pass --offsets-topic)"
	}
	name, _ := im.peek("name")
	im.out.set("migrate_from.debezium.offsets_topic", topic, comment)
	im.out.set("migrate_from.debezium.connector_name", name, "")
}

// notifications maps notification.enabled.channels (no default:
// CommonConnectorConfig.java:995-1000) with its sink channel and
// notification.sink.topic.name (SinkNotificationChannel.java:37-62, which
// refuses the sink channel without a topic) to notifications.kafka_topic.
// mooncdc writes only the incremental snapshots' notifications
// (docs/incremental-snapshots.md, "The surface"); the log and jmx channels
// have no counterpart.
func (im *importer) notifications() {
	channels, _ := im.get("notification.enabled.channels")
	sink := false
	for _, ch := range strings.Split(channels, ",") {
		switch ch = strings.TrimSpace(ch); ch {
		case "sink":
			sink = true
		case "":
		default:
			im.unmapped("notification.enabled.channels", fmt.Sprintf("the %q channel: mooncdc writes notifications to a Kafka topic only (the sink channel)", ch))
		}
	}
	topic, hasTopic := im.get("notification.sink.topic.name")
	switch {
	case sink && hasTopic && topic != "":
		im.out.set("notifications.kafka_topic", topic, "")
		im.note("notification.enabled.channels", "mooncdc writes the incremental snapshots' notifications only, not the initial snapshot's")
	case sink:
		im.unmapped("notification.enabled.channels", "the sink channel without notification.sink.topic.name, which Debezium refuses too "+
			"(\"Notification topic name must be provided when kafka notification channel is enabled\"): set notifications.kafka_topic")
	case hasTopic:
		im.unmapped("notification.sink.topic.name", "the sink channel is not in notification.enabled.channels, so Debezium writes nothing there either")
	}
}
