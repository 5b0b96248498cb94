package transform

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// This file parses Kafka Connect's transform keys into a Chain:
//
//	transforms=a,b
//	transforms.a.type=org.apache.kafka.connect.transforms.InsertField$Value
//	transforms.a.static.field=region
//	transforms.a.predicate=p
//	transforms.a.negate=true
//	predicates=p
//	predicates.p.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
//
// as ConnectorConfig reads them
// (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/ConnectorConfig.java).
// Every error names the key. Unlike Kafka, a key no transform reads is an
// error (a typo must not pass silently).

// ConfigError is a transform key with a bad value (or a missing one).
type ConfigError struct {
	Key string
	Msg string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Msg }

// The transform and predicate types, by the class names a Kafka Connect
// configuration uses.
const (
	kt = "org.apache.kafka.connect.transforms."
	dt = "io.debezium.transforms."
)

var transformTypes = map[string]func(o *opts) (Transform, error){
	kt + "InsertField$Key":          func(o *opts) (Transform, error) { return newInsertField(o, partKey) },
	kt + "InsertField$Value":        func(o *opts) (Transform, error) { return newInsertField(o, partValue) },
	kt + "ReplaceField$Key":         func(o *opts) (Transform, error) { return newReplaceField(o, partKey) },
	kt + "ReplaceField$Value":       func(o *opts) (Transform, error) { return newReplaceField(o, partValue) },
	kt + "TimestampConverter$Key":   func(o *opts) (Transform, error) { return newTimestampConverter(o, partKey) },
	kt + "TimestampConverter$Value": func(o *opts) (Transform, error) { return newTimestampConverter(o, partValue) },
	kt + "HeaderFrom$Key":           func(o *opts) (Transform, error) { return newHeaderFrom(o, partKey) },
	kt + "HeaderFrom$Value":         func(o *opts) (Transform, error) { return newHeaderFrom(o, partValue) },
	kt + "ValueToKey":               newValueToKey,
	kt + "Cast$Key":                 func(o *opts) (Transform, error) { return newCast(o, partKey) },
	kt + "Cast$Value":               func(o *opts) (Transform, error) { return newCast(o, partValue) },
	dt + "Filter":                   newFilter,
	dt + "ContentBasedRouter":       newRouter,
}

var predicateTypes = map[string]func(o *opts) (Predicate, error){
	kt + "predicates.TopicNameMatches": func(o *opts) (Predicate, error) {
		pattern, ok := o.kstr("pattern")
		if !ok {
			return nil, o.fail("pattern", `Missing required configuration "pattern" which has no default value: a regular expression the whole topic must match`)
		}
		if pattern == "" {
			// ConfigDef.NonEmptyString's message (TopicNameMatchesTest.java:50).
			return nil, o.fail("pattern", "String must be non-empty")
		}
		p, err := NewTopicNameMatches(pattern)
		if err != nil {
			// RegexValidator's message (TopicNameMatchesTest.java:58, 69).
			return nil, o.fail("pattern", "Invalid regex: "+err.Error())
		}
		return p, nil
	},
	kt + "predicates.RecordIsTombstone": func(*opts) (Predicate, error) { return RecordIsTombstone{}, nil },
	kt + "predicates.HasHeaderKey": func(o *opts) (Predicate, error) {
		name, ok := o.kstr("name")
		switch {
		case !ok:
			return nil, o.fail("name", `Missing required configuration "name" which has no default value: the header name`)
		case name == "":
			return nil, o.fail("name", "String must be non-empty")
		}
		return HasHeaderKey{Name: name}, nil
	},
}

