package main

import (
	"fmt"

	"github.com/mooncdc/mooncdc/connector"
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
	var names []connector.TableName
	for _, t := range c.capture {
		names = append(names, connector.TableName{Schema: t.schema, Table: t.table})
	}
	for _, cl := range connector.TopicClashes(c.cfg.Kafka.TopicPrefix, nil, names) {
		c.out.fail("topics", fmt.Sprintf("%s and %s would share topic %q (their names sanitize to the same topic name), which mooncdc run refuses", cl.Other, cl.Table, cl.Topic),
			"exclude one of them from postgres.tables, or rename one")
	}
}
