package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mooncdc/mooncdc/connector"
)

// This file maps the transforms (SMTs) of a Debezium connector config to
// mooncdc's envelope and routing keys (the generic ones:
// import_debezium_chain.go; the converters: import_debezium_converters.go).

// Debezium's transform classes.
const (
	unwrapSMT       = "io.debezium.transforms.ExtractNewRecordState"
	outboxSMT       = "io.debezium.transforms.outbox.EventRouter"
	logicalTableSMT = "io.debezium.transforms.ByLogicalTableRouter"
	regexRouterSMT  = "org.apache.kafka.connect.transforms.RegexRouter"
)

type route struct {
	Regex               string `yaml:"regex"`
	Topic               string `yaml:"topic"`
	KeyField            string `yaml:"key_field,omitempty"`
	KeyFieldRegex       string `yaml:"key_field_regex,omitempty"`
	KeyFieldReplacement string `yaml:"key_field_replacement,omitempty"`
}

// transforms maps the transforms chain, in order: the envelope and
// routing transforms to format.envelope and kafka.routes, Kafka Connect's
// and Debezium's generic ones to the transforms chain (import_debezium_chain.go).
func (im *importer) transforms() {
	chain, ok := im.get("transforms")
	if !ok {
		return
	}
	envelope := "debezium"
	var routes []route
	var natives, generics []chainStep
	for i, alias := range splitList(chain) {
		pfx := "transforms." + alias + "."
		class, _ := im.get(pfx + "type")
		if slices.Contains(connector.TransformTypes(), class) {
			generics = append(generics, chainStep{alias: alias, class: class, pos: i})
			continue
		}
		switch class {
		case unwrapSMT, outboxSMT:
			natives = append(natives, chainStep{alias: alias, class: class, pos: i, envelope: true})
		case logicalTableSMT, regexRouterSMT:
			natives = append(natives, chainStep{alias: alias, class: class, pos: i})
		}
		opt := func(name, def string) string {
			if v, ok := im.get(pfx + name); ok {
				return v
			}
			return def
		}
		if p, ok := im.get(pfx + "predicate"); ok {
			what := "mooncdc applies the transform to every table"
			if class == outboxSMT {
				what = "mooncdc applies EventRouter to format.outbox.table only, and writes the other tables' records unchanged"
			}
			im.note(pfx+"predicate", fmt.Sprintf("predicate %q is not applied: %s", p, what))
			im.get(pfx + "negate")
		}
		switch class {
		case unwrapSMT, outboxSMT:
			if envelope != "debezium" {
				im.unmapped(pfx+"type", fmt.Sprintf("a second envelope transform: mooncdc has one envelope, %s", envelope))
				continue
			}
			if class == unwrapSMT {
				envelope = "flat"
				im.flat(pfx, opt)
			} else {
				envelope = "outbox"
				im.outbox(pfx, opt)
			}
		case logicalTableSMT:
			// ByLogicalTableRouter.java:61-132: key.enforce.uniqueness
			// defaults to true, key.field.name to
			// __dbz__physicalTableIdentifier.
			r := route{Regex: opt("topic.regex", ""), Topic: javaReplacement(opt("topic.replacement", ""))}
			if strings.EqualFold(opt("key.enforce.uniqueness", "true"), "true") {
				r.KeyField = opt("key.field.name", "__dbz__physicalTableIdentifier")
				r.KeyFieldRegex = opt("key.field.regex", "")
				r.KeyFieldReplacement = javaReplacement(opt("key.field.replacement", ""))
			}
			im.get(pfx + "schema.name.adjustment.mode")
			im.get(pfx + "logical.table.cache.size")
			if im.checkRegex(pfx+"topic.regex", r.Regex) {
				routes = append(routes, r)
			}
		case regexRouterSMT:
			r := route{Regex: opt("regex", ""), Topic: javaReplacement(opt("replacement", ""))}
			if im.checkRegex(pfx+"regex", r.Regex) {
				routes = append(routes, r)
			}
		case "":
			im.unmapped(pfx+"type", "missing: Kafka Connect refuses a transform alias without a type")
		default:
			im.unmapped(pfx+"type", fmt.Sprintf("transform %q has no mooncdc equivalent (mooncdc runs ExtractNewRecordState, EventRouter, ByLogicalTableRouter, RegexRouter and %s); apply it downstream", class, strings.Join(connector.TransformTypes(), ", ")))
		}
		for _, k := range sortedKeys(im.props) {
			if strings.HasPrefix(k, pfx) && !im.used[k] {
				im.unmapped(k, "a transform option mooncdc has no key for")
			}
		}
	}
	if envelope != "debezium" {
		im.out.set("format.envelope", envelope, "")
		if v, _ := im.peek("value.converter"); v == cloudEventsConverter {
			// Envelope.isEnvelopeSchema is false for the flattened row or
			// the outbox event: CloudEventsConverter.java:268-272 writes null.
			im.findings = append(im.findings, finding{Property: "value.converter",
				Reason: fmt.Sprintf("CloudEventsConverter after the %s envelope transform writes every value null in Debezium (it converts change envelopes only), and mooncdc refuses format.value cloudevents with format.envelope %s: remove the transform or choose another converter", envelope, envelope)})
		}
	}
	if len(routes) > 0 {
		im.out.set("kafka.routes", routes, "")
	}
	im.chain(generics, natives)
}

