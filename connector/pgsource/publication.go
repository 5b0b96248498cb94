package pgsource

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/internal/fault"
	"go.uber.org/zap"
)

// This file holds what mooncdc does to the publication: create it for the
// tables that postgres.tables selects, and add tables that appear later.
// Two rules decide what goes in, here and nowhere else:
//
//   - A partition is never added on its own: its root is (the publication
//     then covers the partitions). With postgres.publish_via_partition_root
//     a created publication sends the partitions' changes as the root's.
//   - A table that has no replica identity (no primary key, or REPLICA
//     IDENTITY NOTHING, or USING INDEX on an index that is gone) is never
//     added: Postgres refuses every UPDATE and DELETE on a table in a
//     publication that publishes them without a replica identity ("cannot
//     update table … because it does not have a replica identity"), so
//     adding it would break the application's writes. It is reported
//     instead (run's log, status, check), and added by a later discovery
//     once it has an identity.

// IdentitySQL is the SQL condition that a table (pg_class alias c) has a
// replica identity that UPDATE and DELETE can publish: for a partitioned
// table, every one of its partitions has one (Postgres checks each
// partition that a write touches).
const IdentitySQL = `NOT EXISTS (SELECT 1 FROM pg_class l WHERE l.oid IN (` + treeSQL + `)
	AND l.relkind = 'r' AND NOT (l.relreplident = 'f'
		OR (l.relreplident = 'd' AND EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = l.oid AND i.indisprimary))
		OR (l.relreplident = 'i' AND EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = l.oid AND i.indisreplident))))`

// EstimatedRowsSQL is the SQL expression for the planner's row estimate of
// a table (pg_class alias c), -1 when never analyzed. A partitioned table
// has no rows of its own: its estimate is the sum of its partitions'.
const EstimatedRowsSQL = `(CASE WHEN c.relkind = 'p' THEN (SELECT coalesce(sum(l.reltuples) FILTER (WHERE l.reltuples >= 0), -1)
		FROM pg_partition_tree(c.oid) pt JOIN pg_class l ON l.oid = pt.relid WHERE l.relkind = 'r')
	ELSE c.reltuples END)::float8`

// treeSQL lists a table (pg_class alias c) and, for a partitioned table,
// its partitions at every level (pg_partition_tree lists nothing for a
// table that is not partitioned).
const treeSQL = `SELECT c.oid UNION SELECT relid FROM pg_partition_tree(c.oid)`

// KeylessFix is the advice for a table without a replica identity.
func KeylessFix(t config.TableName) string {
	return "add a primary key, or ALTER TABLE " + config.QualifiedName(t.Schema, t.Table) +
		" REPLICA IDENTITY FULL (or USING INDEX on a unique index of NOT NULL columns; for a partitioned table, on each partition: it does not recurse); mooncdc adds it to the publication at its next table discovery"
}

// candidate is a table that postgres.tables selects and the publication
// does not cover yet.
type candidate struct {
	config.TableName
	identity bool
}

