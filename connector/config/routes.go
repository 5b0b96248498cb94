package config

import (
	"fmt"
	"regexp"
	"strings"
)

// This file is the one decision of a table's topic: <prefix>.<schema>.<table>
// sanitized as Debezium does (topicname.go), unless a kafka.routes rule
// renames it. A rule with a key_field has the semantics of Debezium's
// ByLogicalTableRouter (debezium-connect-plugins/src/main/java/io/debezium/transforms/ByLogicalTableRouter.java,
// v3.6.1.Final): the record schemas are named after the new topic
// (:321-340, :369-395) and the key gains a required string field holding
// the original topic, or key_field_regex's rewrite of it (:342-367), so that
// keys of the merged tables stay apart. Without a key_field a rule only
// renames the topic, as Kafka's RegexRouter does.

// RouteRule is one kafka.routes entry.
type RouteRule struct {
	// Regex must match the whole original topic name.
	Regex string `yaml:"regex"`
	// Topic is the new topic; $1 or ${1} are Regex's groups.
	Topic string `yaml:"topic"`
	// KeyField is the key field naming the original table
	// (ByLogicalTableRouter's key.field.name, e.g.
	// __dbz__physicalTableIdentifier); empty renames the topic only.
	KeyField string `yaml:"key_field"`
	// KeyFieldRegex and KeyFieldReplacement rewrite the original topic
	// into the key field's value (key.field.regex, key.field.replacement).
	KeyFieldRegex       string `yaml:"key_field_regex"`
	KeyFieldReplacement string `yaml:"key_field_replacement"`
}

// TopicNaming names the topics and record schemas of tables.
type TopicNaming struct {
	prefix string
	rules  []compiledRoute
}

type compiledRoute struct {
	RouteRule
	re, keyRe *regexp.Regexp
}

// TableTopic is where a table's records go.
type TableTopic struct {
	Topic string
	// Routed is set when a kafka.routes rule chose Topic.
	Routed bool
	// KeyField and KeyValue are the key field a ByLogicalTableRouter
	// rule adds ("" for none).
	KeyField, KeyValue string
	// SchemaName is what the record schemas are named after.
	SchemaName string
}

// TopicNaming returns the topic naming of c (Validate has checked the
// rules).
func (c Config) TopicNaming() (TopicNaming, error) {
	n := TopicNaming{prefix: c.Kafka.TopicPrefix}
	var errs []string
	for i, r := range c.Kafka.Routes {
		cr := compiledRoute{RouteRule: r}
		var err error
		if cr.re, err = regexp.Compile(`^(?:` + r.Regex + `)$`); err != nil || r.Regex == "" {
			errs = append(errs, fmt.Sprintf("kafka.routes[%d].regex: %q is not a regular expression (Go's RE2 syntax; lookarounds and backreferences are not supported): %v", i, r.Regex, err))
		}
		if r.Topic == "" {
			errs = append(errs, fmt.Sprintf("kafka.routes[%d].topic: empty; give the topic the matching tables go to, e.g. shop.public.orders", i))
		}
		if r.KeyFieldRegex != "" {
			if r.KeyField == "" || r.KeyFieldReplacement == "" {
				errs = append(errs, fmt.Sprintf("kafka.routes[%d]: key_field_regex needs key_field and key_field_replacement (ByLogicalTableRouter's key.field.replacement must be non-empty if key.field.regex is set)", i))
			}
			if cr.keyRe, err = regexp.Compile(`^(?:` + r.KeyFieldRegex + `)$`); err != nil {
				errs = append(errs, fmt.Sprintf("kafka.routes[%d].key_field_regex: %q is not a regular expression: %v", i, r.KeyFieldRegex, err))
			}
		}
		n.rules = append(n.rules, cr)
	}
	if len(errs) > 0 {
		return TopicNaming{}, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return n, nil
}

// Of returns where the records of schema.table go. The first rule whose
// regex matches the table's own topic applies; a rule whose replacement is
// empty is ignored, as ByLogicalTableRouter propagates the record then
// (ByLogicalTableRouter.java:204-207).
func (n TopicNaming) Of(schemaName, table string) TableTopic {
	own := TopicName(n.prefix, schemaName, table)
	for _, r := range n.rules {
		m := r.re.FindStringSubmatchIndex(own)
		if m == nil {
			continue
		}
		topic := sanitizeTopic(string(r.re.ExpandString(nil, r.Topic, own, m)))
		if topic == "" {
			continue
		}
		out := TableTopic{Topic: topic, Routed: true, SchemaName: own}
		if r.KeyField != "" {
			out.SchemaName = topic
			out.KeyField, out.KeyValue = r.KeyField, own
			if r.keyRe != nil {
				if km := r.keyRe.FindStringSubmatchIndex(own); km != nil {
					out.KeyValue = string(r.keyRe.ExpandString(nil, r.KeyFieldReplacement, own, km))
				}
			}
		}
		return out
	}
	return TableTopic{Topic: own, SchemaName: own}
}

// Clashes returns the clashes among tables (see TopicClashes). Tables a
// rule routes to a shared topic are merged on purpose and never clash.
func (n TopicNaming) Clashes(keep, add []TableName) []TopicClash {
	unrouted := func(ts []TableName) []TableName {
		var out []TableName
		for _, t := range ts {
			if !n.Of(t.Schema, t.Table).Routed {
				out = append(out, t)
			}
		}
		return out
	}
	return TopicClashes(n.prefix, unrouted(keep), unrouted(add))
}
