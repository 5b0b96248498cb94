package records

import (
	"slices"
	"testing"

	"github.com/mooncdc/mooncdc/connector/internal/it/ittest"
)

// TestOneKeyForSnapshotAndStream: a row has the same record key in its
// snapshot record and in its change records, whatever the table's replica
// identity: the primary key under DEFAULT and FULL, the index's columns
// under USING INDEX (before, the copy keyed by the primary key and the
// stream by the index, so a compacted topic kept two records per row), and
// no key for a table with neither. Key changes are a delete, a tombstone
// and a create.
func TestOneKeyForSnapshotAndStream(t *testing.T) {
	e := ittest.NewEnv(t)
	e.Exec(`CREATE TABLE public.kd (id int PRIMARY KEY, code text NOT NULL UNIQUE, v text)`)
	e.Exec(`CREATE TABLE public.ki (id int PRIMARY KEY, code text NOT NULL, v text)`)
	e.Exec(`CREATE UNIQUE INDEX ki_code ON public.ki (code)`)
	e.Exec(`ALTER TABLE public.ki REPLICA IDENTITY USING INDEX ki_code`)
	e.Exec(`CREATE TABLE public.kf (id int PRIMARY KEY, code text NOT NULL, v text)`)
	e.Exec(`ALTER TABLE public.kf REPLICA IDENTITY FULL`)
	e.Exec(`CREATE TABLE public.kn (id int, code text NOT NULL, v text)`)
	e.Exec(`ALTER TABLE public.kn REPLICA IDENTITY FULL`)
	for _, tb := range []string{"kd", "ki", "kf", "kn"} {
		e.Exec(`INSERT INTO public.` + tb + ` VALUES (1, 'a', 'x'), (2, 'b', 'x')`)
	}
	r := ittest.Start(t, e.Config("keys", "public.*"))
	for _, tb := range []string{"kd", "ki", "kf", "kn"} {
		e.Exec(`INSERT INTO public.` + tb + ` VALUES (3, 'c', 'x')`)
		e.Exec(`UPDATE public.` + tb + ` SET v = 'y' WHERE id = 1`)
		e.Exec(`UPDATE public.` + tb + ` SET id = 20, code = 'bb' WHERE id = 2`)
		e.Exec(`DELETE FROM public.` + tb + ` WHERE id = 3`)
	}
	for _, tc := range []struct {
		table string
		want  []string // op key
	}{
		{"kd", []string{"r id=1", "r id=2", "c id=3", "u id=1", "d id=2", "tombstone id=2", "c id=20", "d id=3", "tombstone id=3"}},
		{"ki", []string{"r code=a", "r code=b", "c code=c", "u code=a", "d code=b", "tombstone code=b", "c code=bb", "d code=c", "tombstone code=c"}},
		{"kf", []string{"r id=1", "r id=2", "c id=3", "u id=1", "d id=2", "tombstone id=2", "c id=20", "d id=3", "tombstone id=3"}},
		// No primary key and no index: records without a key, and an
		// update is an update (nothing to move).
		{"kn", []string{"r ", "r ", "c ", "u ", "u ", "d "}},
	} {
		evs := ittest.Consume(t, e.Kafka, len(tc.want), "keys.public."+tc.table)
		var got []string
		for _, ev := range evs {
			op := ev.Op
			if ev.Tombstone {
				op = "tombstone"
			}
			got = append(got, op+" "+ittest.KeyString(ev.Key))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.table, got, tc.want)
		}
	}
	if err := r.Stop(t); err != nil {
		t.Fatal(err)
	}
}
