package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// This file holds the outbox envelope: Debezium 3.6.1's outbox EventRouter
// SMT (debezium-connect-plugins/src/main/java/io/debezium/transforms/outbox/
// at v3.6.1.Final; "ERD" below for EventRouterDelegate.java, "ERCD" for
// EventRouterConfigDefinition.java) applied where the record is encoded:
// a row inserted into the outbox table, or a logical message with the
// outbox prefix (outbox_message.go), becomes one record on the topic its
// route-by value names, keyed by its aggregate id, with its payload as the
// value and its event id in the `id` header. Which changes become events
// is OutboxConfig.Action; the event's parts are taken by OutboxEvent
// (outbox_event.go) and written by outbox_encode.go.

// OutboxOpBehavior is table.op.invalid.behavior (ERCD.java:29-63, 195-202):
// what an update of the outbox table does.
type OutboxOpBehavior string

// The behaviours; OutboxWarn is the default (ERCD.java:197).
const (
	OutboxWarn  OutboxOpBehavior = "warn"
	OutboxError OutboxOpBehavior = "error"
	OutboxFatal OutboxOpBehavior = "fatal"
)

// The defaults of the EventRouter's options (ERCD.java:204-297).
const (
	DefaultOutboxRouteBy      = "aggregatetype"                 // route.by.field, ERCD.java:273
	DefaultOutboxTopicRegex   = "(?<routedByValue>.*)"          // route.topic.regex, ERCD.java:283
	DefaultOutboxTopic        = "outbox.event.${routedByValue}" // route.topic.replacement, ERCD.java:292
	DefaultOutboxIDField      = "id"                            // table.field.event.id, ERCD.java:209
	DefaultOutboxKeyField     = "aggregateid"                   // table.field.event.key, ERCD.java:217
	DefaultOutboxPayloadField = "payload"                       // table.field.event.payload, ERCD.java:241
)

// OutboxIDHeader is the header that carries the event id (ERD.java:159-160).
const OutboxIDHeader = "id"

// OutboxOptions are the EventRouter's options as configured; empty
// strings take Debezium's defaults.
type OutboxOptions struct {
	Table                           string // the outbox table, schema.table (unqualified: public)
	RouteBy                         string
	TopicRegex, TopicReplacement    string
	IDField, KeyField, PayloadField string
	TimestampField                  string   // "" for the processing time
	AdditionalPlacement             []string // column:header|envelope[:alias]
	ExpandJSONPayload               bool
	TombstoneOnEmptyPayload         bool
	OnUpdate                        OutboxOpBehavior
	MessagePrefix                   string // "" for no outbox messages
	// SchemaVersionField is table.field.event.schema.version: an int
	// column whose value is the value struct's schema version.
	SchemaVersionField string
	// NullBehavior is table.json.payload.null.behavior: ignore (default)
	// or optional_bytes (ERCD.java:101-134, 317-323).
	NullBehavior string
	// AdditionalMissing is table.field.additional.missing: error
	// (default) or ignore (ERCD.java:136-169, 254-261).
	AdditionalMissing string
}

// OutboxConfig is the outbox envelope. Build it with NewOutboxConfig. It is
// immutable and safe for concurrent use.
type OutboxConfig struct {
	Schema, Table                   string
	RouteBy                         string
	IDField, KeyField, PayloadField string
	TimestampField                  string
	SchemaVersionField              string
	Fields                          []OutboxField
	Expand, TombstoneOnEmpty        bool
	OnUpdate                        OutboxOpBehavior
	MessagePrefix                   string
	// NullBytes: an expanded null gets an optional bytes schema;
	// IgnoreMissing: an additional field without its column is left out
	// (ERD.java:192-196) instead of failing the event.
	NullBytes, IgnoreMissing bool
	// envelope: some field goes into the value, which is then a struct
	// {payload, fields…}; without, the value is the payload itself
	// (ERD.java:183-188, 223-226, 388).
	envelope    bool
	regex       *regexp.Regexp
	replacement string
}

// OutboxPlacement is where an additional field goes (ERCD.java:65-99).
type OutboxPlacement string

// The placements: a header, a field of the value beside the payload, or
// the record's Kafka partition (ERCD.java:65-99, ERD.java:190-211).
const (
	PlaceHeader    OutboxPlacement = "header"
	PlaceEnvelope  OutboxPlacement = "envelope"
	PlacePartition OutboxPlacement = "partition"
)

// OutboxField is one entry of table.fields.additional.placement: a column
// of the outbox table (a field of the message), where it goes and under
// which name (ERCD.java:369-384: the alias defaults to the column).
type OutboxField struct {
	Column    string
	Placement OutboxPlacement
	Alias     string
}

