package transform

import (
	"regexp"
)

// This file holds Debezium's scripting transforms with CEL for the
// language: Filter and ContentBasedRouter
// (debezium-scripting/debezium-scripting/src/main/java/io/debezium/transforms/,
// Debezium 3.6.1.Final).

// nullHandling is ScriptingTransformation.NullHandling
// (ScriptingTransformation.java:53-102): what a record with a null value
// does: keep (pass unevaluated, the default), drop, or evaluate.
type nullHandling string

const (
	nullKeep     nullHandling = "keep"
	nullDrop     nullHandling = "drop"
	nullEvaluate nullHandling = "evaluate"
)

// scripting is ScriptingTransformation.apply's guard
// (ScriptingTransformation.java:191-206): a record whose topic does not
// match topic.regex (whole match) passes untouched; a null value is kept,
// dropped or evaluated by null.handling.mode.
type scripting struct {
	topic *regexp.Regexp
	nulls nullHandling
}

// guard returns done true with the outcome when the expression must not run.
func (s *scripting) guard(r *Record) (keep, done bool) {
	if s.topic != nil && !s.topic.MatchString(r.Topic) {
		return true, true
	}
	if r.Value == nil {
		switch s.nulls {
		case nullKeep:
			return true, true
		case nullDrop:
			return false, true
		}
	}
	return false, false
}

// Filter is Debezium's Filter (Filter.java:31-34): the record is kept
// when the condition is true and dropped when it is false. (Its
// `condition` description says the opposite; the code keeps on true, and
// FilterTest expects that.)
type Filter struct {
	scripting
	cond *Condition
}

// Apply implements Transform.
func (t *Filter) Apply(r Record) (Record, bool, error) {
	if keep, done := t.guard(&r); done {
		return r, keep, nil
	}
	ok, err := t.cond.Eval(&r)
	if err != nil {
		return r, false, err
	}
	return r, ok, nil
}

// ContentBasedRouter is Debezium's ContentBasedRouter
// (ContentBasedRouter.java:33-46): the record goes to the topic the
// expression names, or stays on its own when it gives null.
type ContentBasedRouter struct {
	scripting
	expr *TopicExpression
}

// Apply implements Transform.
func (t *ContentBasedRouter) Apply(r Record) (Record, bool, error) {
	if keep, done := t.guard(&r); done {
		return r, keep, nil
	}
	topic, ok, err := t.expr.Eval(&r)
	if err != nil {
		return r, false, err
	}
	if ok {
		r.Topic = topic
	}
	return r, true, nil
}
