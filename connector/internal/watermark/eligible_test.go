package watermark

import (
	"errors"
	"strings"
	"testing"
)

func TestEligibleNeedsAKeyAndEveryChangeInTheStream(t *testing.T) {
	all := Operations{true, true, true, true}
	for _, c := range []struct {
		name  string
		table Table
		bad   string // a word of the reason; "" for eligible
	}{
		{"primary key", Table{Name: "public.orders", Key: KeyPrimary, Publishes: all}, ""},
		{"replica identity index", Table{Name: "public.orders", Key: KeyIdentityIndex, Publishes: all}, ""},
		{"message key columns, replica identity FULL, no primary key", Table{Name: "public.logs", Key: KeyMessageColumns, Publishes: all}, ""},
		{"no key (FULL without message key columns)", Table{Name: "public.logs", Key: KeyNone, Publishes: all}, "null key"},
		{"no truncate published", Table{Name: "public.orders", Key: KeyPrimary, Publishes: Operations{true, true, true, false}}, "publish"},
		{"no delete published", Table{Name: "public.orders", Key: KeyPrimary, Publishes: Operations{true, true, false, true}}, "publish"},
		// A root's windows watch the root's oid: changes sent as the
		// partitions' would never void them.
		{"partitioned root whose partitions are published as themselves", Table{Name: "public.events", Key: KeyPrimary, Publishes: all, PartitionsAlone: true}, "publish_via_partition_root"},
		{"outbox", Table{Name: "public.outbox", Key: KeyPrimary, Publishes: all, Outbox: true}, "events"},
	} {
		err := Eligible(c.table)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.bad != "":
			var ie *IneligibleError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.bad) || !strings.Contains(err.Error(), c.table.Name) ||
				!strings.Contains(err.Error(), `"type": "blocking"`) {
				t.Errorf("%s: %v, want an IneligibleError naming the table, %q and the blocking way", c.name, err, c.bad)
			}
		}
	}
}
