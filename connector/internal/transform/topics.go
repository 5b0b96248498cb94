package transform

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// This file answers, for a table's topic, which topics the chain can
// send its records to: what a re-copy must read to find the keys the
// table no longer has (stale keys, connector/internal/snapshot/stale.go).
// Only a ContentBasedRouter changes a record's topic; its expression's
// form tells the topics it can give when it is built from string
// literals, `topic`, null, `+`, `? :` and dyn(). Any other expression
// (one reading value, key or headers for the name) gives topics that
// cannot be listed: the chain's topics are open, and Topics says so
// with a *RouteError naming the transform.

// target is one topic a router's expression can give: null (the record
// keeps its topic), or the concatenation of its parts, each a literal
// or the record's topic.
type target struct {
	null  bool
	parts []targetPart
}

type targetPart struct {
	lit   string
	topic bool
}

// on returns the topic t gives for a record on topic; false for null.
func (t target) on(topic string) (string, bool) {
	if t.null {
		return "", false
	}
	s := ""
	for _, p := range t.parts {
		if p.topic {
			s += topic
		} else {
			s += p.lit
		}
	}
	return s, true
}

// fixed reports whether t's topic does not depend on the record's.
func (t target) fixed() bool {
	return !slices.ContainsFunc(t.parts, func(p targetPart) bool { return p.topic })
}

// maxTargets bounds the targets listed for one expression (each `+` of
// two conditionals multiplies them).
const maxTargets = 64

// targetsOf lists the topics e can give, or says why they are open.
func targetsOf(e celast.Expr) ([]target, string) {
	const content = "names the topic from the record's content (value, key or headers), so the topics its records can go to cannot be listed"
	switch e.Kind() {
	case celast.LiteralKind:
		switch v := e.AsLiteral().(type) {
		case types.String:
			return []target{{parts: []targetPart{{lit: string(v)}}}}, ""
		case types.Null:
			return []target{{null: true}}, ""
		}
		return nil, "gives a literal that is not a topic name"
	case celast.IdentKind:
		if e.AsIdent() == "topic" {
			return []target{{parts: []targetPart{{topic: true}}}}, ""
		}
		return nil, content
	case celast.CallKind:
		c := e.AsCall()
		args := c.Args()
		switch {
		case c.IsMemberFunction():
		case c.FunctionName() == operators.Conditional && len(args) == 3:
			a, why := targetsOf(args[1])
			if why != "" {
				return nil, why
			}
			b, why := targetsOf(args[2])
			if why != "" {
				return nil, why
			}
			if len(a)+len(b) > maxTargets {
				return nil, "gives too many topics to list"
			}
			return append(a, b...), ""
		case c.FunctionName() == operators.Add && len(args) == 2:
			a, why := targetsOf(args[0])
			if why != "" {
				return nil, why
			}
			b, why := targetsOf(args[1])
			if why != "" {
				return nil, why
			}
			if len(a)*len(b) > maxTargets {
				return nil, "gives too many topics to list"
			}
			var out []target
			for _, x := range a {
				for _, y := range b {
					if x.null || y.null {
						return nil, "concatenates a null" // fails when evaluated
					}
					out = append(out, target{parts: append(slices.Clip(x.parts), y.parts...)})
				}
			}
			return out, ""
		case (c.FunctionName() == "dyn" || c.FunctionName() == "string") && len(args) == 1:
			return targetsOf(args[0])
		}
	}
	return nil, content
}

// RouteError is a chain whose routing a re-copy cannot follow: the
// topics a table's records can go to are open, or may hold other
// tables' records. Which transform, and why.
type RouteError struct {
	Alias, Type string
	Why         string
}

func (e *RouteError) Error() string {
	return fmt.Sprintf("transform %q (%s) %s", e.Alias, e.Type, e.Why)
}

