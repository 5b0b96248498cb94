package transform

import (
	"errors"
	"testing"
)

// FuzzCompileCondition: any text given as a condition compiles or is an
// *ExprError (with a line and column inside the text), never a panic;
// one that compiles evaluates on a record to a boolean or an error.
func FuzzCompileCondition(f *testing.F) {
	for _, s := range []string{
		"value.op == 'd'",
		"value.after.region == 'EU' && headers.trace == 'x'",
		"has(value.after.id) || value.?before.?id.orValue(0) > 1",
		"topic.matches('^p\\\\.public\\\\..*') && key.id % 2 == 0",
		"value.after.all(k, k != '')",
		"value.op == 'd",
		"",
		"\n\n  )",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := CompileCondition(src)
		if err != nil {
			var ee *ExprError
			if errors.As(err, &ee) && (ee.Line < 1 || ee.Column < 1) {
				t.Fatalf("%q: position %d:%d", src, ee.Line, ee.Column)
			}
			return
		}
		r := dummyDelete(t, 1)
		_, _ = c.Eval(&r)
	})
}
