package config

import (
	"fmt"
	"slices"
	"strings"
)

// TopicClash is a table whose data topic another table already has: their
// names differ but sanitize to the same topic (public."a b" and
// public.a_b), and sharing it would mix their records.
type TopicClash struct {
	Table, Other TableName // Table is refused; Other keeps the topic
	Topic        string
}

func (c TopicClash) Error() string {
	return fmt.Sprintf("tables %s and %s would share topic %q (their names sanitize to the same topic name): exclude one of them from postgres.tables, or rename one",
		c.Other, c.Table, c.Topic)
}

// TopicClashes returns the clashes among tables, whose topics are
// <prefix>.<schema>.<table>: tables in keep hold their topics first
// (they are captured already), then each table of add in order takes its
// topic unless an earlier one has it. It is pure.
func TopicClashes(prefix string, keep, add []TableName) []TopicClash {
	owner := make(map[string]TableName, len(keep)+len(add))
	var out []TopicClash
	for _, t := range append(slices.Clip(keep), add...) {
		topic := TopicName(prefix, t.Schema, t.Table)
		if other, ok := owner[topic]; ok && other != t {
			out = append(out, TopicClash{Table: t, Other: other, Topic: topic})
			continue
		}
		owner[topic] = t
	}
	return out
}

// topicClashError joins clashes into one configuration error.
func TopicClashError(clashes []TopicClash) error {
	msgs := make([]string, len(clashes))
	for i, c := range clashes {
		msgs[i] = c.Error()
	}
	return &ConfigError{Err: fmt.Errorf("postgres.tables: %s", strings.Join(msgs, "; "))}
}
