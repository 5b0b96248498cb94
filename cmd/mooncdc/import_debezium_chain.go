package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mooncdc/mooncdc/connector"
)

// This file maps the generic transforms of a connector's chain (Kafka
// Connect's InsertField, ReplaceField, TimestampConverter, HeaderFrom,
// ValueToKey and Cast, Debezium's Filter and ContentBasedRouter) with the
// predicates they use to mooncdc's `transforms` mapping, whose keys are
// Kafka Connect's, verbatim. Groovy and JavaScript conditions are
// translated to CEL where that is mechanical. mooncdc applies its
// envelope (format.envelope) and routes (kafka.routes) before the chain,
// so a transform that Debezium runs before one of those is kept only when
// the order cannot change what it does; otherwise it is refused with the
// fix.

// chainStep is one transform of the connector's chain.
type chainStep struct {
	alias, class string
	pos          int  // its index in the chain
	envelope     bool // ExtractNewRecordState or EventRouter (else a route, for a native step)
}

const (
	filterSMT   = "io.debezium.transforms.Filter"
	routerSMT   = "io.debezium.transforms.ContentBasedRouter"
	insertField = "org.apache.kafka.connect.transforms.InsertField$"
	topicNameP  = "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
)

// chain maps generics, the generic transforms in chain order; natives
// are the envelope and routing transforms mapped to mooncdc's own keys.
func (im *importer) chain(generics, natives []chainStep) {
	predList, _ := im.get("predicates")
	preds := splitList(predList)
	var aliases, usedPreds []string
	out := &orderedMap{}
	var entries [][2]string
	for _, s := range generics {
		pfx := "transforms." + s.alias + "."
		keys := im.keysUnder(pfx)
		var reads, notes []string
		if s.class == filterSMT || s.class == routerSMT {
			var ok bool
			if reads, notes, ok = im.translate(s, keys); !ok {
				continue
			}
		}
		pred := strings.TrimSpace(keys[pfx+"predicate"])
		var predKeys map[string]string
		predClass := ""
		if pred != "" {
			ppfx := "predicates." + pred + "."
			predKeys = im.keysUnder(ppfx)
			predClass = strings.TrimSpace(predKeys[ppfx+"type"])
			switch {
			case !slices.Contains(preds, pred):
				im.unmapped(pfx+"predicate", fmt.Sprintf("%q is not an alias listed in predicates: Kafka Connect refuses this config", pred))
				continue
			case !slices.Contains(connector.PredicateTypes(), predClass):
				im.unmapped(pfx+"predicate", fmt.Sprintf("predicate %q is %q, which mooncdc does not have (it runs %s): without it the transform would apply to every record", pred, predClass, strings.Join(connector.PredicateTypes(), ", ")))
				continue
			}
		}
		if reason := orderConflict(s, natives, keys, reads, predClass); reason != "" {
			im.unmapped(pfx+"type", reason)
			continue
		}
		single := map[string]string{"transforms": s.alias}
		for k, v := range keys {
			single[k] = v
		}
		if pred != "" {
			single["predicates"] = pred
			for k, v := range predKeys {
				single[k] = v
			}
		}
		if err := connector.ValidateTransforms(single); err != nil {
			im.unmapped(pfx+"type", fmt.Sprintf("%s (%s): refused by mooncdc's transforms: %s", s.alias, s.class, strings.ReplaceAll(err.Error(), "\n", "; ")))
			continue
		}
		aliases = append(aliases, s.alias)
		for _, n := range notes {
			im.note(n[:strings.IndexByte(n, ' ')], n[strings.IndexByte(n, ' ')+1:])
		}
		// type first, then the options in name order.
		entries = append(entries, [2]string{pfx + "type", keys[pfx+"type"]})
		for _, k := range sortedKeys(keys) {
			if k != pfx+"type" {
				entries = append(entries, [2]string{k, keys[k]})
			}
		}
		if pred != "" && !slices.Contains(usedPreds, pred) {
			usedPreds = append(usedPreds, pred)
		}
	}
	for _, p := range preds {
		if !slices.Contains(usedPreds, p) {
			ppfx := "predicates." + p + "."
			im.keysUnder(ppfx)
			im.note(ppfx+"type", "not carried: no transform mooncdc runs in its transforms chain uses it")
		}
	}
	if len(aliases) == 0 {
		return
	}
	out.add("transforms", strings.Join(aliases, ","))
	for _, e := range entries {
		out.add(e[0], e[1])
	}
	if len(usedPreds) > 0 {
		out.add("predicates", strings.Join(usedPreds, ","))
		for _, p := range usedPreds {
			ppfx := "predicates." + p + "."
			keys := map[string]string{}
			for k, v := range im.props {
				if strings.HasPrefix(k, ppfx) {
					keys[k] = v
				}
			}
			out.add(ppfx+"type", keys[ppfx+"type"])
			for _, k := range sortedKeys(keys) {
				if k != ppfx+"type" {
					out.add(k, keys[k])
				}
			}
		}
	}
	im.out.set("transforms", out.node(), "Kafka Connect's transform keys, verbatim; applied after format.envelope and kafka.routes")
}

