package transform

import (
	"fmt"
	"slices"
)

// This file translates a Debezium Filter condition or ContentBasedRouter
// topic expression written in Groovy (language jsr223.groovy) or
// JavaScript (jsr223.graal.js) to CEL, where the translation is
// mechanical: the result gives, on every record, what Debezium's engine
// gives, or fails where it fails. Everything else is refused with the
// reason, never approximated.
//
// Debezium binds value, key, keySchema, valueSchema, topic and header
// (Jsr223Engine.java:64-74 at v3.6.1.Final; GraalJsEngine.java:40-60
// exposes structs as objects whose members are the fields). The
// translation reads:
//   - value.a.b and key.a (Groovy also value.get('a')), topic, and
//     header.<name>.value (CEL: headers.<name>);
//   - string literals ('…', "…" without interpolation), decimal numbers,
//     true, false, null;
//   - == != (JavaScript also === !==), < <= > >=, && || !, ?:, ( );
//   - startsWith, endsWith, contains (JavaScript: includes) on strings;
//     Groovy's .equals with a string literal on one side (String.equals
//     is CEL's == on strings; Byte.equals(2) is false where == is true,
//     so a number is refused);
//   - membership in a list of string literals: Groovy `x in ['c','u']`
//     and ['c','u'].contains(x), JavaScript ['c','u'].includes(x)
//     (List.contains and includes compare strings as CEL's `in` does;
//     numbers are refused: Groovy's List.contains is type-strict);
//   - + joining strings where one side is a string literal (a non-string
//     field fails in CEL where Groovy would call toString: loud, not
//     wrong).
//
// Operands of && || ! and a condition itself must be boolean expressions:
// Groovy truth (null, 0, '' and empty collections are false) and
// JavaScript's have no mechanical CEL form, so `!value.after.flag` is
// refused (write `value.after.flag == false`). CEL's && and || also absorb
// an error on one side when the other decides (`true || <error>` is true)
// where Groovy and JavaScript evaluate left to right and fail: a record
// Debezium fails on may pass here; none that Debezium passes fails.

// The languages TranslateScript reads (ScriptingTransformation.java:112-119).
const (
	LangGroovy = "jsr223.groovy"
	LangJS     = "jsr223.graal.js"
)

// ScriptError is a Groovy or JavaScript expression the translation
// refuses: where and why.
type ScriptError struct {
	Expr   string
	Offset int // byte offset in Expr
	Msg    string
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("%q at offset %d: %s", e.Expr, e.Offset, e.Msg)
}

// ScriptTranslation is a translated expression.
type ScriptTranslation struct {
	CEL   string
	Reads []string // the CEL variables it reads: value, key, topic, headers
	Notes []string // where Debezium's language and CEL may differ on the same data
}

// maxScriptDepth bounds the nesting the translation follows.
const maxScriptDepth = 64

// TranslateScript translates src, a condition (topicExpr false: a
// boolean) or a topic expression (a string or null), from language to
// CEL, and compiles the result as the transform's Parse would. An
// expression it cannot translate mechanically is a *ScriptError.
func TranslateScript(language, src string, topicExpr bool) (*ScriptTranslation, error) {
	var js bool
	switch language {
	case LangGroovy:
	case LangJS:
		js = true
	default:
		return nil, &ScriptError{Expr: src, Msg: fmt.Sprintf("language %q: the translation reads %s and %s", language, LangGroovy, LangJS)}
	}
	toks, serr := lex(src, js)
	if serr != nil {
		return nil, &ScriptError{Expr: src, Offset: serr.pos, Msg: serr.msg}
	}
	p := &scriptParser{src: src, toks: toks, js: js, reads: map[string]bool{}}
	n := p.ternary()
	if p.err == nil && p.peek().kind != tokEOF {
		p.fail(p.peek().pos, fmt.Sprintf("%q: only one expression is read", p.peek().text))
	}
	if p.err != nil {
		return nil, p.err
	}
	switch {
	case !topicExpr && n.kind != kindBool:
		return nil, &ScriptError{Expr: src, Msg: "the condition is not a comparison or a logical expression: Groovy's and JavaScript's truth of a value (null, 0 and '' are false) has no mechanical CEL form; compare explicitly (== true, != null)"}
	case topicExpr && n.kind != kindStr && n.kind != kindField && n.kind != kindNull:
		return nil, &ScriptError{Expr: src, Msg: "a topic expression must give a string or null"}
	}
	out := &ScriptTranslation{CEL: n.cel, Notes: p.notes}
	for _, v := range []string{"value", "key", "topic", "headers"} {
		if p.reads[v] {
			out.Reads = append(out.Reads, v)
		}
	}
	var err error
	if topicExpr {
		_, err = CompileTopicExpression(out.CEL)
	} else {
		_, err = CompileCondition(out.CEL)
	}
	if err != nil {
		return nil, &ScriptError{Expr: src, Msg: fmt.Sprintf("the translation %q does not compile: %v", out.CEL, err)}
	}
	return out, nil
}

