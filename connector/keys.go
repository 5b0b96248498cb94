package connector

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/schema"
)

// keyResolver completes the stream's relations from the catalog
// (catalog.go) and sets their key columns with keyColumns, the same
// decision the copy makes, so that a row has one key in a snapshot record
// and in a change record. It runs on the stream goroutine, once per
// relation per session.
type keyResolver struct {
	catalogConn
}

func newKeyResolver(pgcfg *pgconn.Config) *keyResolver {
	return &keyResolver{catalogConn{pgcfg: pgcfg}}
}

// keyed returns rel completed from the catalog, with its key columns
// (KeyIndexes, Column.Key) those of keyColumns.
func (k *keyResolver) keyed(rel *schema.Relation) (*schema.Relation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := k.get(ctx)
	if err != nil {
		return nil, err
	}
	out, err := completeRelation(ctx, conn, rel, k.types)
	if err != nil {
		k.close()
		return nil, err
	}
	names, err := keyColumns(ctx, conn, rel.OID)
	if err != nil {
		k.close()
		return nil, fmt.Errorf("look up the key of %s: %w", rel.QualifiedName(), err)
	}
	setKey(out, names)
	return out, nil
}

// keyColumns is the one decision of a table's record key, for snapshot
// and change records alike: the columns of its replica identity index
// under REPLICA IDENTITY USING INDEX, else of its primary key; none (records without a key) for a table without either. It is a
// key every change carries: a delete brings its old replica identity, which
// is the primary key under DEFAULT, the index under USING INDEX, and the
// whole row under FULL (a table with NOTHING is not captured:
// publication.go).
func keyColumns(ctx context.Context, q querier, oid uint32) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT a.attname FROM pg_class c
		JOIN pg_index i ON i.indrelid = c.oid AND CASE WHEN c.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE c.oid = $1`, oid)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// setKey marks names as rel's key columns (KeyIndexes in column order).
func setKey(rel *schema.Relation, names []string) {
	rel.KeyIndexes = rel.KeyIndexes[:0:0]
	for i := range rel.Columns {
		c := &rel.Columns[i]
		c.Key = slices.Contains(names, c.Name)
		if c.Key {
			rel.KeyIndexes = append(rel.KeyIndexes, i)
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