// Types returns the transform types Parse knows, sorted.
func Types() []string {
	var out []string
	for k := range transformTypes {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// opts reads one transform's (or predicate's) keys, remembering which
// it read so that the rest can be refused.
type opts struct {
	prefix string // "transforms.a."
	props  map[string]string
	used   map[string]bool
	errs   []error
}

func (o *opts) fail(key, msg string) error {
	return &ConfigError{Key: o.prefix + key, Msg: msg}
}

func (o *opts) raw(key string) (string, bool) {
	o.used[o.prefix+key] = true
	v, ok := o.props[o.prefix+key]
	return v, ok
}

// kstr is a Kafka ConfigDef STRING (or CLASS) key: trimmed, as
// ConfigDef.parseType trims it (clients/src/main/java/org/apache/kafka/common/config/ConfigDef.java:694-696, 718-720)
// with String.trim (every char up to ' '). Debezium's keys are read as
// given (raw).
func (o *opts) kstr(key string) (string, bool) {
	v, ok := o.raw(key)
	return javaTrim(v), ok
}

func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// str is a Kafka STRING key with a default ("" when none).
func (o *opts) str(key, def string) string {
	if v, ok := o.kstr(key); ok {
		return v
	}
	return def
}

// list is a LIST key: comma-separated, each item trimmed, empty → none
// (ConfigDef.parseType for LIST).
func (o *opts) list(key string) []string {
	v, _ := o.raw(key)
	return splitList(v)
}

func splitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// boolean is a BOOLEAN key: true or false, any case.
func (o *opts) boolean(key string, def bool) bool {
	v, ok := o.raw(key)
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true
	case "false":
		return false
	}
	o.errs = append(o.errs, o.fail(key, fmt.Sprintf("expected true or false, not %q", v)))
	return def
}

// oneOf is a STRING key limited to values (ConfigDef.ValidString).
func (o *opts) oneOf(key, def string, values ...string) string {
	v := o.str(key, def)
	if !slices.Contains(values, v) {
		o.errs = append(o.errs, o.fail(key, fmt.Sprintf("%q is not one of %s", v, strings.Join(values, ", "))))
	}
	return v
}

// Parse builds the chain that props configure (keys as in a Kafka Connect
// connector config; other keys are ignored). A chain of no transforms is
// the zero Chain. Every error is a *ConfigError naming its key; all of
// them are returned, joined.
func Parse(props map[string]string) (*Chain, error) {
	var errs []error
	used := map[string]bool{"transforms": true, "predicates": true}
	aliases := splitList(props["transforms"])
	predAliases := splitList(props["predicates"])
	for _, list := range []struct {
		key     string
		aliases []string
	}{{"transforms", aliases}, {"predicates", predAliases}} {
		seen := map[string]bool{}
		for _, a := range list.aliases {
			if a == "" {
				errs = append(errs, &ConfigError{list.key, "an empty alias"})
			} else if seen[a] {
				errs = append(errs, &ConfigError{list.key, fmt.Sprintf("duplicate alias provided: %q", a)})
			}
			seen[a] = true
		}
	}
	preds := map[string]Predicate{}
	for _, p := range predAliases {
		o := &opts{prefix: "predicates." + p + ".", props: props, used: used}
		typ, ok := o.kstr("type")
		mk := predicateTypes[typ]
		switch {
		case !ok:
			errs = append(errs, o.fail("type", "missing: the predicate's class"))
			continue
		case mk == nil:
			errs = append(errs, o.fail("type", fmt.Sprintf("unknown predicate type %q (supported: TopicNameMatches, RecordIsTombstone, HasHeaderKey of %spredicates)", typ, kt)))
			continue
		}
		pred, err := mk(o)
		errs = append(errs, o.errs...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		preds[p] = pred
	}
	chain := &Chain{}
	for _, a := range aliases {
		o := &opts{prefix: "transforms." + a + ".", props: props, used: used}
		typ, ok := o.kstr("type")
		mk := transformTypes[typ]
		switch {
		case !ok:
			errs = append(errs, o.fail("type", "missing: the transform's class"))
			continue
		case mk == nil:
			errs = append(errs, o.fail("type", fmt.Sprintf("unknown transform type %q (supported: %s)", typ, strings.Join(Types(), ", "))))
			continue
		}
		st := Stage{Alias: a, Type: typ}
		st.PredAlias, _ = o.kstr("predicate")
		_, hasNegate := o.props[o.prefix+"negate"]
		st.Negate = o.boolean("negate", false)
		switch {
		case st.PredAlias == "" && hasNegate:
			// ConnectorConfig.java:384-389.
			errs = append(errs, o.fail("negate", "was provided but there is no config '"+o.prefix+"predicate' defining a predicate to be negated"))
		case st.PredAlias != "":
			if st.Predicate = preds[st.PredAlias]; st.Predicate == nil && !slices.Contains(predAliases, st.PredAlias) {
				errs = append(errs, o.fail("predicate", fmt.Sprintf("%q is not an alias listed in 'predicates'", st.PredAlias)))
			}
		}
		t, err := mk(o)
		errs = append(errs, o.errs...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		st.Transform = t
		chain.Stages = append(chain.Stages, st)
	}
	var unknown []string
	for k := range props {
		if (strings.HasPrefix(k, "transforms.") || strings.HasPrefix(k, "predicates.")) && !used[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		errs = append(errs, &ConfigError{k, "unknown key: no configured transform or predicate reads it (a typo, or an alias missing from 'transforms' / 'predicates'?)"})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return chain, nil
}

func newInsertField(o *opts, p part) (Transform, error) {
	// A key given empty (or just "?" / "!") is a field named "" to Kafka
	// (InsertionSpec.parse, InsertField.java:91-100), which
	// SchemaBuilder.field refuses at every record: refused here, once.
	var errs []error
	spec := func(key string) *insertion {
		v, ok := o.kstr(key)
		in := parseInsertion(v)
		if ok && (in == nil || in.name == "") {
			errs = append(errs, o.fail(key, "an empty field name (remove the key, or name the field)"))
		}
		return in
	}
	t := &InsertField{part: p,
		topic:       spec("topic.field"),
		partition:   spec("partition.field"),
		timestamp:   spec("timestamp.field"),
		static:      spec("static.field"),
		replaceNull: o.boolean("replace.null.with.default", true),
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	staticValue, hasStatic := o.kstr("static.value")
	t.staticValue = staticValue
	if off, ok := o.kstr("offset.field"); ok && off != "" {
		// Requirements.requireSinkRecord (InsertField.java:162-164): a
		// source connector's records have no offset.
		return nil, o.fail("offset.field", "only sink connectors' records have a Kafka offset; mooncdc is a source")
	}
	if t.topic == nil && t.partition == nil && t.timestamp == nil && t.static == nil {
		return nil, o.fail("type", "no field insertion configured (set topic.field, partition.field, timestamp.field or static.field)") // InsertField.java:129-131
	}
	if t.static != nil && !hasStatic {
		return nil, o.fail("static.value", "no value specified for static field: "+t.static.name) // InsertField.java:133-135
	}
	return t, nil
}

func newReplaceField(o *opts, p part) (Transform, error) {
	t := &ReplaceField{part: p, exclude: o.list("exclude"), include: o.list("include"), replaceNull: o.boolean("replace.null.with.default", true)}
	renames, err := parseRenames(o.list("renames"))
	if err != nil {
		return nil, o.fail("renames", err.Error())
	}
	t.renames, t.reverse = renames, map[string]string{}
	for k, v := range renames {
		t.reverse[v] = k
	}
	return t, nil
}

func newTimestampConverter(o *opts, p part) (Transform, error) {
	t := &TimestampConverter{part: p, field: o.str("field", ""), now: time.Now,
		replaceNull: o.boolean("replace.null.with.default", true)}
	if _, ok := o.props[o.prefix+"target.type"]; !ok {
		return nil, o.fail("target.type", "missing: one of string, unix, Date, Time, Timestamp")
	}
	t.target = o.oneOf("target.type", "", tsString, tsUnix, tsDate, tsTime, tsTimestamp)
	t.precision = o.oneOf("unix.precision", "milliseconds", "nanoseconds", "microseconds", "milliseconds", "seconds")
	pattern := o.str("format", "")
	if strings.TrimSpace(pattern) == "" {
		if t.target == tsString {
			return nil, o.fail("format", "TimestampConverter requires format option to be specified when using string timestamps") // TimestampConverter.java:307-309
		}
		return t, nil
	}
	df, err := parseDateFormat(pattern)
	if err != nil {
		return nil, o.fail("format", err.Error())
	}
	t.format = df
	return t, nil
}

func newHeaderFrom(o *opts, p part) (Transform, error) {
	t := &HeaderFrom{part: p, fields: o.list("fields"), headers: o.list("headers"), replaceNull: o.boolean("replace.null.with.default", true)}
	op, ok := o.kstr("operation")
	switch {
	case !ok:
		return nil, o.fail("operation", "missing: move or copy")
	case op == "move":
		t.move = true
	case op != "copy":
		return nil, o.fail("operation", fmt.Sprintf("%q is not one of move, copy", op))
	}
	if len(t.fields) == 0 {
		return nil, o.fail("fields", "empty list is not supported") // NonEmptyListValidator
	}
	if len(t.headers) == 0 {
		return nil, o.fail("headers", "empty list is not supported")
	}
	if len(t.fields) != len(t.headers) {
		return nil, o.fail("headers", "'fields' config must have the same number of elements as 'headers' config") // HeaderFrom.java:250-253
	}
	return t, nil
}

func newValueToKey(o *opts) (Transform, error) {
	t := &ValueToKey{fields: o.list("fields"), replaceNull: o.boolean("replace.null.with.default", true)}
	if len(t.fields) == 0 {
		return nil, o.fail("fields", "empty list is not supported")
	}
	return t, nil
}

func newCast(o *opts, p part) (Transform, error) {
	t := &Cast{part: p, replaceNull: o.boolean("replace.null.with.default", true)}
	if err := parseCastSpec(t, o.list("spec")); err != nil {
		return nil, o.fail("spec", err.Error())
	}
	return t, nil
}

// scriptingOpts reads ScriptingTransformation's keys (ScriptingTransformation.java:104-129, 135-189).
func scriptingOpts(o *opts) (scripting, error) {
	var s scripting
	lang, ok := o.raw("language")
	if ok && lang != "cel" {
		return s, o.fail("language", fmt.Sprintf("%q: mooncdc evaluates CEL expressions only (language: cel); rewrite the expression in CEL", lang))
	}
	s.nulls = nullHandling(strings.ToLower(strings.TrimSpace(o.str("null.handling.mode", string(nullKeep)))))
	if !slices.Contains([]nullHandling{nullKeep, nullDrop, nullEvaluate}, s.nulls) {
		return s, o.fail("null.handling.mode", fmt.Sprintf("%q is not one of keep, drop, evaluate", s.nulls))
	}
	if re, _ := o.raw("topic.regex"); re != "" {
		c, err := regexp.Compile(`^(?:` + re + `)$`)
		if err != nil {
			return s, o.fail("topic.regex", "not a regular expression (RE2 syntax): "+err.Error())
		}
		s.topic = c
	}
	return s, nil
}

func newFilter(o *opts) (Transform, error) {
	s, err := scriptingOpts(o)
	if err != nil {
		return nil, err
	}
	src, ok := o.raw("condition")
	if !ok || strings.TrimSpace(src) == "" {
		return nil, o.fail("condition", "missing: a boolean CEL expression, true to keep the record")
	}
	c, err := CompileCondition(src)
	if err != nil {
		return nil, o.fail("condition", err.Error())
	}
	return &Filter{scripting: s, cond: c}, nil
}

func newRouter(o *opts) (Transform, error) {
	s, err := scriptingOpts(o)
	if err != nil {
		return nil, err
	}
	src, ok := o.raw("topic.expression")
	if !ok || strings.TrimSpace(src) == "" {
		return nil, o.fail("topic.expression", "missing: a CEL expression giving the topic, or null to keep it")
	}
	e, err := CompileTopicExpression(src)
	if err != nil {
		return nil, o.fail("topic.expression", err.Error())
	}
	return &ContentBasedRouter{scripting: s, expr: e}, nil
}
