package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/mooncdc/mooncdc/connector"
)

const chainBase = "connector.class=io.debezium.connector.postgresql.PostgresConnector\ndatabase.hostname=h\ntopic.prefix=p\nplugin.name=pgoutput\n" +
	"key.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\n"

// allKeys accepts every key: the transforms key is the chain's own
// (connector/config's, merged from the smt30 branch), so the output is
// checked here as the loader will read it.
func allKeys(string) bool { return true }

// chainOf converts props and returns the output's transforms mapping and
// the findings.
func chainOf(t *testing.T, props string) (map[string]string, []finding) {
	t.Helper()
	p, err := parseProperties(chainBase + props)
	if err != nil {
		t.Fatal(err)
	}
	res, err := importDebezium(p, importOptions{Brokers: []string{"k:9092"}}, allKeys)
	if err != nil {
		t.Fatal(err)
	}
	out, err := res.Tree.encode("")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Transforms map[string]string `yaml:"transforms"`
	}
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Transforms != nil {
		// What `mooncdc run` will parse.
		if err := connector.ValidateTransforms(doc.Transforms); err != nil {
			t.Fatalf("the output's transforms do not parse: %v\n%s", err, out)
		}
	}
	return doc.Transforms, res.Findings
}

// TestImportDebeziumMapsTheTransformChain: the generic transforms go to
// transforms verbatim, in chain order, after the envelope and routes are
// taken out, with the predicates they use and no other; a Groovy
// condition is in CEL.
func TestImportDebeziumMapsTheTransformChain(t *testing.T) {
	got, findings := chainOf(t, `transforms=unwrap,route,dropEU,addRegion,key,ts,hdr,cast,router
transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
transforms.route.regex=p\\.public\\.(.*)
transforms.route.replacement=shop.$1
transforms.dropEU.type=io.debezium.transforms.Filter
transforms.dropEU.language=jsr223.groovy
transforms.dropEU.condition=value.region != 'EU'
transforms.dropEU.null.handling.mode=drop
transforms.addRegion.type=org.apache.kafka.connect.transforms.InsertField$Value
transforms.addRegion.static.field=dc
transforms.addRegion.static.value=eu-west-1
transforms.addRegion.predicate=isTombstone
transforms.addRegion.negate=true
transforms.key.type=org.apache.kafka.connect.transforms.ValueToKey
transforms.key.fields=id
transforms.ts.type=org.apache.kafka.connect.transforms.TimestampConverter$Value
transforms.ts.field=created_at
transforms.ts.target.type=string
transforms.ts.format=yyyy-MM-dd
transforms.hdr.type=org.apache.kafka.connect.transforms.HeaderFrom$Value
transforms.hdr.fields=id
transforms.hdr.headers=row_id
transforms.hdr.operation=copy
transforms.cast.type=org.apache.kafka.connect.transforms.Cast$Value
transforms.cast.spec=id:string
transforms.cast.predicate=onOrders
transforms.router.type=io.debezium.transforms.ContentBasedRouter
transforms.router.language=jsr223.graal.js
transforms.router.topic.expression=value.dc == 'eu-west-1' ? 'eu.' + topic : null
predicates=isTombstone,unused,onOrders
predicates.isTombstone.type=org.apache.kafka.connect.transforms.predicates.RecordIsTombstone
predicates.unused.type=org.apache.kafka.connect.transforms.predicates.HasHeaderKey
predicates.unused.name=x
predicates.onOrders.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
predicates.onOrders.pattern=shop\\.orders
`)
	want := map[string]string{
		"transforms":                           "dropEU,addRegion,key,ts,hdr,cast,router",
		"transforms.dropEU.type":               "io.debezium.transforms.Filter",
		"transforms.dropEU.language":           "cel",
		"transforms.dropEU.condition":          `value.region != "EU"`,
		"transforms.dropEU.null.handling.mode": "drop",
		"transforms.addRegion.type":            "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.addRegion.static.field":    "dc",
		"transforms.addRegion.static.value":    "eu-west-1",
		"transforms.addRegion.predicate":       "isTombstone",
		"transforms.addRegion.negate":          "true",
		"transforms.key.type":                  "org.apache.kafka.connect.transforms.ValueToKey",
		"transforms.key.fields":                "id",
		"transforms.ts.type":                   "org.apache.kafka.connect.transforms.TimestampConverter$Value",
		"transforms.ts.field":                  "created_at",
		"transforms.ts.target.type":            "string",
		"transforms.ts.format":                 "yyyy-MM-dd",
		"transforms.hdr.type":                  "org.apache.kafka.connect.transforms.HeaderFrom$Value",
		"transforms.hdr.fields":                "id",
		"transforms.hdr.headers":               "row_id",
		"transforms.hdr.operation":             "copy",
		"transforms.cast.type":                 "org.apache.kafka.connect.transforms.Cast$Value",
		"transforms.cast.spec":                 "id:string",
		"transforms.cast.predicate":            "onOrders",
		"transforms.router.type":               "io.debezium.transforms.ContentBasedRouter",
		"transforms.router.language":           "cel",
		"transforms.router.topic.expression":   `value.dc == "eu-west-1" ? "eu." + topic : dyn(null)`,
		"predicates":                           "isTombstone,onOrders",
		"predicates.isTombstone.type":          "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
		"predicates.onOrders.type":             "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.onOrders.pattern":          `shop\.orders`,
	}
	if !reflect.DeepEqual(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s = %q, not wanted", k, got[k])
			}
		}
	}
	for _, f := range findings {
		if !f.Mapped && strings.HasPrefix(f.Property, "transforms.") || strings.HasPrefix(f.Property, "predicates.") && !strings.HasPrefix(f.Property, "predicates.unused.") {
			t.Errorf("finding %+v", f)
		}
	}
	if f, ok := findingFor(findings, "transforms.dropEU.condition"); !ok || !f.Mapped || !strings.Contains(f.Reason, "translated from jsr223.groovy to CEL") {
		t.Errorf("the translation is not said: %+v", f)
	}
	if f, ok := findingFor(findings, "predicates.unused.type"); !ok || !strings.Contains(f.Reason, "not carried") {
		t.Errorf("the unused predicate: %+v", f)
	}
}

