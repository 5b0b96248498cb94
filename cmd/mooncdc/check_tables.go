package main

import (
	"context"
	"fmt"
	"strings"
)

// This file holds check's table checks: the configured tables exist, mooncdc
// may read them, and their replica identity lets updates and deletes be
// published.

// checkTables resolves the configured set (postgres.tables, or the
// publication's tables when it is empty) and checks that each pattern
// selects a table, that the role may read every table and that each has a
// replica identity.
func (c *checkPG) checkTables(ctx context.Context) error {
	if err := c.loadTables(ctx); err != nil {
		return err
	}
	c.loaded = true
	sel, err := c.cfg.TableSelection() // Validate parsed them already
	if err != nil {
		return err
	}
	patterns := sel.Include
	if len(patterns) > 0 {
		picked := map[string]bool{}
		for _, p := range patterns {
			var names []string
			for _, t := range c.all {
				if p.Match(t.schema, t.table) {
					names = append(names, t.name)
					picked[t.name] = true
				}
			}
			what := "postgres.tables " + p.String()
			if len(names) == 0 {
				c.out.fail(what, "matches no table",
					`check the schema and table names: unquoted names fold to lower case, as in SQL (double-quote others, e.g. public."Orders"); only logged ordinary and partitioned tables are captured`)
				continue
			}
			c.out.pass(what, fmt.Sprintf("%d %s: %s", len(names), checkPlural(len(names), "table", "tables"), checkNames(names)))
		}
		c.capture = []checkTable{}
		for _, t := range c.all {
			if picked[t.name] && sel.Captures(t.schema, t.table) {
				c.capture = append(c.capture, t)
			}
		}
	} else {
		what := fmt.Sprintf("tables of publication %q", c.cfg.Postgres.Publication)
		if !c.pub.exists {
			c.out.skip(what, "postgres.tables is empty and the publication does not exist")
			return nil
		}
		c.capture = []checkTable{}
		var names []string
		for _, t := range c.all {
			if (c.pub.allTables || c.pub.tables[t.name]) && sel.Captures(t.schema, t.table) {
				c.capture = append(c.capture, t)
				names = append(names, t.name)
			}
		}
		if len(names) == 0 {
			c.out.fail(what, "it has none, and postgres.tables is empty",
				fmt.Sprintf("list the tables in postgres.tables, or ALTER PUBLICATION %s ADD TABLE …;", c.pubSQL))
			return nil
		}
		c.out.pass(what, fmt.Sprintf("%d: %s", len(names), checkNames(names)))
	}
	for _, p := range sel.Exclude {
		var names []string
		for _, t := range c.all {
			if p.Match(t.schema, t.table) {
				names = append(names, t.name)
			}
		}
		what := "postgres.tables_exclude " + p.String()
		if len(names) == 0 {
			c.out.warn(what, "matches no table", "check the schema and table names: unquoted names fold to lower case, as in SQL")
			continue
		}
		c.out.pass(what, fmt.Sprintf("leaves out %d %s: %s", len(names), checkPlural(len(names), "table", "tables"), checkNames(names)))
	}
	if len(c.capture) == 0 {
		return nil
	}
	c.checkTopicClashes()

	var unreadable, unkeyed, unreadableSQL, unkeyedSQL []string
	for _, t := range c.capture {
		if !t.readable {
			unreadable, unreadableSQL = append(unreadable, t.name), append(unreadableSQL, t.sql)
		}
		if !t.identity {
			unkeyed, unkeyedSQL = append(unkeyed, t.name), append(unkeyedSQL, t.sql)
		}
	}
	if len(unreadable) == 0 {
		c.out.pass("SELECT on the tables", fmt.Sprintf("role %q may read all %d", c.user, len(c.capture)))
	} else {
		c.out.fail("SELECT on the tables", fmt.Sprintf("role %q may not read %s, so %s snapshot fails", c.user, checkNames(unreadable), checkPlural(len(unreadable), "its", "their")),
			fmt.Sprintf("GRANT SELECT ON %s TO %s; (and USAGE on their schemas)", strings.Join(unreadableSQL, ", "), c.userSQL))
	}
	if len(unkeyed) == 0 {
		c.out.pass("replica identity", "every table has a primary key or REPLICA IDENTITY FULL or USING INDEX")
	} else {
		var fix []string
		for _, t := range unkeyedSQL {
			fix = append(fix, "ALTER TABLE "+t+" REPLICA IDENTITY FULL;")
		}
		n := len(unkeyed)
		c.out.warn("replica identity", fmt.Sprintf("%s %s no primary key and no REPLICA IDENTITY FULL or USING INDEX (for a partitioned table: on every partition): "+
			"once published, Postgres refuses UPDATE and DELETE on %s, so mooncdc run does not add %s to the publication and does not capture %s until %s one",
			checkNames(unkeyed), checkPlural(n, "has", "have"), checkPlural(n, "it", "them"), checkPlural(n, "it", "them"),
			checkPlural(n, "it", "them"), checkPlural(n, "it has", "they have")),
			strings.Join(fix, " ")+" or add a primary key (on a partitioned table, set the identity on each partition: it does not recurse)")
	}
	return nil
}