// uncovered lists the tables that patterns select and that publication pub
// (which need not exist) does not cover: neither the table nor, for a
// partitioned table, any of its partitions is published. Only logged
// ordinary and partitioned tables that are not partitions themselves are
// candidates.
//
// The publication's tables are listed once (pg_publication_tables computes
// all of them whatever the WHERE), and only a partitioned table looks at
// its partitions: asked per table, 5,000 tables took 13.7 s of Postgres
// CPU at every discovery; once, 69 ms.
func uncovered(ctx context.Context, db *pgx.Conn, pub string, sel config.TableSelection) ([]candidate, error) {
	rows, err := db.Query(ctx, `WITH published AS MATERIALIZED (SELECT tc.oid FROM pg_publication_tables t
			JOIN pg_namespace tn ON tn.nspname = t.schemaname JOIN pg_class tc ON tc.relnamespace = tn.oid AND tc.relname = t.tablename
			WHERE t.pubname = $1)
		SELECT n.nspname, c.relname, `+IdentitySQL+`
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relpersistence = 'p'
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
		  AND c.oid NOT IN (SELECT oid FROM published)
		  AND (c.relkind <> 'p' OR NOT EXISTS (SELECT 1 FROM pg_partition_tree(c.oid) pt JOIN published p ON p.oid = pt.relid))
		ORDER BY 1, 2`, pub)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var out []candidate
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.Schema, &c.Table, &c.identity); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if sel.Picks(c.Schema, c.Table) {
			out = append(out, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return out, nil
}

// splitByIdentity returns the publication entries of the candidates that
// may be published (quoted names, with the entry's column list and row
// filter) and the tables that have no replica identity.
func splitByIdentity(cs []candidate, sel config.TableSelection) (publish []string, keyless []config.TableName) {
	for _, c := range cs {
		if c.identity {
			publish = append(publish, config.QualifiedName(c.Schema, c.Table)+filterSQL(sel.Filters[c.TableName]))
		} else {
			keyless = append(keyless, c.TableName)
		}
	}
	return publish, keyless
}

// filterSQL is a publication entry's column list and row filter
// (Postgres 15+: CREATE PUBLICATION … FOR TABLE t (a, b) WHERE (…)).
func filterSQL(f config.TableFilter) string {
	out := ""
	if len(f.Columns) > 0 {
		cols := make([]string, len(f.Columns))
		for i, c := range f.Columns {
			cols[i] = config.QuoteIdent(c)
		}
		out += " (" + strings.Join(cols, ", ") + ")"
	}
	if f.Where != "" {
		out += " WHERE (" + f.Where + ")"
	}
	return out
}

// filtersNeedPG15 refuses row filters and column lists on a server before
// Postgres 15, which has neither.
func filtersNeedPG15(ctx context.Context, db *pgx.Conn, sel config.TableSelection) error {
	if len(sel.Filters) == 0 {
		return nil
	}
	var version int
	if err := db.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return fmt.Errorf("read the server version: %w", err)
	}
	if version < 150000 {
		return &fault.CriticalError{Err: fmt.Errorf("postgres.tables: entries with where or columns need PostgreSQL 15 or later (publication row filters and column lists); this server is %d.%d: drop them, or upgrade",
			version/10000, version%10000)}
	}
	return nil
}

// UnpublishedKeyless lists the tables that patterns select which mooncdc
// leaves out of publication pub because they have no replica identity
// For status and check; it only reads.
func UnpublishedKeyless(ctx context.Context, db *pgx.Conn, pub string, sel config.TableSelection) ([]config.TableName, error) {
	if all, _, err := publicationInfo(ctx, db, pub); err != nil || all {
		return nil, err
	}
	cs, err := uncovered(ctx, db, pub, sel)
	if err != nil {
		return nil, err
	}
	_, keyless := splitByIdentity(cs, sel)
	return keyless, nil
}

// publicationInfo says whether pub is FOR ALL TABLES and whether it exists.
func publicationInfo(ctx context.Context, db *pgx.Conn, pub string) (allTables, exists bool, err error) {
	err = db.QueryRow(ctx, `SELECT puballtables FROM pg_publication WHERE pubname = $1`, pub).Scan(&allTables)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("look up publication %q: %w", pub, err)
	}
	return allTables, true, nil
}

// EnsurePublication creates publication name FOR TABLE the tables that
// patterns select, unless it exists (an existing publication is left
// alone). It returns the selected tables left out for want of a replica
// identity; when every selected table is such, the publication is created
// empty and discovery adds them once they have one.
func EnsurePublication(ctx context.Context, db *pgx.Conn, name string, sel config.TableSelection, viaRoot bool) (keyless []config.TableName, err error) {
	_, exists, err := publicationInfo(ctx, db, name)
	if err != nil || exists {
		return nil, err
	}
	if len(sel.Include) == 0 {
		return nil, &fault.CriticalError{Err: fmt.Errorf("publication %q does not exist and postgres.tables is empty: list the tables to capture in postgres.tables, or create the publication (CREATE PUBLICATION %s FOR TABLE …)", name, config.QuoteIdent(name))}
	}
	cs, err := uncovered(ctx, db, name, sel)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, &fault.CriticalError{Err: fmt.Errorf("no table matches postgres.tables %v (less postgres.tables_exclude %v): check the schema and table names (unquoted names are lower-cased, as in SQL)",
			patternStrings(sel.Include), patternStrings(sel.Exclude))}
	}
	if err := filtersNeedPG15(ctx, db, sel); err != nil {
		return nil, err
	}
	publish, keyless := splitByIdentity(cs, sel)
	sql := "CREATE PUBLICATION " + config.QuoteIdent(name)
	if len(publish) > 0 {
		sql += " FOR TABLE " + strings.Join(publish, ", ")
	}
	if viaRoot {
		sql += " WITH (publish_via_partition_root = true)"
	}
	if err := execPublication(ctx, db, sql, cs, sel); err != nil {
		if errors.As(err, new(*fault.CriticalError)) {
			return nil, err
		}
		return nil, fmt.Errorf("create publication %q: %w (mooncdc's role needs CREATE on the database and ownership of the tables, or create the publication yourself)", name, err)
	}
	return keyless, nil
}