// kind is what the translation knows of an operand's type.
type kind int

const (
	kindBool  kind = iota // a comparison, a logical expression, true, false
	kindStr               // a string literal, topic, a join
	kindNum               // a number literal
	kindNull              // null
	kindField             // a field of the record: any type
	kindList              // a list of string literals
)

// CEL's precedence levels of what a node's text ends with at the top.
const (
	precTernary = iota
	precOr
	precAnd
	precRel
	precAdd
	precUnary
	precPrimary
)

type scriptNode struct {
	cel  string
	kind kind
	prec int
	lit  bool     // a literal
	path []string // value or key and the fields after it, for .get('f')
}

type scriptParser struct {
	src   string
	toks  []token
	i     int
	js    bool
	depth int
	err   *ScriptError
	reads map[string]bool
	notes []string
}

func (p *scriptParser) peek() token { return p.toks[p.i] }

func (p *scriptParser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *scriptParser) isOp(ops ...string) bool {
	t := p.peek()
	return t.kind == tokOp && slices.Contains(ops, t.text) || t.kind == tokIdent && slices.Contains(ops, t.text)
}

func (p *scriptParser) fail(pos int, msg string) scriptNode {
	if p.err == nil {
		p.err = &ScriptError{Expr: p.src, Offset: pos, Msg: msg}
	}
	return scriptNode{kind: kindNull, cel: "null", prec: precPrimary}
}

func (p *scriptParser) note(msg string) {
	if !slices.Contains(p.notes, msg) {
		p.notes = append(p.notes, msg)
	}
}

func (p *scriptParser) expect(op string) {
	if p.err == nil && !p.isOp(op) {
		t := p.peek()
		p.fail(t.pos, fmt.Sprintf("expected %q, found %q", op, t.text))
		return
	}
	p.next()
}

// wrap parenthesises n where an operator of level prec would bind it
// otherwise (strict: a right operand binds at its own level).
func wrap(n scriptNode, prec int, strict bool) string {
	if n.prec < prec || strict && n.prec == prec {
		return "(" + n.cel + ")"
	}
	return n.cel
}

func (p *scriptParser) ternary() scriptNode {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxScriptDepth {
		return p.fail(p.peek().pos, "nested too deep")
	}
	c := p.or()
	if !p.isOp("?") || p.err != nil {
		return c
	}
	pos := p.next().pos
	a := p.ternary()
	p.expect(":")
	b := p.ternary()
	if p.err != nil {
		return c
	}
	if c.kind != kindBool {
		return p.fail(pos, "the condition of ?: is not a comparison or a logical expression (truth of a value has no mechanical CEL form)")
	}
	k := kindField
	switch {
	case a.kind == kindBool && b.kind == kindBool:
		k = kindBool
	case (a.kind == kindStr || a.kind == kindNull) && (b.kind == kindStr || b.kind == kindNull):
		k = kindStr
	case a.kind == kindList || b.kind == kindList:
		return p.fail(pos, "a list in ?:")
	}
	// CEL's checker wants both branches of one type: null is dyn(null).
	branch := func(n scriptNode) string {
		if n.kind == kindNull {
			return "dyn(null)"
		}
		return wrap(n, precTernary, true)
	}
	return scriptNode{cel: wrap(c, precTernary, true) + " ? " + branch(a) + " : " + branch(b), kind: k, prec: precTernary}
}

func (p *scriptParser) logical(op string, prec int, operand func() scriptNode) scriptNode {
	l := operand()
	for p.isOp(op) && p.err == nil {
		pos := p.next().pos
		r := operand()
		if p.err != nil {
			return l
		}
		if l.kind != kindBool || r.kind != kindBool {
			return p.fail(pos, fmt.Sprintf("an operand of %s is not a comparison or a logical expression (truth of a value has no mechanical CEL form: compare explicitly)", op))
		}
		l = scriptNode{cel: wrap(l, prec, false) + " " + op + " " + wrap(r, prec, true), kind: kindBool, prec: prec}
	}
	return l
}

func (p *scriptParser) or() scriptNode  { return p.logical("||", precOr, p.and) }
func (p *scriptParser) and() scriptNode { return p.logical("&&", precAnd, p.equality) }

func (p *scriptParser) equality() scriptNode {
	l := p.relational()
	for p.isOp("==", "!=", "===", "!==") && p.err == nil {
		t := p.next()
		if !p.js && len(t.text) == 3 {
			return p.fail(t.pos, t.text+" is Groovy's identity comparison: write "+t.text[:2])
		}
		r := p.relational()
		if p.err != nil {
			return l
		}
		if l.kind == kindList || r.kind == kindList {
			return p.fail(t.pos, "a list compared with "+t.text)
		}
		if p.js && len(t.text) == 2 && !(l.lit && r.lit) && l.kind != r.kind && l.kind != kindNull && r.kind != kindNull {
			p.note("JavaScript's " + t.text + " converts between strings, numbers and booleans ('1' == 1 is true); CEL's does not: a field of another type than what it is compared with is unequal")
		}
		p.numberNote(l, r)
		l = scriptNode{cel: wrap(l, precRel, false) + " " + t.text[:2] + " " + wrap(r, precRel, true), kind: kindBool, prec: precRel}
	}
	return l
}