// Topics returns the topics the chain can send a record of topic to
// (topic first; it is always among them: a tombstone, a record a
// predicate or topic.regex skips, or a null from the expression stays
// there), each one no other topic's records can reach through the
// chain, as far as the chain alone shows: a fixed topic (one that does
// not contain the record's) is the table's only when the router's
// topic.regex, or a TopicNameMatches predicate it is applied under, is
// the table's topic literally (dots escaped). Otherwise a *RouteError.
//
// It does not know the other tables' own topics: a router that gives
// "x." + topic, where some other captured table's topic is "x.<this
// topic>", is not seen (docs/transforms.md says so).
func (c *Chain) Topics(topic string) ([]string, error) {
	set := []string{topic}
	for i := range c.Stages {
		s := &c.Stages[i]
		r, ok := s.Transform.(*ContentBasedRouter)
		if !ok {
			continue
		}
		if r.expr.open != "" {
			return nil, &RouteError{Alias: s.Alias, Type: s.Type, Why: fmt.Sprintf("%s (topic.expression %q)", r.expr.open, r.expr.src)}
		}
		next := slices.Clone(set)
		for _, t := range set {
			if r.topic != nil && !r.topic.MatchString(t) {
				continue
			}
			if s.Predicate != nil && !s.Negate {
				if p, ok := s.Predicate.(*TopicNameMatches); ok && !p.re.MatchString(t) {
					continue
				}
			}
			only := literalOf(r.topic) == t
			if p, ok := s.Predicate.(*TopicNameMatches); ok && !s.Negate && literalOf(p.re) == t {
				only = true
			}
			for _, tg := range r.expr.targets {
				name, ok := tg.on(t)
				if !ok || name == "" {
					continue
				}
				if tg.fixed() && !only {
					return nil, &RouteError{Alias: s.Alias, Type: s.Type, Why: fmt.Sprintf(
						"routes to the fixed topic %q, which other tables' records may reach too: its topic.regex (or a TopicNameMatches predicate) is not the table's topic %q alone", name, t)}
				}
				if !slices.Contains(next, name) {
					next = append(next, name)
				}
			}
		}
		set = next
	}
	// Another table's records must not reach them: no router may give
	// one of them from a topic that is not the table's.
	for _, name := range set {
		if err := c.sharedBy(name, set); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// sharedBy returns a *RouteError when a router of the chain can give
// name from a topic not in own (the topics of one table's records).
func (c *Chain) sharedBy(name string, own []string) error {
	for i := range c.Stages {
		s := &c.Stages[i]
		r, ok := s.Transform.(*ContentBasedRouter)
		if !ok {
			continue
		}
		takes := func(from string) bool { // whether s may route a record on topic from
			if slices.Contains(own, from) {
				return false // the table's own records
			}
			if r.topic != nil && !r.topic.MatchString(from) {
				return false
			}
			if p, ok := s.Predicate.(*TopicNameMatches); ok && !s.Negate && !p.re.MatchString(from) {
				return false
			}
			return true
		}
		for _, tg := range r.expr.targets {
			if tg.null {
				continue
			}
			if tg.fixed() {
				lit, _ := tg.on("")
				restricted := false
				for _, re := range []*regexp.Regexp{r.topic, predicateRegexp(s)} {
					if l := literalOf(re); l != "" && slices.Contains(own, l) {
						restricted = true
					}
				}
				if lit == name && !restricted {
					return &RouteError{Alias: s.Alias, Type: s.Type, Why: fmt.Sprintf(
						"routes to the fixed topic %q, which other tables' records may reach too: its topic.regex (or a TopicNameMatches predicate) is not the table's topic alone", name)}
				}
				continue
			}
			if from, ok := tg.from(name); ok && takes(from) {
				return &RouteError{Alias: s.Alias, Type: s.Type, Why: fmt.Sprintf(
					"can route the records of topic %q to %q, where the table's records go too", from, name)}
			}
		}
	}
	return nil
}

// predicateRegexp is the pattern of s's TopicNameMatches predicate when
// s runs only where it matches, else nil.
func predicateRegexp(s *Stage) *regexp.Regexp {
	if p, ok := s.Predicate.(*TopicNameMatches); ok && !s.Negate {
		return p.re
	}
	return nil
}

// from returns the topic t gives name for, when t names topics from the
// record's topic and one gives name.
func (t target) from(name string) (string, bool) {
	k, lits := 0, 0
	for _, p := range t.parts {
		if p.topic {
			k++
		} else {
			lits += len(p.lit)
		}
	}
	if k == 0 || len(name) <= lits || (len(name)-lits)%k != 0 {
		return "", false
	}
	n := (len(name) - lits) / k
	at := 0
	for _, p := range t.parts {
		if p.topic {
			break
		}
		at += len(p.lit)
	}
	if at+n > len(name) {
		return "", false
	}
	from := name[at : at+n]
	if got, _ := t.on(from); got != name {
		return "", false
	}
	return from, true
}

// literalOf returns the one topic re (compiled as ^(?:pattern)$)
// matches, or "" when it matches more than one (or re is nil).
func literalOf(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return ""
	}
	p = p.Simplify()
	if p.Op != syntax.OpConcat || len(p.Sub) != 3 || p.Sub[0].Op != syntax.OpBeginText || p.Sub[2].Op != syntax.OpEndText {
		return ""
	}
	lit := p.Sub[1]
	if lit.Op != syntax.OpLiteral || lit.Flags&syntax.FoldCase != 0 {
		return ""
	}
	return string(lit.Rune)
}
