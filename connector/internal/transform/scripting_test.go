package transform

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/schema"
)

// The Debezium tests mirrored here are at v3.6.1.Final under
// debezium-scripting/debezium-scripting/src/test/java/io/debezium/transforms/;
// their Groovy and JavaScript expressions are written in CEL
// (`header.idh.value` is `headers.idh`).
const (
	filterTest = "FilterTest.java"
	routerTest = "RouterTest.java"
)

var (
	// TransformsUtils.java:22-35: recordSchema, and a source schema.
	dbzRecord = structOf("id", sInt8, "name", sString)
	dbzSource = structOf("lsn", sInt32, "version", sString)
)

func dbzEnvelope(name string) *schema.Schema {
	s := structOf("before", opt(dbzRecord), "after", opt(dbzRecord), "source", dbzSource, "op", sString, "ts_ms", sOptInt64)
	s.Name = name
	return s
}

// deleteRecord is TransformsUtils.createDeleteRecord (TransformsUtils.java:37-64):
// a delete of id on topic "dummy<id>" with an int header idh = id.
func deleteRecord(t *testing.T, id int, envelope, topic string) Record {
	s := dbzEnvelope(envelope)
	before := newStruct(t, dbzRecord, "id", int8(id), "name", "myRecord")
	source := newStruct(t, dbzSource, "lsn", int32(1234), "version", "version!")
	v := newStruct(t, s, "before", before, "source", source, "op", "d", "ts_ms", int64(1))
	return Record{Topic: topic, Partition: i32p(0), ValueSchema: s, Value: v, Timestamp: i64p(int64(id)),
		Headers: []Header{{Key: "idh", Schema: sInt32, Value: int32(id)}}}
}

func dummyDelete(t *testing.T, id int) Record {
	return deleteRecord(t, id, "dummy.Envelope", fmt.Sprintf("dummy%d", id))
}

// nullRecord is TransformsUtils.createNullRecord (:110-112).
func nullRecord() Record { return Record{Topic: "dummy"} }

func filter(t *testing.T, kv ...string) (Transform, error) {
	t.Helper()
	return oneErr(dt+"Filter", append([]string{"language", "cel"}, kv...)...)
}

func mustKeep(t *testing.T, tr Transform, r Record, want bool) {
	t.Helper()
	out, keep, err := tr.Apply(r)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if keep != want {
		t.Fatalf("kept %v, want %v", keep, want)
	}
	if keep {
		eq(t, "kept record", out, r)
	}
}

func TestFilterAsDebezium(t *testing.T) {
	const cond = "value.op != 'd' || value.before.id != 2"
	t.Run(filterTest+":45 testExpressionRequired", func(t *testing.T) {
		_, err := filter(t)
		mustContain(t, err, "transforms.t.condition: missing")
	})
	t.Run(filterTest+":56 shouldFailOnUnkownLanguage", func(t *testing.T) {
		// FilterTest's jython, unknown to Debezium; Groovy, known to it,
		// is refused here too (CEL only) with the same key named.
		for _, lang := range []string{"jsr223.jython", "jsr223.groovy"} {
			_, err := oneErr(dt+"Filter", "language", lang, "condition", "operation != 'd'")
			mustContain(t, err, "transforms.t.language", "CEL")
		}
	})
	t.Run(filterTest+":68 shouldFailToParseCondition", func(t *testing.T) {
		_, err := filter(t, "condition", "operation != 'd")
		mustContain(t, err, "transforms.t.condition", "line 1, column")
	})
	t.Run(filterTest+":80 shouldProcessCondition", func(t *testing.T) {
		tr, err := filter(t, "condition", cond)
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, dummyDelete(t, 2), false)
		mustKeep(t, tr, dummyDelete(t, 1), true)
	})
	t.Run(filterTest+":94 shouldProcessTopic", func(t *testing.T) {
		tr, err := filter(t, "condition", "topic == 'dummy1'")
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, dummyDelete(t, 2), false)
		mustKeep(t, tr, dummyDelete(t, 1), true)
	})
	t.Run(filterTest+":108 shouldProcessHeader", func(t *testing.T) {
		tr, err := filter(t, "condition", "headers.idh == 1")
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, dummyDelete(t, 2), false)
		mustKeep(t, tr, dummyDelete(t, 1), true)
	})
	t.Run(filterTest+":122 shouldApplyTopicRegex", func(t *testing.T) {
		tr, err := filter(t, "topic.regex", "dum.*", "condition", cond)
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, deleteRecord(t, 2, "customer.Envelope", "customer"), true)
		mustKeep(t, tr, dummyDelete(t, 2), false)
	})
	t.Run(filterTest+":136 shouldKeepNulls", func(t *testing.T) {
		tr, err := filter(t, "condition", cond)
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, nullRecord(), true)
	})
	t.Run(filterTest+":148 shouldDropNulls", func(t *testing.T) {
		tr, err := filter(t, "condition", cond, "null.handling.mode", "drop")
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, nullRecord(), false)
	})
	t.Run(filterTest+":161 shouldEvaluateNulls", func(t *testing.T) {
		tr, err := filter(t, "condition", cond, "null.handling.mode", "evaluate")
		if err != nil {
			t.Fatal(err)
		}
		_ = applyErr(t, tr, nullRecord())
	})
	t.Run(filterTest+":190 shouldRunJavaScriptWithHeaderAndTopic", func(t *testing.T) {
		tr, err := filter(t, "condition", "headers.idh == 1 && topic.startsWith('dummy')")
		if err != nil {
			t.Fatal(err)
		}
		mustKeep(t, tr, dummyDelete(t, 2), false)
		mustKeep(t, tr, dummyDelete(t, 1), true)
	})
}

