package delivery

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPlacingPartitionerKeepsTheDefaultForUnplacedRecords: a placed
// record goes to its partition and asks for consistency (franz-go then
// indexes all partitions), whatever its key; an unplaced keyed record
// goes where franz-go's default partitioner sends it (Kafka's murmur2 of
// the key), and partition 0 (a record's zero value) is not a placement.
func TestPlacingPartitionerKeepsTheDefaultForUnplacedRecords(t *testing.T) {
	def := kgo.UniformBytesPartitioner(64<<10, true, true, nil).ForTopic("t").(kgo.TopicBackupPartitioner)
	tp := PlacingPartitioner().ForTopic("t").(kgo.TopicBackupPartitioner)
	for p := int32(0); p < 8; p++ {
		r := &kgo.Record{Key: []byte("k")}
		PlacePartition(r, p)
		if !tp.RequiresConsistency(r) || tp.PartitionByBackup(r, 8, nil) != int(p) || tp.Partition(r, 8) != int(p) {
			t.Errorf("placed at %d: consistency %v, partition %d", p, tp.RequiresConsistency(r), tp.PartitionByBackup(r, 8, nil))
		}
	}
	for _, k := range []string{"a", "o3", `"o3"`, "a longer key of an outbox event"} {
		r, d := &kgo.Record{Key: []byte(k)}, &kgo.Record{Key: []byte(k)}
		if _, placed := placedPartition(r); placed {
			t.Fatalf("a fresh record counts as placed")
		}
		if got, want := tp.PartitionByBackup(r, 8, nil), def.PartitionByBackup(d, 8, nil); got != want || tp.RequiresConsistency(r) != def.RequiresConsistency(d) {
			t.Errorf("key %q: partition %d, default %d", k, got, want)
		}
	}
}
