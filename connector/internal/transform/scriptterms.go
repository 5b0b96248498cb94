package transform

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file holds the terms of TranslateScript's parser
// (scripttranslate.go): literals, Debezium's bindings, field names and
// the method calls it translates.

// The words CEL reserves (cel-spec langdef.md), which cannot name a field
// after a dot.
var celReserved = []string{"true", "false", "null", "in", "as", "break", "const", "continue", "else",
	"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}

// groovyProperties are the property names Groovy resolves on every object
// before a generic get(String) such as Struct.get (getClass,
// getMetaClass, and DefaultGroovyMethods' getProperties and
// getMetaPropertyValues): value.class is the Java class there, not a
// field.
var groovyProperties = []string{"class", "metaClass", "properties", "metaPropertyValues"}

func (p *scriptParser) fieldName(t token) bool {
	switch {
	case t.kind != tokIdent:
		p.fail(t.pos, fmt.Sprintf("expected a field name, found %q", t.text))
		return false
	case slices.Contains(celReserved, t.text):
		p.fail(t.pos, fmt.Sprintf("the field name %q is a word CEL reserves", t.text))
		return false
	case !p.js && slices.Contains(groovyProperties, t.text):
		p.fail(t.pos, fmt.Sprintf(".%s is a property of every Groovy object, not the field of that name", t.text))
		return false
	}
	return true
}

// call translates recv.method(args).
func (p *scriptParser) call(recv scriptNode, m token) scriptNode {
	p.next() // (
	var args []scriptNode
	for !p.isOp(")") && p.err == nil {
		if len(args) > 0 {
			p.expect(",")
		}
		args = append(args, p.ternary())
	}
	p.expect(")")
	if p.err != nil {
		return recv
	}
	if len(args) != 1 {
		return p.fail(m.pos, fmt.Sprintf(".%s with %d arguments: the translated methods take one", m.text, len(args)))
	}
	a := args[0]
	stringish := func(n scriptNode) bool { return n.kind == kindStr || n.kind == kindField }
	switch name := m.text; {
	case name == "startsWith" || name == "endsWith" || name == "contains" && !p.js || name == "includes" && p.js:
		if recv.kind == kindList && (name == "contains" || name == "includes") {
			return p.member(a, recv, m.pos)
		}
		if !stringish(recv) || !stringish(a) {
			return p.fail(m.pos, fmt.Sprintf(".%s: of a string, with a string", name))
		}
		cel := name
		if name == "includes" {
			cel = "contains"
		}
		return scriptNode{cel: wrap(recv, precPrimary, false) + "." + cel + "(" + a.cel + ")", kind: kindBool, prec: precPrimary}
	case name == "equals" && !p.js:
		if !(recv.lit && recv.kind == kindStr || a.lit && a.kind == kindStr) {
			return p.fail(m.pos, ".equals is translated with a string literal on one side (Java's equals of numbers is type-strict: Byte.equals(2) is false)")
		}
		return scriptNode{cel: wrap(recv, precRel, false) + " == " + wrap(a, precRel, true), kind: kindBool, prec: precRel}
	case name == "get" && !p.js && recv.path != nil:
		if !a.lit || a.kind != kindStr {
			return p.fail(m.pos, ".get: with a string literal")
		}
		if !isCELIdent(a.cel[1:len(a.cel)-1]) || slices.Contains(celReserved, a.cel[1:len(a.cel)-1]) {
			return p.fail(m.pos, fmt.Sprintf(".get(%s): a field name CEL reads after a dot only", a.cel))
		}
		f := a.cel[1 : len(a.cel)-1]
		return scriptNode{cel: recv.cel + "." + f, kind: kindField, prec: precPrimary, path: append(slices.Clip(recv.path), f)}
	}
	return p.fail(m.pos, fmt.Sprintf(".%s(…): not a method the translation reads (startsWith, endsWith, %s, equals, get)", m.text, map[bool]string{false: "contains", true: "includes"}[p.js]))
}

func isCELIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentPart(s[i]) {
			return false
		}
	}
	return true
}

func (p *scriptParser) primary() scriptNode {
	t := p.next()
	switch t.kind {
	case tokNumber:
		if !strings.Contains(t.text, ".") {
			if _, err := strconv.ParseInt(t.text, 10, 64); err != nil {
				return p.fail(t.pos, "an integer beyond 64 bits")
			}
		}
		return scriptNode{cel: t.text, kind: kindNum, prec: precPrimary, lit: true}
	case tokString:
		// strconv.Quote's escapes are all CEL escapes; the text is valid UTF-8.
		return scriptNode{cel: strconv.Quote(t.text), kind: kindStr, prec: precPrimary, lit: true}
	case tokIdent:
		return p.variable(t)
	case tokOp:
		switch t.text {
		case "(":
			n := p.ternary()
			p.expect(")")
			if n.prec < precPrimary {
				n.cel, n.prec = "("+n.cel+")", precPrimary
			}
			n.path = nil
			return n
		case "[":
			var items []string
			for !p.isOp("]") && p.err == nil {
				if len(items) > 0 {
					p.expect(",")
				}
				it := p.next()
				if it.kind != tokString {
					return p.fail(it.pos, "a list is translated with string literals only (Groovy's List.contains is type-strict for numbers)")
				}
				items = append(items, strconv.Quote(it.text))
			}
			p.expect("]")
			return scriptNode{cel: "[" + strings.Join(items, ", ") + "]", kind: kindList, prec: precPrimary}
		}
	case tokEOF:
		return p.fail(t.pos, "the expression ends early")
	}
	return p.fail(t.pos, fmt.Sprintf("%q where a value was expected", t.text))
}

// variable translates a name: a literal word or one of Debezium's bindings.
func (p *scriptParser) variable(t token) scriptNode {
	switch t.text {
	case "true", "false":
		return scriptNode{cel: t.text, kind: kindBool, prec: precPrimary, lit: true}
	case "null":
		return scriptNode{cel: "null", kind: kindNull, prec: precPrimary, lit: true}
	case "value", "key":
		p.reads[t.text] = true
		return scriptNode{cel: t.text, kind: kindField, prec: precPrimary, path: []string{t.text}}
	case "topic":
		p.reads["topic"] = true
		return scriptNode{cel: "topic", kind: kindStr, prec: precPrimary}
	case "header":
		// header.<name>.value (RecordHeader.java: schema and value).
		p.expect(".")
		name := p.next()
		if p.err != nil || !p.fieldName(name) {
			return scriptNode{}
		}
		p.expect(".")
		f := p.next()
		if p.err == nil && f.text != "value" {
			return p.fail(f.pos, fmt.Sprintf("header.%s.%s: only a header's value is translated", name.text, f.text))
		}
		p.reads["headers"] = true
		return scriptNode{cel: "headers." + name.text, kind: kindField, prec: precPrimary}
	case "keySchema", "valueSchema":
		return p.fail(t.pos, t.text+": Debezium's schema bindings have no CEL counterpart in mooncdc")
	}
	return p.fail(t.pos, fmt.Sprintf("%q: not one of Debezium's bindings (value, key, topic, header; Jsr223Engine.java:64-74)", t.text))
}
