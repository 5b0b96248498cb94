package connector

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mooncdc/mooncdc/schema"
)

// keyResolver completes the stream's relations from the catalog
// (catalog.go) and finds a table's primary key columns. pgoutput flags the
// replica identity columns, which is every column under REPLICA IDENTITY
// FULL and none under NOTHING; Debezium keys records by the primary key, so
// for those tables mooncdc asks the catalog. It runs on the stream
// goroutine, once per relation per session.
type keyResolver struct {
	catalogConn
}

func newKeyResolver(pgcfg *pgconn.Config) *keyResolver {
	return &keyResolver{catalogConn{pgcfg: pgcfg}}
}

// keyed returns rel completed from the catalog, with KeyIndexes set to its
// primary key when its replica identity does not name one.
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
	if rel.ReplicaIdentity != 'f' && rel.ReplicaIdentity != 'n' {
		return out, nil
	}
	rows, err := conn.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = $1 AND i.indisprimary
		ORDER BY array_position(i.indkey::int2[], a.attnum)`, rel.OID)
	if err != nil {
		k.close()
		return nil, fmt.Errorf("look up the primary key of %s: %w", rel.QualifiedName(), err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		k.close()
		return nil, fmt.Errorf("look up the primary key of %s: %w", rel.QualifiedName(), err)
	}
	out.KeyIndexes = nil
	for i := range out.Columns {
		c := &out.Columns[i]
		c.Key = false
		for _, n := range names {
			if c.Name == n {
				c.Key = true
				out.KeyIndexes = append(out.KeyIndexes, i)
			}
		}
	}
	return out, nil
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