// TestImportDebeziumMapsTheChainInOrder: the keys come out in chain
// order (a YAML mapping keeps its order; the chain's order is the
// transforms list's anyway).
func TestImportDebeziumMapsTheChainInOrder(t *testing.T) {
	p, err := parseProperties(chainBase + `transforms=b,a
transforms.b.type=org.apache.kafka.connect.transforms.ValueToKey
transforms.b.fields=id
transforms.a.type=org.apache.kafka.connect.transforms.ReplaceField$Value
transforms.a.exclude=secret
`)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := convertDebezium(p, importOptions{Brokers: []string{"k:9092"}}, allKeys)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	want := []string{"transforms:", "transforms: b,a", "transforms.b.type:", "transforms.b.fields: id", "transforms.a.type:", "transforms.a.exclude: secret"}
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q not after offset %d in\n%s", w, at, s)
		}
		at += i + len(w)
	}
}

// TestImportDebeziumRefusesWhatTheChainCannotKeep: a transform mooncdc
// lacks, a predicate it lacks, an option its transforms refuse, a
// condition with no mechanical CEL form, and an order mooncdc cannot keep
// are each refused on the key, with the reason and the fix; the rest of
// the chain is still mapped.
func TestImportDebeziumRefusesWhatTheChainCannotKeep(t *testing.T) {
	const unwrap = "transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState\n"
	const regex = "transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter\ntransforms.route.regex=p\\\\.(.*)\ntransforms.route.replacement=x.$1\n"
	const bltr = "transforms.route.type=io.debezium.transforms.ByLogicalTableRouter\ntransforms.route.topic.regex=p\\\\.(.*)\ntransforms.route.topic.replacement=x\n"
	const keep = "transforms.keep.type=org.apache.kafka.connect.transforms.ReplaceField$Value\ntransforms.keep.exclude=secret\n"
	for _, c := range []struct {
		name, props string
		key, reason string // the refused key and what its reason says; "" when nothing is refused
		chain       string // the transforms list that comes out
	}{
		{"a Filter on value.op before ExtractNewRecordState",
			"transforms=f,unwrap,keep\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.language=jsr223.groovy\ntransforms.f.condition=value.op != 'd'\n" + unwrap + keep,
			"transforms.f.type", "move f after unwrap and write it for that record; in the expression, value.after.<field> becomes value.<field>, value.op needs add.fields=op on unwrap and becomes value.__op", "keep"},
		{"Cast before EventRouter",
			"transforms=c,outbox\ntransforms.c.type=org.apache.kafka.connect.transforms.Cast$Value\ntransforms.c.spec=id:string\ntransforms.outbox.type=io.debezium.transforms.outbox.EventRouter\n",
			"transforms.c.type", "would work on the outbox event", ""},
		{"ContentBasedRouter before RegexRouter",
			"transforms=r,route\ntransforms.r.type=io.debezium.transforms.ContentBasedRouter\ntransforms.r.language=jsr223.groovy\ntransforms.r.topic.expression='x'\n" + regex,
			"transforms.r.type", "it sets the topic, which route then renames", ""},
		{"a Filter reading the topic before RegexRouter",
			"transforms=f,route\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.language=jsr223.graal.js\ntransforms.f.condition=topic == 'p.a'\n" + regex,
			"transforms.f.type", "it reads the topic", ""},
		{"a TopicNameMatches predicate before RegexRouter",
			"transforms=keep,route\n" + keep + "transforms.keep.predicate=t\npredicates=t\npredicates.t.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches\npredicates.t.pattern=p.*\n" + regex,
			"transforms.keep.type", "it reads the topic", ""},
		{"InsertField before ByLogicalTableRouter",
			"transforms=i,route\ntransforms.i.type=org.apache.kafka.connect.transforms.InsertField$Value\ntransforms.i.static.field=a\ntransforms.i.static.value=b\n" + bltr,
			"transforms.i.type", "also rewrites the key and the value's schema names", ""},
		{"a Filter reading the key before ByLogicalTableRouter",
			"transforms=f,route\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.language=jsr223.groovy\ntransforms.f.condition=key.id > 2\n" + bltr,
			"transforms.f.type", "its condition reads the key", ""},
		{"a Filter on the value before ByLogicalTableRouter is kept",
			"transforms=f,route\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.language=jsr223.groovy\ntransforms.f.condition=value.op != 'd'\n" + bltr,
			"", "", "f"},
		{"ReplaceField before RegexRouter is kept",
			"transforms=keep,route\n" + keep + regex, "", "", "keep"},
		{"Kafka's Filter, which mooncdc lacks",
			"transforms=f,keep\ntransforms.f.type=org.apache.kafka.connect.transforms.Filter\n" + keep,
			"transforms.f.type", `"org.apache.kafka.connect.transforms.Filter" has no mooncdc equivalent`, "keep"},
		{"a predicate class mooncdc lacks",
			"transforms=keep\n" + keep + "transforms.keep.predicate=p\npredicates=p\npredicates.p.type=com.acme.IsAudit\n",
			"transforms.keep.predicate", `"com.acme.IsAudit", which mooncdc does not have`, ""},
		{"an option the transform refuses",
			"transforms=i\ntransforms.i.type=org.apache.kafka.connect.transforms.InsertField$Value\ntransforms.i.offset.field=off\n",
			"transforms.i.type", "transforms.i.offset.field: only sink connectors' records have a Kafka offset", ""},
		{"a week-based date format",
			"transforms=ts\ntransforms.ts.type=org.apache.kafka.connect.transforms.TimestampConverter$Value\ntransforms.ts.target.type=string\ntransforms.ts.format=YYYY-ww\n",
			"transforms.ts.type", "transforms.ts.format", ""},
		{"a Groovy condition with no mechanical translation",
			"transforms=f,keep\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.language=jsr223.groovy\ntransforms.f.condition=value.after?.flag\n" + keep,
			"transforms.f.condition", "not translated to CEL", "keep"},
		{"a WebAssembly filter",
			"transforms=f\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.language=wasm.chicory\ntransforms.f.condition=file://filter.wasm\n",
			"transforms.f.condition", `language "wasm.chicory": the translation reads jsr223.groovy and jsr223.graal.js`, ""},
		{"an alias without a type",
			"transforms=x,keep\n" + keep, "transforms.x.type", "missing: Kafka Connect refuses", "keep"},
		{"a Filter without language",
			"transforms=f\ntransforms.f.type=io.debezium.transforms.Filter\ntransforms.f.condition=value.op == 'd'\n",
			"transforms.f.language", "Debezium requires it", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, findings := chainOf(t, c.props)
			if got["transforms"] != c.chain {
				t.Errorf("transforms = %q, want %q (%v)", got["transforms"], c.chain, got)
			}
			if c.key == "" {
				for _, f := range findings {
					if !f.Mapped {
						t.Errorf("finding %+v", f)
					}
				}
				return
			}
			f, ok := findingFor(findings, c.key)
			if !ok || f.Mapped || !strings.Contains(f.Reason, c.reason) {
				t.Errorf("%s: %+v, want it refused with %q\nall: %+v", c.key, f, c.reason, findings)
			}
		})
	}
}

// TestDocsTransformsExampleParses: the example chain of docs/transforms.md
// is one the transforms chain accepts.
func TestDocsTransformsExampleParses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsRoot, "docs", "transforms.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "```yaml\n")
	end := strings.Index(text[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("docs/transforms.md has no ```yaml example")
	}
	var doc struct {
		Transforms map[string]string `yaml:"transforms"`
	}
	if err := yaml.Unmarshal([]byte(text[start+8:start+8+end]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Transforms) == 0 {
		t.Fatal("the example has no transforms")
	}
	if err := connector.ValidateTransforms(doc.Transforms); err != nil {
		t.Errorf("the example chain of docs/transforms.md: %v", err)
	}
}