// NewOutboxConfig checks o and fills Debezium's defaults. Each error names
// the option (without the format.outbox. prefix) and the fix.
func NewOutboxConfig(o OutboxOptions) (*OutboxConfig, error) {
	def := func(s, d string) string {
		if s = strings.TrimSpace(s); s == "" {
			return d
		}
		return s
	}
	c := &OutboxConfig{RouteBy: def(o.RouteBy, DefaultOutboxRouteBy), IDField: def(o.IDField, DefaultOutboxIDField),
		KeyField: def(o.KeyField, DefaultOutboxKeyField), PayloadField: def(o.PayloadField, DefaultOutboxPayloadField),
		TimestampField: strings.TrimSpace(o.TimestampField), SchemaVersionField: strings.TrimSpace(o.SchemaVersionField), Expand: o.ExpandJSONPayload,
		TombstoneOnEmpty: o.TombstoneOnEmptyPayload, OnUpdate: OutboxOpBehavior(strings.ToLower(strings.TrimSpace(string(o.OnUpdate)))),
		MessagePrefix: o.MessagePrefix, replacement: def(o.TopicReplacement, DefaultOutboxTopic)}
	table := strings.TrimSpace(o.Table)
	if table == "" {
		return nil, fmt.Errorf("table: required with format.envelope outbox; name the outbox table, e.g. public.outbox")
	}
	c.Schema, c.Table = "public", table
	if s, t, ok := strings.Cut(table, "."); ok {
		c.Schema, c.Table = s, t
	}
	if c.Schema == "" || c.Table == "" || strings.Contains(c.Table, ".") {
		return nil, fmt.Errorf("table: %q is not schema.table, e.g. public.outbox", table)
	}
	switch strings.ToLower(strings.TrimSpace(o.NullBehavior)) {
	case "", "ignore":
	case "optional_bytes":
		c.NullBytes = true
	default:
		return nil, fmt.Errorf("table_json_payload_null_behavior: %q is not ignore or optional_bytes (default ignore)", o.NullBehavior)
	}
	switch strings.ToLower(strings.TrimSpace(o.AdditionalMissing)) {
	case "", "error":
	case "ignore":
		c.IgnoreMissing = true
	default:
		return nil, fmt.Errorf("table_field_additional_missing: %q is not error or ignore (default error)", o.AdditionalMissing)
	}
	switch c.OnUpdate {
	case "":
		c.OnUpdate = OutboxWarn
	case OutboxWarn, OutboxError, OutboxFatal:
	default:
		return nil, fmt.Errorf("table_op_invalid_behavior: %q is not one of warn, error, fatal (default warn)", o.OnUpdate)
	}
	// Java's named groups are (?<name>…), which Go's regexp accepts too;
	// RegexRouter matches the whole value (Matcher.matches), hence the
	// anchors.
	regex := def(o.TopicRegex, DefaultOutboxTopicRegex)
	re, err := regexp.Compile(`^(?:` + regex + `)$`)
	if err != nil {
		return nil, fmt.Errorf("route_topic_regex: %q is not a regular expression: %v", regex, err)
	}
	c.regex = re
	if c.Fields, err = parseOutboxFields(o.AdditionalPlacement); err != nil {
		return nil, err
	}
	seen := map[string]bool{"payload": true}
	for _, f := range c.Fields {
		if f.Placement != PlaceEnvelope {
			continue
		}
		if seen[f.Alias] {
			// SchemaBuilder.field refuses a duplicate name (ERD.java:418-433).
			return nil, fmt.Errorf("table_fields_additional_placement: the value gets the field %q twice; give one an alias (column:envelope:alias)", f.Alias)
		}
		seen[f.Alias] = true
		c.envelope = true
	}
	return c, nil
}

// parseOutboxFields parses table.fields.additional.placement
// (ERCD.java:369-384): each entry column:placement or
// column:placement:alias.
func parseOutboxFields(specs []string) ([]OutboxField, error) {
	var out []OutboxField
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		parts := strings.Split(spec, ":")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || len(parts) == 3 && parts[2] == "" {
			return nil, fmt.Errorf("table_fields_additional_placement: %q is not column:header, column:envelope or column:<placement>:alias", spec)
		}
		f := OutboxField{Column: parts[0], Placement: OutboxPlacement(strings.ToLower(parts[1])), Alias: parts[0]}
		if len(parts) == 3 {
			f.Alias = parts[2]
		}
		switch f.Placement {
		case PlaceHeader, PlaceEnvelope, PlacePartition:
		default:
			return nil, fmt.Errorf("table_fields_additional_placement: %q: %q is not header, envelope or partition", spec, parts[1])
		}
		out = append(out, f)
	}
	return out, nil
}

// IsTable reports whether schema.table is the outbox table.
// PlacesPartition reports a partition placement: some events then name
// their record's Kafka partition (OutboxEvent.Partition).
func (c *OutboxConfig) PlacesPartition() bool {
	for _, f := range c.Fields {
		if f.Placement == PlacePartition {
			return true
		}
	}
	return false
}

func (c *OutboxConfig) IsTable(schemaName, table string) bool {
	return schemaName == c.Schema && table == c.Table
}

// Topic is the topic of an event whose route-by value is v: RegexRouter
// with route.topic.regex and route.topic.replacement applied to v, which
// is the record's topic before it (ERD.java:234-246, 373-377). A value the
// regex does not match whole keeps v as the topic (RegexRouter.apply).
func (c *OutboxConfig) Topic(v string) string {
	m := c.regex.FindStringSubmatchIndex(v)
	if m == nil {
		return v
	}
	return string(c.regex.ExpandString(nil, c.replacement, v, m))
}

// OutboxAction is what a change of the outbox table becomes.
type OutboxAction uint8

// The actions.
const (
	OutboxEmit   OutboxAction = iota // an insert or a snapshot row: one event
	OutboxIgnore                     // a delete or a truncate: nothing
	OutboxUpdate                     // an update: nothing, and OnUpdate says how loudly
)

// Action says what a change of the outbox table becomes (ERD.java:95-123):
//   - a delete is ignored (:111-115), and its tombstone with it (:96-100);
//   - an update is handled by table.op.invalid.behavior (:117-121, 304-315);
//   - a snapshot row (op r) is neither, so it is an event like an insert;
//   - a truncate is ignored: Debezium's default skipped.operations (t)
//     never hands one to the SMT.
func (c *OutboxConfig) Action(op Op) OutboxAction {
	switch op {
	case OpCreate, OpRead:
		return OutboxEmit
	case OpUpdate:
		return OutboxUpdate
	}
	return OutboxIgnore
}
