package transform

import (
	"fmt"
)

// This file holds the chain: transforms applied in configured order, each
// guarded by an optional predicate, as Kafka Connect's TransformationChain
// and TransformationStage apply them.

// Transform is one configured transformation (Kafka Connect's
// Transformation.apply). Apply returns the transformed record, or keep
// false when the record is dropped (Connect's null). It never changes r
// in place. Apply is safe for concurrent use.
type Transform interface {
	Apply(r Record) (out Record, keep bool, err error)
}

// Predicate is one configured predicate (Kafka Connect's Predicate.test).
// Test is safe for concurrent use.
type Predicate interface {
	Test(r *Record) bool
}

// Stage is one transform of a chain with its alias, its type as
// configured, and its predicate.
type Stage struct {
	Alias     string
	Type      string
	Transform Transform
	Predicate Predicate // nil: always applied
	PredAlias string
	Negate    bool
}

// Chain is the configured transforms in order. The zero Chain applies
// nothing. A Chain is safe for concurrent use.
type Chain struct {
	Stages []Stage
}

// Error is a transform that failed on a record: which one and why. The
// pipeline parks the record's table with it.
type Error struct {
	Alias string // the transform's alias in `transforms`
	Type  string // its type as configured
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("transform %q (%s) failed: %v", e.Alias, e.Type, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// TableLocal marks the failure as its record's table's own: the pipeline
// parks that table, the others go on (connector/internal/fault.TableFault).
func (e *Error) TableLocal() {}

// Apply runs the chain on r: each stage whose predicate allows it, in
// order, as TransformationStage.apply decides
// (connect/runtime/src/main/java/org/apache/kafka/connect/runtime/TransformationStage.java:55-60:
// applied when there is no predicate or when negate XOR test). keep is
// false when a stage dropped the record; the stages after it do not run
// (TransformationChain.apply returns null at once). An error is an
// *Error naming the stage.
func (c *Chain) Apply(r Record) (out Record, keep bool, err error) {
	for i := range c.Stages {
		s := &c.Stages[i]
		if s.Predicate != nil && s.Negate == s.Predicate.Test(&r) {
			continue
		}
		r, keep, err = s.Transform.Apply(r)
		if err != nil {
			return Record{}, false, &Error{Alias: s.Alias, Type: s.Type, Err: err}
		}
		if !keep {
			return Record{}, false, nil
		}
	}
	return r, true, nil
}

// Len returns the number of stages.
func (c *Chain) Len() int { return len(c.Stages) }
