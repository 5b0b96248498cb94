package config

import (
	"github.com/mooncdc/mooncdc/schema"
)

// OutboxConfig is format.outbox, the options of Debezium 3.6.1's outbox
// EventRouter (EventRouterConfigDefinition.java:195-323), each named after
// its Debezium property with _ for .
type OutboxConfig struct {
	// Table is the outbox table, schema.table (required with
	// format.envelope outbox). It must be one of the captured tables.
	Table string `yaml:"table"`
	// RouteBy is route.by.field (default aggregatetype): the column whose
	// value names the topic.
	RouteBy string `yaml:"route_by"`
	// Topic is route.topic.replacement (default outbox.event.${routedByValue})
	// and RouteTopicRegex route.topic.regex (default (?<routedByValue>.*);
	// (?P<name>) works too), RegexRouter's replacement and regex applied
	// to the route-by value.
	Topic           string `yaml:"topic"`
	RouteTopicRegex string `yaml:"route_topic_regex"`
	// TableFieldEventID, …Key, …Payload and …Timestamp are
	// table.field.event.id (default id, the `id` header),
	// table.field.event.key (default aggregateid, the record key),
	// table.field.event.payload (default payload, the value) and
	// table.field.event.timestamp (optional: the record timestamp, a
	// timestamp column; else the processing time).
	TableFieldEventID        string `yaml:"table_field_event_id"`
	TableFieldEventKey       string `yaml:"table_field_event_key"`
	TableFieldEventPayload   string `yaml:"table_field_event_payload"`
	TableFieldEventTimestamp string `yaml:"table_field_event_timestamp"`
	// TableFieldEventSchemaVersion is table.field.event.schema.version:
	// an integer column giving the value struct (with envelope fields)
	// its schema version.
	TableFieldEventSchemaVersion string `yaml:"table_field_event_schema_version"`
	// TableFieldsAdditionalPlacement is table.fields.additional.placement:
	// column:header, column:envelope, either with :alias.
	TableFieldsAdditionalPlacement []string `yaml:"table_fields_additional_placement"`
	// TableExpandJSONPayload is table.expand.json.payload: a payload
	// string holding a JSON object is written as that object.
	TableExpandJSONPayload bool `yaml:"table_expand_json_payload"`
	// RouteTombstoneOnEmptyPayload is route.tombstone.on.empty.payload: a
	// null or blank payload is a tombstone.
	RouteTombstoneOnEmptyPayload bool `yaml:"route_tombstone_on_empty_payload"`
	// TableOpInvalidBehavior is table.op.invalid.behavior for updates of
	// the outbox table: warn (default), error, fatal (the table parked).
	TableOpInvalidBehavior string `yaml:"table_op_invalid_behavior"`
	// TableJSONPayloadNullBehavior is table.json.payload.null.behavior:
	// ignore (default: an expanded payload's nulls are left out) or
	// optional_bytes (kept, as optional bytes).
	TableJSONPayloadNullBehavior string `yaml:"table_json_payload_null_behavior"`
	// TableFieldAdditionalMissing is table.field.additional.missing: error
	// (default: the outbox table is parked) or ignore (the field is left
	// out of that event).
	TableFieldAdditionalMissing string `yaml:"table_field_additional_missing"`
	// MessagePrefix, when set, makes the logical messages with this
	// prefix outbox events: their content a JSON object with the outbox
	// table's fields (mooncdc's own; docs/records.md "Outbox envelope").
	MessagePrefix string `yaml:"message_prefix"`
}

// defaultOutbox is format.outbox with Debezium's defaults.
func defaultOutbox() OutboxConfig {
	return OutboxConfig{RouteBy: schema.DefaultOutboxRouteBy, Topic: schema.DefaultOutboxTopic, RouteTopicRegex: schema.DefaultOutboxTopicRegex,
		TableFieldEventID: schema.DefaultOutboxIDField, TableFieldEventKey: schema.DefaultOutboxKeyField,
		TableFieldEventPayload: schema.DefaultOutboxPayloadField, TableOpInvalidBehavior: string(schema.OutboxWarn),
		TableJSONPayloadNullBehavior: "ignore", TableFieldAdditionalMissing: "error"}
}

// outbox returns the outbox envelope of f, nil for another envelope (or a
// configuration Validate refuses).
func (f *FormatConfig) SchemaOutbox() (*schema.OutboxConfig, error) {
	if f.Envelope != EnvelopeOutbox {
		return nil, nil
	}
	o := f.Outbox
	return schema.NewOutboxConfig(schema.OutboxOptions{Table: o.Table, RouteBy: o.RouteBy, TopicRegex: o.RouteTopicRegex,
		TopicReplacement: o.Topic, IDField: o.TableFieldEventID, KeyField: o.TableFieldEventKey, PayloadField: o.TableFieldEventPayload,
		TimestampField: o.TableFieldEventTimestamp, SchemaVersionField: o.TableFieldEventSchemaVersion, AdditionalPlacement: o.TableFieldsAdditionalPlacement,
		ExpandJSONPayload: o.TableExpandJSONPayload, TombstoneOnEmptyPayload: o.RouteTombstoneOnEmptyPayload,
		OnUpdate: schema.OutboxOpBehavior(o.TableOpInvalidBehavior), MessagePrefix: o.MessagePrefix,
		NullBehavior: o.TableJSONPayloadNullBehavior, AdditionalMissing: o.TableFieldAdditionalMissing})
}

// validateOutbox checks format.outbox against the rest of the format.
func (f *FormatConfig) validateOutbox(bad func(string, ...any)) {
	if f.Envelope != EnvelopeOutbox {
		if o := f.Outbox; o.Table != "" || o.MessagePrefix != "" || len(o.TableFieldsAdditionalPlacement) > 0 {
			bad("format.outbox: set, but format.envelope is %s; set format.envelope: outbox, or remove format.outbox", f.Envelope)
		}
		return
	}
	ob, err := f.SchemaOutbox()
	if err != nil {
		bad("format.outbox.%v", err)
		return
	}
	switch ob.MessagePrefix {
	case HeartbeatMessagePrefix, DDLMessagePrefix:
		bad("format.outbox.message_prefix: %q is mooncdc's own message prefix; choose another, e.g. outbox", ob.MessagePrefix)
	}
}