// numberNote says what a NUMERIC column compared with a number does in CEL.
func (p *scriptParser) numberNote(l, r scriptNode) {
	if l.kind == kindNum && r.kind == kindField || l.kind == kindField && r.kind == kindNum {
		p.note("a field compared with a number: a NUMERIC/DECIMAL column is its text in CEL, so == gives false and < > fail (the table parks); compare double(field) for those")
	}
}

func (p *scriptParser) relational() scriptNode {
	l := p.additive()
	for p.isOp("<", "<=", ">", ">=", "in") && p.err == nil {
		t := p.next()
		if t.text == "in" {
			if p.js {
				return p.fail(t.pos, "JavaScript's in tests an object's property names: write ['a','b'].includes(x)")
			}
			r := p.additive()
			if p.err != nil {
				return l
			}
			l = p.member(l, r, t.pos)
			continue
		}
		r := p.additive()
		if p.err != nil {
			return l
		}
		for _, n := range []scriptNode{l, r} {
			if n.kind == kindNull || n.kind == kindBool || n.kind == kindList {
				return p.fail(t.pos, fmt.Sprintf("%s with a null, boolean or list operand: Groovy orders null first, JavaScript converts it; CEL has no such order", t.text))
			}
		}
		p.numberNote(l, r)
		if l.kind == kindStr || r.kind == kindStr {
			p.note("strings order by UTF-16 unit in Groovy and JavaScript and by code point in CEL: " + t.text + " differs between characters above U+FFFF and those from U+E000 to U+FFFF")
		}
		l = scriptNode{cel: wrap(l, precRel, false) + " " + t.text + " " + wrap(r, precRel, true), kind: kindBool, prec: precRel}
	}
	return l
}

// member is x in list, list a list of string literals.
func (p *scriptParser) member(x, list scriptNode, pos int) scriptNode {
	if list.kind != kindList {
		return p.fail(pos, "membership is translated in a list of string literals only (['c', 'u'])")
	}
	if x.kind == kindList {
		return p.fail(pos, "a list in a list")
	}
	return scriptNode{cel: wrap(x, precRel, false) + " in " + list.cel, kind: kindBool, prec: precRel}
}

func (p *scriptParser) additive() scriptNode {
	l := p.unary()
	for p.isOp("+") && p.err == nil {
		pos := p.next().pos
		r := p.unary()
		if p.err != nil {
			return l
		}
		strs := (l.kind == kindStr || r.kind == kindStr) && (l.lit || r.lit)
		if !strs || l.kind != kindStr && l.kind != kindField || r.kind != kindStr && r.kind != kindField {
			return p.fail(pos, "+ is translated only to join a string literal with strings or fields (Groovy's and JavaScript's number arithmetic differ from CEL's)")
		}
		l = scriptNode{cel: wrap(l, precAdd, false) + " + " + wrap(r, precAdd, true), kind: kindStr, prec: precAdd}
	}
	return l
}

func (p *scriptParser) unary() scriptNode {
	if !p.isOp("!") {
		return p.postfix()
	}
	pos := p.next().pos
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxScriptDepth {
		return p.fail(pos, "nested too deep")
	}
	x := p.unary()
	if p.err != nil {
		return x
	}
	if x.kind != kindBool {
		return p.fail(pos, "! of a value that is not a comparison or a logical expression (truth of a value has no mechanical CEL form: compare explicitly, == false or == null)")
	}
	return scriptNode{cel: "!" + wrap(x, precUnary, false), kind: kindBool, prec: precUnary}
}

func (p *scriptParser) postfix() scriptNode {
	n := p.primary()
	for p.err == nil {
		switch {
		case p.isOp("?."):
			return p.fail(p.peek().pos, "Groovy's safe navigation ?.: test for null explicitly (x != null && x.f …)")
		case p.isOp("["):
			return p.fail(p.peek().pos, "an index [ ]: write the field with a dot")
		case p.isOp("."):
			p.next()
			t := p.next()
			if !p.fieldName(t) {
				return n
			}
			if p.isOp("(") {
				n = p.call(n, t)
				continue
			}
			if n.path == nil {
				return p.fail(t.pos, fmt.Sprintf(".%s: a field of something that is not value or key", t.text))
			}
			n = scriptNode{cel: n.cel + "." + t.text, kind: kindField, prec: precPrimary, path: append(slices.Clip(n.path), t.text)}
		default:
			return n
		}
	}
	return n
}
