package transform

import (
	"errors"
	"strings"
	"testing"
)

// The conditions here are Debezium's own, from its scripting tests and
// documentation at v3.6.1.Final: FilterTest.java and RouterTest.java under
// debezium-scripting/debezium-scripting/src/test/java/io/debezium/transforms/,
// filtering.adoc and content-based-routing.adoc under
// documentation/modules/ROOT/pages/transformations/. Each translation is
// run by the Filter or ContentBasedRouter that Parse builds from it, on
// the test's records (scripting_test.go mirrors TransformsUtils.java),
// and must give what the Debezium test asserts.

// outcome is what one record gives: kept or dropped (a condition), the
// topic (a topic expression), or an error.
type outcome struct {
	rec   func(t *testing.T) Record
	keep  bool
	topic string // a topic expression's result ("" for a condition)
	err   bool
}

func del(id int) func(t *testing.T) Record {
	return func(t *testing.T) Record { return dummyDelete(t, id) }
}

func null(*testing.T) Record { return nullRecord() }

func TestTranslateScriptAsDebezium(t *testing.T) {
	const filterDoc = "filtering.adoc"
	for _, c := range []struct {
		where     string
		lang      string
		src       string
		topicExpr bool
		nulls     string // null.handling.mode, keep when empty
		want      string // the CEL
		outcomes  []outcome
	}{
		{where: filterTest + ":83 shouldProcessCondition", lang: LangGroovy,
			src:  "value.op != 'd' || value.before.id != 2",
			want: `value.op != "d" || value.before.id != 2`,
			// :87-88: the delete of 2 is dropped, of 1 kept.
			outcomes: []outcome{{rec: del(2), keep: false}, {rec: del(1), keep: true}}},
		{where: filterTest + ":97 shouldProcessTopic", lang: LangGroovy,
			src: "topic == 'dummy1'", want: `topic == "dummy1"`,
			outcomes: []outcome{{rec: del(2), keep: false}, {rec: del(1), keep: true}}},
		{where: filterTest + ":111 shouldProcessHeader", lang: LangGroovy,
			src: "header.idh.value == 1", want: `headers.idh == 1`,
			outcomes: []outcome{{rec: del(2), keep: false}, {rec: del(1), keep: true}}},
		{where: filterTest + ":139 shouldKeepNulls", lang: LangGroovy,
			src: "value.op != 'd' || value.before.id != 2", want: `value.op != "d" || value.before.id != 2`,
			outcomes: []outcome{{rec: null, keep: true}}},
		{where: filterTest + ":151 shouldDropNulls", lang: LangGroovy, nulls: "drop",
			src: "value.op != 'd' || value.before.id != 2", want: `value.op != "d" || value.before.id != 2`,
			outcomes: []outcome{{rec: null, keep: false}}},
		{where: filterTest + ":165 shouldEvaluateNulls", lang: LangGroovy, nulls: "evaluate",
			src: "value.op != 'd' || value.before.id != 2", want: `value.op != "d" || value.before.id != 2`,
			// :162: DebeziumException (value is null).
			outcomes: []outcome{{rec: null, err: true}}},
		{where: filterTest + ":179 shouldRunJavaScript", lang: LangJS,
			src: "value.op != 'd' || value.before.id != 2", want: `value.op != "d" || value.before.id != 2`,
			outcomes: []outcome{{rec: del(2), keep: false}, {rec: del(1), keep: true}}},
		{where: filterTest + ":193 shouldRunJavaScriptWithHeaderAndTopic", lang: LangJS,
			src: "header.idh.value == 1 && topic.startsWith('dummy')", want: `headers.idh == 1 && topic.startsWith("dummy")`,
			outcomes: []outcome{{rec: del(2), keep: false}, {rec: del(1), keep: true}}},
		{where: routerTest + ":80 shouldRoute", lang: LangGroovy, topicExpr: true,
			src:  "value == null ? 'nulls' : (value.before.id == 1 ? 'ones' : null)",
			want: `value == null ? "nulls" : (value.before.id == 1 ? "ones" : dyn(null))`,
			// :83-84.
			outcomes: []outcome{{rec: del(1), keep: true, topic: "ones"}, {rec: del(2), keep: true, topic: "dummy2"}}},
		{where: routerTest + ":117 shouldKeepNulls", lang: LangGroovy, topicExpr: true,
			src:      "value == null ? 'nulls' : (value.before.id == 1 ? 'ones' : null)",
			want:     `value == null ? "nulls" : (value.before.id == 1 ? "ones" : dyn(null))`,
			outcomes: []outcome{{rec: null, keep: true, topic: "dummy"}}},
		{where: routerTest + ":142 shouldEvaluateNulls", lang: LangGroovy, topicExpr: true, nulls: "evaluate",
			src:      "value == null ? 'nulls' : (value.before.id == 1 ? 'ones' : null)",
			want:     `value == null ? "nulls" : (value.before.id == 1 ? "ones" : dyn(null))`,
			outcomes: []outcome{{rec: null, keep: true, topic: "nulls"}}},
		{where: filterDoc + ":181, :264 (Groovy)", lang: LangGroovy,
			src: "value.op == 'u' && value.before.id == 2", want: `value.op == "u" && value.before.id == 2`,
			outcomes: []outcome{{rec: del(2), keep: false}}},
		{where: filterDoc + ":297 (Graal.js)", lang: LangJS,
			src: "value.op == 'u' && value.before.id == 2", want: `value.op == "u" && value.before.id == 2`,
			outcomes: []outcome{{rec: del(2), keep: false}}},
		{where: "content-based-routing.adoc:116", lang: LangGroovy, topicExpr: true,
			src: "value.op == 'u' ? 'updates' : null", want: `value.op == "u" ? "updates" : dyn(null)`,
			outcomes: []outcome{{rec: del(1), keep: true, topic: "dummy1"}}},

		// The rest of what the translation reads, on the same records
		// (a delete of id, op "d", before.name "myRecord", header idh).
		// Groovy: `in` is List.isCase (contains); String.equals; Struct.get.
		{where: "Groovy in", lang: LangGroovy, src: "value.op in ['c', 'd']", want: `value.op in ["c", "d"]`,
			outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "Groovy contains on a list", lang: LangGroovy, src: "!['c', 'u'].contains(value.op)", want: `!(value.op in ["c", "u"])`,
			outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "JavaScript includes", lang: LangJS, src: "['c','u'].includes(value.op)", want: `value.op in ["c", "u"]`,
			outcomes: []outcome{{rec: del(1), keep: false}}},
		{where: "Groovy equals", lang: LangGroovy, src: "value.op.equals('d') && 'myRecord'.equals(value.before.name)",
			want: `value.op == "d" && "myRecord" == value.before.name`, outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "Groovy get", lang: LangGroovy, src: "value.get('before').get('id') > 1", want: `value.before.id > 1`,
			outcomes: []outcome{{rec: del(1), keep: false}, {rec: del(2), keep: true}}},
		{where: "JavaScript ===", lang: LangJS, src: "value.op === 'd' && !(value.before.id >= 2)", want: `value.op == "d" && !(value.before.id >= 2)`,
			outcomes: []outcome{{rec: del(1), keep: true}, {rec: del(2), keep: false}}},
		{where: "null comparison", lang: LangGroovy, src: "value.after == null && value.before != null", want: `value.after == null && value.before != null`,
			outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "a field of null fails as Groovy's NullPointerException does", lang: LangGroovy, src: "value.after.id == 1",
			want: `value.after.id == 1`, outcomes: []outcome{{rec: del(1), err: true}}},
		{where: "string methods", lang: LangGroovy, src: `value.before.name.endsWith("Record") && value.before.name.contains('yR')`,
			want: `value.before.name.endsWith("Record") && value.before.name.contains("yR")`, outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "decimal literal", lang: LangGroovy, src: "value.before.id < 1.5", want: `value.before.id < 1.5`,
			outcomes: []outcome{{rec: del(1), keep: true}, {rec: del(2), keep: false}}},
		// JavaScript: == binds looser than <, as in CEL's parenthesised form.
		{where: "precedence", lang: LangJS, src: "value.before.id < 2 == true", want: `value.before.id < 2 == true`,
			outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "precedence, right operand", lang: LangJS, src: "true == value.before.id < 2", want: `true == (value.before.id < 2)`,
			outcomes: []outcome{{rec: del(1), keep: true}, {rec: del(2), keep: false}}},
		{where: "|| inside &&", lang: LangGroovy, src: "(value.op == 'c' || value.op == 'd') && header.idh.value == 2",
			want: `(value.op == "c" || value.op == "d") && headers.idh == 2`, outcomes: []outcome{{rec: del(1), keep: false}, {rec: del(2), keep: true}}},
		{where: "a joined topic", lang: LangGroovy, topicExpr: true, src: "'deleted_' + value.before.name",
			want: `"deleted_" + value.before.name`, outcomes: []outcome{{rec: del(1), keep: true, topic: "deleted_myRecord"}}},
		{where: "escapes", lang: LangGroovy, src: `value.before.name != 'it\'s \u00e9'`, want: `value.before.name != "it's é"`,
			outcomes: []outcome{{rec: del(1), keep: true}}},
		{where: "a JavaScript proxy's member named class is the field (GraalJsEngine.java:90-99)", lang: LangJS, src: "value.before.class == null",
			want: `value.before.class == null`, outcomes: []outcome{{rec: del(1), err: true}}},
		{where: "a double-quoted JavaScript string keeps its $", lang: LangJS, src: `topic != "$x"`, want: `topic != "$x"`,
			outcomes: []outcome{{rec: del(1), keep: true}}},
	} {
		t.Run(c.where, func(t *testing.T) {
			tr, err := TranslateScript(c.lang, c.src, c.topicExpr)
			if err != nil {
				t.Fatalf("translate %q: %v", c.src, err)
			}
			if tr.CEL != c.want {
				t.Fatalf("translate %q:\n got %s\nwant %s", c.src, tr.CEL, c.want)
			}
			typ, key := "Filter", "condition"
			if c.topicExpr {
				typ, key = "ContentBasedRouter", "topic.expression"
			}
			kv := []string{"language", "cel", key, tr.CEL}
			if c.nulls != "" {
				kv = append(kv, "null.handling.mode", c.nulls)
			}
			stage, err := oneErr(dt+typ, kv...)
			if err != nil {
				t.Fatalf("configure %s with %q: %v", typ, tr.CEL, err)
			}
			for i, o := range c.outcomes {
				r := o.rec(t)
				out, keep, err := stage.Apply(r)
				switch {
				case o.err:
					if err == nil {
						t.Errorf("record %d: no error, want one (Debezium fails)", i)
					}
				case err != nil:
					t.Errorf("record %d: %v", i, err)
				case keep != o.keep:
					t.Errorf("record %d: kept %v, want %v", i, keep, o.keep)
				case o.topic != "" && out.Topic != o.topic:
					t.Errorf("record %d: topic %q, want %q", i, out.Topic, o.topic)
				}
			}
		})
	}
}

