package connector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/schema"
)

// keyer gives the stream's relations their key columns: keyResolver, or a
// fake in the emitter's unit tests.
type keyer interface {
	// keyed returns rel completed, with its key columns; a *keyRuleError
	// when the table cannot be keyed as configured.
	keyed(rel *schema.Relation) (*schema.Relation, error)
	// close drops what keyed holds between sessions (its connection).
	close()
}

var _ keyer = (*keyResolver)(nil)

// keyResolver completes the stream's relations from the catalog
// (pgsource's catalog.go) and sets their key columns with keyColumns, the same
// decision the copy makes, so that a row has one key in a snapshot record
// and in a change record. It runs on the stream goroutine, once per
// relation per session.
type keyResolver struct {
	pgsource.CatalogConn
	rules keyRule
}

func newKeyResolver(pgcfg *pgconn.Config, rules keyRule) *keyResolver {
	return &keyResolver{CatalogConn: pgsource.CatalogConn{PGConfig: pgcfg}, rules: rules}
}

// close drops the catalog connection between sessions.
func (k *keyResolver) close() { k.CatalogConn.Close() }

// keyed returns rel completed from the catalog, with its key columns
// (KeyIndexes, Column.Key) those of keyColumns.
func (k *keyResolver) keyed(rel *schema.Relation) (*schema.Relation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := k.Get(ctx)
	if err != nil {
		return nil, err
	}
	out, err := pgsource.CompleteRelation(ctx, conn, rel, k.Types)
	if err != nil {
		k.Close()
		return nil, err
	}
	names, err := keyColumns(ctx, conn, k.rules, out)
	if err != nil {
		if !errors.As(err, new(*keyRuleError)) {
			k.Close()
		}
		return nil, fmt.Errorf("look up the key of %s: %w", rel.QualifiedName(), err)
	}
	setKey(out, names)
	return out, nil
}

// keyColumns is the one decision of a table's record key, for snapshot
// and change records alike: the columns format.message_key_columns names
// for the table (Debezium's message.key.columns); else those of its
// replica identity index under REPLICA IDENTITY USING INDEX, else of its
// primary key, in the index's order, as Debezium orders a primary key
// (JdbcConnection.readPrimaryKeyNames by KEY_SEQ, JdbcConnection.java:1441-1451,
// v3.6.1.Final); none (records without a key) for a table without
// either. It is a key every change carries: a delete brings its old
// replica identity, which is the primary key under DEFAULT, the index
// under USING INDEX, and the whole row under FULL (a table with NOTHING
// is not captured: pgsource/publication.go), and custom key columns must be part
// of it (keyRule.check).
func keyColumns(ctx context.Context, q pgsource.Querier, rules keyRule, rel *schema.Relation) ([]string, error) {
	identity, index, found, err := pgsource.ReplicaIdentity(ctx, q, rel.OID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, nil // dropped since: the stream's own key stands
	}
	return keyColumnsOf(rules, rel, identity, index)
}

// keyColumnsOf is keyColumns' decision from the catalog's answer
// (pgsource.ReplicaIdentity: the table's replica identity and its
// identity index's or primary key's columns), without a server.
func keyColumnsOf(rules keyRule, rel *schema.Relation, identity string, index []string) ([]string, error) {
	if custom := rules.custom(rel.Schema, rel.Table); custom != nil {
		return custom, rules.check(rel, custom, identity, index)
	}
	return index, nil
}

// keyRule holds format.message_key_columns: per table pattern, the
// columns of the record key.
type keyRule []customKey

type customKey struct {
	table   config.TablePattern
	columns []string
}

// newKeyRule parses format.message_key_columns (Validate has checked it).
func newKeyRule(m map[string][]string) (keyRule, error) {
	var out keyRule
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
func (k keyRule) custom(schemaName, table string) []string {
	for _, c := range k {
		if c.table.Match(schemaName, table) {
			return c.columns
		}
	}
	return nil
}

// keyRuleError is a format.message_key_columns entry a table cannot
// follow: the table is parked (nothing of it is written), the others go on.
type keyRuleError struct{ err error }

func (e *keyRuleError) Error() string { return e.err.Error() }

func (e *keyRuleError) Unwrap() error { return e.err }

// TableLocal marks the error as the table's own (tableFault): the table is
// parked, the others go on.
func (e *keyRuleError) TableLocal() {}

// check refuses custom key columns the table lacks, or that a delete does
// not carry: under REPLICA IDENTITY DEFAULT or USING INDEX a delete brings
// only the identity's columns, and a key built from the others would be
// null.
func (k keyRule) check(rel *schema.Relation, custom []string, identity string, index []string) error {
	for _, c := range custom {
		if !slices.ContainsFunc(rel.Columns, func(col schema.Column) bool { return col.Name == c }) {
			return &keyRuleError{fmt.Errorf("format.message_key_columns names column %q, which %s does not have: fix the column name", c, rel.QualifiedName())}
		}
		if identity != "f" && !slices.Contains(index, c) {
			return &keyRuleError{fmt.Errorf("format.message_key_columns names column %q of %s, which a delete does not carry under its replica identity (deletes bring only %v): "+
				"ALTER TABLE %s REPLICA IDENTITY FULL, or key the table by columns of its replica identity",
				c, rel.QualifiedName(), index, config.QualifiedName(rel.Schema, rel.Table))}
		}
	}
	return nil
}

// setKey marks names as rel's key columns, KeyIndexes in the order of
// names.
func setKey(rel *schema.Relation, names []string) {
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

// keyChanged reports whether an update moved the row to another key: then
// Debezium emits a delete (and tombstone) for the old key and a create for
// the new one, so that compaction does not keep the old key alive.
func keyChanged(rel *schema.Relation, before, after schema.Tuple) bool {
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
