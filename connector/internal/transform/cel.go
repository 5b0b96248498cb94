package transform

import (
	"errors"
	"fmt"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// This file compiles and evaluates CEL expressions over a record: the
// variables `value`, `key` (dyn: the record's Connect values, Debezium's
// envelope fields through `value`), `topic` (string) and `headers`
// (map(string, dyn)). An expression is compiled once, when the chain is
// configured; evaluation reads the record in place.

// ExprError is an expression that does not compile: where and why.
type ExprError struct {
	Expr         string
	Line, Column int // 1-based
	Msg          string
}

func (e *ExprError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s (in %q)", e.Line, e.Column, e.Msg, e.Expr)
}

var (
	envOnce sync.Once
	env     *cel.Env
	celAd   *adapter
	envErr  error
)

// celEnv returns the one CEL environment every expression compiles in.
func celEnv() (*cel.Env, error) {
	envOnce.Do(func() {
		celAd = &adapter{base: types.DefaultTypeAdapter}
		env, envErr = cel.NewEnv(
			cel.Variable("value", cel.DynType),
			cel.Variable("key", cel.DynType),
			cel.Variable("topic", cel.StringType),
			cel.Variable("headers", cel.MapType(cel.StringType, cel.DynType)),
			cel.OptionalTypes(),
			cel.CustomTypeAdapter(celAd),
		)
	})
	return env, envErr
}

// maxCost bounds one evaluation of an expression with a comprehension
// (all, exists, exists_one, map, filter; CEL's cost units: about one per
// operation and per element visited), so that nested comprehensions
// cannot hold a table's records for long: past it the evaluation fails,
// which parks the table with the reason. An expression without one has
// no loop: its cost is bounded by its size, and it runs without the
// tracking (which triples the per-record cost).
const maxCost = 1_000_000

// compile parses and checks src; want is the output types allowed.
func compile(src string, want ...*cel.Type) (cel.Program, *cel.Type, error) {
	prg, out, _, err := compileAST(src, want...)
	return prg, out, err
}

// compileAST is compile, with the checked expression.
func compileAST(src string, want ...*cel.Type) (cel.Program, *cel.Type, celast.Expr, error) {
	e, err := celEnv()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the CEL environment: %w", err)
	}
	ast, iss := e.Compile(src)
	if iss != nil && iss.Err() != nil {
		first := iss.Errors()[0]
		// CEL's columns are 0-based; an error with no position (empty
		// text) is put at the start.
		line, col := max(first.Location.Line(), 1), max(first.Location.Column()+1, 1)
		return nil, nil, nil, &ExprError{Expr: src, Line: line, Column: col, Msg: first.Message}
	}
	out := ast.OutputType()
	ok := false
	for _, w := range want {
		ok = ok || out.IsExactType(w)
	}
	if !ok {
		return nil, nil, nil, &ExprError{Expr: src, Line: 1, Column: 1, Msg: fmt.Sprintf("the expression is %s, it must be %v", out, want)}
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if len(celast.MatchDescendants(celast.NavigateAST(ast.NativeRep()), celast.KindMatcher(celast.ComprehensionKind))) > 0 {
		opts = append(opts, cel.CostLimit(maxCost))
	}
	prg, err := e.Program(ast, opts...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("plan %q: %w", src, err)
	}
	return prg, out, ast.NativeRep().Expr(), nil
}

// activation binds the variables to one record. It is a value in a pool
// so that evaluating does not allocate one per record.
type activation struct{ r *Record }

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "value":
		return a.r.Value, true
	case "key":
		return a.r.Key, true
	case "topic":
		return a.r.Topic, true
	case "headers":
		return headers(a.r.Headers), true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

var activations = sync.Pool{New: func() any { return new(activation) }}

func eval(prg cel.Program, r *Record) (ref.Val, error) {
	act := activations.Get().(*activation)
	act.r = r
	out, _, err := prg.Eval(act)
	act.r = nil
	activations.Put(act)
	return out, err
}

// Condition is a compiled boolean expression. Safe for concurrent use.
type Condition struct {
	src string
	prg cel.Program
}

// CompileCondition compiles src, which must be boolean: a syntax or type
// error, or an expression of another type, is an *ExprError naming the
// line and column. A field of `value` is dyn to the checker, so a bare
// `value.after.active` is refused: write `value.after.active == true`.
func CompileCondition(src string) (*Condition, error) {
	prg, _, err := compile(src, cel.BoolType)
	if err != nil {
		return nil, err
	}
	return &Condition{src: src, prg: prg}, nil
}

// Eval evaluates the condition on r. A runtime error (a missing field, a
// field of null: `value.after.x` on a delete) is an error; `has()` and
// the optional syntax (`value.?after.?x.orValue(…)`) test first.
func (c *Condition) Eval(r *Record) (bool, error) {
	out, err := eval(c.prg, r)
	if err != nil {
		return false, fmt.Errorf("evaluate %q: %w", c.src, err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("evaluate %q: the result is %v, not a boolean", c.src, out.Type())
	}
	return bool(b), nil
}

// String returns the source of the condition.
func (c *Condition) String() string { return c.src }

// TopicExpression is a compiled expression naming a topic: a string, or
// null for "leave the topic as it is" (ContentBasedRouter.java:34-46).
type TopicExpression struct {
	src string
	prg cel.Program
	// targets are the topics it can give, as far as its form shows
	// (topics.go); open when it can give others.
	targets []target
	open    string
}

// CompileTopicExpression compiles src, which must be a string, null or
// dyn (a field of `value`, checked when evaluated).
func CompileTopicExpression(src string) (*TopicExpression, error) {
	prg, _, expr, err := compileAST(src, cel.StringType, cel.DynType, cel.NullType, cel.NullableType(cel.StringType))
	if err != nil {
		return nil, err
	}
	t := &TopicExpression{src: src, prg: prg}
	t.targets, t.open = targetsOf(expr)
	return t, nil
}

// errNotTopic is a topic expression that gave neither a string nor null.
var errNotTopic = errors.New("the result is neither a string nor null")

// Eval returns the topic src names for r; ok is false when it gave null.
func (e *TopicExpression) Eval(r *Record) (topic string, ok bool, err error) {
	out, err := eval(e.prg, r)
	if err != nil {
		return "", false, fmt.Errorf("evaluate %q: %w", e.src, err)
	}
	switch v := out.(type) {
	case types.String:
		if v == "" {
			// Kafka refuses an empty topic name when producing; say so here.
			return "", false, fmt.Errorf("evaluate %q: an empty topic name", e.src)
		}
		return string(v), true, nil
	case types.Null:
		return "", false, nil
	}
	return "", false, fmt.Errorf("evaluate %q: %w (%v)", e.src, errNotTopic, out.Type())
}