// execPublication runs sql, which creates or extends a publication. When
// some of the tables cs get a row filter or a column list, it runs in a
// transaction that then tries a DELETE of no row on each: Postgres checks
// the publication against the table's replica identity there (a row filter
// may use only its columns, a column list must hold them) and would
// otherwise refuse every UPDATE and DELETE of the application from the
// publication's creation on. A refusal rolls the publication back.
func execPublication(ctx context.Context, db *pgx.Conn, sql string, cs []candidate, sel config.TableSelection) error {
	var filtered []candidate
	for _, c := range cs {
		if _, ok := sel.Filters[c.TableName]; ok && c.identity {
			filtered = append(filtered, c)
		}
	}
	if len(filtered) == 0 {
		_, err := db.Exec(ctx, sql)
		return err
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, sql); err != nil {
		return err
	}
	for _, c := range filtered {
		if _, err := tx.Exec(ctx, "DELETE FROM "+config.QualifiedName(c.Schema, c.Table)+" WHERE false"); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "42P10" { // invalid_column_reference
				return &fault.CriticalError{Err: fmt.Errorf("postgres.tables entry %s: with its where or columns, Postgres would refuse every UPDATE and DELETE on the table (%s%s): "+
					"a row filter may use only the replica identity's columns and a column list must include them; use those columns, or ALTER TABLE %s REPLICA IDENTITY FULL "+
					"(then the column list must name every column); nothing was created",
					c.TableName, pgErr.Message, detailSuffix(pgErr), config.QualifiedName(c.Schema, c.Table))}
			}
			return err
		}
	}
	return tx.Commit(ctx)
}

// detailSuffix is ": <DETAIL>" of a server error, or "".
func detailSuffix(e *pgconn.PgError) string {
	if e.Detail == "" {
		return ""
	}
	return ": " + e.Detail
}

// AddMatchingTables adds the tables that patterns select and publication
// pub does not cover yet, unless it publishes all tables. It returns the
// tables it added and those it left out for want of a replica identity.
// before, when not nil, is told the tables it is about to add, before it
// adds them.
func AddMatchingTables(ctx context.Context, db *pgx.Conn, pub string, sel config.TableSelection,
	before func([]config.TableName)) (added []config.TableName, keyless []config.TableName, err error) {
	all, _, err := publicationInfo(ctx, db, pub)
	if err != nil || all {
		return nil, nil, err
	}
	cs, err := uncovered(ctx, db, pub, sel)
	if err != nil {
		return nil, nil, err
	}
	publish, keyless := splitByIdentity(cs, sel)
	if len(publish) == 0 {
		return nil, keyless, nil
	}
	if err := filtersNeedPG15(ctx, db, sel); err != nil {
		return nil, keyless, err
	}
	for _, c := range cs {
		if c.identity {
			added = append(added, c.TableName)
		}
	}
	if before != nil {
		before(added)
	}
	if err := execPublication(ctx, db, "ALTER PUBLICATION "+config.QuoteIdent(pub)+" ADD TABLE "+strings.Join(publish, ", "), cs, sel); err != nil {
		if errors.As(err, new(*fault.CriticalError)) {
			return nil, keyless, err
		}
		return nil, keyless, fmt.Errorf("add %s to publication %q: %w (grant mooncdc's role ownership of the tables, or add them yourself)", strings.Join(publish, ", "), pub, err)
	}
	return added, keyless, nil
}

