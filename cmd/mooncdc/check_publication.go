package main

import (
	"context"
	"fmt"
	"strings"
)

// This file holds check's publication check: the configured publication, or
// the right to create it, as run needs it.

// checkPublication compares the publication with the configured set, or,
// when it does not exist, checks that run may create it.
func (c *checkPG) checkPublication(context.Context) error {
	what, p := c.pubWhat(), c.pub
	patterns := len(c.cfg.Postgres.Tables) > 0
	if !c.loaded {
		c.out.skip(what, "the tables could not be read")
		return nil
	}
	if c.capture == nil && !p.exists {
		c.out.fail(what, "does not exist and postgres.tables is empty, so there is nothing to capture",
			fmt.Sprintf("list the tables in postgres.tables (mooncdc run then creates the publication), or as an admin: CREATE PUBLICATION %s FOR TABLE …;", c.pubSQL))
		return nil
	}
	if len(c.capture) == 0 {
		c.out.skip(what, "no table to publish")
		return nil
	}
	var captureSQL, notOwned []string
	for _, t := range c.capture {
		captureSQL = append(captureSQL, t.sql)
		if !t.owned {
			notOwned = append(notOwned, t.name)
		}
	}

	if !p.exists {
		if c.super || (c.dbCreate && len(notOwned) == 0) {
			c.out.pass(what, fmt.Sprintf("does not exist; mooncdc run creates it for the %d %s", len(c.capture), checkPlural(len(c.capture), "table", "tables")))
			return nil
		}
		var why []string
		if !c.dbCreate {
			why = append(why, "has no CREATE on the database")
		}
		if len(notOwned) > 0 {
			why = append(why, "does not own "+checkNames(notOwned))
		}
		c.out.fail(what, fmt.Sprintf("does not exist, and mooncdc run cannot create it: role %q is not a superuser and %s", c.user, strings.Join(why, " and ")),
			fmt.Sprintf("as an admin: CREATE PUBLICATION %s FOR TABLE %s;", c.pubSQL, strings.Join(captureSQL, ", ")))
		return nil
	}

	ok := true
	var ops []string
	for _, op := range []struct {
		name string
		on   bool
	}{{"insert", p.insert}, {"update", p.update}, {"delete", p.del}, {"truncate", p.truncat}} {
		if !op.on {
			ops = append(ops, op.name)
		}
	}
	if len(ops) > 0 {
		ok = false
		c.out.fail(what, fmt.Sprintf("does not publish %s, so those changes never reach Kafka", strings.Join(ops, ", ")),
			fmt.Sprintf("ALTER PUBLICATION %s SET (publish = 'insert, update, delete, truncate');", c.pubSQL))
	}
	if !c.checkPartitionRoot() {
		ok = false
	}
	if p.allTables {
		if ok {
			c.out.pass(what, "FOR ALL TABLES, publishes insert, update, delete, truncate")
		}
		return nil
	}

	var missing, missingSQL, cannotAdd []string
	for _, t := range c.capture {
		if !p.tables[t.name] {
			missing, missingSQL = append(missing, t.name), append(missingSQL, t.sql)
			if !c.super && !(p.owned && t.owned) {
				cannotAdd = append(cannotAdd, t.name)
			}
		}
	}
	added := ""
	switch {
	case len(cannotAdd) > 0:
		ok = false
		c.out.fail(what, fmt.Sprintf("lacks %s, which postgres.tables selects, and role %q may not add %s (it must own the publication and the tables)",
			checkNames(missing), c.user, checkPlural(len(missing), "it", "them")),
			fmt.Sprintf("as an admin: ALTER PUBLICATION %s ADD TABLE %s;", c.pubSQL, strings.Join(missingSQL, ", ")))
	case len(missing) > 0:
		added = fmt.Sprintf("; mooncdc run adds %s, which postgres.tables selects", checkNames(missing))
	}
	if patterns {
		inCapture := map[string]bool{}
		for _, t := range c.capture {
			inCapture[t.name] = true
		}
		var extra, extraSQL []string
		for _, t := range c.all {
			if p.tables[t.name] && !inCapture[t.name] {
				extra, extraSQL = append(extra, t.name), append(extraSQL, t.sql)
			}
		}
		if len(extra) > 0 {
			ok = false
			c.out.warn(what, fmt.Sprintf("also publishes %s, which postgres.tables does not select: mooncdc skips those changes, but Postgres still decodes and sends them", checkNames(extra)),
				fmt.Sprintf("add %s to postgres.tables, or ALTER PUBLICATION %s DROP TABLE %s;", checkPlural(len(extra), "it", "them"), c.pubSQL, strings.Join(extraSQL, ", ")))
		}
	}
	switch n := len(c.capture) - len(missing); {
	case ok:
		c.out.pass(what, fmt.Sprintf("publishes the %d %s (insert, update, delete, truncate)%s", n, checkPlural(n, "table", "tables"), added))
	case added != "":
		c.out.pass(what, strings.TrimPrefix(added, "; "))
	}
	return nil
}