// keysUnder returns the properties under prefix, verbatim, and marks them used.
func (im *importer) keysUnder(prefix string) map[string]string {
	keys := map[string]string{}
	for k, v := range im.props {
		if strings.HasPrefix(k, prefix) {
			keys[k] = v
			im.used[k] = true
		}
	}
	return keys
}

// translate rewrites a Filter's condition or a ContentBasedRouter's topic
// expression in keys from Groovy or JavaScript to CEL, and returns the
// variables it reads and the notes to give ("<key> <note>") if the
// transform is mapped; false when it cannot (reported).
func (im *importer) translate(s chainStep, keys map[string]string) ([]string, []string, bool) {
	pfx := "transforms." + s.alias + "."
	exprKey, topicExpr := pfx+"condition", false
	if s.class == routerSMT {
		exprKey, topicExpr = pfx+"topic.expression", true
	}
	lang, ok := keys[pfx+"language"]
	if !ok {
		// ScriptingTransformation.java:112-119: language is required.
		im.unmapped(pfx+"language", "missing: Debezium requires it (jsr223.groovy or jsr223.graal.js), and refuses this config")
		return nil, nil, false
	}
	src, ok := keys[exprKey]
	if !ok {
		im.unmapped(exprKey, "missing: Debezium requires it, and refuses this config")
		return nil, nil, false
	}
	tr, err := connector.TranslateScript(strings.TrimSpace(lang), src, topicExpr)
	if err != nil {
		im.unmapped(exprKey, fmt.Sprintf("not translated to CEL: %v; write it in CEL (docs/transforms.md) with language cel", err))
		return nil, nil, false
	}
	keys[pfx+"language"] = "cel"
	keys[exprKey] = tr.CEL
	notes := []string{exprKey + " " + fmt.Sprintf("translated from %s to CEL: %s", lang, tr.CEL)}
	for _, n := range tr.Notes {
		notes = append(notes, exprKey+" "+n)
	}
	return tr.Reads, notes, true
}

// orderConflict says why s, which Debezium runs before some of natives,
// would do something else after them (mooncdc applies its envelope and
// routes first), with the fix; "" when the order cannot matter.
//
// Before an envelope transform nothing generic is kept: the envelope
// replaces the value (and EventRouter the key and topic), so each of the
// transforms and conditions would read or change another record. Before
// a route (RegexRouter, ByLogicalTableRouter), a transform that neither
// reads nor sets the topic sees the same record; ByLogicalTableRouter also
// rewrites the key and the value's schema names
// (ByLogicalTableRouter.java:243-272), so only a Filter that reads neither
// the key nor the topic comes before it unchanged.
func orderConflict(s chainStep, natives []chainStep, keys map[string]string, reads []string, predClass string) string {
	pfx := "transforms." + s.alias + "."
	for _, n := range natives {
		if n.pos < s.pos {
			continue
		}
		if n.envelope {
			hint := ""
			if n.class == unwrapSMT && (s.class == filterSMT || s.class == routerSMT) {
				hint = "; in the expression, value.after.<field> becomes value.<field>, value.op needs add.fields=op on " + n.alias + " and becomes value.__op, and a delete is what delete.tombstone.handling.mode makes it (to drop deletes: delete.tombstone.handling.mode=drop or skipped.operations=d instead of a Filter)"
			}
			what := "the flattened record"
			if n.class == outboxSMT {
				what = "the outbox event (its key, topic and payload)"
			}
			return fmt.Sprintf("%s comes before %s (%s) in the connector's transforms, but mooncdc applies its envelope (format.envelope) before the transforms chain, so %s would work on %s instead of Debezium's change envelope: move %s after %s and write it for that record%s",
				s.alias, n.alias, shortClass(n.class), s.alias, what, s.alias, n.alias, hint)
		}
		readsTopic := slices.Contains(reads, "topic") || keys[pfx+"topic.regex"] != "" || predClass == topicNameP ||
			strings.HasPrefix(s.class, insertField) && strings.TrimSpace(keys[pfx+"topic.field"]) != ""
		why := ""
		switch {
		case s.class == routerSMT:
			why = "it sets the topic, which " + n.alias + " then renames in Debezium"
		case readsTopic:
			why = "it reads the topic (its expression, topic.regex, topic.field or a TopicNameMatches predicate), which " + n.alias + " renames"
		case n.class == logicalTableSMT && s.class != filterSMT:
			why = n.alias + " (ByLogicalTableRouter) also rewrites the key and the value's schema names, which " + s.alias + " would see rewritten"
		case n.class == logicalTableSMT && slices.Contains(reads, "key"):
			why = "its condition reads the key, which " + n.alias + " (ByLogicalTableRouter) rewrites"
		}
		if why != "" {
			return fmt.Sprintf("%s comes before %s (%s) in the connector's transforms, but mooncdc applies its routes (kafka.routes) before the transforms chain, and %s: move %s after %s and write it for the routed record",
				s.alias, n.alias, shortClass(n.class), why, s.alias, n.alias)
		}
	}
	return ""
}

// shortClass is a class name without its package.
func shortClass(c string) string { return c[strings.LastIndexByte(c, '.')+1:] }
