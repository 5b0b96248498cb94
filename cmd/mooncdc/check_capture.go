package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/mooncdc/mooncdc/connector/config"
	"github.com/mooncdc/mooncdc/connector/pgsource"
)

// checkPartitionRoot fails when an existing publication publishes the
// partitions of a captured partitioned table as tables of their own while
// postgres.publish_via_partition_root asks for the root: run would then
// stream each partition to its own topic, and a row that moves between
// partitions would be a delete in one topic and a create in another. It
// reports whether the check passed (true when it does not apply).
func (c *checkPG) checkPartitionRoot() bool {
	p := c.pub
	if !c.cfg.Postgres.PublishViaPartitionRoot || p.viaRoot {
		return true
	}
	var split []string
	for _, t := range c.capture {
		if p.splitRoots[t.name] {
			split = append(split, t.name)
		}
	}
	if len(split) == 0 {
		return true
	}
	n := len(split)
	c.out.fail(c.pubWhat(), fmt.Sprintf("publishes the partitions of %s as tables of their own (publish_via_partition_root is off), but postgres.publish_via_partition_root is true: "+
		"run would stream each partition to a topic of its own, and a row that moves between partitions would be a delete in one and a create in another",
		checkNames(split)),
		fmt.Sprintf("before mooncdc first streams %s: ALTER PUBLICATION %s SET (publish_via_partition_root = true); (or set postgres.publish_via_partition_root: false to keep a topic per partition)",
			checkPlural(n, "it", "them"), c.pubSQL))
	return false
}

// checkTopicClashes fails when two captured tables would share a data
// topic (their names sanitize to the same topic name), which run refuses.
func (c *checkPG) checkTopicClashes() {
	var names []config.TableName
	for _, t := range c.capture {
		names = append(names, config.TableName{Schema: t.schema, Table: t.table})
	}
	naming, err := c.cfg.TopicNaming() // Validate checked the routes
	if err != nil {
		return
	}
	for _, cl := range naming.Clashes(nil, names) {
		c.out.fail("topics", fmt.Sprintf("%s and %s would share topic %q (their names sanitize to the same topic name), which mooncdc run refuses", cl.Other, cl.Table, cl.Topic),
			"exclude one of them from postgres.tables, or rename one")
	}
}

// loadTables reads every table mooncdc could capture (ordinary and
// partitioned, logged, not a partition: what run puts in a publication it
// creates) and the publication.
func (c *checkPG) loadTables(ctx context.Context) error {
	rows, err := c.conn.Query(ctx, `SELECT n.nspname, c.relname, quote_ident(n.nspname) || '.' || quote_ident(c.relname),
			has_table_privilege(c.oid, 'SELECT') AND has_schema_privilege(n.oid, 'USAGE'), pg_has_role(c.relowner, 'USAGE'),
			`+pgsource.IdentitySQL+`
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relpersistence = 'p'
		  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
		ORDER BY 1, 2`)
	if err != nil {
		return err
	}
	c.all, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (checkTable, error) {
		var t checkTable
		err := r.Scan(&t.schema, &t.table, &t.sql, &t.readable, &t.owned, &t.identity)
		t.name = t.schema + "." + t.table
		return t, err
	})
	if err != nil {
		return err
	}

	truncate := "true" // before Postgres 11 there is nothing to publish for TRUNCATE
	if c.version >= 110000 {
		truncate = "pubtruncate"
	}
	viaRoot := "false" // before Postgres 13 partitions are always published as themselves
	if c.version >= 130000 {
		viaRoot = "pubviaroot"
	}
	p := &c.pub
	err = c.conn.QueryRow(ctx, `SELECT puballtables, pubinsert, pubupdate, pubdelete, `+truncate+`, pg_has_role(pubowner, 'USAGE'), `+viaRoot+`
		FROM pg_publication WHERE pubname = $1`, c.cfg.Postgres.Publication).
		Scan(&p.allTables, &p.insert, &p.update, &p.del, &p.truncat, &p.owned, &p.viaRoot)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	p.exists = true
	// pg_publication_tables lists the leaf partitions of a partitioned
	// table unless publish_via_partition_root: count them as their root.
	root := "c.oid"
	if c.version >= 120000 {
		root = "coalesce(pg_partition_root(c.oid), c.oid)"
	}
	rows, err = c.conn.Query(ctx, `SELECT rn.nspname || '.' || r.relname, bool_or(c.relispartition) FROM pg_publication_tables t
		JOIN pg_namespace n ON n.nspname = t.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = t.tablename
		JOIN pg_class r ON r.oid = `+root+` JOIN pg_namespace rn ON rn.oid = r.relnamespace
		WHERE t.pubname = $1 GROUP BY 1`, c.cfg.Postgres.Publication)
	if err != nil {
		return err
	}
	p.tables, p.splitRoots = map[string]bool{}, map[string]bool{}
	var name string
	var split bool
	_, err = pgx.ForEachRow(rows, []any{&name, &split}, func() error {
		p.tables[name] = true
		p.splitRoots[name] = split
		return nil
	})
	return err
}