// TestTranslateScriptRefuses: what has no mechanical translation is
// refused with the reason, at the offset of the fault.
func TestTranslateScriptRefuses(t *testing.T) {
	for _, c := range []struct {
		lang, src string
		topicExpr bool
		want      string
	}{
		// FilterTest.java:38 and :60: `operation` is no binding.
		{LangGroovy, "operation != 'd'", false, `"operation": not one of Debezium's bindings`},
		// FilterTest.java:72 shouldFailToParseCondition.
		{LangGroovy, "operation != 'd", false, "a string not closed"},
		// RouterTest.java:68 shouldFailOnInvalidReturnValue: 1 is no topic.
		{LangGroovy, "1", true, "must give a string or null"},
		// RouterTest.java:92 shouldRouteMongoDbFormat: a JSON parser.
		{LangGroovy, "value == null ? 'nulls' : ((new groovy.json.JsonSlurper()).parseText(value.after).last_name == 'Kretchmar' ? 'kretchmar' : null)", true, `"new": not one of Debezium's bindings`},
		{"jsr223.jython", "value.op == 'd'", false, `language "jsr223.jython"`},
		{"wasm.chicory", "x", false, `language "wasm.chicory"`},
		{LangGroovy, "value.after.active", false, "not a comparison or a logical expression"},
		{LangGroovy, "!value.after.active", false, "! of a value"},
		{LangGroovy, "value.after.a == 1 && value.after.b", false, "an operand of &&"},
		{LangGroovy, "value.after.a ? 'x' : 'y'", true, "the condition of ?:"},
		{LangGroovy, "value?.op == 'd'", false, "safe navigation"},
		{LangGroovy, "value['op'] == 'd'", false, "an index"},
		{LangGroovy, `value.op == "${x}"`, false, "GString"},
		{LangGroovy, "value.after.n == 010", false, "octal"},
		{LangGroovy, "value.after.n == 1L", false, "suffix"},
		{LangGroovy, "value.after.n == 1e3", false, "suffix, an exponent"},
		{LangGroovy, "value.after.n == 99999999999999999999", false, "beyond 64 bits"},
		{LangGroovy, "value.op =~ 'd'", false, `'=' is not an operator`},
		{LangGroovy, "valueSchema.name.endsWith('Envelope')", false, "valueSchema: Debezium's schema bindings"},
		{LangGroovy, "value.after.n in [1, 2]", false, "string literals only"},
		{LangGroovy, "value.before.id.equals(2)", false, "type-strict"},
		{LangGroovy, "value.after.n < null", false, "null, boolean or list operand"},
		{LangGroovy, "value.after.n + 1 > 2", false, "+ is translated only to join"},
		{LangGroovy, "value.op == 'd'; true", false, `';' is not an operator`},
		{LangGroovy, "value.op == 'd' // deletes", false, "a comment"},
		{LangGroovy, "value.after.name.toUpperCase() == 'X'", false, "toUpperCase"},
		{LangGroovy, "value.after.in == 1", false, "a word CEL reserves"},
		{LangGroovy, "value.after.class == 'A'", false, "a property of every Groovy object"},
		{LangGroovy, "header.idh.schema == null", false, "only a header's value"},
		{LangGroovy, "value.op === 'd'", false, "identity comparison"},
		{LangJS, "'op' in value", false, "JavaScript's in"},
		{LangJS, "value.get('op') == 'd'", false, "not a method the translation reads"},
		{LangJS, "value.op == undefined", false, `"undefined"`},
		{LangGroovy, "value.op == 'd' value", false, "only one expression"},
		{LangGroovy, "", false, "ends early"},
		{LangGroovy, "'\\ud800' == topic", false, "unpaired"},
		{LangGroovy, strings.Repeat("(", 200) + "true" + strings.Repeat(")", 200), false, "nested too deep"},
		{LangGroovy, strings.Repeat("!", 200) + "true", false, "nested too deep"},
	} {
		_, err := TranslateScript(c.lang, c.src, c.topicExpr)
		var se *ScriptError
		if !errors.As(err, &se) {
			t.Errorf("%q: %v, want a *ScriptError", c.src, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v\nwant it to say %q", c.src, err, c.want)
		}
		if se.Offset < 0 || se.Offset > len(c.src) {
			t.Errorf("%q: offset %d outside the text", c.src, se.Offset)
		}
	}
}

// TestTranslateScriptNotes: where the same text may give another result
// in CEL on some data, the translation says so.
func TestTranslateScriptNotes(t *testing.T) {
	tr, err := TranslateScript(LangJS, "value.before.id != 2", false)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(tr.Notes, "\n")
	for _, want := range []string{"JavaScript's != converts", "NUMERIC/DECIMAL"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes %q: want %q", got, want)
		}
	}
	if strings.Join(tr.Reads, ",") != "value" {
		t.Errorf("reads %v, want [value]", tr.Reads)
	}
	tr, err = TranslateScript(LangGroovy, "value.after.name >= 'M'", false)
	if err != nil || len(tr.Notes) != 1 || !strings.Contains(tr.Notes[0], "UTF-16") {
		t.Errorf("a string ordering: %v, notes %q", err, tr.Notes)
	}
	tr, err = TranslateScript(LangGroovy, "value.op == 'd' && header.h.value == 'x' && topic != 'y'", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Notes) != 0 || strings.Join(tr.Reads, ",") != "value,topic,headers" {
		t.Errorf("notes %q, reads %v; want none, [value topic headers]", tr.Notes, tr.Reads)
	}
}