func TestContentBasedRouterAsDebezium(t *testing.T) {
	// RouterTest's Groovy expression; CEL's checker wants both branches
	// of ?: of one type, so the null is dyn(null).
	const expr = "value == null ? 'nulls' : (value.before.id == 1 ? 'ones' : dyn(null))"
	router := func(t *testing.T, kv ...string) Transform {
		t.Helper()
		return one(t, dt+"ContentBasedRouter", append([]string{"language", "cel", "topic.expression", expr}, kv...)...)
	}
	t.Run(routerTest+":53 testExpressionRequired", func(t *testing.T) {
		_, err := oneErr(dt+"ContentBasedRouter", "language", "cel")
		mustContain(t, err, "transforms.t.topic.expression: missing")
	})
	t.Run(routerTest+":64 shouldFailOnInvalidReturnValue", func(t *testing.T) {
		// Debezium fails when it evaluates `1`; CEL's checker refuses it at once.
		_, err := oneErr(dt+"ContentBasedRouter", "language", "cel", "topic.expression", "1")
		mustContain(t, err, "transforms.t.topic.expression", "the expression is int")
		// A dyn result that is not a string fails when evaluated.
		tr := one(t, dt+"ContentBasedRouter", "language", "cel", "topic.expression", "value.before.id")
		mustContain(t, applyErr(t, tr, dummyDelete(t, 1)), "neither a string nor null")
		tr = one(t, dt+"ContentBasedRouter", "language", "cel", "topic.expression", "''")
		mustContain(t, applyErr(t, tr, dummyDelete(t, 1)), "an empty topic name")
	})
	t.Run(routerTest+":77 shouldRoute", func(t *testing.T) {
		tr := router(t)
		eq(t, "topic", apply(t, tr, dummyDelete(t, 1)).Topic, "ones")
		eq(t, "topic", apply(t, tr, dummyDelete(t, 2)).Topic, "dummy2")
	})
	t.Run(routerTest+":101 shouldApplyTopicRegex", func(t *testing.T) {
		tr := router(t, "topic.regex", "orig.*")
		eq(t, "topic", apply(t, tr, dummyDelete(t, 1)).Topic, "dummy1")
		eq(t, "topic", apply(t, tr, deleteRecord(t, 1, "customer.Envelope", "customer")).Topic, "customer")
	})
	t.Run(routerTest+":114 shouldKeepNulls", func(t *testing.T) {
		eq(t, "topic", apply(t, router(t), nullRecord()).Topic, "dummy")
	})
	t.Run(routerTest+":126 shouldDropNulls", func(t *testing.T) {
		mustKeep(t, router(t, "null.handling.mode", "drop"), nullRecord(), false)
	})
	t.Run(routerTest+":139 shouldEvaluateNulls", func(t *testing.T) {
		eq(t, "topic", apply(t, router(t, "null.handling.mode", "evaluate"), nullRecord()).Topic, "nulls")
	})
}

// TestConditionCompileErrors: a condition is compiled once; a bad one is
// an *ExprError with the line and column of the fault, and a condition
// that is not boolean is refused before any record.
func TestConditionCompileErrors(t *testing.T) {
	for _, c := range []struct {
		src          string
		line, column int
		msg          string
	}{
		{"value.op == 'd", 1, 13, "Syntax error"},
		{"value.op == 'd' &&\n  vlaue.after.x == 1", 2, 3, "undeclared reference to 'vlaue'"},
		{"value.op", 1, 1, "must be [bool]"},
		{"topic + 1 == 'x'", 1, 7, "no matching overload"},
		{"'a'", 1, 1, "the expression is string"},
	} {
		_, err := CompileCondition(c.src)
		var ee *ExprError
		if !errors.As(err, &ee) {
			t.Errorf("%q: %v is not an *ExprError", c.src, err)
			continue
		}
		eq(t, fmt.Sprintf("%q line, column", c.src), []int{ee.Line, ee.Column}, []int{c.line, c.column})
		if !strings.Contains(ee.Msg, c.msg) {
			t.Errorf("%q: message %q does not say %q", c.src, ee.Msg, c.msg)
		}
	}
}

