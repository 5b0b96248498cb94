package transform

import (
	"errors"
	"strings"
	"testing"

	"github.com/mooncdc/mooncdc/schema"
)

const (
	topicNameMatchesTest = "predicates/TopicNameMatchesTest.java"
	hasHeaderKeyTest     = "predicates/HasHeaderKeyTest.java"
)

func predicate(t *testing.T, typ string, kv ...string) (Predicate, error) {
	t.Helper()
	props := map[string]string{"predicates": "p", "predicates.p.type": kt + "predicates." + typ}
	for i := 0; i+1 < len(kv); i += 2 {
		props["predicates.p."+kv[i]] = kv[i+1]
	}
	// A transform using it, so that nothing is left unread.
	props["transforms"] = "t"
	props["transforms.t.type"] = kt + "ValueToKey"
	props["transforms.t.fields"] = "a"
	props["transforms.t.predicate"] = "p"
	c, err := Parse(props)
	if err != nil {
		return nil, err
	}
	return c.Stages[0].Predicate, nil
}

func TestPredicatesAsKafka(t *testing.T) {
	t.Run(topicNameMatchesTest+":39 testPatternRequiredInConfig", func(t *testing.T) {
		_, err := predicate(t, "TopicNameMatches")
		mustContain(t, err, "predicates.p.pattern: ", `Missing required configuration "pattern"`)
	})
	t.Run(topicNameMatchesTest+":46 testPatternMayNotBeEmptyInConfig", func(t *testing.T) {
		_, err := predicate(t, "TopicNameMatches", "pattern", "")
		mustContain(t, err, "predicates.p.pattern: ", "String must be non-empty")
	})
	t.Run(topicNameMatchesTest+":54 testPatternIsValidRegexInConfig and :62 testConfig", func(t *testing.T) {
		for _, bad := range []string{"[", "*"} {
			_, err := predicate(t, "TopicNameMatches", "pattern", bad)
			mustContain(t, err, "predicates.p.pattern: ", "Invalid regex")
		}
	})
	t.Run(topicNameMatchesTest+":73 testTest", func(t *testing.T) {
		p, err := predicate(t, "TopicNameMatches", "pattern", "my-prefix-.*")
		if err != nil {
			t.Fatal(err)
		}
		for topic, want := range map[string]bool{"my-prefix-": true, "my-prefix-foo": true, "x-my-prefix-": false,
			"x-my-prefix-foo": false, "your-prefix-": false, "your-prefix-foo": false, "": false} {
			eq(t, "test "+topic, p.Test(&Record{Topic: topic}), want)
		}
	})
	t.Run(hasHeaderKeyTest+":44 testNameRequiredInConfig", func(t *testing.T) {
		_, err := predicate(t, "HasHeaderKey")
		mustContain(t, err, "predicates.p.name: ", `Missing required configuration "name"`)
	})
	t.Run(hasHeaderKeyTest+":51 testNameMayNotBeEmptyInConfig", func(t *testing.T) {
		_, err := predicate(t, "HasHeaderKey", "name", "")
		mustContain(t, err, "predicates.p.name: String must be non-empty")
	})
	t.Run(hasHeaderKeyTest+":68 testTest", func(t *testing.T) {
		p, err := predicate(t, "HasHeaderKey", "name", "foo")
		if err != nil {
			t.Fatal(err)
		}
		hs := func(keys ...string) *Record {
			r := &Record{}
			for _, k := range keys {
				r.Headers = append(r.Headers, Header{Key: k})
			}
			return r
		}
		eq(t, "foo", p.Test(hs("foo")), true)
		eq(t, "foo bar", p.Test(hs("foo", "bar")), true)
		eq(t, "bar foo bar foo", p.Test(hs("bar", "foo", "bar", "foo")), true)
		eq(t, "bar", p.Test(hs("bar")), false)
		eq(t, "bar bar", p.Test(hs("bar", "bar")), false)
		eq(t, "none", p.Test(hs()), false)
	})
	t.Run("RecordIsTombstone.java:46-48", func(t *testing.T) {
		p, err := predicate(t, "RecordIsTombstone")
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "null value", p.Test(&Record{Key: "k"}), true)
		eq(t, "a value", p.Test(&Record{Value: "v"}), false)
	})
}

