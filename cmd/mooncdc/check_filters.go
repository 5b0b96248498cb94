package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mooncdc/mooncdc/connector/config"
)

// checkPublicationFilters says which captured tables the publication
// publishes with a row filter or a column list (Postgres 15+), which the
// snapshot follows, and, when the publication does not exist yet, which
// postgres.tables entries mooncdc run will create with theirs. An existing
// publication whose filters differ from the config's is a warning: run
// leaves an existing publication as it is.
func (c *checkPG) checkPublicationFilters(ctx context.Context) error {
	sel, err := c.cfg.TableSelection() // Validate parsed it already
	if err != nil || !c.loaded {
		return err
	}
	if !c.pub.exists {
		if len(sel.Filters) == 0 {
			return nil
		}
		what := "row filters and column lists"
		if c.version < 150000 {
			c.out.fail(what, fmt.Sprintf("postgres.tables gives %d %s a where or columns, which need PostgreSQL 15 or later", len(sel.Filters), checkPlural(len(sel.Filters), "table", "tables")),
				"drop where and columns from postgres.tables, or upgrade the server")
			return nil
		}
		for _, tn := range sortedFilterTables(sel) {
			c.out.pass(what, fmt.Sprintf("mooncdc run creates the publication with %s%s; the snapshot copies the same rows and columns", tn, describeFilter(sel.Filters[tn])))
		}
		return nil
	}
	if c.version < 150000 {
		return nil
	}
	rows, err := c.conn.Query(ctx, `SELECT n.nspname, cl.relname, pg_get_expr(pr.prqual, pr.prrelid),
			CASE WHEN pr.prattrs IS NULL THEN NULL ELSE (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
				WHERE a.attrelid = pr.prrelid AND a.attnum = ANY (pr.prattrs)) END
		FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid
		JOIN pg_class cl ON cl.oid = pr.prrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
		WHERE p.pubname = $1 AND (pr.prqual IS NOT NULL OR pr.prattrs IS NOT NULL)
		ORDER BY 1, 2`, c.cfg.Postgres.Publication)
	if err != nil {
		return err
	}
	defer rows.Close()
	found := map[config.TableName]config.TableFilter{}
	for rows.Next() {
		var tn config.TableName
		var where *string
		var cols []string
		if err := rows.Scan(&tn.Schema, &tn.Table, &where, &cols); err != nil {
			return err
		}
		f := config.TableFilter{Columns: cols}
		if where != nil {
			f.Where = *where
		}
		found[tn] = f
		c.out.pass(fmt.Sprintf("publication %q filters %s", c.cfg.Postgres.Publication, tn),
			strings.TrimPrefix(describeFilter(f), " ")+"; the snapshot copies the same rows and columns")
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, tn := range sortedFilterTables(sel) {
		want, got := sel.Filters[tn], found[tn]
		// Postgres rewrites a WHERE in its own form, so only its presence
		// is compared.
		if len(want.Columns) > 0 && !slices.Equal(want.Columns, got.Columns) || (want.Where != "") != (got.Where != "") {
			c.out.warn(fmt.Sprintf("postgres.tables entry %s", tn),
				fmt.Sprintf("asks for%s, but publication %q exists with%s; mooncdc leaves an existing publication as it is",
					describeFilter(want), c.cfg.Postgres.Publication, orNone(describeFilter(got))),
				fmt.Sprintf("ALTER PUBLICATION %s SET TABLE … with the filter you want, then resnapshot the table", c.pubSQL))
		}
	}
	return nil
}

func sortedFilterTables(sel config.TableSelection) []config.TableName {
	var out []config.TableName
	for tn := range sel.Filters {
		out = append(out, tn)
	}
	slices.SortFunc(out, func(a, b config.TableName) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// describeFilter is " rows WHERE (…), columns a, b", or "" for none.
func describeFilter(f config.TableFilter) string {
	var parts []string
	if f.Where != "" {
		parts = append(parts, "rows WHERE ("+strings.TrimSuffix(strings.TrimPrefix(f.Where, "("), ")")+")")
	}
	if len(f.Columns) > 0 {
		parts = append(parts, "columns "+strings.Join(f.Columns, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return " no row filter or column list"
	}
	return s
}