func patternStrings(ps []config.TablePattern) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// KeylessTables remembers which selected tables were reported as left out
// of the publication, so that each is logged once (again if it comes back
// after being fixed). Safe for concurrent use.
type KeylessTables struct {
	mu       sync.Mutex
	reported map[config.TableName]bool
}

// Report logs, as an error with the fix, each table of now that was not
// reported before, and forgets those no longer in now.
func (k *KeylessTables) Report(log *zap.Logger, now []config.TableName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	next := make(map[config.TableName]bool, len(now))
	for _, t := range now {
		next[t] = true
		if k.reported[t] {
			continue
		}
		log.Error("table not captured: it has no primary key or replica identity, and adding it to the publication would make Postgres refuse "+
			"every UPDATE and DELETE on it; "+KeylessFix(t), zap.Stringer("table", t))
	}
	k.reported = next
}

// PubColumns is what a publication publishes of one table: which columns
// pgoutput sends, and which rows (the row filter).
type PubColumns struct {
	Listed    map[string]bool // nil: every column that is not generated
	GenCols   bool            // generated columns in listed are sent (Postgres 18+)
	RowFilter string          // "" for none
}

// Has reports whether pgoutput sends the column: one the column list names
// (a publication without a list names every column), and a stored
// generated column only from Postgres 18 on, where it is in the list only
// when the publication publishes it (publish_generated_columns = stored,
// or named in a column list); before 18 the list names generated columns
// although pgoutput never sends them.
func (p PubColumns) Has(column string, generated bool) bool {
	if p.Listed == nil {
		return !generated
	}
	return p.Listed[column] && (!generated || p.GenCols)
}

// PublishedColumns reads from pg_publication_tables what publication pub
// publishes of the table, so that a snapshot carries the same columns and
// rows as the stream, as Postgres's own initial table sync does. Column
// lists and row filters came in Postgres 15; before, and for a table the
// publication does not list by that name (a partition published through
// its root, or the other way round), every non-generated column and every
// row.
func PublishedColumns(ctx context.Context, conn *pgx.Conn, pub, schemaName, table string) (PubColumns, error) {
	// server_version_num is not among the parameters the server reports.
	var version int
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		return PubColumns{}, fmt.Errorf("read the server version: %w", err)
	}
	if version < 150000 {
		return PubColumns{}, nil
	}
	// pg_publication_tables computes every table of the publication
	// whatever the WHERE (77 ms per table at 5,000 tables, for each copy):
	// a publication without column lists and row filters, that does not
	// publish generated columns (Postgres 18's pubgencols), publishes
	// every non-generated column and every row of each table, which is
	// what the view would say.
	var plain bool
	if err := conn.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM pg_publication_rel r
			WHERE r.prpubid = p.oid AND (r.prattrs IS NOT NULL OR r.prqual IS NOT NULL))
		  AND coalesce(to_jsonb(p)->>'pubgencols', 'n') <> 's'
		FROM pg_publication p WHERE p.pubname = $1`, pub).Scan(&plain); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return PubColumns{}, fmt.Errorf("read whether publication %q has column lists or row filters: %w", pub, err)
	}
	if plain {
		return PubColumns{}, nil
	}
	var names []string
	var filter *string
	err := conn.QueryRow(ctx, `SELECT attnames::text[], rowfilter FROM pg_publication_tables
		WHERE pubname = $1 AND schemaname = $2 AND tablename = $3`, pub, schemaName, table).Scan(&names, &filter)
	if errors.Is(err, pgx.ErrNoRows) {
		return PubColumns{}, nil
	}
	if err != nil {
		return PubColumns{}, fmt.Errorf("read the columns and row filter publication %q has for the table: %w", pub, err)
	}
	var p PubColumns
	if names != nil {
		p.Listed, p.GenCols = make(map[string]bool, len(names)), version >= 180000
		for _, n := range names {
			p.Listed[n] = true
		}
	}
	if filter != nil {
		p.RowFilter = *filter
	}
	return p, nil
}
