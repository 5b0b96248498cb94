package main

import (
	"slices"
	"strings"
)

// This file lists the Debezium properties import-debezium knows to have no
// mooncdc key, and reports every property nothing else looked at.

// known are Debezium properties with no mooncdc key. A property set to
// one of its harmless values (Debezium's default, or what mooncdc does
// anyway) is passed silently; any other value is listed with the reason.
// Names and defaults: CommonConnectorConfig.java, PostgresConnectorConfig.java,
// RelationalDatabaseConnectorConfig.java at v3.6.1.Final.
var known = map[string]struct {
	harmless []string // "*" for any value
	reason   string
}{
	"connector.class":      {[]string{"*"}, ""},
	"tasks.max":            {[]string{"*"}, ""}, // the PostgreSQL connector runs one task
	"table.ignore.builtin": {[]string{"*"}, ""},
	// The PostgreSQL connector has no schema change topic.
	"include.schema.changes":                 {[]string{"*"}, ""},
	"max.batch.size":                         {nil, "mooncdc bounds memory by bytes in flight (kafka.max_inflight_bytes), not by batch or queue sizes"},
	"max.queue.size":                         {nil, "mooncdc bounds memory by bytes in flight (kafka.max_inflight_bytes), not by batch or queue sizes"},
	"max.queue.size.in.bytes":                {nil, "mooncdc bounds memory by bytes in flight: kafka.max_inflight_bytes"},
	"poll.interval.ms":                       {nil, "mooncdc sends records as they are decoded"},
	"status.update.interval.ms":              {nil, "mooncdc confirms a position to the slot when Kafka has acknowledged it"},
	"slot.max.retries":                       {nil, "mooncdc reconnects with its own backoff"},
	"slot.retry.delay.ms":                    {nil, "mooncdc reconnects with its own backoff"},
	"retriable.restart.connector.wait.ms":    {nil, "mooncdc reconnects with its own backoff"},
	"errors.max.retries":                     {nil, "mooncdc reconnects with its own backoff"},
	"snapshot.fetch.size":                    {nil, "mooncdc copies with COPY, not fetches"},
	"query.fetch.size":                       {nil, "mooncdc copies with COPY, not fetches"},
	"snapshot.locking.mode":                  {[]string{"none"}, "mooncdc locks no tables beyond what COPY takes: each copy reads the snapshot a temporary slot exports"},
	"snapshot.isolation.mode":                {[]string{"serializable", "repeatable_read"}, "each mooncdc copy reads the snapshot a temporary slot exports (repeatable read)"},
	"snapshot.lock.timeout.ms":               {nil, "mooncdc locks no tables beyond what COPY takes"},
	"topic.naming.strategy":                  {[]string{"io.debezium.schema.SchemaTopicNamingStrategy"}, "mooncdc names topics <prefix>.<schema>.<table>, as the default SchemaTopicNamingStrategy; kafka.routes renames them"},
	"topic.delimiter":                        {[]string{"."}, "mooncdc joins topic names with '.'"},
	"topic.transaction":                      {[]string{"transaction"}, "mooncdc writes transaction metadata to <prefix>.transaction"},
	"topic.cache.size":                       {[]string{"*"}, ""},
	"schema.refresh.mode":                    {[]string{"*"}, ""}, // mooncdc follows pgoutput's relation messages
	"slot.drop.on.stop":                      {[]string{"false"}, "mooncdc keeps its slot when it stops; 'mooncdc reset --drop-slot' drops it"},
	"flush.lsn.source":                       {[]string{"true"}, "mooncdc always confirms the acknowledged position to the slot"},
	"lsn.flush.mode":                         {[]string{"connector"}, "mooncdc always confirms the acknowledged position to the slot"},
	"schema.name.adjustment.mode":            {[]string{"none"}, "mooncdc writes names as Postgres has them (none)"},
	"field.name.adjustment.mode":             {[]string{"none"}, "mooncdc writes names as Postgres has them (none)"},
	"event.processing.failure.handling.mode": {[]string{"fail"}, "a value mooncdc cannot encode parks its table (see Errors); it is never skipped silently"},
	"event.converting.failure.handling.mode": {nil, "a value mooncdc cannot encode parks its table (see Errors); it is never skipped silently"},
	"message.prefix.include.list":            {nil, "mooncdc sends every logical message to <prefix>.message"},
	"message.prefix.exclude.list":            {nil, "mooncdc sends every logical message to <prefix>.message"},
	"skip.messages.without.change":           {[]string{"false"}, "mooncdc writes every change"},
	"converters":                             {nil, "custom converters are Java classes; mooncdc maps types as Debezium's defaults do"},
	"post.processors":                        {nil, "post processors are Java classes"},
	"column.propagate.source.type":           {nil, "mooncdc does not add __debezium.source.column.* schema parameters"},
	"datatype.propagate.source.type":         {nil, "mooncdc does not add __debezium.source.column.* schema parameters"},
	"include.schema.comments":                {[]string{"false"}, "mooncdc does not put column comments in schemas"},
	"extended.headers.enabled":               {nil, "mooncdc writes its own headers (see Records)"},
	"replica.identity.autoset.values":        {nil, "mooncdc never alters tables; set REPLICA IDENTITY yourself (mooncdc check reports tables without one)"},
	"database.query.timeout.ms":              {nil, "mooncdc has no query timeout setting"},
	"connection.validation.timeout.ms":       {nil, "mooncdc has no such setting"},
	"executor.shutdown.timeout.ms":           {nil, "mooncdc's clean stop is bounded by shutdown_timeout"},
	"statistics.metrics.enabled":             {[]string{"*"}, ""}, // metrics are on metrics.listen
	"streaming.delay.ms":                     {[]string{"0"}, "mooncdc streams at once"},
	"snapshot.delay.ms":                      {[]string{"0"}, "mooncdc copies at once"},
	"read.only":                              {[]string{"false"}, "mooncdc has no read-only mode: it may create its publication, and writes heartbeat messages where it can"},
	"offset.mismatch.strategy":               {nil, "mooncdc stops with exit 3 when the slot and its offsets disagree (see Exit codes)"},
	"header.converter":                       {nil, "mooncdc writes its headers as strings"},
}