// TestChainAppliesStagesInOrderWithPredicates: stages run in the
// configured order; a stage with a predicate runs when the predicate
// (XOR negate) holds (TransformationStage.java:55-60); a dropped record
// stops the chain; a failing stage is an *Error with its alias and type.
func TestChainAppliesStagesInOrderWithPredicates(t *testing.T) {
	props := map[string]string{
		"transforms":                     "region,rename,key",
		"transforms.region.type":         kt + "InsertField$Value",
		"transforms.region.static.field": "region",
		"transforms.region.static.value": "EU",
		// Renames the field the first stage inserted: only works in order.
		"transforms.rename.type":    kt + "ReplaceField$Value",
		"transforms.rename.renames": "region:zone",
		"transforms.key.type":       kt + "ValueToKey",
		"transforms.key.fields":     "zone",
		"transforms.key.predicate":  "tomb",
		"transforms.key.negate":     "true",
		"predicates":                "tomb",
		"predicates.tomb.type":      kt + "predicates.RecordIsTombstone",
	}
	c, err := Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "aliases", []string{c.Stages[0].Alias, c.Stages[1].Alias, c.Stages[2].Alias}, []string{"region", "rename", "key"})
	s := structOf("id", sInt32)
	out, keep, err := c.Apply(Record{Topic: "t", ValueSchema: s, Value: newStruct(t, s, "id", int32(1))})
	if err != nil || !keep {
		t.Fatalf("apply: keep %v, %v", keep, err)
	}
	eq(t, "zone", get(t, out.Value, "zone"), "EU")
	eq(t, "key", get(t, out.Key, "zone"), "EU")
	// A tombstone: the negated predicate skips ValueToKey, which would fail on it.
	out, keep, err = c.Apply(Record{Topic: "t", Key: "k"})
	if err != nil || !keep {
		t.Fatalf("tombstone: keep %v, %v", keep, err)
	}
	eq(t, "tombstone key", out.Key, "k")
	// Without negate the stage runs on the tombstone only, and fails there.
	props["transforms.key.negate"] = "false"
	c, err = Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Apply(Record{Topic: "t", Key: "k"})
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not an *Error", err)
	}
	eq(t, "failed stage", []string{te.Alias, te.Type}, []string{"key", kt + "ValueToKey"})
	mustContain(t, err, `transform "key"`, "ValueToKey", "copying fields from value to key")
	// A Filter that drops stops the chain before the stages after it.
	c, err = Parse(map[string]string{
		"transforms":                "drop,fail",
		"transforms.drop.type":      dt + "Filter",
		"transforms.drop.language":  "cel",
		"transforms.drop.condition": "false",
		"transforms.fail.type":      kt + "ValueToKey",
		"transforms.fail.fields":    "nope",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, keep, err = c.Apply(Record{Topic: "t", ValueSchema: s, Value: newStruct(t, s, "id", int32(1))})
	if err != nil || keep {
		t.Fatalf("filter false: keep %v, err %v; want dropped, no error", keep, err)
	}
}

// TestParseNamesTheKey: configuration errors name the key and say the fix.
func TestParseNamesTheKey(t *testing.T) {
	for _, c := range []struct {
		name  string
		props map[string]string
		want  []string
	}{
		{"no type", map[string]string{"transforms": "a"}, []string{"transforms.a.type: missing"}},
		{"unknown type", map[string]string{"transforms": "a", "transforms.a.type": "com.example.Mine"}, []string{"transforms.a.type", `unknown transform type "com.example.Mine"`, kt + "Cast$Value"}},
		{"duplicate alias (ConnectorConfig.java:231-240)", map[string]string{"transforms": "a,a", "transforms.a.type": kt + "ValueToKey", "transforms.a.fields": "x"}, []string{"transforms: duplicate alias"}},
		{"negate without predicate (ConnectorConfig.java:384-389)", map[string]string{"transforms": "a", "transforms.a.type": kt + "ValueToKey", "transforms.a.fields": "x", "transforms.a.negate": "true"}, []string{"transforms.a.negate: was provided but there is no config 'transforms.a.predicate'"}},
		{"undeclared predicate", map[string]string{"transforms": "a", "transforms.a.type": kt + "ValueToKey", "transforms.a.fields": "x", "transforms.a.predicate": "p"}, []string{"transforms.a.predicate", "not an alias listed in 'predicates'"}},
		{"unknown key", map[string]string{"transforms": "a", "transforms.a.type": kt + "ValueToKey", "transforms.a.fields": "x", "transforms.a.feilds": "y"}, []string{"transforms.a.feilds: unknown key"}},
		{"key of an alias not listed", map[string]string{"transforms.b.type": kt + "ValueToKey"}, []string{"transforms.b.type: unknown key"}},
		{"bad boolean", map[string]string{"transforms": "a", "transforms.a.type": kt + "ValueToKey", "transforms.a.fields": "x", "transforms.a.replace.null.with.default": "yes"}, []string{"transforms.a.replace.null.with.default", "true or false"}},
		{"unknown predicate type", map[string]string{"predicates": "p", "predicates.p.type": "x.Y"}, []string{"predicates.p.type", `unknown predicate type "x.Y"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.props)
			mustContain(t, err, c.want...)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("%v holds no *ConfigError", err)
			}
		})
	}
	// No transforms: an empty chain that returns the record unchanged.
	c, err := Parse(map[string]string{"name": "x"})
	if err != nil || c.Len() != 0 {
		t.Fatalf("empty config: %v, %d stages", err, c.Len())
	}
	r := Record{Topic: "t", ValueSchema: &schema.Schema{Type: schema.TypeString}, Value: "v"}
	out, keep, err := c.Apply(r)
	if err != nil || !keep {
		t.Fatal(keep, err)
	}
	eq(t, "record", out, r)
	// All the errors at once, not only the first.
	_, err = Parse(map[string]string{"transforms": "a,b", "transforms.a.type": "x", "transforms.b.type": "y"})
	if n := strings.Count(err.Error(), "unknown transform type"); n != 2 {
		t.Errorf("%d errors reported, want 2: %v", n, err)
	}
}

// TestParseTrimsKafkaStrings: Kafka's ConfigDef trims every STRING and
// CLASS value before a transform sees it
// (clients/src/main/java/org/apache/kafka/common/config/ConfigDef.java:694-696, 718-720),
// so " EU " inserts "EU" and " move " is an operation; Debezium's own keys
// (Configuration.getString) are read as given.
func TestParseTrimsKafkaStrings(t *testing.T) {
	s := structOf("id", sInt32)
	tr := one(t, " "+kt+"InsertField$Value ", "static.field", " region ", "static.value", " EU ")
	out := apply(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "id", int32(1))})
	eq(t, "region", get(t, out.Value, "region"), "EU")

	tr = one(t, "TimestampConverter$Value", "target.type", " string ", "format", " yyyy-MM-dd ", "field", " ts ")
	ms := NewMap("ts", fromMillis(epochDay))
	eq(t, "ts", get(t, apply(t, tr, Record{Value: ms}).Value, "ts"), "1970-01-02")

	tr = one(t, "HeaderFrom$Value", "fields", "id", "headers", "h", "operation", " move ")
	out = apply(t, tr, Record{ValueSchema: s, Value: newStruct(t, s, "id", int32(1))})
	eq(t, "fields left", len(out.ValueSchema.Fields), 0)

	_, err := predicate(t, "HasHeaderKey", "name", "  ")
	mustContain(t, err, "predicates.p.name: String must be non-empty")

	// Debezium's topic.regex is not trimmed: " dum.*" matches no "dummy1".
	f, err := filter(t, "topic.regex", " dum.*", "condition", "false")
	if err != nil {
		t.Fatal(err)
	}
	mustKeep(t, f, dummyDelete(t, 1), true)
}
