package offsets

import (
	"fmt"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The records below are pure constructors. They set Partition 0: the topic
// has one partition, so any partitioner lands there, and a producer with
// kgo.ManualPartitioner uses the field as is. The caller sets UpdatedMs; a
// pure function does not read the clock.

//
// They panic on input that Load would not read back as written (see
// mustKeyable and TableRecord): such a record is a bug to stop at once, not
// one to find at the next start as lost or unreadable state.

// PipelineRecord returns the record that stores p for connector name.
func PipelineRecord(topic, name string, p Pipeline) *kgo.Record {
	mustKeyable("connector name", name)
	return &kgo.Record{Topic: topic, Partition: 0, Key: PipelineKey(name), Value: marshal(p)}
}

// TableRecord returns the record that stores t under t.Table for connector
// name. Besides the checks of mustKeyable it panics if t.Table is empty or
// t.Phase is not one of the Phase constants, which would make every later
// Load fail.
func TableRecord(topic, name string, t Table) *kgo.Record {
	mustKeyable("connector name", name)
	mustKeyable("table name", t.Table)
	if t.Table == "" {
		panic("offsets: TableRecord with an empty table name")
	}
	if !validPhase(t.Phase) {
		panic(fmt.Sprintf("offsets: TableRecord for %s with unknown phase %q", t.Table, t.Phase))
	}
	return &kgo.Record{Topic: topic, Partition: 0, Key: TableKey(name, t.Table), Value: marshal(t)}
}

// DeleteTableRecord returns the tombstone that deletes table's entry for
// connector name (for a table that left the publication). Compaction
// removes the tombstone itself after the topic's delete.retention.ms.
func DeleteTableRecord(topic, name, table string) *kgo.Record {
	mustKeyable("connector name", name)
	mustKeyable("table name", table)
	return &kgo.Record{Topic: topic, Partition: 0, Key: TableKey(name, table), Value: nil}
}

// DeletePipelineRecord returns the tombstone that deletes connector name's
// pipeline entry (mooncdc reset): the next start finds no offsets.
func DeletePipelineRecord(topic, name string) *kgo.Record {
	mustKeyable("connector name", name)
	return &kgo.Record{Topic: topic, Partition: 0, Key: PipelineKey(name), Value: nil}
}

// mustKeyable panics if s is not valid UTF-8. JSON carries only UTF-8: an
// invalid byte would be written as U+FFFD, and the key read back would name
// another connector or table, so the state would be lost silently.
func mustKeyable(what, s string) {
	if !utf8.ValidString(s) {
		panic(fmt.Sprintf("offsets: %s %q is not valid UTF-8 and cannot be stored in a JSON key", what, s))
	}
}
