package emit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/connector/internal/record"
	"github.com/mooncdc/mooncdc/connector/pgsource"
	"github.com/mooncdc/mooncdc/schema"
)

// Keyer gives the stream's relations their key columns: keyResolver, or a
// fake in the emitter's unit tests.
type Keyer interface {
	// Keyed returns rel completed, with its key columns; a *keyRuleError
	// when the table cannot be keyed as configured.
	Keyed(rel *schema.Relation) (*schema.Relation, error)
	// Close drops what keyed holds between sessions (its connection).
	Close()
}

var _ Keyer = (*KeyResolver)(nil)

// KeyResolver completes the stream's relations from the catalog
// (pgsource's catalog.go) and sets their key columns with keyColumns, the same
// decision the copy makes, so that a row has one key in a snapshot record
// and in a change record. It runs on the stream goroutine, once per
// relation per session.
type KeyResolver struct {
	pgsource.CatalogConn
	rules record.KeyRule
}

func NewKeyResolver(pgcfg *pgconn.Config, rules record.KeyRule) *KeyResolver {
	return &KeyResolver{CatalogConn: pgsource.CatalogConn{PGConfig: pgcfg}, rules: rules}
}

// Close drops the catalog connection between sessions.
func (k *KeyResolver) Close() { k.CatalogConn.Close() }

// Keyed returns rel completed from the catalog, with its key columns
// (KeyIndexes, Column.Key) those of keyColumns.
func (k *KeyResolver) Keyed(rel *schema.Relation) (*schema.Relation, error) {
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
	names, err := KeyColumns(ctx, conn, k.rules, out)
	if err != nil {
		if !errors.As(err, new(*record.KeyRuleError)) {
			k.Close()
		}
		return nil, fmt.Errorf("look up the key of %s: %w", rel.QualifiedName(), err)
	}
	record.SetKey(out, names)
	return out, nil
}

// KeyColumns is the one decision of a table's record key, for snapshot
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
func KeyColumns(ctx context.Context, q pgsource.Querier, rules record.KeyRule, rel *schema.Relation) ([]string, error) {
	identity, index, found, err := pgsource.ReplicaIdentity(ctx, q, rel.OID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, nil // dropped since: the stream's own key stands
	}
	return record.KeyColumns(rules, rel, identity, index)
}