// checkRegex reports a topic regex Go's regexp cannot compile (Java-only
// constructs such as lookarounds and backreferences).
func (im *importer) checkRegex(prop, re string) bool {
	if re == "" {
		im.unmapped(prop, "missing")
		return false
	}
	if _, err := regexp.Compile(re); err != nil {
		im.unmapped(prop, fmt.Sprintf("not a regex mooncdc can run (%v)", err))
		return false
	}
	return true
}

// javaReplacement rewrites Java's $1 group references as ${1}: Go reads
// $1a as the group named "1a". Named references ${name} are the same in
// both.
var javaGroupRef = regexp.MustCompile(`\$(\d+)`)

func javaReplacement(s string) string { return javaGroupRef.ReplaceAllString(s, "$${$1}") }

// flat maps ExtractNewRecordState (ExtractNewRecordStateConfigDefinition.java:72-137).
func (im *importer) flat(pfx string, opt func(string, string) string) {
	// delete.tombstone.handling.mode defaults to tombstone.
	mode := opt("delete.tombstone.handling.mode", "tombstone")
	switch mode {
	case "drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone":
		im.out.set("format.flat.delete_handling", mode, "")
	default:
		im.unmapped(pfx+"delete.tombstone.handling.mode", fmt.Sprintf("%q is not a Debezium 3.6.1 value", mode))
	}
	if v := opt("add.fields", ""); v != "" {
		im.out.set("format.flat.add_fields", splitList(v), "")
	}
	if v := opt("add.headers", ""); v != "" {
		im.out.set("format.flat.add_headers", splitList(v), "")
	}
	for _, p := range []string{"add.fields.prefix", "add.headers.prefix"} {
		if v := opt(p, "__"); v != "__" {
			im.out.set("format.flat."+underscore(p), v, "")
		}
	}
	for _, p := range []string{"delete.handling.mode", "drop.tombstones"} {
		if _, ok := im.get(pfx + p); ok {
			im.unmapped(pfx+p, "removed in Debezium 3 (3.6.1 ignores it): delete.tombstone.handling.mode says how deletes are written")
		}
	}
	if v := opt("replace.null.with.default", "true"); !strings.EqualFold(v, "true") {
		im.unmapped(pfx+"replace.null.with.default", "false: mooncdc writes null as null already, and has no other setting")
	}
	if v := opt("route.by.field", ""); v != "" {
		im.unmapped(pfx+"route.by.field", "routing by a field of the row: use kafka.routes on topic names instead")
	}
}

// outbox maps EventRouter (EventRouterConfigDefinition.java:195-317). The
// outbox table is the one table of table.include.list.
func (im *importer) outbox(pfx string, opt func(string, string) string) {
	var tables []string
	if v, ok := im.peek("table.include.list"); ok {
		for _, s := range splitRegexList(v) {
			if p, _, err := regexToPatterns(s, 2); err == nil {
				tables = append(tables, p...)
			}
		}
	}
	if len(tables) == 1 && !strings.Contains(tables[0], "*") {
		im.out.set("format.outbox.table", tables[0], "")
	} else {
		im.out.set("format.outbox.table", "public.outbox", "set to the outbox table")
		im.findings = append(im.findings, finding{Property: pfx + "type",
			Reason: "EventRouter: the outbox table is not one table of table.include.list; format.outbox.table needs it"})
	}
	im.out.set("format.outbox.route_by", opt("route.by.field", "aggregatetype"), "")
	im.out.set("format.outbox.topic", opt("route.topic.replacement", "outbox.event.${routedByValue}"), "")
	// The other options keep Debezium's names with '_' for '.', set only
	// when they differ from the defaults (EventRouterConfigDefinition.java:195-323).
	for _, o := range []struct{ name, def string }{
		{"route.topic.regex", "(?<routedByValue>.*)"},
		{"table.field.event.id", "id"},
		{"table.field.event.key", "aggregateid"},
		{"table.field.event.payload", "payload"},
		{"table.field.event.timestamp", ""},
		{"table.field.event.schema.version", ""},
		{"table.op.invalid.behavior", "warn"},
		{"table.json.payload.null.behavior", "ignore"},
		{"table.field.additional.missing", "error"},
	} {
		if v := opt(o.name, o.def); v != o.def {
			im.out.set("format.outbox."+underscore(o.name), v, "")
		}
	}
	if v := opt("table.fields.additional.placement", ""); v != "" {
		im.out.set("format.outbox.table_fields_additional_placement", splitList(v), "")
	}
	for _, p := range []string{"table.expand.json.payload", "route.tombstone.on.empty.payload"} {
		if v := opt(p, "false"); strings.EqualFold(v, "true") {
			im.out.set("format.outbox."+underscore(p), true, "")
		}
	}
	// table.field.event.type is declared but never read by
	// EventRouterDelegate (3.6.1): nothing to map.
	im.get(pfx + "table.field.event.type")
}