// FuzzTranslateScript: any text, in either language and either role,
// translates to CEL that the transform compiles (TranslateScript checks
// it) and that evaluates on a record without a panic, or is a
// *ScriptError with an offset inside the text; never a panic.
func FuzzTranslateScript(f *testing.F) {
	for _, s := range []string{
		"value.op != 'd' || value.before.id != 2",
		"header.idh.value == 1 && topic.startsWith('dummy')",
		"value == null ? 'nulls' : (value.before.id == 1 ? 'ones' : null)",
		"value.op in ['c', 'u'] && !value.get('after').get('x').equals('y')",
		"'t_' + value.after.region",
		`"a\u00e9\n" == topic`,
		"((value.after.n >= 1.5))",
		"value?.op",
	} {
		f.Add(s, false, false)
		f.Add(s, true, true)
	}
	f.Fuzz(func(t *testing.T, src string, js, topicExpr bool) {
		lang := LangGroovy
		if js {
			lang = LangJS
		}
		tr, err := TranslateScript(lang, src, topicExpr)
		if err != nil {
			var se *ScriptError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(src) {
				t.Fatalf("%q: %v", src, err)
			}
			return
		}
		r := dummyDelete(t, 1)
		if topicExpr {
			e, err := CompileTopicExpression(tr.CEL)
			if err != nil {
				t.Fatalf("%q → %q: %v", src, tr.CEL, err)
			}
			_, _, _ = e.Eval(&r)
			return
		}
		c, err := CompileCondition(tr.CEL)
		if err != nil {
			t.Fatalf("%q → %q: %v", src, tr.CEL, err)
		}
		_, _ = c.Eval(&r)
	})
}
