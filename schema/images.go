package schema

import "fmt"

// This file picks and checks the row images a change's record key and value
// are built from, for every encoder.

// checkTuple checks that the images have one value per column of rel, so
// that a malformed change is an error and never an index panic.
func checkTuple(rel *Relation, ts ...Tuple) error {
	for _, t := range ts {
		if t != nil && len(t) != len(rel.Columns) {
			return fmt.Errorf("encode %s: %w (%d values, %d columns)", rel.QualifiedName(), errTupleColumns, len(t), len(rel.Columns))
		}
	}
	return nil
}

func errOp(op Op) error {
	return fmt.Errorf("encode: unknown operation %q", byte(op))
}

func errNoRelation(op Op) error {
	return fmt.Errorf("encode: %q change without Relation", byte(op))
}

// valueImages checks a row change and returns the images its value
// carries: none for a truncate.
func valueImages(ch *Change) (before, after Tuple, err error) {
	switch ch.Op {
	case OpRead, OpCreate, OpUpdate, OpDelete, OpTruncate:
	default:
		return nil, nil, errOp(ch.Op)
	}
	if ch.Relation == nil {
		return nil, nil, errNoRelation(ch.Op)
	}
	if ch.Op == OpTruncate {
		return nil, nil, nil
	}
	return ch.Before, ch.After, checkTuple(ch.Relation, ch.Before, ch.After)
}

// keyImages picks the images a record key is built from: the new row (the
// old one for a delete), with the other image to take an unchanged
// TOASTed key value from. primary is nil when the record has no key: a
// truncate, a table without key columns, a delete without an old image.
func keyImages(ch *Change) (primary, fallback Tuple, err error) {
	switch ch.Op {
	case OpTruncate:
		return nil, nil, nil
	case OpRead, OpCreate, OpUpdate, OpDelete:
	default:
		return nil, nil, errOp(ch.Op)
	}
	rel := ch.Relation
	if rel == nil {
		return nil, nil, errNoRelation(ch.Op)
	}
	if len(rel.KeyIndexes) == 0 {
		return nil, nil, nil
	}
	primary, fallback = ch.After, ch.Before
	if ch.Op == OpDelete {
		primary, fallback = ch.Before, nil
	}
	if primary == nil {
		primary, fallback = fallback, nil
	}
	return primary, fallback, nil
}