// TestConditionOverTheRecord: the variables reach every part of the
// model: envelope fields, nested structs, maps, arrays, bytes, logical
// types, headers (last one of a name wins), the key; has() and the
// optional syntax test a null `after` (a delete) without failing, and a
// field of null is an error, not false.
func TestConditionOverTheRecord(t *testing.T) {
	r := dummyDelete(t, 1)
	r.Headers = append(r.Headers, Header{Key: "idh", Value: int32(7)})
	ks := structOf("id", sInt8)
	r.KeySchema, r.Key = ks, newStruct(t, ks, "id", int8(1))
	other := Record{Topic: "x", Value: NewMap("tags", []any{"a", "b"}, "blob", []byte{1, 2}, "price", dec(12345, 2),
		"at", fromMillis(86_400_000), "m", NewMap(int32(5), "five"))}
	for _, c := range []struct {
		src  string
		r    Record
		want bool
	}{
		{"value.op == 'd' && value.source.lsn == 1234", r, true},
		{"value.before.name == 'myRecord' && value.before.id == 1", r, true},
		{"headers.idh == 7", r, true},
		{"'idh' in headers && !('nope' in headers)", r, true},
		{"key.id == 1", r, true},
		{"has(value.after.id)", r, false},
		{"value.?after.?id.orValue(0) == 0", r, true},
		{"'after' in value && value.after == null", r, true},
		{"value.before.all(k, k in ['id', 'name'])", r, true},
		{"size(value.tags) == 2 && value.tags[1] == 'b'", other, true},
		{"value.blob == b'\\x01\\x02'", other, true},
		{"value.price == '123.45' && double(value.price) > 123.0", other, true},
		{"value.at == timestamp('1970-01-02T00:00:00Z')", other, true},
		{"value.m[5] == 'five'", other, true},
	} {
		cond, err := CompileCondition(c.src)
		if err != nil {
			t.Errorf("compile %q: %v", c.src, err)
			continue
		}
		got, err := cond.Eval(&c.r)
		if err != nil {
			t.Errorf("eval %q: %v", c.src, err)
			continue
		}
		eq(t, c.src, got, c.want)
	}
	cond, err := CompileCondition("value.after.id == 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cond.Eval(&r); err == nil {
		t.Error("a field of a null after evaluated without an error")
	}
}

// TestConditionSeesFieldDefaults: Debezium's engines read a struct field
// with Struct.get(String), which gives the field's default in place of a
// null (GraalJsEngine.java:91-92 at v3.6.1.Final; Struct.get(Field),
// connect/api/src/main/java/org/apache/kafka/connect/data/Struct.java:85-91),
// so a condition sees the default too, as Groovy and JavaScript do.
func TestConditionSeesFieldDefaults(t *testing.T) {
	row := structOf("id", sInt32, "region", withDefault(sOptStr, `"EU"`))
	s := structOf("after", opt(row), "op", sString)
	after := newStruct(t, row, "id", int32(1), "region", nil)
	r := Record{Topic: "t", ValueSchema: s, Value: newStruct(t, s, "after", after, "op", "c")}
	for src, want := range map[string]bool{
		"value.after.region == 'EU'":     true,
		"value.after.region == null":     false,
		"has(value.after.region)":        true,
		"value.after.?region.hasValue()": true,
	} {
		c, err := CompileCondition(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Eval(&r)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		eq(t, src, got, want)
	}
}

// TestConditionCostIsBounded: nested comprehensions over a large list
// stop at the cost limit with an error, in bounded time, instead of
// holding the table's records.
func TestConditionCostIsBounded(t *testing.T) {
	list := make([]any, 2000)
	for i := range list {
		list[i] = int64(i)
	}
	r := Record{Value: NewMap("xs", list)}
	c, err := CompileCondition("value.xs.all(a, value.xs.all(b, a + b >= 0))")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Eval(&r)
	mustContain(t, err, "cost limit exceeded")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopped after %v", d)
	}
	// A small one runs under the limit.
	r.Value = NewMap("xs", list[:10])
	if ok, err := c.Eval(&r); err != nil || !ok {
		t.Errorf("small nested comprehension: %v, %v", ok, err)
	}
}
