package record

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/schema"
)

// KeyColumns is keyColumns' decision from the catalog's answer
// (pgsource.ReplicaIdentity: the table's replica identity and its
// identity index's or primary key's columns), without a server.
func KeyColumns(rules KeyRule, rel *schema.Relation, identity string, index []string) ([]string, error) {
	if custom := rules.custom(rel.Schema, rel.Table); custom != nil {
		return custom, rules.check(rel, custom, identity, index)
	}
	return index, nil
}

// KeyRule holds format.message_key_columns: per table pattern, the
// columns of the record key.
type KeyRule []customKey

type customKey struct {
	table   config.TablePattern
	columns []string
}

// NewKeyRule parses format.message_key_columns (Validate has checked it).
func NewKeyRule(m map[string][]string) (KeyRule, error) {
	var out KeyRule
	for pattern, cols := range m {
		tp, err := config.ParseTablePattern(pattern)
		if err != nil {
			return nil, fmt.Errorf("format.message_key_columns: %w", err)
		}
		out = append(out, customKey{tp, cols})
	}
	// The most specific pattern first, so that "public.orders" wins over
	// "public.*" whatever the map's order.
	slices.SortFunc(out, func(a, b customKey) int {
		if a.table.HasWildcard() != b.table.HasWildcard() {
			if a.table.HasWildcard() {
				return 1
			}
			return -1
		}
		return strings.Compare(a.table.String(), b.table.String())
	})
	return out, nil
}

// custom returns the key columns configured for schema.table, or nil.
func (k KeyRule) custom(schemaName, table string) []string {
	for _, c := range k {
		if c.table.Match(schemaName, table) {
			return c.columns
		}
	}
	return nil
}

// KeyRuleError is a format.message_key_columns entry a table cannot
// follow: the table is parked (nothing of it is written), the others go on.
type KeyRuleError struct{ Err error }

func (e *KeyRuleError) Error() string { return e.Err.Error() }

func (e *KeyRuleError) Unwrap() error { return e.Err }

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *KeyRuleError) TableLocal() {}

// check refuses custom key columns the table lacks, or that a delete does
// not carry: under REPLICA IDENTITY DEFAULT or USING INDEX a delete brings
// only the identity's columns, and a key built from the others would be
// null.
func (k KeyRule) check(rel *schema.Relation, custom []string, identity string, index []string) error {
	for _, c := range custom {
		if !slices.ContainsFunc(rel.Columns, func(col schema.Column) bool { return col.Name == c }) {
			return &KeyRuleError{fmt.Errorf("format.message_key_columns names column %q, which %s does not have: fix the column name", c, rel.QualifiedName())}
		}
		if identity != "f" && !slices.Contains(index, c) {
			return &KeyRuleError{fmt.Errorf("format.message_key_columns names column %q of %s, which a delete does not carry under its replica identity (deletes bring only %v): "+
				"ALTER TABLE %s REPLICA IDENTITY FULL, or key the table by columns of its replica identity",
				c, rel.QualifiedName(), index, config.QualifiedName(rel.Schema, rel.Table))}
		}
	}
	return nil
}

// SetKey marks names as rel's key columns, KeyIndexes in the order of
// names.
func SetKey(rel *schema.Relation, names []string) {
	rel.KeyIndexes = rel.KeyIndexes[:0:0]
	for i := range rel.Columns {
		rel.Columns[i].Key = false
	}
	for _, n := range names {
		for i := range rel.Columns {
			if c := &rel.Columns[i]; c.Name == n && !c.Key {
				c.Key = true
				rel.KeyIndexes = append(rel.KeyIndexes, i)
				break
			}
		}
	}
}

// KeyChanged reports whether an update moved the row to another key: then
// Debezium emits a delete (and tombstone) for the old key and a create for
// the new one, so that compaction does not keep the old key alive.
func KeyChanged(rel *schema.Relation, before, after schema.Tuple) bool {
	if before == nil || len(rel.KeyIndexes) == 0 {
		return false
	}
	for _, i := range rel.KeyIndexes {
		b, a := before[i], after[i]
		if a.Kind == schema.ValueUnchangedToast {
			continue
		}
		if a.Kind != b.Kind || !bytes.Equal(a.Data, b.Data) {
			return true
		}
	}
	return false
}
