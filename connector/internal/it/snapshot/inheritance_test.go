package snapshot

import (
	"slices"
	"testing"
	"time"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
	"github.com/mooncdc/mooncdc/internal/eventually"
)

// TestInheritanceParentCopiesOnlyItsOwnRows: a table with inheritance
// children (CREATE TABLE … INHERITS, as TimescaleDB's hypertables and older
// partitioning schemes are built) is copied with its own rows only, as the
// stream sends them: pgoutput sends a child's changes as the child's
// (publish_via_partition_root is for declarative partitions alone), so a
// parent's snapshot that read its children's rows too (SELECT … FROM
// parent scans them) put rows on the parent's topic that are not the
// parent's, and that no change record of the parent ever updates or
// deletes. Both the blocking copy and an incremental snapshot.
func TestInheritanceParentCopiesOnlyItsOwnRows(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE inh_parent (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE inh_child (CONSTRAINT inh_child_pk PRIMARY KEY (id)) INHERITS (inh_parent)`)
	e.Exec(`INSERT INTO inh_parent VALUES (1, 'p'), (2, 'p'), (3, 'p')`)
	e.Exec(`INSERT INTO inh_child VALUES (101, 'c'), (102, 'c')`)
	cfg := e.Config("inh", "public.inh_parent", "public.inh_child")
	r := ittest.Start(t, cfg)
	ids := func(topic string, n int, snapshot ...string) []int {
		var out []int
		for _, ev := range ittest.Consume(t, e.Kafka, n, topic) {
			if ev.Op == "r" && (len(snapshot) == 0 || ev.Source.Snapshot == snapshot[0]) {
				out = append(out, int(ev.Key["id"].(float64)))
			}
		}
		slices.Sort(out)
		return out
	}
	// The child's topic first: once its two rows are there, the parent's
	// three are too (one snapshot run), and a fourth would be a child's.
	if got := ids("inh.public.inh_child", 2); !slices.Equal(got, []int{101, 102}) {
		t.Fatalf("inh_child's snapshot rows: %v, want [101 102]", got)
	}
	if got := ids("inh.public.inh_parent", -1); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("inh_parent's snapshot rows: %v, want its own [1 2 3], not its child's", got)
	}
	// An incremental snapshot of the parent reads and tombstones its own
	// rows only: the children's keys are not the parent's stale keys
	// either (none on its topic).
	ittest.RequestIncremental(t, e, cfg, "public.inh_parent")
	eventually.True(t, 30*time.Second, 5*time.Millisecond, "the incremental snapshot did not start", func() bool {
		return r.P.TablePhases()["public.inh_parent"].Incremental != ""
	})
	eventually.True(t, 60*time.Second, 20*time.Millisecond, "the incremental snapshot did not end", func() bool {
		return r.P.TablePhases()["public.inh_parent"].Incremental == ""
	})
	e.Exec(`INSERT INTO inh_parent VALUES (4, 'last')`)
	eventually.True(t, 60*time.Second, 50*time.Millisecond, "the last insert did not reach the topic", func() bool {
		evs := ittest.Consume(t, e.Kafka, -1, "inh.public.inh_parent")
		last := evs[len(evs)-1]
		return last.Op == "c" && last.Key["id"] == float64(4)
	})
	if got := ids("inh.public.inh_parent", -1, "incremental"); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("inh_parent's incremental snapshot rows: %v, want its own [1 2 3], not its child's", got)
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
