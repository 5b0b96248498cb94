package pgsource

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// ReplicaIdentity reads what a delete of table oid carries: its replica
// identity (pg_class.relreplident: d default, i using index, f full, n
// nothing) and the columns of its replica identity index under USING
// INDEX, else of its primary key, in the index's order, as Debezium orders
// a primary key (JdbcConnection.readPrimaryKeyNames by KEY_SEQ,
// JdbcConnection.java:1441-1451, v3.6.1.Final); none for a table without
// either. found is false when no table has the oid (dropped since).
// connector's keyColumns makes the key decision from the answer.
func ReplicaIdentity(ctx context.Context, q Querier, oid uint32) (identity string, index []string, found bool, err error) {
	err = q.QueryRow(ctx, `SELECT c.relreplident::text, coalesce((SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
		FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = c.oid AND CASE WHEN c.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END), '{}')
		FROM pg_class c WHERE c.oid = $1`, oid).Scan(&identity, &index)
	if err == pgx.ErrNoRows {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	return identity, index, true, nil
}