// rest reports every property not looked at.
func (im *importer) rest() {
	for _, k := range sortedKeys(im.props) {
		if im.used[k] {
			continue
		}
		if kn, ok := known[k]; ok {
			v, _ := im.get(k)
			if !slices.Contains(kn.harmless, "*") && !slices.Contains(kn.harmless, v) {
				im.unmapped(k, kn.reason)
			}
			continue
		}
		im.unmapped(k, restReason(k))
	}
}

func restReason(k string) string {
	switch {
	case k == "database.server.name":
		return "removed in Debezium 2 (topic.prefix replaced it); Debezium 3.6.1 ignores it"
	case strings.Contains(k, "whitelist") || strings.Contains(k, "blacklist"):
		return "removed in Debezium 2 (the *.include.list and *.exclude.list properties replaced it); Debezium 3.6.1 ignores it"
	case strings.HasPrefix(k, "key.converter.") || strings.HasPrefix(k, "value.converter."):
		return "an option of a converter that is not in the connector config"
	case strings.HasPrefix(k, "errors."):
		return "Kafka Connect's error handling: mooncdc parks a table whose row cannot be encoded and goes on with the others"
	case strings.HasPrefix(k, "producer.override.") || strings.HasPrefix(k, "topic.creation."):
		return "a Kafka Connect producer or topic setting mooncdc does not take"
	case strings.HasPrefix(k, "incremental.snapshot.") || strings.HasPrefix(k, "snapshot."):
		return "mooncdc copies each table whole with a private catch-up and has no such snapshot setting"
	case strings.HasPrefix(k, "transforms.") || strings.HasPrefix(k, "predicates."):
		return "belongs to a transform that is not mapped"
	case strings.HasPrefix(k, "notification."):
		return "mooncdc writes notifications to notifications.kafka_topic only (Debezium's sink channel) and has no such setting"
	case strings.HasPrefix(k, "openlineage."), strings.HasPrefix(k, "custom.metric"):
		return "mooncdc has no such feature; its metrics are on metrics.listen"
	default:
		return "unknown to import-debezium; mooncdc has no such setting"
	}
}
